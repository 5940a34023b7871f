"""DCG, its ideal and nDCG at k, under the conventions' gain, discount and ideal ranking."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, Param, Spelling, TrecSpelling

#: ir-measures' DCG formulations, as the convention switches they set.
DCG = Param(
    "dcg",
    str,
    None,
    "ir-measures' formulation: log2 (linear gain) or exp-log2 (gain 2^rel - 1)",
    choices={
        "log2": (("gain", "linear"), ("log_base", 2.0)),
        "exp-log2": (("gain", "exponential"), ("log_base", 2.0)),
    },
)


def dcg(lists, k):
    """DCG@k = sum over ranks i <= k of gain_i / log_b(i + 1)."""
    return lists.memo(("dcg", k), lambda: lists.upto(lists.gain, k, lists.discounts))


def _ideal_gains(lists):
    """Per user, the gains of the best labels in decreasing order (the ideal ranking)."""
    xp, j, conv = lists.xp, lists.j, lists.conv
    labels = xp.maximum(j.label_grades, 0)
    if conv.dcg_relevance == "binary":
        labels = (labels >= conv.relevance_threshold).astype(float)
    return lists.gains_of(labels)


def idcg(lists, k):
    """iDCG@k: the DCG@k of the ideal ranking, the user's best labels (``ideal='labels'``;
    all of them without a cut-off), the list's own top-k grades sorted (``list``), or k
    items of the user's best gain (``k``: under binary relevance the sum over i <= k of
    the discount, the same for every user with a relevant label, as rectools' NDCG;
    without a cut-off k is the user's list length)."""
    return lists.memo(("idcg", k), lambda: _idcg(lists, k))


def _idcg(lists, k):
    xp = lists.xp
    if lists.conv.ideal in ("labels", "k"):
        ideal = lists.memo("ideal", lambda: _ideal_gains(lists))
    if lists.conv.ideal == "k":
        best = ideal[:, 0] if ideal.shape[1] else xp.zeros(ideal.shape[0])
        if k is not None:
            return best * lists.discounts_of(int(k)).sum()
        lengths = lists.j.lengths  # without a cut-off, k is each user's list length
        summed = xp.r_[0.0, xp.cumsum(lists.discounts_of(int(lengths.max(initial=0))))]
        return best * summed[lengths]
    if lists.conv.ideal == "labels":
        discounts = lists.memo("ideal_discounts", lambda: lists.discounts_of(ideal.shape[1]))
        head = ideal[:, : ideal.shape[1] if k is None else lists.read(k)]
        return head @ discounts[: head.shape[1]]
    best = -xp.sort(-lists.graded[:, : lists.read(k)], axis=1)
    return (lists.gains_of(best) * lists.discounts_of(best.shape[1])).sum(axis=1)


def ndcg(lists, k):
    """nDCG@k = DCG@k / iDCG@k, 0 when iDCG@k = 0."""
    ideal = idcg(lists, k)
    return lists.xp.where(ideal > 0, dcg(lists, k) / ideal, 0.0)


MEASURES = (
    Declaration(
        "dcg",
        dcg,
        "discounted cumulative gain at k",
        params=(DCG,),
        trec_eval=(TrecSpelling("dcg", "plain"),),
        value_range=None,
        tie_linear=True,
        tie_last=True,
    ),
    Declaration(
        "ndcg",
        ndcg,
        "DCG at k over the ideal DCG at k (pnDCG: mean DCG over mean ideal DCG)",
        params=(DCG,),
        aliases=(Spelling("pnDCG", aggregate="ratio"),),
        ir_measures=(Spelling("nDCG"), Spelling("NDCG")),
        trec_eval=(
            TrecSpelling("ndcg", "name"),
            TrecSpelling("ndcg_cut", "name", "required"),
            TrecSpelling("ndcg_cut", "cut"),
        ),
        ranx="ndcg",
        tie_linear=True,
        tie_last=True,
    ),
    Declaration(
        "idcg",
        idcg,
        "the ideal DCG at k that nDCG divides by",
        params=(DCG,),
        aliases=(Spelling("iDCG"),),
        trec_eval=(TrecSpelling("ideal_dcg", "plain"),),
        value_range=None,
        tie_linear=True,
        tie_last=True,
    ),
)
