"""``offeval plugins``: what is registered, by which plugin, and what failed."""

from __future__ import annotations

import argparse

from offeval.registry.manager import get_registry


class PluginsCommand:
    """What is registered, by which plugin, and what failed."""

    help = "what is registered, by which plugin, what failed"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """No arguments."""

    def run(self, args: argparse.Namespace) -> int:
        """List plugins, hooks, components and failures."""
        return _plugins()


def _plugins() -> int:
    registry = get_registry()
    print("plugins:", ", ".join(registry.plugins) or "none")
    print("hooks:", ", ".join(registry.hooks))
    for comp in registry.components():
        print(f"  {comp.kind:<12} {comp.name:<18} from {comp.plugin:<12} {comp.summary}")
        if comp.parameters:
            print(f"  {'':<12} {'':<18}      {'':<12} parameters: {comp.parameters}")
    if registry.failures:
        print("failed:")
        for failure in registry.failures:
            print(f"  {failure.plugin} ({failure.stage}): {failure.reason}")
    return 0
