"""trec_eval's own measures, as its C sources define them, for all users at once.

:mod:`offeval_ir.metrics` computes the measures every library shares (P, recall,
AP, nDCG, ...); this module adds the ones only trec_eval has, under trec_eval's
definitions (its ``m_*.c`` files, version 10.0), vectorised over users:

- counts: ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``
  (summed, not averaged, in trec_eval's ``all`` line);
- interpolated precision: ``iprec_at_recall:x`` (precision at recall x,
  interpolated: the best precision at any recall >= x) and ``11pt_avg:x1,...``
  (their mean over the recall levels);
- ``Rprec_mult:x`` (precision at x times R), ``relative_P`` at k (hits over
  min(k, R)), ``set_relative_P``, ``set_map``, ``utility:a,b,c,d``;
- gain measures over trec_eval's gains (a label's grade unless a parameter
  ``grade=gain`` says otherwise): ``trec_ndcg[:gains]`` (trec_eval's ``ndcg``
  with its gain parameters), ``ndcg_rel``, ``Rndcg``, ``G`` and ``binG``.
  trec_eval sorts the gain levels with a comparator that truncates their
  difference to an integer (gain_init.c's comp_rel_gain), so gains given less
  than 1 apart (``G.1=3,2=0.5``) are ordered as the C library's qsort leaves
  them; offeval orders them by value, and agrees with trec_eval whenever the
  gains are whole numbers apart;
- ``trec_rbp[:p=...]`` (trec_eval's ``rbp``: graded gains, each grade over the
  query's highest grade when that is above 1, p = 0.9, the relevance level
  ignored) and ``rbp_resid`` (its residual: 0 for a list with nothing unjudged);
- ``infAP`` (Yilmaz and Aslam's inferred AP, reading negative grades as
  in the pool, not judged) and ``unj`` at k (the share of the top k not judged).

The metric names are those :func:`offeval_ir.metrics.compute` takes (a
parameter after ``:``); :mod:`offeval_ir.measures` gives them trec_eval's
names and labels, and :func:`offeval_ir.measures.trec_eval_measures` expands
trec_eval's ``-m`` arguments into them. The whole lists are read (a cut-off
k cuts each list at k first, as trec_eval's ``-M k``), ranks in the order the
conventions give (trec_eval: score, ties by docno descending), and a rank is
relevant when its label's grade is at least ``relevance_threshold`` (``-l``).

Where trec_eval's own output is not a function of the per-query values, the
caller reproduces it: under ``-c`` its ``all`` line of ``num_rel`` counts the
qrels lines of grade > 0 whatever ``-l`` says (m_num_rel.c), where offeval sums
the per-query values (the same at ``-l1``); ``-N`` (collection size) adds
d N to ``utility.a,b,c,d``'s per-query value, and ``-J`` drops the unjudged
documents from the run before ranking. Every other value, per query and in the
``all`` line, matched trec_eval 10.0's on its test collection and on random
collections (ties, text docnos, -1 grades, -l1 to -l3, -c), except where
trec_eval itself is undefined (see :func:`_trec_rbp`, and gains less than 1
apart above).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from offeval_ir.conventions import PRESETS
from offeval_ir.judgements import Judgements, in_tie_order
from offeval_ir.trec_params import NEEDS_CUTOFF, check_trec_metric

#: trec_eval's measures computed here (offeval metric names; parameters after ``:``).
TREC_METRICS = (
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "num_nonrel_judged_ret",
    "iprec_at_recall",
    "11pt_avg",
    "Rprec_mult",
    "relative_P",
    "set_relative_P",
    "set_map",
    "utility",
    "binG",
    "G",
    "trec_ndcg",
    "ndcg_rel",
    "Rndcg",
    "trec_rbp",
    "rbp_resid",
    "infAP",
    "unj",
)
#: trec_eval's default recall levels of iprec_at_recall and 11pt_avg.
RECALL_LEVELS = tuple(round(0.1 * i, 1) for i in range(11))
#: trec_eval's infAP constant (INFAP_EPSILON).
INFAP_EPSILON = 1e-5


def is_trec_metric(metric: str) -> bool:
    """Whether ``metric`` (``name`` or ``name:param``) is one of :data:`TREC_METRICS`."""
    return isinstance(metric, str) and metric.partition(":")[0] in TREC_METRICS


@dataclass(frozen=True)
class _Lists:
    """The ranked lists as trec_eval's form_res_rels.c sees them (U users x W ranks)."""

    grades: np.ndarray  # label grade at each rank (0 unlabelled, past the end)
    inside: np.ndarray  # rank within the list
    judged: np.ndarray  # labelled with grade >= 0 (trec_eval's judged)
    pooled_unjudged: np.ndarray  # labelled with a negative grade
    rel: np.ndarray  # judged with grade >= the relevance level
    lengths: np.ndarray  # num_ret
    n_rel: np.ndarray  # num_rel
    label_grades: np.ndarray  # the user's label grades, decreasing (padding 0s, negatives last)
    n_graded: np.ndarray  # labels of grade >= 0 (the first n_graded of label_grades)
    cache: dict = field(default_factory=dict)  # what several metrics share


