"""Precision, recall, F1, hit rate and Success at k: the hits in the top k, over a count."""

from __future__ import annotations

from offeval_ir.measure.declaration import REL, Declaration, Spelling, TrecSpelling


def precision_denominator(lists, k):
    """k (``precision_denominator='k'``), min(k, the list's length) (``min_k_list``) or
    min(k, R), R the relevant labels (``min_k_labels``)."""
    how = lists.conv.precision_denominator
    if how == "min_k_labels":
        return lists.xp.minimum(lists.cut(k), lists.n_rel)
    return lists.cut(k) if how == "k" else lists.in_list(k)


def precision(lists, k):
    """P@k = hits@k / :func:`precision_denominator` (without a cut-off: over the list)."""
    return lists.hits(k) / precision_denominator(lists, k)


def recall(lists, k):
    """R@k = hits@k / R, R the relevant labels (``recall_denominator='labels'``), or
    over min(k, R) (``min_k_labels``)."""
    xp, n_rel = lists.xp, lists.n_rel
    den = n_rel if lists.conv.recall_denominator == "labels" else xp.minimum(lists.cut(k), n_rel)
    return lists.hits(k) / den


def f1(lists, k):
    """F1@k = 2 P R / (P + R), 0 when P + R = 0."""
    p, r = precision(lists, k), recall(lists, k)
    return lists.xp.where(p + r > 0, 2 * p * r / (p + r), 0.0)


def hit(lists, k):
    """1 when a relevant item is in the top k, else 0."""
    return (lists.hits(k) > 0).astype(float)


MEASURES = (
    Declaration(
        "precision",
        precision,
        "share of the top k that is relevant",
        params=(REL,),
        ir_measures=(Spelling("P", "required"), Spelling("SetP", "none")),
        trec_eval=(TrecSpelling("P", "cut"), TrecSpelling("set_P", "name", "none")),
        ranx="precision",
        tie_linear=True,
        tie_last=True,
    ),
    Declaration(
        "recall",
        recall,
        "share of the relevant labels found in the top k",
        params=(REL,),
        ir_measures=(Spelling("R", "required"), Spelling("SetR", "none")),
        trec_eval=(TrecSpelling("recall", "cut"), TrecSpelling("set_recall", "name", "none")),
        ranx="recall",
        tie_linear=True,
        tie_last=True,
    ),
    Declaration(
        "f1",
        f1,
        "harmonic mean of precision and recall at k",
        params=(REL,),
        ir_measures=(Spelling("SetF", "none"),),
        trec_eval=(TrecSpelling("set_F", "name", "none"),),
        ranx="f1",
        tie_last=True,
    ),
    Declaration(
        "hit_rate",
        hit,
        "1 when the top k holds a relevant item",
        params=(REL,),
        ranx="hit_rate",
        tie_last=True,
    ),
    Declaration(
        "success",
        hit,
        "1 when the top k holds a relevant item (hit_rate under its IR name)",
        params=(REL,),
        ir_measures=(Spelling("Success", "required"),),
        trec_eval=(TrecSpelling("success", "cut", defaults=(1, 5, 10)),),
        tie_last=True,
    ),
)
