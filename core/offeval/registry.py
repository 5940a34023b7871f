"""The plugin registry: entry-point discovery, validation, lookup by name."""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

import pluggy

from offeval import hookspecs
from offeval.errors import RegistryError

ENTRY_POINT_GROUP = "offeval"
#: Comma-separated entry-point names; when set, only these plugins load.
ALLOW_ENV = "OFFEVAL_PLUGINS"

#: Component kinds and the hook that registers each.
KINDS = {
    "estimator": "register_estimators",
    "examination": "register_examination_models",
    "environment": "register_environments",
    "conventions": "register_metric_conventions",
    "command": "register_commands",
}


@dataclass(frozen=True)
class Component:
    """A registered component: its kind, name, factory and providing plugin."""

    kind: str
    name: str
    factory: Any
    plugin: str

    @property
    def summary(self) -> str:
        """First line of the factory's docstring."""
        doc = (getattr(self.factory, "__doc__", None) or "").strip()
        return doc.splitlines()[0] if doc else ""


@dataclass(frozen=True)
class PluginFailure:
    """A plugin (or one of its registrations) that failed, and why."""

    plugin: str
    stage: str
    reason: str


class Registry:
    """Components registered by plugins, looked up and configured by name.

    Plugins are discovered from the ``offeval`` entry-point group on first
    use. A plugin that fails to import or register is recorded in
    :attr:`failures` and the others still load.
    """

    def __init__(self, *, entry_points: bool = True):
        self._use_entry_points = entry_points
        self._pm = pluggy.PluginManager(hookspecs.PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self._components: dict[str, dict[str, Component]] = {kind: {} for kind in KINDS}
        self.failures: list[PluginFailure] = []
        self._loaded = False

    # -- loading ----------------------------------------------------------
    def load(self) -> Registry:
        """Discover and register plugins once (later calls do nothing)."""
        if self._loaded:
            return self
        self._loaded = True
        if self._use_entry_points:
            allow = os.environ.get(ALLOW_ENV)
            allowed = None if allow is None else {n.strip() for n in allow.split(",") if n.strip()}
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                if allowed is not None and ep.name not in allowed:
                    continue
                try:
                    self._pm.register(ep.load(), name=ep.name)
                except Exception as exc:  # a broken plugin must not break the others
                    self.failures.append(PluginFailure(ep.name, "import", _why(exc)))
        for name, plugin in self._pm.list_name_plugin():
            self._collect(name, plugin)
        return self

    def add_plugin(self, plugin: ModuleType | object, name: str) -> None:
        """Register a plugin object directly (tests, notebooks, embedding apps)."""
        self.load()
        if self._pm.has_plugin(name):
            raise RegistryError(f"a plugin named {name!r} is already registered")
        self._pm.register(plugin, name=name)
        self._collect(name, plugin)

    def remove_plugin(self, name: str) -> None:
        """Unregister a plugin and every component it provided."""
        self._pm.unregister(name=name)
        for comps in self._components.values():
            for key in [k for k, c in comps.items() if c.plugin == name]:
                del comps[key]

    def _collect(self, plugin_name: str, plugin: object) -> None:
        """Call each registration hook the plugin implements, isolating failures."""
        for kind, hook_name in KINDS.items():
            for impl in getattr(self._pm.hook, hook_name).get_hookimpls():
                if impl.plugin_name == plugin_name:
                    self._call_register_hook(plugin_name, kind, hook_name, impl.function)

    def _call_register_hook(self, plugin_name: str, kind: str, hook_name: str, function) -> None:
        staged: list[Component] = []

        def register(name: str, factory: Any) -> None:
            staged.append(_validated(kind, name, factory, plugin_name))

        try:
            function(register=register)
        except Exception as exc:  # the plugin's own bug: report it, keep the others
            self.failures.append(PluginFailure(plugin_name, hook_name, _why(exc)))
            return
        for comp in staged:
            try:
                self._add(comp)
            except RegistryError as exc:
                self.failures.append(PluginFailure(plugin_name, hook_name, str(exc)))

    def _add(self, comp: Component) -> None:
        existing = self._components[comp.kind].get(comp.name)
        if existing is not None:
            raise RegistryError(
                f"{comp.kind} {comp.name!r} from plugin {comp.plugin!r} clashes with the one "
                f"from plugin {existing.plugin!r}"
            )
        self._components[comp.kind][comp.name] = comp

    def register(self, kind: str, name: str, factory: Any, plugin: str = "<direct>") -> None:
        """Register one component directly; a duplicate name raises RegistryError."""
        self.load()
        self._add(_validated(kind, name, factory, plugin))

    # -- lookup -----------------------------------------------------------
    def names(self, kind: str) -> list[str]:
        """Names of the registered components of one kind, sorted."""
        self.load()
        return sorted(self._components[_kind(kind)])

    def components(self, kind: str | None = None) -> list[Component]:
        """Registered components (of one kind, or all)."""
        self.load()
        kinds = KINDS if kind is None else [_kind(kind)]
        return [c for k in kinds for _, c in sorted(self._components[k].items())]

    def get(self, kind: str, name: str) -> Component:
        """One component; a clear error listing the known names if absent."""
        self.load()
        comps = self._components[_kind(kind)]
        if name not in comps:
            known = ", ".join(sorted(comps)) or "none"
            raise RegistryError(f"no {kind} named {name!r}; registered: {known}")
        return comps[name]

    def create(self, kind: str, name: str, **params: Any) -> Any:
        """Build a configured component: ``create("estimator", "ncis", cap=100)``."""
        factory = self.get(kind, name).factory
        try:
            return factory(**params)
        except TypeError as exc:
            raise RegistryError(f"cannot configure {kind} {name!r} with {params}: {exc}") from None

    def create_from_spec(self, kind: str, spec: str) -> Any:
        """Build from a spec string such as ``"ncis:cap=100,normalised=true"``."""
        name, params = parse_spec(spec)
        return self.create(kind, name, **params)

    def resolve(self, kind: str, spec_or_component: Any) -> Any:
        """A component given either ready-made or as a spec string to build."""
        if isinstance(spec_or_component, str):
            return self.create_from_spec(kind, spec_or_component)
        return spec_or_component

    @property
    def plugins(self) -> list[str]:
        """Names of the registered plugins."""
        self.load()
        return [name for name, _ in self._pm.list_name_plugin()]

    def check_pending(self) -> None:
        """Raise if a plugin implements a hook that no spec declares (a typo)."""
        self.load()
        self._pm.check_pending()


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise RegistryError(f"unknown component kind {kind!r}: one of {list(KINDS)}")
    return kind


def _validated(kind: str, name: str, factory: Any, plugin: str) -> Component:
    if not isinstance(name, str) or not name or not name.replace("-", "_").isidentifier():
        raise RegistryError(f"{kind} name {name!r} from plugin {plugin!r} is not a valid name")
    if not callable(factory):
        raise RegistryError(f"{kind} {name!r} from plugin {plugin!r} is not callable")
    required = {
        "estimator": ("contribute", "combine", "get_params"),
        "command": ("help", "add_arguments", "run"),
    }.get(kind, ())
    missing = [m for m in required if not hasattr(factory, m)]
    if missing:
        raise RegistryError(f"{kind} {name!r} from plugin {plugin!r} lacks {missing}")
    return Component(kind, name, factory, plugin)


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def parse_pairs(items: Sequence[str], *, typed: bool = True, what: str = "parameter") -> dict:
    """Parse ``key=value`` strings; values typed (numbers, inf, booleans, None) or left as text."""
    params: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip() or not raw.strip():
            raise RegistryError(f"{what} {item!r} is not key=value")
        params[key.strip()] = _literal(raw.strip()) if typed else raw.strip()
    return params


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name:key=value,key=value"`` or ``"name(key=value, ...)"`` into name and params.

    A value may itself be a spec in the parenthesised form, e.g.
    ``"dcg:examination=exponential(gamma=0.7),cap=10"``; it is kept as text.
    """
    spec = spec.strip()
    if spec.endswith(")") and "(" in spec and ":" not in spec.partition("(")[0]:
        name, _, rest = spec[:-1].partition("(")
    else:
        name, _, rest = spec.partition(":")
    parts = [p.strip() for p in _top_level_split(rest) if p.strip()]
    return name.strip(), parse_pairs(parts, what=f"parameter in {spec!r}")


def _top_level_split(text: str) -> list[str]:
    """Split on commas that are not inside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _literal(raw: str) -> Any:
    lowered = raw.lower()
    if lowered in {"inf", "infinity"}:
        return float("inf")
    if lowered in {"true", "false"}:
        return lowered == "true"
    if lowered in {"none", "null"}:
        return None
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw


_default: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, loaded lazily on first use."""
    global _default
    if _default is None:
        _default = Registry()
    return _default.load()


def reset_registry() -> None:
    """Forget the process-wide registry (it reloads on next use)."""
    global _default
    _default = None
