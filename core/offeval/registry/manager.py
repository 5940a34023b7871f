"""The plugin registry: entry-point discovery, validation, lookup by name.

Loading goes in stages, each isolating a failing plugin (its failure is
recorded in :attr:`Registry.failures`; the other plugins still load):

1. plugins are imported from the ``offeval`` entry-point group, the built-in
   ones (those of the offeval distribution) first; a plugin whose module
   declares ``REQUIRES`` (the names of the plugins it builds on) stays out,
   as a failure, unless every one of them is loaded too;
2. every plugin's ``register_hookspecs`` adds the hook specifications it
   brings (as pytest's ``pytest_addhooks`` does);
3. every plugin's ``register_component_kinds`` declares the kinds it brings;
4. a hook implementation that matches no specification (a misspelled name)
   is reported as its plugin's failure;
5. each kind's hook is called once per plugin, built-ins first, so a
   third-party plugin can never take a built-in's name: the clash is
   reported against the third-party plugin. A kind's components are
   collected when that kind is first used (``offeval --help`` asks for the
   commands alone, so no estimator module is imported for it); reading
   :attr:`Registry.failures`, recording a failure from outside or adding a
   plugin first collects every kind, so failures are listed in the order of
   the stages above.

A component may be registered by reference (:class:`Deferred`,
``"package.module:Name"`` and what the host may read without importing it,
such as a command's one-line ``help``): its module is imported when
:attr:`Component.factory` is first read. A component may also be another
name for one registered under its own (:class:`~offeval.registry.aliases.Alias`:
obp's ``switch-dr`` for ``switch_dr``, its ``lambda_`` for ``tau``): built,
it is the original under the alias's name and parameters, and the default
set (:meth:`Registry.distinct`) leaves it out.

Hooks are called through pluggy, which matches arguments by name, so hook
specifications can gain arguments without breaking implementations.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

import pluggy

from offeval.errors import RegistryError, did_you_mean
from offeval.lazy import Deferred
from offeval.registry import hookspecs
from offeval.registry.aliases import Alias, aliased
from offeval.specs import parse_spec

ENTRY_POINT_GROUP = "offeval"
#: Comma-separated entry-point names; when set, only these plugins load.
ALLOW_ENV = "OFFEVAL_PLUGINS"
#: How a hook implementation that matches no specification is reported.
UNMATCHED = "implements a hook that no plugin specifies"
#: The distribution whose plugins are built in (their names cannot be taken over).
BUILTIN_DISTRIBUTION = "offeval"
#: The attribute of a plugin (module or object) naming the plugins it builds on.
REQUIRES = "REQUIRES"


@dataclass(frozen=True)
class Kind:
    """A component kind: its name, the hook that registers it, what a factory must have."""

    name: str
    hook: str
    required: tuple[str, ...] = ()
    description: str = ""
    plugin: str = ""


class _AliasFactory:
    """An alias's factory: the original's, renamed, made when first read."""

    def __init__(self, alias: Alias, name: str, kind: str, registry: Registry):
        self.alias, self.name, self.kind, self.registry = alias, name, kind, registry
        self._resolved: Any = None

    def resolve(self) -> Any:
        """The original's factory under the alias's name, parameters and defaults."""
        if self._resolved is None:
            comps = self.registry._components[self.kind]
            original = comps.get(self.alias.original)
            if original is None:
                raise RegistryError(
                    f"{self.kind} {self.name!r} is an alias of {self.alias.original!r}, "
                    "which is not registered"
                )
            if original.alias is not None:
                raise RegistryError(
                    f"{self.kind} {self.name!r} is an alias of {self.alias.original!r}, itself "
                    f"an alias: name {original.alias.original!r}"
                )
            self._resolved = aliased(self.name, self.alias, original.factory)
        return self._resolved


class _Resolving:
    """The ``factory`` field of a :class:`Component`: a :class:`Deferred` is imported, an
    alias made, on first read (a dataclass field holding a descriptor)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, component: Any, owner: type | None = None) -> Any:
        if component is None:
            raise AttributeError(self.slot)  # the field has no default
        value = component.__dict__[self.slot]
        return value.resolve() if isinstance(value, (Deferred, _AliasFactory)) else value

    def __set__(self, component: Any, value: Any) -> None:
        component.__dict__[self.slot] = value


