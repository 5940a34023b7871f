"""Reciprocal rank at k."""

from __future__ import annotations

from offeval_ir.measure.declaration import REL, Declaration, Spelling, TrecSpelling


def first_hit(lists):
    """Per user, the rank of the first relevant item (inf: none among the ranks read)."""
    xp, rel = lists.xp, lists.rel
    first = xp.full(lists.j.n_users, xp.inf)
    if lists.n_ranks:
        found = rel.any(axis=1)
        first[found] = xp.argmax(rel[found] > 0, axis=1) + 1
    return first


def rr(lists, k):
    """RR@k = 1 / the rank of the first relevant item, 0 when none is in the top k."""
    first = lists.memo("first_hit", lambda: first_hit(lists))
    return lists.xp.where(first <= lists.read(k), 1 / first, 0.0)


MEASURES = (
    Declaration(
        "rr",
        rr,
        "reciprocal rank of the first relevant item",
        params=(REL,),
        ir_measures=(Spelling("RR"), Spelling("MRR")),
        trec_eval=(TrecSpelling("recip_rank", "name"),),
        ranx="mrr",
        tie_last=True,
    ),
)
