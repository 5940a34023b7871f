"""trec_eval's set_F with its parameter: the weighted harmonic mean of set precision and recall."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, TrecSpelling
from offeval_ir.trec_params import reader, weight


def set_f(x, weight, k):
    """m_set_F.c: (x + 1) P R / (x P + R) with P and R the set precision and recall of
    the list and x the parameter as given (default 1.0: 2 P R / (P + R)); 0 when no
    relevant document is retrieved."""
    x_ = 1.0 if weight is None else weight
    found = x.rel_ret()
    p, r = found / x.lengths, found / x.n_rel
    return x.xp.where(found > 0, (x_ + 1.0) * p * r / (x_ * p + r), 0.0)


MEASURES = (
    Declaration(
        "trec_set_F",
        set_f,
        "trec_eval's set_F: (x + 1) P R / (x P + R) on the whole list",
        provider="trec_eval",
        cutoff=None,
        trec_eval=(TrecSpelling("set_F", "free"),),
        param_doc="x, the weight of recall against precision",
        read=reader("one number x >= 0", weight),
    ),
)
