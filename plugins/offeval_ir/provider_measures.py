"""The ir-measures measures the offeval provider supports, and their offeval measure strings.

:data:`SUPPORTED` declares them (and their parameter values) as ir-measures
declares a provider's measures; :func:`offeval_measure` turns an ir-measures
measure object into the string offeval parses, or says why it is not supported.
The provider (:mod:`offeval_ir.provider`) declares these, and
:func:`offeval_ir.peer_inputs.measure_names` reads ir-measures' objects given to
offeval's own functions with them, without registering the provider. ir-measures
is an optional dependency: this module is imported only where its objects are.
"""

from __future__ import annotations

from ir_measures import measures as irm
from ir_measures.providers.base import NOT_PROVIDED, Any, Choices

from offeval import ConfigurationError


class _AtLeastOne:
    """ir-measures' parameter check: a number >= 1 (offeval's relevance threshold)."""

    def validate(self, value: object) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool) and value >= 1

    def __repr__(self) -> str:
        return ">= 1"


_REL = _AtLeastOne()
_NO = Choices(False)

#: The measures (and parameter values) the provider computes, as ir-measures declares them.
SUPPORTED = [
    irm._P(cutoff=Any(required=True), rel=_REL, judged_only=_NO),
    irm._R(cutoff=Any(required=True), rel=_REL, judged_only=_NO),
    irm._AP(cutoff=Any(), rel=_REL, judged_only=_NO),
    irm._RR(cutoff=Any(), rel=_REL, judged_only=_NO),
    irm._nDCG(
        cutoff=Any(), dcg=Choices("log2", "exp-log2"), gains=Choices(NOT_PROVIDED), judged_only=_NO
    ),
    irm._Rprec(rel=_REL, judged_only=_NO),
    irm._Bpref(rel=_REL),
    irm._Success(cutoff=Any(required=True), rel=_REL, judged_only=_NO),
    irm._Judged(cutoff=Any()),
    irm._ERR(cutoff=Any()),
    irm._RBP(cutoff=Any(), p=Any(), rel=_REL),
    irm._SetP(rel=_REL, relative=_NO, judged_only=_NO),
    irm._SetR(rel=_REL),
    irm._SetF(rel=_REL, beta=Choices(1.0, 1), judged_only=_NO),
]

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