def _lists(j: Judgements, threshold: float, k: int | None) -> _Lists:
    width = j.max_length if k is None else min(j.max_length, k)
    lengths = j.lengths if k is None else np.minimum(j.lengths, k)
    inside = np.arange(width) < lengths[:, None]
    grades = j.grades[:, :width].astype(float)
    labelled = j.judged[:, :width] & inside
    judged = labelled & (grades >= 0)
    return _Lists(
        grades=np.where(inside, grades, 0.0),
        inside=inside,
        judged=judged,
        pooled_unjudged=labelled & (grades < 0),
        rel=judged & (grades >= threshold),
        lengths=lengths.astype(float),
        n_rel=j.n_relevant(threshold).astype(float),
        label_grades=j.label_grades.astype(float),
        n_graded=j.n_judged - (j.label_grades < 0).sum(axis=1),
    )


def trec_columns(
    j: Judgements,
    metrics: list[str],
    ks: Sequence[int | None] | Mapping[str, Sequence[int | None]],
    threshold: float,
) -> dict[str, np.ndarray]:
    """Per user, each trec_eval metric at each cut-off, keyed ``metric`` or ``metric@k``.

    ``ks`` is one list of cut-offs for every metric, or a mapping from each metric
    to its own (only those are computed). ``j`` is in the order the conventions
    give (ties resolved); ``threshold`` is the relevance level. The metrics of
    :data:`NEEDS_CUTOFF` are NaN without one.
    """
    cutoffs = ks if isinstance(ks, Mapping) else dict.fromkeys(metrics, ks)
    columns = {}
    built: dict[int | None, _Lists] = {}
    for k in dict.fromkeys(k for m in metrics for k in cutoffs[m]):
        cut = None if k is None or k >= j.max_length else k  # a cut past every list: none
        if cut not in built:
            built[cut] = _lists(j, threshold, cut)
        lists = built[cut]
        for metric in (m for m in metrics if k in cutoffs[m]):
            base = metric.partition(":")[0]
            if k is None and base in NEEDS_CUTOFF:  # not defined: a column of NaN
                columns[metric] = np.full(j.n_users, np.nan)
                continue
            value = _VALUES[base](lists, check_trec_metric(metric, k), k)
            columns[metric if k is None else f"{metric}@{k}"] = np.nan_to_num(
                value, nan=0.0, posinf=0.0, neginf=0.0
            )
    return columns


# ---- counts -------------------------------------------------------------------------


def _num_q(x: _Lists, param, k):
    return np.ones(len(x.lengths))


def _num_ret(x: _Lists, param, k):
    return x.lengths


def _num_rel(x: _Lists, param, k):
    return x.n_rel


def _num_rel_ret(x: _Lists, param, k):
    return x.rel.sum(axis=1).astype(float)


def _num_nonrel_judged_ret(x: _Lists, param, k):
    return (x.judged & ~x.rel).sum(axis=1).astype(float)


# ---- precision at recall levels and at multiples of R -------------------------------


