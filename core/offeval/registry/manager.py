"""The plugin registry: a pluggy ``PluginManager`` and the components its plugins register.

:meth:`Registry.load` registers the core (a plugin of itself), then each plugin of the
``offeval`` entry-point group, built-ins first. A plugin that fails (to import, to register,
for want of a plugin its ``REQUIRES`` names) is recorded in :attr:`Registry.failures` and the
others load. A kind's hook is called plugin by plugin when the kind is first used.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pluggy

from offeval.errors import RegistryError, did_you_mean
from offeval.lazy import Deferred
from offeval.registry import hookspecs
from offeval.registry.aliases import Alias, aliased, misnamed, parameters_of
from offeval.specs import parse_spec

ENTRY_POINT_GROUP = "offeval"
#: Comma-separated entry-point names; when set, only these plugins load.
ALLOW_ENV = "OFFEVAL_PLUGINS"
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


@dataclass(frozen=True)
class PluginFailure:
    """A plugin (or one of its registrations) that failed, and why."""

    plugin: str
    stage: str
    reason: str


class _Factory:
    """:attr:`Component.factory`, read: a :class:`Deferred` imported, an :class:`Alias` built."""

    def __get__(self, comp: Any, owner: type | None = None) -> Any:
        if comp is None:
            raise AttributeError("factory")  # the field has no default
        value = comp.__dict__["_factory"]
        if not isinstance(value, Alias):
            return value.resolve() if isinstance(value, Deferred) else value
        original = comp.registry._components[comp.kind].get(value.original)
        why = f"{comp.kind} {comp.name!r} is an alias of {value.original!r}"
        if original is None:
            raise RegistryError(f"{why}, which is not registered")
        if original.alias is not None:
            raise RegistryError(f"{why}, itself an alias: name {original.alias.original!r}")
        return aliased(comp.name, value, original.factory)

    def __set__(self, comp: Any, value: Any) -> None:
        comp.__dict__["_factory"] = value


@dataclass(frozen=True)
class Component:
    """A registered component: its kind, name, factory and providing plugin (a
    :class:`Deferred` factory is imported when first read, an :class:`Alias` built)."""

    kind: str
    name: str
    factory: Any = _Factory()  # type: ignore[assignment]
    plugin: str
    registry: Registry | None = field(default=None, repr=False, compare=False)

    @property
    def deferred(self) -> Deferred | None:
        """The reference the factory was registered as, if it is one (nothing is imported)."""
        value = self.__dict__["_factory"]
        return value if isinstance(value, Deferred) else None

    @property
    def alias(self) -> Alias | None:
        """What it is another name for, if it is an alias (nothing is imported)."""
        value = self.__dict__["_factory"]
        return value if isinstance(value, Alias) else None

    @property
    def summary(self) -> str:
        """First line of the factory's docstring (a broken alias's: why it cannot be built)."""
        built = self._built()
        doc = f"a broken alias: {built}" if isinstance(built, RegistryError) else built.__doc__
        return (doc or "").strip().split("\n")[0]

    @property
    def parameters(self) -> str:
        """The factory's named parameters with their defaults (``cap=100.0, by='group'``)."""
        return ", ".join(
            p.name if p.default is p.empty else f"{p.name}={p.default!r}"
            for p in parameters_of(self._built()) or []  # a broken alias's error has none
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )

    def _built(self) -> Any:
        """The factory; for a broken alias, the RegistryError saying why it cannot be built."""
        try:
            return self.factory
        except RegistryError as exc:
            if self.alias is None:
                raise
            return exc