@dataclass(frozen=True)
class Component:
    """A registered component: its kind, name, factory and providing plugin.

    A factory registered as a :class:`Deferred` is imported when ``factory`` is
    first read; :attr:`deferred` reads the reference without importing it.
    """

    kind: str
    name: str
    factory: Any = _Resolving()  # type: ignore[assignment] - no default: its __get__ says so
    plugin: str

    @property
    def deferred(self) -> Deferred | None:
        """The reference the factory was registered as, if it is one (nothing is imported)."""
        value = self.__dict__["_factory"]
        return value if isinstance(value, Deferred) else None

    @property
    def alias(self) -> Alias | None:
        """What it is another name for, if it is an alias (nothing is imported)."""
        value = self.__dict__["_factory"]
        return value.alias if isinstance(value, _AliasFactory) else None

    @property
    def summary(self) -> str:
        """First line of the factory's docstring (an alias's: what it stands for, or why it
        cannot be built)."""
        try:
            factory = self.factory
        except RegistryError as exc:
            if self.alias is None:
                raise
            return f"a broken alias: {exc}"
        doc = (getattr(factory, "__doc__", None) or "").strip()
        return doc.splitlines()[0] if doc else ""

    @property
    def parameters(self) -> str:
        """The factory's named parameters with their defaults (``cap=100.0, by='group'``)."""
        try:
            sig = inspect.signature(self.factory)
        except (TypeError, ValueError):
            return ""
        except RegistryError:
            if self.alias is None:
                raise
            return ""
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        return ", ".join(
            p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}"
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in variadic
        )


@dataclass(frozen=True)
class PluginFailure:
    """A plugin (or one of its registrations) that failed, and why."""

    plugin: str
    stage: str
    reason: str


class _Core:
    """The host is a plugin of itself: it declares the kinds the core uses."""

    @hookspecs.hookimpl
    def register_component_kinds(self, register):
        """Estimators, environments (the demo and the kit), command-line sub-commands, reports,
        reward-model fitters (``evaluate --fit-reward-model``)."""
        register("estimator", "register_estimators", hookspecs.ESTIMATOR_METHODS)
        register("environment", "register_environments", hookspecs.ENVIRONMENT_METHODS)
        register("command", "register_commands", hookspecs.COMMAND_METHODS)
        register("report", "register_reports", hookspecs.REPORT_METHODS)
        register("reward_model", "register_reward_models", hookspecs.REWARD_MODEL_METHODS)


