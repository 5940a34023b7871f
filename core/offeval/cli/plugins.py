"""``offeval plugins``: what is registered, by which plugin, and what failed; ``offeval
plugins KIND`` and ``--name TEXT`` list the components of one kind, or whose names hold a
word, only."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from types import MappingProxyType

from offeval.errors import OffevalError, did_you_mean
from offeval.lazy import Deferred
from offeval.registry.manager import Component, get_registry


class PluginsCommand:
    """What is registered, by which plugin, and what failed."""

    help = "what is registered, by which plugin, what failed"
    #: The core's own commands (name -> reference), listed as the core's (the shell sets them).
    core_commands: Mapping[str, Deferred] = MappingProxyType({})

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """KIND and --name: which components to list (all by default)."""
        parser.add_argument(
            "kind",
            nargs="?",
            metavar="KIND",
            help="list the components of this kind only (estimator, command, examination, ...)",
        )
        parser.add_argument(
            "--name", metavar="TEXT", help="list the components whose name holds TEXT only"
        )

    def run(self, args: argparse.Namespace) -> int:
        """List plugins, hooks, components (by kind, then name) and failures; given KIND or
        --name, the components that match only."""
        registry = get_registry()
        kind, name = args.kind, args.name
        if kind is not None and kind not in registry.kinds:
            raise OffevalError(
                f"no kind {kind!r}{did_you_mean(kind, registry.kinds)}; the kinds: "
                + ", ".join(registry.kinds)
            )
        core = [Component("command", n, ref, "offeval") for n, ref in self.core_commands.items()]
        kinds = list(registry.kinds)
        every = sorted([*registry.components(), *core], key=lambda c: (kinds.index(c.kind), c.name))
        listed = [c for c in every if kind in (None, c.kind) and (name is None or name in c.name)]
        if name is not None and not listed:
            raise OffevalError(
                f"--name {name}: no component's name holds {name!r}"
                + (f" among the {kind} components" if kind else "")
                + " (offeval plugins lists them all)"
            )
        if kind is None and name is None:
            print("plugins:", ", ".join(registry.plugins) or "none")
            print("hooks:", ", ".join(registry.hooks))
        for comp in listed:
            print(f"  {comp.kind:<12} {comp.name:<18} from {comp.plugin:<12} {comp.summary}")
            if comp.parameters:
                print(f"  {'':<12} {'':<18}      {'':<12} parameters: {comp.parameters}")
        if registry.failures:
            print("failed:")
            for failure in registry.failures:
                print(f"  {failure.plugin} ({failure.stage}): {failure.reason}")
        return 0
