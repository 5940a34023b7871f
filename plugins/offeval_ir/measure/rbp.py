"""Rank-biased precision (Moffat and Zobel 2008) and its residual, binary at the threshold.

trec_eval's graded ``rbp`` is :mod:`offeval_ir.measure.trec_eval.rbp`'s ``trec_rbp``.
"""

from __future__ import annotations

from offeval_ir.measure.declaration import REL, Declaration, Param, Spelling

#: RBP's persistence: the chance of looking at the next rank.
P = Param("p", float, 0.8, "RBP's persistence", switch="rbp_persistence", high=1.0, recorded=True)


def _weights(lists):
    p = lists.conv.rbp_persistence
    return (1 - p) * p ** lists.xp.arange(lists.n_ranks)


def rbp(lists, k):
    """RBP@k = (1 - p) sum over ranks i <= k of rel_i p^(i - 1)."""
    return lists.upto(lists.rel, k, lists.memo("rbp_weights", lambda: _weights(lists)))


def rbp_residual(lists, k):
    """The most RBP could rise: the weight of the unjudged ranks of the list, then of
    every rank past its end (or past k), p^depth with depth = min(k, list length)."""
    xp, p = lists.xp, lists.conv.rbp_persistence
    depth = xp.minimum(lists.cut(k), lists.j.lengths)
    padding = p**depth - p ** min(lists.read(k), lists.n_ranks)
    weights = lists.memo("rbp_weights", lambda: _weights(lists))
    unjudged = lists.upto(1 - lists.judged, k, weights) - padding
    return unjudged + p**depth


MEASURES = (
    Declaration(
        "rbp",
        rbp,
        "rank-biased precision, binary at the relevance threshold",
        params=(P, REL),
        ir_measures=(Spelling("RBP"),),
        tie_last=True,
    ),
    Declaration(
        "rbp_residual",
        rbp_residual,
        "RBP's residual: the weight of the unjudged ranks and of those past the list",
        cutoff=None,
        value_range=None,
    ),
)