def _interpolated(x: _Lists, levels: tuple[float, ...]) -> list[np.ndarray]:
    """trec_eval's interpolated precision at each recall level (m_iprec_at_recall.c).

    The cut-off of level x is round(x R) relevant items (rounded half away from
    zero, C's lround); its value is the best precision at any rank from the
    rank of that relevant item on (all ranks for 0 relevant items), 0 when the
    list holds fewer relevant items.
    """
    if "best_after" not in x.cache:
        hits = np.cumsum(x.rel, axis=1)
        ranks = np.arange(1, x.rel.shape[1] + 1)
        precision = np.where(x.inside, hits / ranks, 0.0)
        best_after = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
        if best_after.shape[1] == 0:
            best_after = np.zeros((len(x.lengths), 1))
        x.cache["hits"], x.cache["best_after"] = hits, best_after
    hits, best_after = x.cache["hits"], x.cache["best_after"]
    found = hits[:, -1] if hits.shape[1] else np.zeros(len(x.lengths))
    out = []
    for level in levels:
        scaled = level * x.n_rel
        cut = np.floor(scaled) + (scaled - np.floor(scaled) >= 0.5)  # C's lround
        at = np.argmax(hits >= np.maximum(cut, 1)[:, None], axis=1) if hits.shape[1] else 0
        value = np.where(cut > 0, best_after[np.arange(len(cut)), at], best_after[:, 0])
        out.append(np.where(cut <= found, value, 0.0))
    return out


def _iprec_at_recall(x: _Lists, level, k):
    return _interpolated(x, (level,))[0]


def _eleven_point(x: _Lists, levels, k):
    """The interpolated precisions at the levels, added from the last level to the first
    (as m_11pt_avg.c adds them: a mean on a tie of the fourth decimal prints as there),
    over the number of levels."""
    levels = RECALL_LEVELS if levels is None else levels
    total = np.zeros(len(x.lengths))
    for value in reversed(_interpolated(x, tuple(levels))):
        total = total + value
    return total / len(levels)


def _hits_at(x: _Lists, cut: np.ndarray) -> np.ndarray:
    """Relevant items in the top ``cut`` ranks per user (``cut`` may exceed the list)."""
    if "hits" not in x.cache:
        x.cache["hits"] = np.cumsum(x.rel, axis=1)
    hits = x.cache["hits"]
    if hits.shape[1] == 0:
        return np.zeros(len(cut))
    read = np.clip(cut, 0, hits.shape[1]).astype(np.int64)
    got = hits[np.arange(len(read)), np.maximum(read - 1, 0)]
    return np.where(read > 0, got, 0.0)


def _rprec_mult(x: _Lists, multiple, k):
    """Precision at rank floor(x R + 0.9) (C's cast of x R + 0.9; 0 at rank 0)."""
    cut = np.floor(multiple * x.n_rel + 0.9)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(cut > 0, _hits_at(x, cut) / cut, 0.0)


