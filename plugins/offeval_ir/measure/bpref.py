"""bpref, as trec_eval computes it."""

from __future__ import annotations

from offeval_ir.measure.declaration import REL, Declaration, Spelling, TrecSpelling


def _terms(lists):
    """trec_eval's bpref summands added rank by rank: at each relevant rank,
    1 - min(n, R) / min(R, N), n the judged non-relevant items ranked above, R the
    relevant labels, N the judged non-relevant labels (1 when n = 0); unjudged items are
    skipped, and a negative grade is not a judgement."""
    xp, j, judged, rel, n_rel = lists.xp, lists.j, lists.judged, lists.rel, lists.n_rel
    n_judged = j.n_judged - (j.label_grades < 0).sum(axis=1) if lists.negative else j.n_judged
    if lists.negative:
        judged = judged * (j.grades[:, : lists.n_ranks] >= 0)
    nonrel = judged * (1 - rel)
    above = xp.cumsum(nonrel, axis=1) - nonrel
    r = n_rel[:, None]
    scale = xp.minimum(r, (n_judged - n_rel)[:, None])
    penalty = xp.where(above > 0, xp.minimum(above, r) / scale, 0.0)
    # added rank by rank, as trec_eval adds them: its terms are fractions with small
    # denominators, so a value often lies on a tie of the fourth decimal, and numpy's
    # pairwise sum would round some of those the other way
    return xp.cumsum(rel * (1 - penalty), axis=1)


def bpref(lists, k):
    """bpref = (1/R) sum over relevant ranks of 1 - min(n, R) / min(R, N) (see
    :func:`_terms`); the list is cut at k."""
    terms = lists.memo("bpref_terms", lambda: _terms(lists))
    if terms.shape[1] == 0:
        return lists.xp.zeros(len(terms)) / lists.n_rel
    return terms[:, min(lists.read(k), terms.shape[1]) - 1] / lists.n_rel


MEASURES = (
    Declaration(
        "bpref",
        bpref,
        "binary preference: relevant items ranked above judged non-relevant ones",
        params=(REL,),
        cutoff="none",
        ir_measures=(Spelling("Bpref", "none"), Spelling("BPref", "none")),
        trec_eval=(
            TrecSpelling("bpref", "name", "none"),
            TrecSpelling("gm_bpref", "plain", aggregate="geometric"),
        ),
        ranx="bpref",
    ),
)
