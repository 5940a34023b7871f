"""trec_eval's unj: the share of the top k not judged."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, TrecSpelling


def unj(x, param, k):
    """m_unjudged.c: ranks of the top k not judged (no label, or a negative grade), over k."""
    return (x.inside & ~x.judged).sum(axis=1) / float(k)


MEASURES = (
    Declaration(
        "unj",
        unj,
        "share of the top k not judged",
        provider="trec_eval",
        cutoff=None,
        trec_eval=(TrecSpelling("unj", "cut", defaults=(5, 10, 20)),),
        value_range=None,
        needs_cutoff=True,
    ),
)
