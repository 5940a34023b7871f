"""The ir-measures measures the offeval provider supports, and their offeval measure strings.

:data:`SUPPORTED` declares them (and their parameter values) as ir-measures
declares a provider's measures, read from offeval's measure registry
(:mod:`offeval_ir.measure.registry`); :func:`offeval_measure` turns an ir-measures
measure object into the string offeval parses, or says why it is not supported.
The provider (:mod:`offeval_ir.provider`) declares these, and
:func:`offeval_ir.peer_inputs.measure_names` reads ir-measures' objects given to
offeval's own functions with them, without registering the provider. ir-measures
is an optional dependency: this module is imported only where its objects are.
"""

from __future__ import annotations

from ir_measures import measures as irm
from ir_measures.providers.base import Any, Choices

from offeval import ConfigurationError
from offeval_ir.measure.registry import DECLARATIONS


class _AtLeastOne:
    """ir-measures' parameter check: a number >= 1 (offeval's relevance threshold)."""

    def validate(self, value: object) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool) and value >= 1

    def __repr__(self) -> str:
        return ">= 1"


_REL = _AtLeastOne()


def _supported() -> list:
    """ir-measures' measures the registry's declarations spell, with the parameter values
    offeval computes: the cut-off as the spelling takes it, the declared parameters (``rel``
    at least 1, ``dcg``'s choices, RBP's ``p``), every other ir-measures parameter at its
    default only (``judged_only=False``, no custom ``gains``, ``beta=1``)."""
    out, seen = [], set()
    for declared in DECLARATIONS.values():
        ours = {p.name: p for p in declared.params}
        for spelling in declared.ir_measures:
            kind = type(irm.registry[spelling.text])
            if kind in seen:
                continue  # an alias (MAP is AP)
            seen.add(kind)
            specs = {}
            for name, info in kind.SUPPORTED_PARAMS.items():
                if name == "cutoff":
                    specs[name] = Any(required=spelling.cutoff == "required")
                elif name == "rel":
                    specs[name] = _REL
                elif name in ours:
                    choices = ours[name].choices
                    specs[name] = Any() if choices is None else Choices(*choices)
                else:
                    specs[name] = Choices(info.default)
            out.append(kind(**specs))
    return out


#: The measures (and parameter values) the provider computes, as ir-measures declares them.
SUPPORTED = _supported()

#: Why a measure the provider knows by name is not supported with these parameters.
_WHY = {
    "judged_only": "judged_only=True (ignoring unjudged documents) is not an offeval convention",
    "gains": "custom gains are not an offeval convention",
    "relative": "SetP(relative=True) is not an offeval measure",
    "beta": "SetF with beta other than 1 is not an offeval measure",
    "rel": "offeval's relevance threshold rel is a number >= 1 (RBP needs it: ir-measures' "
    "RBP without rel is graded, offeval's is binary at rel)",
}


def offeval_measure(measure: object) -> str:
    """The offeval measure string of an ir-measures measure object (as ir-measures prints
    it); a :class:`ConfigurationError` saying why when the provider does not support it."""
    name = getattr(measure, "NAME", None)
    if not isinstance(measure, irm.Measure) or name is None:
        raise ConfigurationError(f"not an ir-measures measure: {measure!r}")
    try:
        measure.validate_params()
    except AssertionError as error:  # ir-measures checks its parameters with assert
        raise ConfigurationError(f"ir-measures' {measure!r}: {error}") from None
    candidates = [m for m in SUPPORTED if m.NAME == name]
    if not candidates:
        known = ", ".join(m.NAME for m in SUPPORTED)
        raise ConfigurationError(
            f"ir-measures' {measure} is not an offeval measure (the offeval provider supports "
            f"{known}); compute it with another ir-measures provider"
        )
    for param, spec in candidates[0].params.items():
        if not spec.validate(measure[param]):
            why = _WHY.get(param, f"{param}={measure[param]!r} is not supported")
            raise ConfigurationError(f"ir-measures' {measure}: {why}")
    return str(measure)
