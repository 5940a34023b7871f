"""Every measure's declaration, read from the measure modules, and the providers computing them.

The modules of :mod:`offeval_ir.measure` and of its subpackage
:mod:`~offeval_ir.measure.trec_eval` each declare their measures in a tuple ``MEASURES``
(:class:`~offeval_ir.measure.declaration.Declaration`); this module finds them by listing
the package, so a new measure is a new module and nothing else. Reading them imports
nothing numerical. Every declaration is also a component of the kind ``measure``
(``offeval plugins measure``), and a measure another plugin registers through the hook
``register_measures`` is computed by name too (:func:`declaration`). A provider computes
the measures it owns: ``columns(judgements, conventions, cutoffs)`` (:data:`PROVIDERS`).
"""

from __future__ import annotations

import pkgutil
from importlib import import_module

from offeval import ConfigurationError
from offeval.plugin import Deferred
from offeval_ir.measure.declaration import Declaration

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
    """The measure ``name`` another plugin registers, checked: a :class:`Declaration` of that
    name, computed by offeval's kernels (``kernel(lists, k)``)."""
    from offeval import active_registry

    registry = active_registry()
    if not name.isidentifier() or "measure" not in registry.kinds:
        return None
    found = {c.name: c for c in registry.components("measure")}.get(name)
    if found is None:
        return None
    declared, who = found.factory, f"measure {name!r} of plugin {found.plugin!r}"
    if not isinstance(declared, Declaration) or declared.name != name:
        raise ConfigurationError(f"{who} must be a Declaration named {name!r}, got {declared!r}")
    if declared.provider != "offeval":
        raise ConfigurationError(
            f"{who} has provider {declared.provider!r}: a plugin's measure is computed by "
            "offeval's kernels (provider 'offeval', kernel(lists, k))"
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
