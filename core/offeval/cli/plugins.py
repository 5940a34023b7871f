"""``offeval plugins``: what is registered, by which plugin, and what failed."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from types import MappingProxyType

from offeval.registry.manager import Component, Registry, get_registry


class PluginsCommand:
    """What is registered, by which plugin, and what failed."""

    help = "what is registered, by which plugin, what failed"
    #: The core's own commands (name -> class), listed as the core's (the shell sets them).
    core_commands: Mapping[str, type] = MappingProxyType({})

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """No arguments."""

    def run(self, args: argparse.Namespace) -> int:
        """List plugins, hooks, components and failures."""
        return _plugins(self.core_commands)


def _listed(registry: Registry, core_commands: Mapping[str, type]) -> list[Component]:
    """Every component by kind, then name: the core's commands among the plugins' commands."""
    core = [Component("command", name, cls, "offeval") for name, cls in core_commands.items()]
    kinds = list(registry.kinds)
    return sorted([*registry.components(), *core], key=lambda c: (kinds.index(c.kind), c.name))


def _plugins(core_commands: Mapping[str, type]) -> int:
    registry = get_registry()
    print("plugins:", ", ".join(registry.plugins) or "none")
    print("hooks:", ", ".join(registry.hooks))
    for comp in _listed(registry, core_commands):
        print(f"  {comp.kind:<12} {comp.name:<18} from {comp.plugin:<12} {comp.summary}")
        if comp.parameters:
            print(f"  {'':<12} {'':<18}      {'':<12} parameters: {comp.parameters}")
    if registry.failures:
        print("failed:")
        for failure in registry.failures:
            print(f"  {failure.plugin} ({failure.stage}): {failure.reason}")
    return 0
