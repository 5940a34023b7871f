"""Every measure's declaration, read from the measure modules, and the providers computing them.

The modules of :mod:`offeval_ir.measure` and of its subpackage
:mod:`~offeval_ir.measure.trec_eval` each declare their measures in a tuple ``MEASURES``
(:class:`~offeval_ir.measure.declaration.Declaration`); this module finds them by listing
the package, so a new measure is a new module and nothing else. Reading them imports
nothing numerical. Every declaration is also a component of the kind ``measure``
(``offeval plugins measure``), and a measure another plugin registers through the hook
``register_measures`` is computed by name too (:func:`declaration`; :func:`plugged` lists
those of a registry, for the measure strings' tables). A provider computes
the measures it owns: ``columns(judgements, conventions, cutoffs)`` (:data:`PROVIDERS`).
"""

from __future__ import annotations

import pkgutil
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

from offeval import ConfigurationError, OffevalError
from offeval.plugin import Deferred
from offeval_ir.measure.declaration import Declaration

if TYPE_CHECKING:
    from offeval import Registry

#: The modules of the packages that are not measures (the machinery and the providers).
_MACHINERY = ("declaration", "registry", "ranked", "lists")
#: Who computes a declaration's measures: offeval's kernels on offeval's conventions, and
#: trec_eval's own measures on the lists as trec_eval's form_res_rels.c sees them.
PROVIDERS = {
    "offeval": Deferred("offeval_ir.measure.ranked:columns"),
    "trec_eval": Deferred("offeval_ir.measure.trec_eval.lists:columns"),
}


def _declared() -> dict[str, Declaration]:
    """The declarations of every measure module of the package and its subpackages, by
    name, in the modules' order."""
    package = import_module(__package__)
    modules = pkgutil.walk_packages(package.__path__, f"{__package__}.")
    found: dict[str, Declaration] = {}
    for module in sorted(m.name for m in modules if not m.ispkg):
        if module.rpartition(".")[2] in _MACHINERY:
            continue
        for declared in import_module(module).MEASURES:
            if declared.name in found:
                raise ConfigurationError(f"the measure {declared.name!r} is declared twice")
            found[declared.name] = declared
    return found


#: Every measure, by its metric name.
DECLARATIONS: dict[str, Declaration] = _declared()


def names(provider: str) -> tuple[str, ...]:
    """The metric names a provider computes, in the registry's order."""
    return tuple(n for n, d in DECLARATIONS.items() if d.provider == provider)


def component_name(name: str) -> str:
    """The name a measure is listed under as a component: its metric name, ``trec_`` before
    one that is no identifier (``trec_11pt_avg``)."""
    return name if name.isidentifier() else f"trec_{name}"


def declaration(metric: str) -> Declaration | None:
    """The declaration of ``metric`` (``name``, or ``name:param`` for a measure that takes
    one), this package's or one another plugin registers (``register_measures``); None
    when unknown."""
    if not isinstance(metric, str):
        return None
    base, colon, _ = metric.partition(":")
    declared = DECLARATIONS.get(base) or _plugged(base)
    return None if declared is None or (colon and declared.provider == "offeval") else declared


def _plugged(name: str) -> Declaration | None:
    """The measure ``name`` another plugin registers, checked (:func:`_checked`)."""
    from offeval import active_registry

    registry = active_registry()
    if not name.isidentifier() or name in _builtin() or "measure" not in registry.kinds:
        return None
    found = {c.name: c for c in registry.components("measure")}.get(name)
    return None if found is None else _checked(found.name, found.factory, found.plugin)


def plugged(registry: Registry) -> tuple[Declaration, ...]:
    """The measures other plugins register in ``registry`` that pass :func:`_checked`, in
    its order (one that fails is left out here, and an error when computed by name)."""
    if "measure" not in registry.kinds:
        return ()
    found = []
    for component in registry.components("measure"):
        if component.name in _builtin():
            continue
        try:
            found.append(_checked(component.name, component.factory, component.plugin))
        except OffevalError:  # a refused declaration, or a reference that does not import
            continue
    return tuple(found)


@cache
def _builtin() -> frozenset[str]:
    """The names this package's measures are components under."""
    return frozenset(map(component_name, DECLARATIONS))


def _checked(name: str, declared: object, plugin: str) -> Declaration:
    """A plugin's measure component as computed: a :class:`Declaration` of its name, computed
    by offeval's kernels (``kernel(lists, k)``), spelled neither as trec_eval's nor with a
    parameter text after ``:`` (what only trec_eval's own measures have)."""
    who = f"measure {name!r} of plugin {plugin!r}"
    if not isinstance(declared, Declaration) or declared.name != name:
        raise ConfigurationError(f"{who} must be a Declaration named {name!r}, got {declared!r}")
    if declared.provider != "offeval":
        raise ConfigurationError(
            f"{who} has provider {declared.provider!r}: a plugin's measure is computed by "
            "offeval's kernels (provider 'offeval', kernel(lists, k))"
        )
    if declared.trec_eval or declared.read is not None:
        raise ConfigurationError(
            f"{who} has trec_eval spellings or reads a parameter text (read): only "
            "trec_eval's own measures have them (spell it with aliases and ir_measures)"
        )
    return declared


def checked_param(metric: str, k: int | None, name: str | None = None) -> object:
    """The parameter of ``metric``, its text after ``:`` as its declaration reads it (None
    for the defaults); an error for a measure that needs a cut-off and has none, or a
    parameter it does not take (``name``: the measure's name in messages, default the
    metric's)."""
    base, colon, param = metric.partition(":")
    declared = DECLARATIONS[base]
    if declared.needs_cutoff and k is None:
        raise ConfigurationError(f"{base} needs a cut-off k")
    if declared.read is None:
        if colon:
            raise ConfigurationError(f"{base} takes no parameter, got {param!r}")
        return None
    return declared.read(param, name or base)
