"""Hits@k: the number of relevant items in the top k (ranx's ``hits``)."""

from __future__ import annotations

from offeval_ir.measure.declaration import REL, Declaration


def hits(lists, k):
    """Hits@k = sum over ranks i <= k of rel_i (not divided by anything, unlike P@k)."""
    return lists.hits(k)


MEASURES = (
    Declaration(
        "hits",
        hits,
        "relevant items in the top k",
        params=(REL,),
        ranx="hits",
        value_range=None,
        tie_linear=True,
        tie_last=True,
    ),
)
