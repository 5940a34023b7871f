"""Names imported on first use, so that ``offeval --help`` and importing a plugin load no
module they do not need: components registered by reference (:class:`Deferred`) and a
package's public names (:func:`lazy_names`). It imports only :mod:`offeval.errors`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import reduce
from importlib import import_module
from typing import Any

from offeval.errors import RegistryError


class Deferred:
    """A component registered by reference, imported when it is first used.

    ``Deferred("my_plugin.commands:HelloCommand", help="say hello")``: ``target`` is
    ``"package.module:Name"`` (a dotted name after the colon reaches into a class); the
    keywords are attributes the host reads without importing it (a command's ``help``),
    which the target must have too, with the kind's required ones (else RegistryError).
    """

    def __init__(self, target: str, **attributes: Any):
        module, _, name = target.partition(":")
        if not module or not name or not all(p.isidentifier() for p in module.split(".")):
            raise RegistryError(f"Deferred target {target!r} is not 'package.module:Name'")
        self.target = target
        self.attributes = attributes
        vars(self).update(attributes)
        self._required: tuple[str, ...] = ()
        self._resolved: Any = None

    def __repr__(self) -> str:
        return f"Deferred({self.target!r})"

    def checked(self, required: Sequence[str]) -> Deferred:
        """The same reference, whose target must also have ``required`` (a kind's methods)."""
        copy = Deferred(self.target, **self.attributes)
        copy._required = tuple(required)
        return copy

    def resolve(self) -> Any:
        """Import the target and check it against what this reference declares (once: every
        build of a component reads its factory)."""
        if self._resolved is not None:
            return self._resolved
        module, _, name = self.target.partition(":")
        try:
            value: Any = reduce(getattr, name.split("."), import_module(module))
        except (ImportError, AttributeError) as exc:
            raise RegistryError(
                f"cannot import {self.target}: {type(exc).__name__}: {exc}"
            ) from exc
        if not callable(value):
            raise RegistryError(f"{self.target} is not callable")
        if missing := [m for m in self._required if not hasattr(value, m)]:
            raise RegistryError(f"{self.target} lacks {missing}")
        if differ := [k for k, v in self.attributes.items() if getattr(value, k, None) != v]:
            raise RegistryError(
                f"{self.target}: its {', '.join(differ)} differ from what its registration declares"
            )
        self._resolved = value
        return value


def lazy_names(
    package: str,
    where: Mapping[str, Iterable[str]],
    computed: Mapping[str, Callable[[], Any]] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that imports a package's names on first use.

    ``__getattr__ = lazy_names(__name__, {"my_plugin.estimators": ("MyEstimator",)})`` in
    ``my_plugin/__init__.py``: ``where`` maps each module of the package (none outside it)
    to the names it defines, ``computed`` a name to a function building its value; a name
    that is a submodule is that module.
    """
    modules = {name: module for module, names in where.items() for name in names}
    top = package.split(".")[0]
    if outside := sorted({m for m in modules.values() if m.split(".")[0] != top}):
        raise RegistryError(f"lazy_names of {package}: {outside} are not modules of {package}")
    computed = dict(computed or {})

    def __getattr__(name: str) -> Any:
        if name in computed:
            value = computed[name]()
        elif name in modules:
            try:
                value = getattr(import_module(modules[name]), name)
            except AttributeError:  # a submodule not imported yet
                value = import_module(f"{modules[name]}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
