"""Judged@k: the share of the top k that is judged."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, Spelling
from offeval_ir.measure.precision import precision_denominator


def judged(lists, k):
    """Judged@k = judged items in the top k / k (or min(k, list length), as precision)."""
    return lists.upto(lists.judged, k) / precision_denominator(lists, k)


MEASURES = (
    Declaration(
        "judged",
        judged,
        "share of the top k that is judged",
        ir_measures=(Spelling("Judged"),),
        tie_linear=True,
    ),
)
