"""R-precision."""

from __future__ import annotations

from offeval_ir.measure.declaration import REL, Declaration, Spelling, TrecSpelling


def rprec(lists, k):
    """Relevant items in the top R (the user's relevant labels), over R; the list is cut
    at k."""
    xp, n_rel = lists.xp, lists.n_rel
    hits_before = lists.memo("hits_before", lambda: xp.cumsum(lists.rel, axis=1))
    read = xp.minimum(xp.minimum(n_rel, lists.read(k)), hits_before.shape[1]).astype(xp.int64)
    rows = xp.flatnonzero(read > 0)
    hits = xp.zeros(len(n_rel))
    hits[rows] = hits_before[rows, read[rows] - 1]
    return hits / n_rel


MEASURES = (
    Declaration(
        "rprec",
        rprec,
        "precision at rank R, the number of relevant labels",
        params=(REL,),
        cutoff="none",
        ir_measures=(Spelling("Rprec", "none"), Spelling("RPrec", "none")),
        trec_eval=(TrecSpelling("Rprec", "name", "none"),),
        ranx="r-precision",
        tie_last=True,
    ),
)
