"""trec_eval's gain measures: its ndcg, dcg and ideal_dcg with gain parameters, ndcg_rel, Rndcg,
G and binG."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, TrecSpelling
from offeval_ir.trec_params import gains, reader


def _log2_discounts(xp, n: int):
    return 1.0 / xp.log2(xp.arange(2, n + 2))


def _padded(xp, matrix, width: int):
    if matrix.shape[1] >= width:
        return matrix
    return xp.pad(matrix, ((0, 0), (0, width - matrix.shape[1])))


def trec_ndcg(x, pairs, k):
    """trec_eval's ndcg: DCG of the gains over the DCG of every positive label gain."""
    xp = x.xp
    ranked, ideal = x.gains(pairs)
    dcg = ranked @ _log2_discounts(xp, ranked.shape[1])
    idcg = ideal @ _log2_discounts(xp, ideal.shape[1])
    return xp.where(idcg > 0, dcg / idcg, 0.0)


def trec_dcg(x, pairs, k):
    """m_ndcg.c's dcg: the gains of the whole list, each over log2(rank + 1)."""
    ranked, _ = x.gains(pairs)
    return ranked @ _log2_discounts(x.xp, ranked.shape[1])


def trec_ideal_dcg(x, pairs, k):
    """m_ndcg.c's ideal_dcg: the positive label gains in decreasing order, each over
    log2(rank + 1)."""
    _, ideal = x.gains(pairs)
    return ideal @ _log2_discounts(x.xp, ideal.shape[1])


def ndcg_rel(x, pairs, k):
    """m_ndcg_rel.c: nDCG at each rank of positive gain, averaged over the positive
    labels (those not retrieved count nDCG at the end of the list)."""
    xp = x.xp
    ranked, ideal = x.gains(pairs)
    width = max(ranked.shape[1], ideal.shape[1])
    ranked, ideal = _padded(xp, ranked, width), _padded(xp, ideal, width)
    discounts = _log2_discounts(xp, width)
    dcg = xp.cumsum(ranked * discounts, axis=1)
    idcg = xp.cumsum(ideal * discounts, axis=1)
    n_positive = (ideal > 0).sum(axis=1)
    scoring = ranked > 0
    at_ranks = xp.where(scoring, dcg / idcg, 0.0).sum(axis=1)
    rest = (n_positive - scoring.sum(axis=1)) * dcg[:, -1] / idcg[:, -1]
    total = at_ranks + rest
    return xp.where(total > 0, total / n_positive, 0.0)


def rndcg(x, pairs, k):
    """m_Rndcg.c: nDCG averaged at the ranks where the ideal gain changes level (and
    at the list's end when the list outlasts the positive ideal gains)."""
    xp = x.xp
    ranked, ideal = x.gains(pairs)
    n_ret = x.lengths.astype(xp.int64)
    width = max(ranked.shape[1], ideal.shape[1]) + 1
    ranked, ideal = _padded(xp, ranked, width), _padded(xp, ideal, width)
    discounts = _log2_discounts(xp, width)
    dcg = xp.cumsum(ranked * discounts, axis=1)
    idcg = xp.cumsum(ideal * discounts, axis=1)
    n_positive = (ideal > 0).sum(axis=1)
    # before rank i (0-based, i >= 1) the ideal gain changed when ideal[i] != ideal[i-1];
    # the ndcg then read is of ranks 1..i (dcg, idcg at index i-1)
    changed = xp.zeros_like(ideal, dtype=bool)
    changed[:, 1:] = ideal[:, 1:] != ideal[:, :-1]
    ranks = xp.arange(width)
    # the changes up to the end of the positive ideal (the rank where it turns 0 included)
    changed &= ranks <= n_positive[:, None]
    before = xp.zeros_like(dcg)
    before[:, 1:] = dcg[:, :-1]
    ibefore = xp.zeros_like(idcg)
    ibefore[:, 1:] = idcg[:, :-1]
    # past the list's end, the results' dcg stays at its final value
    final = dcg[xp.arange(len(n_ret)), xp.maximum(n_ret - 1, 0)] * (n_ret > 0)
    before = xp.where(ranks[None, :] > n_ret[:, None], final[:, None], before)
    counted = changed & (ibefore > 0)
    total = xp.where(counted, before / ibefore, 0.0).sum(axis=1)
    count = counted.sum(axis=1)
    # a list going on past the rank where the ideal gain turns 0: a point at its end
    longer = n_ret > n_positive + 1
    total_idcg = idcg[:, -1]
    end = longer & (total_idcg > 0)
    total = total + xp.where(end, final / total_idcg, 0.0)
    count = count + end
    value = total / count
    return xp.where(x.n_rel > 0, value, 0.0)


