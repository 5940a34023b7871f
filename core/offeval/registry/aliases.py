"""Another name for a registered component, with its own parameter names and defaults.

Built, an :class:`Alias` is its original class under the alias's name, its parameters
renamed and its defaults its own; the default evaluation runs the original only.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from offeval.errors import ConfigurationError, RegistryError


@dataclass(frozen=True)
class Alias:
    """The registration of an alias: ``register("my-est", Alias("my_est", ...))``.

    ``original``: the registered name it stands for (not itself an alias); ``rename``: the
    alias's parameter name -> the original's (``{"lambda_": "tau"}``), the others keep theirs;
    ``defaults``: where its defaults differ, by its names (``{"lambda_": inf}``); ``source``:
    where users know the name from (``"a peer library's SwitchDR"``), the first words of its
    summary in ``offeval plugins`` and in legends.
    """

    original: str
    rename: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.original, str) or not self.original:
            raise RegistryError(f"Alias: original must be a registered name, got {self.original!r}")
        for what in ("rename", "defaults"):
            if not isinstance(getattr(self, what), Mapping):
                raise RegistryError(f"Alias({self.original!r}): {what} must be a dict")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.rename.items()):
            raise RegistryError(f"Alias({self.original!r}): rename maps names to names")
        if len(set(self.rename.values())) != len(self.rename):
            raise RegistryError(f"Alias({self.original!r}): rename gives two names to one")


def misnamed(kind: str, name: str, param: str, value: Any, aliases: Mapping[str, Alias]) -> str:
    """The message for ``name:param=value`` where ``param`` is the other name's spelling of
    an alias pair (``my_est:cap=5``, ``my-est:clip=5``); empty if it is not."""
    for other, alias in aliases.items():
        for theirs, ours in alias.rename.items() if name in (other, alias.original) else ():
            if param == (ours if name == other else theirs):
                source, v = f" ({alias.source})" if alias.source else "", spelled(value)
                return (
                    f"{kind} {name!r} has no parameter {param}: {other}{source} calls it "
                    f"{theirs}, {alias.original} calls it {ours}: write {other}:{theirs}={v} "
                    f"or {alias.original}:{ours}={v}"
                )
    return ""


def spelled(value: Any, quoted: bool = False) -> str:
    """A value as a user writes it: ``inf``, ``10``, ``0.5``, ``q_hat`` (``'q_hat'`` quoted)."""
    if isinstance(value, float) and (value == float("inf") or value.is_integer()):
        return "inf" if value == float("inf") else f"{value:g}"
    return repr(value) if quoted else str(value)


def parameters_of(factory: Any) -> list[inspect.Parameter] | None:
    """A factory's parameters but ``self``, or None if it has no signature."""
    try:
        return [p for p in inspect.signature(factory).parameters.values() if p.name != "self"]
    except (TypeError, ValueError):
        return None


def _mapping(name: str, alias: Alias, original: type) -> tuple[dict[str, str], dict]:
    """The alias's parameters in the original's order (its name -> the original's), and the
    original's named parameters."""
    named = parameters_of(original)
    if named is None:
        raise RegistryError(f"{original!r} has no signature to rename")
    params = {p.name: p for p in named if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    names = {o: a for a, o in alias.rename.items()}
    if unknown := sorted(set(names) - set(params)):
        raise RegistryError(
            f"alias {name!r} renames {', '.join(unknown)}, which {alias.original!r} does not take"
        )
    taken = {names.get(p, p): p for p in params}
    if len(taken) != len(params):
        raise RegistryError(f"alias {name!r}: a new name is also one of the original's")
    if unknown := sorted(set(alias.defaults) - set(taken)):
        raise RegistryError(f"alias {name!r} sets defaults of {', '.join(unknown)}, not its own")
    return taken, params


def _description(alias: Alias, taken: Mapping[str, str], params: Mapping) -> str:
    """One sentence: what the alias is, how its parameters map, where its defaults differ."""
    words = [f"{alias.source}: " if alias.source else "", f"offeval's {alias.original}"]
    if renamed := [f"{a} is its {o}" for a, o in taken.items() if a != o]:
        words.append(" (" + ", ".join(renamed) + ")")
    for a, value in alias.defaults.items():
        theirs, said = params[taken[a]].default, f"; {a} defaults to {spelled(value, True)}"
        if theirs is inspect.Parameter.empty:
            words.append(said)
        elif theirs != value:
            where = f", where {alias.original}'s {taken[a]} defaults to {spelled(theirs, True)}"
            words.append(said + where)
    return "".join(words) + "."


_CLASSES: dict[tuple[str, type, str], type] = {}


def aliased(name: str, alias: Alias, original: type) -> type:
    """The original class under the alias's name, parameters and defaults (made once)."""
    key = (name, original, repr(alias))
    if key in _CLASSES:
        return _CLASSES[key]
    if not isinstance(original, type):
        raise RegistryError(f"alias {name!r}: {alias.original!r} is not a class to rename")
    taken, params = _mapping(name, alias, original)
    renamed = {a: o for a, o in taken.items() if a != o}
    signature = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            params[o].replace(name=a, default=alias.defaults.get(a, params[o].default))
            for a, o in taken.items()
        ]
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        given = {taken[a]: v for a, v in bound.arguments.items() if a != "self"}
        try:
            original.__init__(self, **given)
        except ConfigurationError as error:  # in the alias's words: lambda_, not cap
            message = str(error)
            for a, o in renamed.items():
                message = re.sub(rf"(?<![\w.]){re.escape(o)}(?![\w(])", a, message)
            raise ConfigurationError(message) from None

    __init__.__signature__ = signature  # type: ignore[attr-defined]

    def get_params(self) -> dict[str, Any]:
        """The parameters under the alias's names."""
        return {a: getattr(self, o) for a, o in taken.items()}

    def __reduce__(self) -> tuple:
        return _rebuild, (name, alias, original, self.get_params())

    namespace: dict[str, Any] = {
        "name": name,
        "__init__": __init__,
        "get_params": get_params,
        "__reduce__": __reduce__,
        "__module__": original.__module__,
        "__doc__": _description(alias, taken, params) + "\n\n" + (original.__doc__ or ""),
        "alias_of": alias,
    }
    for a, o in renamed.items():
        namespace[a] = property(lambda self, o=o: getattr(self, o))
    _CLASSES[key] = type(f"{original.__name__}[{name}]", (original,), namespace)
    return _CLASSES[key]


def _rebuild(name: str, alias: Alias, original: type, params: dict[str, Any]) -> Any:
    """An alias's instance from its parts (how instances are pickled)."""
    return aliased(name, alias, original)(**params)