class _Core:
    """The host as a plugin of itself: the kinds the core uses, the normal interval."""

    @hookspecs.hookimpl
    def register_component_kinds(self, register: hookspecs.Register) -> None:
        """The kinds the core looks up itself (in the command line, the demo and the kit)."""
        register("estimator", "register_estimators", ("contribute", "combine", "get_params"))
        environment = ("logging_policy", "candidate_policies", "simulate", "true_value", "ab_test")
        register("environment", "register_environments", environment)
        register("command", "register_commands", hookspecs.COMMAND_METHODS)
        register("report", "register_reports", ("help", "write"))
        register("reward_model", "register_reward_models", ("fit",))
        register("policy", "register_policies", ("probabilities",))
        interval = ("needs", "reads", "unavailable", "check", "start", "bounds", "unreadable")
        register("interval", "register_intervals", interval)

    @hookspecs.hookimpl
    def register_intervals(self, register: hookspecs.Register) -> None:
        """The normal interval (plugins add others)."""
        register("normal", Deferred("offeval.engine.intervals:Normal"))


_ACTIVE: ContextVar[Registry | None] = ContextVar("active_registry", default=None)


class Registry:
    """Components registered by plugins, looked up and configured by name (loaded on first use)."""

    def __init__(self, *, entry_points: bool = True):
        self._use_entry_points, self._loaded = entry_points, False
        self._pm = pluggy.PluginManager(hookspecs.PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self._kinds: dict[str, Kind] = {}
        self._components: dict[str, dict[str, Component]] = {}
        self._collected: dict[str, set[str]] = {}  # per kind, the plugins collected
        self._builtin: set[str] = set()
        self._failures: list[PluginFailure] = []

    @property
    def kinds(self) -> dict[str, Kind]:
        """The component kinds declared by the loaded plugins (the core's included)."""
        return self.load()._kinds

    @property
    def failures(self) -> list[PluginFailure]:
        """Plugins (or registrations) that failed, and why; last, each implementation of a
        hook that nobody specifies (a misspelled name: pluggy's ``check_pending``)."""
        why = "implements a hook that no plugin specifies (`offeval plugins` lists hooks)"
        return self.load()._collect_all()._failures + [
            PluginFailure(impl.plugin_name, hook, why)
            for hook, caller in sorted(vars(self._pm.hook).items())
            if not caller.has_spec()
            for impl in caller.get_hookimpls()
            if not impl.optionalhook
        ]

    def load(self) -> Registry:
        """Discover and register plugins once (later calls do nothing)."""
        if self._loaded:
            return self
        self._loaded = True
        with self.activated():
            self._register(_Core(), "offeval", builtin=True)
            for ep, builtin in self._entry_points() if self._use_entry_points else ():
                if self._pm.has_plugin(ep.name):
                    owner = "the built-in plugin" if ep.name in self._builtin else "another plugin"
                    why = f"the plugin name {ep.name!r} is taken by {owner}"
                    self._fail(ep.name, "import", why)
                elif not self._pm.is_blocked(ep.name):  # blocked: left out by the allow-list
                    try:
                        self._register(ep.load(), ep.name, builtin)
                    except Exception as exc:  # a broken plugin must not break the others
                        self._fail(ep.name, "import", _why(exc))
            self._setup(self.plugins)
        return self

    def _entry_points(self) -> list[tuple[EntryPoint, bool]]:
        """Installed plugins, built-ins first; the allow-list blocks the others (and fails the
        names it gives that nothing provides)."""
        found = [
            (ep, getattr(ep, "dist", None) is not None and ep.dist.metadata["Name"] == "offeval")
            for ep in entry_points(group=ENTRY_POINT_GROUP)
        ]
        allow, names = os.environ.get(ALLOW_ENV), sorted({ep.name for ep, _ in found})
        if allow is not None:
            allowed = {n.strip() for n in allow.split(",") if n.strip()}
            installed = f"(installed: {', '.join(names) or 'none'})"
            for name in sorted(allowed.difference(names)):
                why = f"{ALLOW_ENV} names it but no plugin is installed under that name {installed}"
                self._fail(name, "allow-list", why)
            for name in set(names) - allowed - set(self.plugins):  # the core stays
                self._pm.set_blocked(name)
        return sorted(found, key=lambda item: (not item[1], item[0].name))

    def _register(self, plugin: object, name: str, builtin: bool = False) -> None:
        """Register with pluggy, which checks each implementation against its specification."""
        try:
            self._pm.register(plugin, name=name)
        except Exception as exc:  # an implementation taking arguments its hook does not give
            self._fail(name, "register", _why(exc))
        else:
            self._builtin.update([name] if builtin else [])

    def _setup(self, names: list[str]) -> None:
        """Block the plugins whose ``REQUIRES`` are not loaded; add the others' hooks and kinds."""
        while unmet := [n for n in names if self._pm.has_plugin(n) and self._unmet(n)]:
            for name in unmet:
                self._pm.set_blocked(name)
        names = [n for n in names if self._pm.has_plugin(n)]
        self._each("register_hookspecs", names, self._add_hookspecs)
        self._each("register_component_kinds", names, self._add_kind)

    def _unmet(self, name: str) -> bool:
        """Whether a plugin builds on one that is not loaded (its failure says how to load it)."""
        needs = getattr(self._pm.get_plugin(name), REQUIRES, ())
        if not isinstance(needs, (tuple, list)) or not all(isinstance(n, str) and n for n in needs):
            why = f"{REQUIRES} must be a tuple of plugin names, got {needs!r}"
            self._fail(name, "requires", why)
            return True
        missing = [n for n in needs if not self._pm.has_plugin(n)]
        for need in missing:
            how = (
                "it failed to load (see its own failure)"
                if any(f.plugin == need for f in self._failures)
                else f"register it first (add_plugin(..., name={need!r}))"
                if not self._use_entry_points
                else f"add {need} to {ALLOW_ENV}"
                if self._pm.is_blocked(need)
                else f"install the package that provides it (an {ENTRY_POINT_GROUP!r} "
                f"entry point named {need!r})"
            )
            self._fail(name, "requires", f"builds on plugin {need!r}, which is not loaded: {how}")
        return bool(missing)

    def _each(self, hook: str, plugins: list[str], take: Callable, **kwargs: Any) -> None:
        """Call each plugin's implementation of ``hook`` on its own and hand its registrations to
        ``take(plugin, args, kw)``; one that raises, or that ``take`` refuses, is a failure."""
        implementers = self.implementers(hook)
        with self.activated():
            for plugin in [name for name in plugins if name in implementers]:
                others = [self._pm.get_plugin(name) for name in implementers if name != plugin]
                received: list[tuple[tuple, dict]] = []
                try:
                    self._pm.subset_hook_caller(hook, others)(
                        register=lambda *args, **kw: received.append((args, kw)),  # noqa: B023 - called here
                        **kwargs,
                    )
                except Exception as exc:  # the plugin's own bug: report it, keep the others
                    self._fail(plugin, hook, _why(exc))
                    continue
                for args, kw in received:
                    try:
                        take(plugin, args, kw)
                    except RegistryError as exc:
                        self._fail(plugin, hook, str(exc))

    def _add_hookspecs(self, plugin: str, args: tuple, kw: dict) -> None:
        """Add the specifications a plugin brings; a plugin already implementing one with an
        argument it does not give leaves, as its failure."""
        holder = _one(args, kw)
        hooks = [name for name in dir(holder) if self._pm.parse_hookspec_opts(holder, name)]
        if not hooks:
            raise RegistryError(f"{holder!r} holds no offeval.hookspec")
        for hook in hooks:
            caller = getattr(self._pm.hook, hook, None)
            if caller is not None and caller.has_spec():
                raise RegistryError(f"hook {hook!r} is already specified")
            given = set(inspect.signature(getattr(holder, hook)).parameters)
            for impl in caller.get_hookimpls() if caller is not None else ():
                if extra := sorted(set(impl.argnames) - given):
                    why = f"implementation takes {extra}, which the specification does not give"
                    self._fail(impl.plugin_name, hook, why)
                    self.remove_plugin(impl.plugin_name)
        self._pm.add_hookspecs(holder)

    def _add_kind(self, plugin: str, args: tuple, kw: dict) -> None:
        """Declare a kind: a name not taken, a hook that has a specification."""
        try:
            kind = Kind(*args, **kw, plugin=plugin)
        except TypeError as exc:
            raise RegistryError(f"bad kind declaration: {exc}") from None
        if kind.name in self._kinds:
            owner = self._kinds[kind.name].plugin
            raise RegistryError(f"kind {kind.name!r} is already declared by plugin {owner!r}")
        if kind.hook not in self.hooks:
            raise RegistryError(
                f"kind {kind.name!r} names hook {kind.hook!r}, which has no specification"
            )
        self._kinds[kind.name], self._components[kind.name] = kind, {}

    def _kind(self, kind: str) -> Kind:
        """A kind by name, its components collected from each plugin not yet collected."""
        if kind not in self.load()._kinds:
            raise RegistryError(f"unknown component kind {kind!r}: one of {list(self._kinds)}")
        found, done = self._kinds[kind], self._collected.setdefault(kind, set())
        todo = [plugin for plugin in self.plugins if plugin not in done]
        done.update(todo)
        self._each(found.hook, todo, lambda p, args, kw: self._add(found, p, args, kw))
        return found

    def _collect_all(self) -> Registry:
        """Collect every kind (so failures come in the order of a full load)."""
        for kind in list(self._kinds):
            self._kind(kind)
        return self

    def _add(self, kind: Kind, plugin: str, args: tuple, kw: dict) -> None:
        """Check and add the component of ``register(name, factory)`` under a name not taken
        (who has it keeps it)."""
        try:
            name, factory = (lambda name, factory: (name, factory))(*args, **kw)
        except TypeError:
            raise RegistryError(f"register(name, factory) called with {args} {kw}") from None
        who = f"{name!r} from plugin {plugin!r}"
        if not isinstance(name, str) or not name.replace("-", "_").isidentifier():
            raise RegistryError(f"{kind.name} name {who} is not a valid name")
        if isinstance(factory, Deferred):
            factory = factory.checked(kind.required)  # checked when imported
        elif not isinstance(factory, Alias):  # an alias is checked when built
            if not callable(factory):
                raise RegistryError(f"{kind.name} {who} is not callable")
            if missing := [m for m in kind.required if not hasattr(factory, m)]:
                raise RegistryError(f"{kind.name} {who} lacks {missing}")
        existing = self._components[kind.name].get(name)
        if existing is not None:
            builtin = " (built-in)" if existing.plugin in self._builtin else ""
            raise RegistryError(
                f"{kind.name} {who} clashes with the one from plugin {existing.plugin!r}{builtin}, "
                "which keeps the name"
            )
        self._components[kind.name][name] = Component(kind.name, name, factory, plugin, self)

    def _fail(self, plugin: str, stage: str, reason: str) -> None:
        self._failures.append(PluginFailure(plugin, stage, reason))

    def record_failure(self, plugin: str, stage: str, reason: str) -> None:
        """Record a plugin's failure at a stage, after those of loading (``offeval plugins``)."""
        if self._loaded:
            self._collect_all()
        self._fail(plugin, stage, reason)

    def add_plugin(self, plugin: object, name: str) -> None:
        """Register a plugin object directly (tests, notebooks, embedding apps); a plugin its
        ``REQUIRES`` names and not registered first leaves it out, as a failure."""
        self.load()._collect_all()  # the failures of loading before this plugin's
        if self._pm.has_plugin(name):
            raise RegistryError(f"a plugin named {name!r} is already registered")
        self._pm.unblock(name)  # added by name: the allow-list does not apply
        with self.activated():  # pluggy reads the plugin's names: a lazy one is imported
            self._register(plugin, name)
            self._setup([name])
        self._collect_all()

    def remove_plugin(self, name: str) -> None:
        """Unregister a plugin and every component it provided."""
        self._pm.unregister(name=name)
        for kind, comps in self._components.items():
            self._components[kind] = {key: c for key, c in comps.items() if c.plugin != name}
        for done in self._collected.values():
            done.discard(name)

    def register(self, kind: str, name: str, factory: Any, plugin: str = "<direct>") -> None:
        """Register one component directly; a duplicate name raises RegistryError."""
        self._add(self._kind(kind), plugin, (name, factory), {})

    def names(self, kind: str) -> list[str]:
        """Names of the registered components of one kind, sorted."""
        return sorted(self._components[self._kind(kind).name])

    def components(self, kind: str | None = None) -> list[Component]:
        """Registered components (of one kind, or all)."""
        kinds = list(self.load()._collect_all()._kinds) if kind is None else [self._kind(kind).name]
        return [comp for k in kinds for _, comp in sorted(self._components[k].items())]

    def get(self, kind: str, name: str) -> Component:
        """One component; a clear error listing the known names if absent."""
        comps = self._components[self._kind(kind).name]
        if name not in comps:
            known = ", ".join(sorted(comps)) or "none"
            raise RegistryError(
                f"no {kind} named {name!r}{did_you_mean(name, comps)}; registered: {known}"
            )
        return comps[name]

    def distinct(self, kind: str) -> list[str]:
        """The names of one kind's components but the aliases (each runs once by default)."""
        return [comp.name for comp in self.components(kind) if comp.alias is None]

    def create(self, kind: str, name: str, **params: Any) -> Any:
        """Build a configured component: ``create("estimator", "my_estimator", cap=100)``; an
        unknown parameter is an error listing the known ones."""
        factory = self.get(kind, name).factory
        named = parameters_of(factory)
        if named is not None and all(p.kind is not p.VAR_KEYWORD for p in named):
            known = [p.name for p in named if p.kind is not p.VAR_POSITIONAL]
            if unknown := sorted(set(params) - set(known)):
                aliases = {n: c.alias for n, c in self._components[kind].items() if c.alias}
                raise RegistryError(
                    misnamed(kind, name, unknown[0], params[unknown[0]], aliases)
                    or f"{kind} {name!r} has no parameter {', '.join(unknown)}"
                    f"{did_you_mean(unknown[0], known)}; its parameters: "
                    + (", ".join(known) or "none")
                )
        with self.activated():
            try:
                return factory(**params)
            except TypeError as exc:
                why = f"cannot configure {kind} {name!r} with {params}: {exc}"
                raise RegistryError(why) from None

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
        ``register(value)`` it made (a raise, or a call without one value, is a failure)."""
        out: list[tuple[str, Any]] = []
        plugins = self.load()._collect_all().plugins  # its failures come after those of loading
        self._each(hook, plugins, lambda p, args, kw: out.append((p, _one(args, kw))), **kwargs)
        return out

    def implementers(self, hook: str) -> list[str]:
        """The plugins that implement ``hook``."""
        caller = getattr(self.load()._pm.hook, hook, None)
        names = {impl.plugin_name for impl in caller.get_hookimpls()} if caller else set()
        return [name for name in self.plugins if name in names]

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
        return [name for name, plugin in self.load()._pm.list_name_plugin() if plugin is not None]

    @property
    def hooks(self) -> list[str]:
        """Names of the specified hooks (the core's and those plugins brought), sorted."""
        return sorted(name for name, c in vars(self.load()._pm.hook).items() if c.has_spec())

    def is_builtin(self, plugin: str) -> bool:
        """Whether the plugin comes with offeval itself."""
        return plugin in self._builtin

    def check_pending(self) -> None:
        """Raise if a plugin implements a hook that no specification declares (a typo)."""
        try:
            self.load()._pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise RegistryError(f"plugin {self._pm.get_name(exc.plugin)!r}: {exc}") from None


def _one(args: tuple, kw: dict) -> Any:
    """The single value a ``register(value)`` callback was given."""
    if len(args) + len(kw) != 1:
        raise RegistryError(f"register(value) takes one value, got {args} {kw}")
    return args[0] if args else next(iter(kw.values()))


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
    """The registry building components right now, else the process-wide one (a component
    built by a registry resolves the components it names through that registry)."""
    return _ACTIVE.get() or get_registry()


def reset_registry() -> None:
    """Forget the process-wide registry (it reloads on next use)."""
    global _default
    _default = None