_ACTIVE: ContextVar[Registry | None] = ContextVar("active_registry", default=None)


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
        self._kinds: dict[str, Kind] = {}
        self._components: dict[str, dict[str, Component]] = {}
        self._builtin: set[str] = set()
        self._failures: list[PluginFailure] = []
        #: The plugins whose components of each kind are collected (kinds are collected lazily).
        self._collected: dict[str, set[str]] = {}
        self._loaded = False

    @property
    def kinds(self) -> dict[str, Kind]:
        """The component kinds declared by the loaded plugins (the core's included)."""
        return self.load()._kinds

    @property
    def failures(self) -> list[PluginFailure]:
        """Plugins (or registrations) that failed while loading, and why."""
        return self.load()._collect_all()._failures

    # -- loading ----------------------------------------------------------
    def load(self) -> Registry:
        """Discover and register plugins once (later calls do nothing)."""
        if self._loaded:
            return self
        self._loaded = True
        with self.activated():
            self._register(_Core(), "offeval", builtin=True)
            if self._use_entry_points:
                for ep, builtin in self._entry_points():
                    try:
                        plugin = ep.load()
                    except Exception as exc:  # a broken plugin must not break the others
                        self._fail(ep.name, "import", _why(exc))
                        continue
                    self._register(plugin, ep.name, builtin=builtin)
            self._drop_unmet([name for name, _ in self._pm.list_name_plugin()])
            self._setup([name for name, _ in self._pm.list_name_plugin()])
        return self

    def _drop_unmet(self, names: Sequence[str]) -> None:
        """Unregister each plugin that builds on one not loaded, until all that stay are met."""
        dropped = True
        while dropped:
            loaded = {name for name, _ in self._pm.list_name_plugin()}
            unmet = [n for n in names if n in loaded and self._unmet(self._pm.get_plugin(n), n)]
            for name in unmet:
                self._pm.unregister(name=name)
                self._builtin.discard(name)
            dropped = bool(unmet)

    def _unmet(self, plugin: object, name: str) -> bool:
        """Whether ``plugin`` builds on a plugin that is not loaded (recorded as its failure)."""
        needs = getattr(plugin, REQUIRES, ())
        if not isinstance(needs, (tuple, list)) or not all(isinstance(n, str) and n for n in needs):
            self._fail(
                name, "requires", f"{REQUIRES} must be a tuple of plugin names, got {needs!r}"
            )
            return True
        missing = [n for n in needs if not self._pm.has_plugin(n)]
        for needed in missing:
            self._fail(
                name,
                "requires",
                f"builds on plugin {needed!r}, which is not loaded: {self._enabling(needed)}",
            )
        return bool(missing)

    def _enabling(self, plugin: str) -> str:
        """How to get ``plugin`` loaded, in words."""
        if any(f.plugin == plugin for f in self._failures):
            return "it failed to load (see its own failure)"
        if not self._use_entry_points:
            return f"register it first (add_plugin(..., name={plugin!r}))"
        if plugin in {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}:
            return f"add {plugin} to {ALLOW_ENV}"
        return (
            f"install the package that provides it (an {ENTRY_POINT_GROUP!r} entry point "
            f"named {plugin!r})"
        )

    def _entry_points(self) -> list[tuple[EntryPoint, bool]]:
        """Entry points to load, built-ins first; unknown allow-list names are failures."""
        found = list(entry_points(group=ENTRY_POINT_GROUP))
        allow = os.environ.get(ALLOW_ENV)
        if allow is not None:
            allowed = {n.strip() for n in allow.split(",") if n.strip()}
            for name in sorted(allowed - {ep.name for ep in found}):
                known = ", ".join(sorted({ep.name for ep in found})) or "none"
                self._fail(
                    name,
                    "allow-list",
                    f"{ALLOW_ENV} names it but no plugin is installed "
                    f"under that name (installed: {known})",
                )
            found = [ep for ep in found if ep.name in allowed]
        marked = [(ep, _is_builtin(ep)) for ep in found]
        return sorted(marked, key=lambda item: (not item[1], item[0].name))

    def _register(self, plugin: object, name: str, *, builtin: bool) -> bool:
        if self._pm.has_plugin(name):
            owner = "the built-in plugin" if name in self._builtin else "another plugin"
            self._fail(name, "import", f"the plugin name {name!r} is taken by {owner}")
            return False
        try:
            self._pm.register(plugin, name=name)
        except Exception as exc:  # a hook whose arguments do not match its specification
            self._fail(name, "register", _why(exc))
            return False
        if builtin:
            self._builtin.add(name)
        return True

    def _setup(self, names: Sequence[str]) -> None:
        """Stages 2-4 for the plugins ``names`` (already registered with pluggy); stage 5,
        collecting a kind's components, happens when the kind is first used."""
        for name in names:
            for holder in self._call(name, "register_hookspecs"):
                self._add_hookspecs(name, holder)
        for name in names:
            for kind in self._call(name, "register_component_kinds"):
                self._add_kind(name, kind)
        self._report_unmatched(names)

    def _collect_kind(self, kind: Kind) -> None:
        """Stage 5 for one kind: its hook called for each plugin not yet collected, in order."""
        done = self._collected.setdefault(kind.name, set())
        with self.activated():
            for name, _ in self._pm.list_name_plugin():
                if name not in done and self._pm.has_plugin(name):
                    done.add(name)
                    self._collect(name, kind)

    def _collect_all(self) -> Registry:
        """Stage 5 for every kind (what a full load did at once)."""
        for kind in list(self._kinds.values()):
            self._collect_kind(kind)
        return self

    def _call(self, plugin: str, hook: str, **kwargs: Any) -> list:
        """Call one plugin's implementation of ``hook``; what it registers, or [] if it failed."""
        received: list = []
        caller = self._hook_caller(plugin, hook)
        if caller is None:
            return received
        try:
            caller(register=lambda *args, **kw: received.append((args, kw)), **kwargs)
        except Exception as exc:  # the plugin's own bug: report it, keep the others
            self._fail(plugin, hook, _why(exc))
            return []
        return received

    def _hook_caller(self, plugin: str, hook: str) -> Callable | None:
        """A caller of ``hook`` restricted to one plugin's implementation (None if it has none)."""
        caller = getattr(self._pm.hook, hook, None)
        if caller is None or not any(i.plugin_name == plugin for i in caller.get_hookimpls()):
            return None
        others = [p for n, p in self._pm.list_name_plugin() if n != plugin]
        return self._pm.subset_hook_caller(hook, remove_plugins=others)

    def _add_hookspecs(self, plugin: str, received: tuple) -> None:
        try:
            holder = _one(*received)
        except RegistryError as exc:
            self._fail(plugin, "register_hookspecs", str(exc))
            return
        functions = {
            name: fn
            for name, fn in inspect.getmembers(holder, callable)
            if self._pm.parse_hookspec_opts(holder, name) is not None
        }
        if not functions:
            self._fail(plugin, "register_hookspecs", f"{holder!r} holds no offeval.hookspec")
            return
        for name, function in functions.items():
            existing = getattr(self._pm.hook, name, None)
            if existing is not None and existing.spec is not None:
                self._fail(plugin, "register_hookspecs", f"hook {name!r} is already specified")
                return
            allowed = set(inspect.signature(function).parameters) - {"self"}
            for impl in existing.get_hookimpls() if existing is not None else ():
                extra = set(impl.argnames) - allowed
                if extra:
                    self._fail(
                        impl.plugin_name,
                        name,
                        f"implementation takes {sorted(extra)}, which "
                        f"the specification of {name!r} does not give",
                    )
                    self.remove_plugin(impl.plugin_name)
        self._pm.add_hookspecs(holder)
        self._failures = [
            f for f in self._failures if not (f.stage in functions and UNMATCHED in f.reason)
        ]

    def _add_kind(self, plugin: str, received: tuple) -> list[str]:
        """Declare a kind; the names of the kinds added (none if the declaration failed)."""
        args, kw = received
        try:
            kind = Kind(*args, **kw, plugin=plugin)
        except TypeError as exc:
            self._fail(plugin, "register_component_kinds", f"bad kind declaration: {exc}")
            return []
        caller = getattr(self._pm.hook, kind.hook, None)
        if kind.name in self._kinds:
            owner = self._kinds[kind.name].plugin
            self._fail(
                plugin,
                "register_component_kinds",
                f"kind {kind.name!r} is already declared by plugin {owner!r}",
            )
        elif caller is None or caller.spec is None:
            self._fail(
                plugin,
                "register_component_kinds",
                f"kind {kind.name!r} names hook {kind.hook!r}, which has no specification",
            )
        else:
            self._kinds[kind.name] = kind
            self._components[kind.name] = {}
            return [kind.name]
        return []

    def _report_unmatched(self, names: Sequence[str]) -> None:
        """A hook implementation with no specification is its plugin's failure (a typo)."""
        for hook, caller in sorted(vars(self._pm.hook).items()):
            if caller.spec is None:
                for impl in caller.get_hookimpls():
                    if impl.plugin_name in names:
                        self._fail(
                            impl.plugin_name,
                            hook,
                            f"{UNMATCHED} (misspelled? `offeval plugins` lists the hooks)",
                        )

    def _collect(self, plugin: str, kind: Kind) -> None:
        """Register the components one plugin gives for one kind, isolating failures."""
        for args, kw in self._call(plugin, kind.hook):
            try:
                name, factory = _two(args, kw)
                self._add(self._validated(kind, name, factory, plugin))
            except RegistryError as exc:
                self._fail(plugin, kind.hook, str(exc))

    def _add(self, comp: Component) -> None:
        existing = self._components[comp.kind].get(comp.name)
        if existing is not None:
            builtin = " (built-in)" if existing.plugin in self._builtin else ""
            raise RegistryError(
                f"{comp.kind} {comp.name!r} from plugin {comp.plugin!r} clashes with the one "
                f"from plugin {existing.plugin!r}{builtin}, which keeps the name"
            )
        self._components[comp.kind][comp.name] = comp

    def record_failure(self, plugin: str, stage: str, reason: str) -> None:
        """Record that a plugin failed at some stage (listed by ``offeval plugins``).

        Every kind is collected first, so the failure is listed after those of loading.
        """
        if self._loaded:
            self._collect_all()
        self._fail(plugin, stage, reason)

    def _fail(self, plugin: str, stage: str, reason: str) -> None:
        self._failures.append(PluginFailure(plugin, stage, reason))

    def add_plugin(self, plugin: ModuleType | object, name: str) -> None:
        """Register a plugin object directly (tests, notebooks, embedding apps).

        The plugins it builds on (its ``REQUIRES``) must be registered first;
        if one is not, the plugin is not registered and the reason is in
        :attr:`failures`.
        """
        self.load()._collect_all()  # the failures of loading before this plugin's
        if self._pm.has_plugin(name):
            raise RegistryError(f"a plugin named {name!r} is already registered")
        with self.activated():
            if not self._unmet(plugin, name) and self._register(plugin, name, builtin=False):
                self._setup([name])
        self._collect_all()

    def remove_plugin(self, name: str) -> None:
        """Unregister a plugin and every component it provided."""
        self._pm.unregister(name=name)
        for comps in self._components.values():
            for key in [k for k, c in comps.items() if c.plugin == name]:
                del comps[key]
        for done in self._collected.values():
            done.discard(name)

    def register(self, kind: str, name: str, factory: Any, plugin: str = "<direct>") -> None:
        """Register one component directly; a duplicate name raises RegistryError."""
        self.load()
        self._add(self._validated(self._kind(kind), name, factory, plugin))

    def _validated(self, kind: Kind, name: str, factory: Any, plugin: str) -> Component:
        """The component, checked; an :class:`Alias` resolves through this registry."""
        if isinstance(factory, Alias):
            _check_name(kind, name, plugin)
            return Component(kind.name, name, _AliasFactory(factory, name, kind.name, self), plugin)
        return _validated(kind, name, factory, plugin)

    # -- lookup -----------------------------------------------------------
    def _kind(self, kind: str) -> Kind:
        """A kind by name, its components collected."""
        self.load()
        if kind not in self._kinds:
            raise RegistryError(f"unknown component kind {kind!r}: one of {list(self._kinds)}")
        self._collect_kind(self._kinds[kind])
        return self._kinds[kind]

    def names(self, kind: str) -> list[str]:
        """Names of the registered components of one kind, sorted."""
        return sorted(self._components[self._kind(kind).name])

    def components(self, kind: str | None = None) -> list[Component]:
        """Registered components (of one kind, or all)."""
        self.load()
        kinds = list(self._collect_all()._kinds) if kind is None else [self._kind(kind).name]
        return [c for k in kinds for _, c in sorted(self._components[k].items())]

    def get(self, kind: str, name: str) -> Component:
        """One component; a clear error listing the known names if absent."""
        comps = self._components[self._kind(kind).name]
        if name not in comps:
            known = ", ".join(sorted(comps)) or "none"
            close = did_you_mean(name, comps)
            raise RegistryError(f"no {kind} named {name!r}{close}; registered: {known}")
        return comps[name]

    def distinct(self, kind: str) -> list[str]:
        """The names of one kind's components, aliases left out: each runs once by default.

        A declared :class:`Alias` is left out (its original is there). So is
        a subclass that only renames its original (a third party's older way
        to write an alias): built at their defaults, the two have the same
        :func:`behaviour` and parameters, and only the original's name is kept
        (the first name, if none is the original). Components that cannot be
        built at their defaults are all kept.
        """
        kept: dict[Any, str] = {}
        names = []
        for comp in self.components(kind):
            if comp.alias is not None:
                continue
            try:
                built = self.create(kind, comp.name)
                key = (behaviour(type(built)), repr(sorted(_params_of(built).items())))
            except Exception:  # noqa: BLE001 - unbuildable here: the caller reports it
                names.append(comp.name)
                continue
            if key not in kept or comp.factory is key[0]:
                kept[key] = comp.name
        names += kept.values()
        return sorted(names)

    def create(self, kind: str, name: str, **params: Any) -> Any:
        """Build a configured component: ``create("estimator", "my_estimator", cap=100)``.

        Unknown parameter names are an error listing the known ones; the
        component resolves any component it names through this registry.
        """
        factory = self.get(kind, name).factory
        known = _parameters(factory)
        if known is not None and set(params) - set(known):
            unknown = sorted(set(params) - set(known))
            raise RegistryError(
                self._renamed(kind, name, unknown[0], params[unknown[0]])
                or f"{kind} {name!r} has no parameter {', '.join(unknown)}"
                f"{did_you_mean(unknown[0], known)}; its parameters: {', '.join(known) or 'none'}"
            )
        with self.activated():
            try:
                return factory(**params)
            except TypeError as exc:
                raise RegistryError(
                    f"cannot configure {kind} {name!r} with {params}: {exc}"
                ) from None

    def _renamed(self, kind: str, name: str, param: str, value: Any) -> str | None:
        """The message for a parameter given under the other name of an alias pair
        (``switch_dr:lambda_=5``, ``switch-dr:tau=5``), or None."""
        comps = self._components[kind]
        pairs = [(name, comps[name].alias)] + [
            (other, c.alias) for other, c in comps.items() if c.alias and c.alias.original == name
        ]
        for alias_name, alias in pairs:
            if alias is None:
                continue
            for theirs, ours in alias.rename.items():
                if param == (ours if name == alias_name else theirs):
                    source = f" ({alias.source})" if alias.source else ""
                    v = _spelled_value(value)
                    return (
                        f"{kind} {name!r} has no parameter {param}: {alias_name}{source} calls "
                        f"it {theirs}, {alias.original} calls it {ours}: write "
                        f"{alias_name}:{theirs}={v} or {alias.original}:{ours}={v}"
                    )
        return None

    def create_from_spec(self, kind: str, spec: str) -> Any:
        """Build from a spec string such as ``"name:cap=100,normalised=true"``."""
        name, params = parse_spec(spec)
        return self.create(kind, name, **params)

    def resolve(self, kind: str, spec_or_component: Any) -> Any:
        """A component given either ready-made or as a spec string to build."""
        if isinstance(spec_or_component, str):
            return self.create_from_spec(kind, spec_or_component)
        return spec_or_component

    def call(self, hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call ``hook`` once per plugin that implements it: (plugin, value) for each
        ``register(value)`` it made.

        A plugin whose implementation raises, or registers anything but one
        value, is recorded in :attr:`failures`; the others are unaffected.
        """
        self.load()._collect_all()  # its failures come after those of loading
        out = []
        with self.activated():
            for name in self.plugins:
                for args, kw in self._call(name, hook, **kwargs):
                    try:
                        out.append((name, _one(args, kw)))
                    except RegistryError as exc:
                        self._fail(name, hook, str(exc))
        return out

    def implementers(self, hook: str) -> list[str]:
        """The plugins that implement ``hook``."""
        return [name for name in self.plugins if self._hook_caller(name, hook) is not None]

    @contextmanager
    def activated(self) -> Iterator[Registry]:
        """Make this the registry that :func:`active_registry` returns, within the block."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)

    @property
    def plugins(self) -> list[str]:
        """Names of the registered plugins (the core itself is ``offeval``)."""
        self.load()
        return [name for name, _ in self._pm.list_name_plugin()]

    @property
    def hooks(self) -> list[str]:
        """Names of the specified hooks (the core's and those plugins brought), sorted."""
        self.load()
        return sorted(name for name, c in vars(self._pm.hook).items() if c.spec is not None)

    def is_builtin(self, plugin: str) -> bool:
        """Whether the plugin comes with offeval itself."""
        return plugin in self._builtin

    def check_pending(self) -> None:
        """Raise if a plugin implements a hook that no specification declares (a typo)."""
        self.load()
        unmatched = [f for f in self.failures if UNMATCHED in f.reason]
        if unmatched:
            raise RegistryError(
                "; ".join(f"plugin {f.plugin!r}: {f.stage} {f.reason}" for f in unmatched)
            )


def _is_builtin(ep: EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    return dist is not None and dist.metadata["Name"] == BUILTIN_DISTRIBUTION


def _one(args: tuple, kw: dict) -> Any:
    """The single value a ``register(value)`` callback was given."""
    if len(args) + len(kw) != 1:
        raise RegistryError(f"register(value) takes one value, got {args} {kw}")
    return args[0] if args else next(iter(kw.values()))


def _two(args: tuple, kw: dict) -> tuple[str, Any]:
    """The (name, factory) a ``register`` callback was given."""
    try:
        bound = inspect.signature(lambda name, factory: None).bind(*args, **kw)
    except TypeError:
        raise RegistryError(f"register(name, factory) called with {args} {kw}") from None
    return bound.arguments["name"], bound.arguments["factory"]


def _parameters(factory: Any) -> list[str] | None:
    """The keyword parameters a factory accepts, or None if it takes any (or cannot tell)."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    params = [p for p in sig.parameters.values() if p.name != "self"]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL]


#: Class attributes that do not change what a component computes (an alias's own).
COSMETIC = frozenset(
    {
        "name",
        "__doc__",
        "__module__",
        "__qualname__",
        "__firstlineno__",
        "__static_attributes__",
        "__annotations__",  # name: str = "alias"
        "_abc_impl",  # every subclass of an abc.ABC has its own
        "__abstractmethods__",
    }
)


def behaviour(cls: type) -> type:
    """The class that defines what instances of ``cls`` compute: ``cls`` itself, or,
    for an alias (a subclass that only sets another ``name`` or docstring), its original."""
    while len(cls.__bases__) == 1 and set(vars(cls)) <= COSMETIC:
        cls = cls.__bases__[0]
    return cls


def _params_of(component: Any) -> dict:
    get_params = getattr(component, "get_params", None)
    return dict(get_params()) if callable(get_params) else {}


def _spelled_value(value: Any) -> str:
    """A parameter's value as written in a spec (``inf``, ``5``, ``q_hat``)."""
    if isinstance(value, float) and (value == float("inf") or value.is_integer()):
        return "inf" if value == float("inf") else f"{value:g}"
    return str(value)


def _check_name(kind: Kind, name: str, plugin: str) -> None:
    """A component's name: an identifier, hyphens allowed (obp's ``switch-dr``)."""
    if not isinstance(name, str) or not name or not name.replace("-", "_").isidentifier():
        raise RegistryError(f"{kind.name} name {name!r} from plugin {plugin!r} is not a valid name")


def _validated(kind: Kind, name: str, factory: Any, plugin: str) -> Component:
    _check_name(kind, name, plugin)
    if isinstance(factory, Deferred):  # checked when imported
        return Component(kind.name, name, factory.checked(kind.required), plugin)
    if not callable(factory):
        raise RegistryError(f"{kind.name} {name!r} from plugin {plugin!r} is not callable")
    missing = [m for m in kind.required if not hasattr(factory, m)]
    if missing:
        raise RegistryError(f"{kind.name} {name!r} from plugin {plugin!r} lacks {missing}")
    return Component(kind.name, name, factory, plugin)


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


_default: Registry | None = None


def allow_list_note() -> str | None:
    """``OFFEVAL_PLUGINS='a,b' loads only the plugins it names`` when that allow-list is set:
    why a plugin's command or component may be missing though installed."""
    allowed = os.environ.get(ALLOW_ENV)
    return None if allowed is None else f"{ALLOW_ENV}={allowed!r} loads only the plugins it names"


def get_registry() -> Registry:
    """The process-wide registry, loaded lazily on first use."""
    global _default
    if _default is None:
        _default = Registry()
    return _default.load()


def active_registry() -> Registry:
    """The registry building components right now, else the process-wide one.

    Plugins resolve the components they name (``"exponential(gamma=0.9)"``)
    through it, so a component built by a registry uses that registry.
    """
    return _ACTIVE.get() or get_registry()


def reset_registry() -> None:
    """Forget the process-wide registry (it reloads on next use)."""
    global _default
    _default = None
