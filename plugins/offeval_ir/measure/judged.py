"""Judged@k: the share of the top k that is judged."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, Spelling


def judged(lists, k):
    """Judged@k = judged items in the top k / min(k, list length) (``precision_denominator
    ='min_k_list'``), else / k: a share of the list, never of the relevant labels."""
    den = lists.in_list(k) if lists.conv.precision_denominator == "min_k_list" else lists.cut(k)
    return lists.upto(lists.judged, k) / den


MEASURES = (
    Declaration(
        "judged",
        judged,
        "share of the top k that is judged",
        ir_measures=(Spelling("Judged"),),
        tie_linear=True,
        tie_last=True,
    ),
)