def g(x, pairs, k):
    """m_G.c: each rank's gain over log2(2 + ideal cost so far - gain so far), where a
    rank's ideal cost is max(its ideal gain, 1); over the sum of the positive ideal gains."""
    xp = x.xp
    ranked, ideal = x.gains(pairs)
    width = ranked.shape[1]
    ideal_here = _padded(xp, ideal, width)[:, :width]
    cost = xp.cumsum(xp.maximum(ideal_here, 1.0), axis=1)
    so_far = xp.cumsum(ranked, axis=1)
    terms = xp.where(ranked != 0, ranked / xp.log2(2 + cost - so_far), 0.0)
    total_ideal = ideal.sum(axis=1)
    return xp.where(total_ideal > 0, terms.sum(axis=1) / total_ideal, 0.0)


def bin_g(x, param, k):
    """m_binG.c: over the relevant ranks, 1 / log2(2 + non-relevant ranks above), over R."""
    xp = x.xp
    nonrel_above = xp.cumsum(x.inside & ~x.rel, axis=1)
    terms = xp.where(x.rel, 1.0 / xp.log2(2 + nonrel_above), 0.0)
    return xp.where(x.rel.any(axis=1), terms.sum(axis=1) / x.n_rel, 0.0)


def _gain_measure(name, kernel, summary, *spellings) -> Declaration:
    return Declaration(
        name, kernel, summary, "trec_eval", cutoff=None, trec_eval=spellings, value_range=None,
        param_doc="gains as grade=gain,...", read=reader("gains as grade=gain,...", gains),
    )  # fmt: skip


MEASURES = (
    _gain_measure(
        "trec_ndcg", trec_ndcg, "trec_eval's ndcg with its gains", TrecSpelling("ndcg", "free")
    ),
    _gain_measure(
        "trec_dcg", trec_dcg, "trec_eval's dcg with its gains", TrecSpelling("dcg", "free")
    ),
    _gain_measure(
        "trec_ideal_dcg",
        trec_ideal_dcg,
        "trec_eval's ideal_dcg with its gains",
        TrecSpelling("ideal_dcg", "free"),
    ),
    _gain_measure(
        "ndcg_rel",
        ndcg_rel,
        "nDCG averaged over the relevant documents",
        TrecSpelling("ndcg_rel", "plain"),
        TrecSpelling("ndcg_rel", "free"),
    ),
    _gain_measure(
        "Rndcg",
        rndcg,
        "nDCG averaged where the ideal gain changes",
        TrecSpelling("Rndcg", "plain"),
        TrecSpelling("Rndcg", "free"),
    ),
    _gain_measure(
        "G", g, "gain over the ideal cost", TrecSpelling("G", "plain"), TrecSpelling("G", "free")
    ),
    Declaration(
        "binG",
        bin_g,
        "binary G: 1 / log2(2 + non-relevant above) per relevant rank, over R",
        provider="trec_eval",
        cutoff=None,
        trec_eval=(TrecSpelling("binG", "plain"),),
        value_range=None,
    ),
)
