"""Inferred AP (Yilmaz and Aslam), as trec_eval computes it."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, TrecSpelling

#: trec_eval's infAP constant (INFAP_EPSILON).
INFAP_EPSILON = 1e-5


def inf_ap(x, param, k):
    """m_infap.c: at each judged relevant rank j + 1 (j >= 1), 1/(j+1) + (r - 1 + n + u) /
    (j + 1) * (r - 1 + eps) / (r - 1 + n + 2 eps), with r the relevant ranks so far, n the
    judged non-relevant and u the pooled unjudged (negative grades) above; 1 at rank 1;
    over R."""
    xp, rel = x.xp, x.rel
    r = xp.cumsum(rel, axis=1)
    n = xp.cumsum(x.judged & ~rel, axis=1)
    u = xp.cumsum(x.pooled_unjudged, axis=1) - x.pooled_unjudged
    j = xp.arange(rel.shape[1], dtype=float)
    terms = 1 / (j + 1) + (r - 1 + n + u) / (j + 1) * (
        (r - 1 + INFAP_EPSILON) / (r - 1 + n + 2 * INFAP_EPSILON)
    )
    terms[:, :1] = 1.0
    total = xp.where(rel, terms, 0.0).sum(axis=1)
    return xp.where(x.n_rel > 0, total / x.n_rel, total)


MEASURES = (
    Declaration(
        "infAP",
        inf_ap,
        "inferred average precision",
        provider="trec_eval",
        cutoff=None,
        trec_eval=(TrecSpelling("infAP", "plain"),),
        value_range=None,
    ),
)