def _relative_p(x: _Lists, param, k):
    """Hits in the top k over min(k, R) (m_rel_P.c; 0 without a relevant label)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _hits_at(x, np.full(len(x.lengths), float(k))) / np.minimum(k, x.n_rel)


def _set_relative_p(x: _Lists, param, k):
    with np.errstate(divide="ignore", invalid="ignore"):
        return _num_rel_ret(x, None, k) / np.minimum(x.lengths, x.n_rel)


def _set_map(x: _Lists, param, k):
    found = _num_rel_ret(x, None, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return found * found / (x.lengths * x.n_rel)


def _utility(x: _Lists, coefficients, k):
    """a rel_ret + b nonrel_ret + c rel_not_ret + d nonrel_not_ret, with trec_eval's
    collection size -N 0 (so the last term counts -(rel_not_ret + nonrel_ret)).

    A query without predictions (scored under ``-c``) gets what trec_eval gives it:
    trec_eval evaluates such a query on a one-document list of an unjudged document
    and then zeroes the value named ``utility``, so bare utility is 0 and utility with
    coefficients is b + c R - d (1 + R)."""
    a, b, c, d = coefficients if coefficients is not None else (1.0, -1.0, 0.0, 0.0)
    found = _num_rel_ret(x, None, k)
    value = (
        a * found
        + b * (x.lengths - found)
        + c * (x.n_rel - found)
        + d * (0 + found - x.lengths - x.n_rel)
    )
    empty = b + c * x.n_rel - d * (1 + x.n_rel) if coefficients is not None else 0.0
    return np.where(x.lengths > 0, value, empty)


# ---- gain measures --------------------------------------------------------------------


def _gains(x: _Lists, pairs: dict[str, float] | None):
    """(gain of each rank, gains of the labels in decreasing order) under trec_eval's
    gains: a grade's gain is the grade unless ``pairs`` maps it (gain_init.c); a rank
    not judged, or of negative grade, has gain 0, and so does a label of negative grade
    (computed once per set of gains and shared by the measures of the lists)."""
    key = ("gains", tuple(sorted((pairs or {}).items())))
    if key not in x.cache:
        x.cache[key] = _gains_of(x, pairs)
    return x.cache[key]


def _gains_of(x: _Lists, pairs: dict[str, float] | None):
    mapped = {
        int(name): value for name, value in (pairs or {}).items() if name.lstrip("+-").isdigit()
    }

    def gain_of(grades: np.ndarray) -> np.ndarray:
        out = grades.copy()
        for grade, value in mapped.items():
            out[grades == grade] = value
        return out

    ranked = np.where(x.judged, gain_of(x.grades), 0.0)
    columns = np.arange(x.label_grades.shape[1])
    graded = columns < x.n_graded[:, None]  # not the padding, not the negative grades
    labels = np.where(graded, gain_of(x.label_grades), -np.inf)  # the rest sorts last
    ideal = -np.sort(-labels, axis=1)
    # trec_eval's ideal list stops at the first gain <= 0
    positive = np.cumprod(ideal > 0, axis=1).astype(bool)
    return ranked, np.where(positive, ideal, 0.0)


def _log2_discounts(n: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, n + 2))


def _padded(matrix: np.ndarray, width: int) -> np.ndarray:
    if matrix.shape[1] >= width:
        return matrix
    return np.pad(matrix, ((0, 0), (0, width - matrix.shape[1])))


def _trec_ndcg(x: _Lists, pairs, k):
    """trec_eval's ndcg: DCG of the gains over the DCG of every positive label gain."""
    ranked, ideal = _gains(x, pairs)
    dcg = ranked @ _log2_discounts(ranked.shape[1])
    idcg = ideal @ _log2_discounts(ideal.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(idcg > 0, dcg / idcg, 0.0)


def _ndcg_rel(x: _Lists, pairs, k):
    """m_ndcg_rel.c: nDCG at each rank of positive gain, averaged over the positive
    labels (those not retrieved count nDCG at the end of the list)."""
    ranked, ideal = _gains(x, pairs)
    width = max(ranked.shape[1], ideal.shape[1])
    ranked, ideal = _padded(ranked, width), _padded(ideal, width)
    discounts = _log2_discounts(width)
    dcg = np.cumsum(ranked * discounts, axis=1)
    idcg = np.cumsum(ideal * discounts, axis=1)
    n_positive = (ideal > 0).sum(axis=1)
    scoring = ranked > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        at_ranks = np.where(scoring, dcg / idcg, 0.0).sum(axis=1)
        rest = (n_positive - scoring.sum(axis=1)) * dcg[:, -1] / idcg[:, -1]
        total = at_ranks + rest
        return np.where(total > 0, total / n_positive, 0.0)


def _rndcg(x: _Lists, pairs, k):
    """m_Rndcg.c: nDCG averaged at the ranks where the ideal gain changes level (and
    at the list's end when the list outlasts the positive ideal gains)."""
    ranked, ideal = _gains(x, pairs)
    n_ret = x.lengths.astype(np.int64)
    width = max(ranked.shape[1], ideal.shape[1]) + 1
    ranked, ideal = _padded(ranked, width), _padded(ideal, width)
    discounts = _log2_discounts(width)
    dcg = np.cumsum(ranked * discounts, axis=1)
    idcg = np.cumsum(ideal * discounts, axis=1)
    n_positive = (ideal > 0).sum(axis=1)
    # before rank i (0-based, i >= 1) the ideal gain changed when ideal[i] != ideal[i-1];
    # the ndcg then read is of ranks 1..i (dcg, idcg at index i-1)
    changed = np.zeros_like(ideal, dtype=bool)
    changed[:, 1:] = ideal[:, 1:] != ideal[:, :-1]
    ranks = np.arange(width)
    # the changes up to the end of the positive ideal (the rank where it turns 0 included)
    changed &= ranks <= n_positive[:, None]
    before = np.zeros_like(dcg)
    before[:, 1:] = dcg[:, :-1]
    ibefore = np.zeros_like(idcg)
    ibefore[:, 1:] = idcg[:, :-1]
    # past the list's end, the results' dcg stays at its final value
    final = dcg[np.arange(len(n_ret)), np.maximum(n_ret - 1, 0)] * (n_ret > 0)
    before = np.where(ranks[None, :] > n_ret[:, None], final[:, None], before)
    counted = changed & (ibefore > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.where(counted, before / ibefore, 0.0).sum(axis=1)
        count = counted.sum(axis=1)
        # a list going on past the rank where the ideal gain turns 0: a point at its end
        longer = n_ret > n_positive + 1
        total_idcg = idcg[:, -1]
        end = longer & (total_idcg > 0)
        total = total + np.where(end, final / total_idcg, 0.0)
        count = count + end
        value = total / count
    return np.where(x.n_rel > 0, value, 0.0)


def _g(x: _Lists, pairs, k):
    """m_G.c: each rank's gain over log2(2 + ideal cost so far - gain so far), where a
    rank's ideal cost is max(its ideal gain, 1); over the sum of the positive ideal gains."""
    ranked, ideal = _gains(x, pairs)
    width = ranked.shape[1]
    ideal_here = _padded(ideal, width)[:, :width]
    cost = np.cumsum(np.maximum(ideal_here, 1.0), axis=1)
    so_far = np.cumsum(ranked, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(ranked != 0, ranked / np.log2(2 + cost - so_far), 0.0)
        total_ideal = ideal.sum(axis=1)
        return np.where(total_ideal > 0, terms.sum(axis=1) / total_ideal, 0.0)


def _bin_g(x: _Lists, param, k):
    """m_binG.c: over the relevant ranks, 1 / log2(2 + non-relevant ranks above), over R."""
    nonrel_above = np.cumsum(x.inside & ~x.rel, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(x.rel, 1.0 / np.log2(2 + nonrel_above), 0.0)
        return np.where(x.rel.any(axis=1), terms.sum(axis=1) / x.n_rel, 0.0)


# ---- RBP, unjudged, infAP --------------------------------------------------------------


def _trec_rbp(x: _Lists, pairs, k):
    """m_rbp.c: (1 - p) sum over ranks of p^(rank - 1) gain, p = 0.9 unless given, gains as
    trec_eval's (the grade) rescaled to [0, 1] by (g - min) / (max - min) over the query's
    grade levels 0..highest when some gain lies outside [0, 1].

    trec_eval 10.0 leaves that min and max uninitialised (m_rbp.c), so its rbp can
    change with the other measures of the same command (``-m rbp.p=0.8`` alone gives
    0.3077 on its test collection, next to ``-m G.1=3,...`` 0.0020); this is the
    reading with both starting at 0, which trec_eval's runs of rbp alone show (with
    ``rbp.0=1`` too) and its stored outputs agree with."""
    pairs = dict(pairs or {})
    p = pairs.pop("p", 0.9)
    ranked, _ = _gains(x, pairs)
    mapped = {int(n): v for n, v in pairs.items() if n.lstrip("+-").isdigit()}
    # the gain table: levels 0..top at their default gain (the level) unless mapped, and
    # every mapped level at its gain
    graded = np.arange(x.label_grades.shape[1]) < x.n_graded[:, None]
    top = np.max(np.where(graded, x.label_grades, -1.0), axis=1, initial=-1.0)
    default_high = top.copy()  # the highest level not mapped
    for level in sorted(mapped, reverse=True):
        default_high = np.where(default_high == level, default_high - 1, default_high)
    # trec_eval's min and max start from 0 (uninitialised in m_rbp.c; 0 is what its
    # runs of a single rbp measure show)
    high = np.maximum(default_high, 0.0)
    low = np.zeros_like(high)
    if mapped:
        high = np.maximum(high, max(mapped.values()))
        low = np.minimum(low, min(mapped.values()))
    rescale = ((low < 0) | (high > 1)) & (high > low)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(
            rescale[:, None],
            # every judged rank has a level of the table, rescaled (grade 0 too)
            np.where(x.judged, (ranked - low[:, None]) / (high - low)[:, None], 0.0),
            ranked,
        )
    weights = p ** np.arange(scaled.shape[1])
    return (1 - p) * (scaled @ weights)


def _rbp_resid(x: _Lists, param, k):
    """m_rbp_resid.c: p^n + (1 - p) sum over unjudged ranks of p^(rank - 1), p = 0.9,
    n the list's length; 0 when no rank of the list is unjudged (as trec_eval)."""
    p = 0.9
    unjudged = x.inside & ~x.judged
    weights = p ** np.arange(unjudged.shape[1])
    value = p**x.lengths + (1 - p) * (unjudged @ weights)
    return np.where(unjudged.any(axis=1), value, 0.0)


def _unj(x: _Lists, param, k):
    """m_unjudged.c: ranks of the top k not judged (no label, or a negative grade), over k."""
    return (x.inside & ~x.judged).sum(axis=1) / float(k)


def _inf_ap(x: _Lists, param, k):
    """m_infap.c: at each judged relevant rank j + 1 (j >= 1), 1/(j+1) + (r - 1 + n + u) /
    (j + 1) * (r - 1 + eps) / (r - 1 + n + 2 eps), with r the relevant ranks so far, n the
    judged non-relevant and u the pooled unjudged above; 1 at rank 1; over R."""
    rel = x.rel
    r = np.cumsum(rel, axis=1)
    n = np.cumsum(x.judged & ~rel, axis=1)
    u = np.cumsum(x.pooled_unjudged, axis=1) - x.pooled_unjudged
    j = np.arange(rel.shape[1], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = 1 / (j + 1) + (r - 1 + n + u) / (j + 1) * (
            (r - 1 + INFAP_EPSILON) / (r - 1 + n + 2 * INFAP_EPSILON)
        )
    terms[:, :1] = 1.0
    total = np.where(rel, terms, 0.0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x.n_rel > 0, total / x.n_rel, total)


def relstrings(j: Judgements, conventions=None, length: int = 10) -> pd.Series:
    """trec_eval's ``relstring`` per user (m_relstring.c): the first ``length`` ranks of
    the list as characters, the grade (``>`` above 9), ``-`` not in the pool and ``.``
    in the pool but not judged (a negative grade); in the conventions' order (default
    the ``trec_eval`` preset's: score, ties by docno descending). trec_eval prints it
    quoted, labelled ``relstring`` (``relstring_<length>`` when given a length)."""
    conv = conventions or PRESETS["trec_eval"]()
    ordered = in_tie_order(j, conv)
    width = min(int(length), ordered.max_length)
    grades = ordered.grades[:, :width]
    judged = ordered.judged[:, :width]
    digits = (ord("0") + np.clip(grades, 0, 9)).astype(np.uint8)
    chars = np.where(grades > 9, ord(">"), digits)
    chars = np.where(judged & (grades < 0), ord("."), chars)
    chars = np.where(judged, chars, ord("-"))
    chars = np.where(np.arange(width) < ordered.lengths[:, None], chars, 0).astype(np.uint8)
    if width == 0:
        return pd.Series("", index=ordered.users, name="relstring")
    rows = np.ascontiguousarray(chars).view(f"S{width}").ravel()  # trailing NULs dropped
    return pd.Series(np.char.decode(rows, "ascii"), index=ordered.users, name="relstring")


_VALUES = {
    "num_q": _num_q,
    "num_ret": _num_ret,
    "num_rel": _num_rel,
    "num_rel_ret": _num_rel_ret,
    "num_nonrel_judged_ret": _num_nonrel_judged_ret,
    "iprec_at_recall": _iprec_at_recall,
    "11pt_avg": _eleven_point,
    "Rprec_mult": _rprec_mult,
    "relative_P": _relative_p,
    "set_relative_P": _set_relative_p,
    "set_map": _set_map,
    "utility": _utility,
    "binG": _bin_g,
    "G": _g,
    "trec_ndcg": _trec_ndcg,
    "ndcg_rel": _ndcg_rel,
    "Rndcg": _rndcg,
    "trec_rbp": _trec_rbp,
    "rbp_resid": _rbp_resid,
    "infAP": _inf_ap,
    "unj": _unj,
}
assert set(_VALUES) == set(TREC_METRICS)
