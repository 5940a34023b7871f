"""Top-n metrics for all users at once, at many cut-offs, under explicit conventions.

:func:`compute` also takes trec_eval's own measures (``num_ret``, ``infAP``,
``iprec_at_recall:0.1``, ...), defined in :mod:`offeval_ir.trec_measures`;
:class:`MetricResult` says how each column aggregates (:data:`AGGREGATIONS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from offeval import ConfigurationError
from offeval.plugin import check_whole
from offeval_ir.conventions import Conventions
from offeval_ir.hints import switch
from offeval_ir.judgements import Judgements, in_tie_order
from offeval_ir.trec_measures import TREC_METRICS, is_trec_metric, trec_columns

#: The metrics computed when none are named.
DEFAULT_METRICS = ("precision", "recall", "f1", "hit_rate", "ap", "rr", "dcg", "ndcg")
#: Every metric: the defaults, R-precision, bpref (trec_eval's), Success@k (a relevant
#: item in the top k; hit_rate under its IR name), Judged@k (share of the top k judged),
#: ERR@k (Chapelle et al. 2009), RBP (Moffat and Zobel 2008: binary relevance at the
#: threshold, ir-measures' RBP; trec_eval's graded rbp is trec_measures' ``trec_rbp``)
#: and RBP's residual (the weight of unjudged ranks and of the ranks past the list: the
#: most RBP could rise; trec_eval's rbp_resid, 0 without unjudged ranks, is ``rbp_resid``),
#: and ``idcg``, the ideal DCG that ``ndcg`` divides by (under the same conventions, at
#: the same cut-off; post-normalised nDCG is mean dcg over mean idcg).
METRICS = (
    *DEFAULT_METRICS,
    "idcg",
    "rprec",
    "bpref",
    "success",
    "judged",
    "err",
    "rbp",
    "rbp_residual",
)
#: Metrics whose expected value under random tie order is the average of per-rank values.
TIE_LINEAR = ("precision", "recall", "dcg", "ndcg", "judged", "idcg")


#: Why a user has no value (codes of :attr:`MetricResult.reasons`; 0: the user is
#: averaged; ``no_value``: NaN in a result built by hand, reason unknown;
#: ``not_in_every_run``: averaged by this run, left out of a comparison because
#: another run does not average it).
EXCLUSION_REASONS = ("", "no_labels", "no_predictions", "no_value", "not_in_every_run")


#: How per-user values aggregate into a reported value: ``mean`` (most measures),
#: ``sum`` (trec_eval's counts num_ret, num_rel, ... in its ``all`` line),
#: ``geometric`` (trec_eval's gm_map and gm_bpref: exp(mean(log(max(v, 1e-5)))), as
#: its meas_avg.c), ``ratio`` (sum of a numerator over sum of a denominator over the
#: users, as post-normalised nDCG: mean DCG over mean ideal DCG).
AGGREGATIONS = ("mean", "sum", "geometric", "ratio")
#: trec_eval's floor of a value before its log in a geometric mean (MIN_GEO_MEAN).
MIN_GEO_MEAN = 1e-5


def aggregate(values: np.ndarray, how: str, parts: pd.DataFrame | None = None) -> float:
    """The reported value of per-user ``values`` (NaN: left out) aggregated ``how``.

    ``ratio`` reads ``parts`` (columns ``numerator`` and ``denominator``, one row
    per value) and sums each over the users whose value is not NaN. No user with
    a value gives NaN (0 for ``sum``).
    """
    used = ~np.isnan(values)
    if how == "sum":
        return float(values[used].sum())
    if not used.any():
        return float("nan")
    if how == "mean":
        return float(values[used].mean())
    if how == "geometric":
        return float(np.exp(np.log(np.maximum(values[used], MIN_GEO_MEAN)).mean()))
    if how == "ratio":
        if parts is None:
            raise ConfigurationError("a ratio aggregation needs its numerator and denominator")
        den = float(parts["denominator"].to_numpy(dtype=float)[used].sum())
        num = float(parts["numerator"].to_numpy(dtype=float)[used].sum())
        return num / den if den > 0 else 0.0
    raise ConfigurationError(f"aggregation must be one of {AGGREGATIONS}, got {how!r}")


@dataclass
class MetricResult:
    """Per-user values (one column per metric@k), their means and what was left out.

    Means skip NaN users; ``counts`` gives, per column, the users averaged and
    the users left out with the reason; ``reasons`` gives each user's reason
    per column as a code into :data:`EXCLUSION_REASONS` (0: averaged).
    """

    per_user: pd.DataFrame
    conventions: Conventions
    counts: pd.DataFrame = field(default_factory=pd.DataFrame)
    reasons: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Per column, how its per-user values aggregate into the reported value (one of
    #: :data:`AGGREGATIONS`; a column not named here is a mean).
    aggregation: dict[str, str] = field(default_factory=dict)
    #: Per column aggregated as a ``ratio``: a frame (index: the users of ``per_user``)
    #: with the columns ``numerator`` and ``denominator`` whose sums over the averaged
    #: users divide into the reported value (for pnDCG@k: dcg@k and idcg@k).
    parts: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def mean(self) -> pd.Series:
        """Mean over the users with a value (NaN users excluded)."""
        return self.per_user.mean(axis=0, skipna=True)

    @property
    def value(self) -> pd.Series:
        """The reported value of each column, aggregated as :attr:`aggregation` says
        over the users with a value (see :data:`AGGREGATIONS`)."""
        out = self.mean
        for column, how in self.aggregation.items():
            out[column] = aggregate(
                self.per_user[column].to_numpy(dtype=float),
                how,
                self.parts.get(column),
            )
        return out

    def summary(self) -> pd.DataFrame:
        """One row per metric@k: mean, users used, users left out by reason; when some
        column is not aggregated by its mean, also ``value``, the reported value
        (:attr:`value`)."""
        parts = [self.mean.rename("mean")]
        if self.aggregation:
            parts.append(self.value.rename("value"))
        return pd.concat([*parts, self.counts], axis=1).rename_axis("metric")

    def __repr__(self) -> str:
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.value.items())
        return f"MetricResult({self.conventions.name}: {means})"


def _discounts(n: int, base: float) -> np.ndarray:
    return np.log(base) / np.log(np.arange(2, n + 2))


def _upto(matrix: np.ndarray, k: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Per user, the (weighted) sum of the first k columns (all of them when k is larger)."""
    head = matrix[:, :k]
    if weights is None:
        return head.sum(axis=1)
    return head @ weights[: head.shape[1]]


def _running(cumulative: np.ndarray, k: int) -> np.ndarray:
    """Per user, the sum of the first k columns read from their running sums
    (``np.cumsum(terms, axis=1)``: added left to right, as trec_eval adds a query's
    terms rank by rank); 0 for no columns."""
    if cumulative.shape[1] == 0:
        return np.zeros(len(cumulative))
    return cumulative[:, min(k, cumulative.shape[1]) - 1]


def _precision_terms(rel: np.ndarray):
    """k -> per user, sum over ranks i <= k of rel_i * hits_i / i (the numerator of AP@k).

    Only the relevant cells are visited: hits_i is the running sum of rel
    over each user's relevant cells.
    """
    users, cols = np.nonzero(rel)
    values = rel[users, cols]
    running = np.cumsum(values)
    first = np.flatnonzero(np.r_[True, users[1:] != users[:-1]]) if users.size else users
    lengths = np.diff(np.r_[first, users.size])
    hits = running - np.repeat(running[first] - values[first], lengths)
    terms = values * hits / (cols + 1)

    def upto(k: int) -> np.ndarray:
        inside = cols < k
        return np.bincount(users[inside], weights=terms[inside], minlength=rel.shape[0])

    return upto


def _tie_mean(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Replace each per-rank value by the mean of its tie group (expected value)."""
    valid = groups >= 0
    g = groups[valid]
    sums = np.bincount(g, weights=values[valid])
    counts = np.bincount(g)
    out = np.zeros_like(values)
    out[valid] = (sums / counts)[g]
    return out


def compute(
    judgements: Judgements,
    metrics: Sequence[str] = DEFAULT_METRICS,
    ks: Sequence[int | None] | Mapping[str, Sequence[int | None]] = (1, 3, 5, 10),
    conventions: Conventions | None = None,
) -> MetricResult:
    """Compute ``metrics`` at every cut-off in ``ks`` for every user.

    ``ks`` is one list of cut-offs for every metric, or a mapping from each
    metric to its own cut-offs (``{"ndcg": [10], "ap": [None, 100]}``: only
    those columns are computed and returned). A cut-off of None means no
    cut-off: each user's whole list (so precision divides by the list's own
    length) against all of the user's labels (the ideal DCG of nDCG uses every
    label). R-precision and bpref at k read the list cut at k. Tied predictions
    are ordered by ``conventions.ties``; negative label grades are read as
    ``conventions.negative_grades`` says.

    ``metrics`` may also name trec_eval's own measures
    (:data:`offeval_ir.trec_measures.TREC_METRICS`, a parameter after ``:``,
    as ``iprec_at_recall:0.1`` or ``utility:2,-1,0,0``): each is computed on
    the lists cut at k (trec_eval's ``-M k``), and ``relative_P`` and ``unj``,
    whose k is part of their definition, are NaN without a cut-off.
    """
    conv = conventions or Conventions()
    _check_mapping(metrics, ks)
    special = [m for m in metrics if conv.for_metric(m) != conv]
    if special:
        base = [m for m in metrics if m not in special]
        parts = [compute(judgements, [m], _ks_of(ks, [m]), conv.for_metric(m)) for m in special]
        if base:
            base_conv = replace(conv, per_metric=())
            parts.insert(0, compute(judgements, base, _ks_of(ks, base), base_conv))
        return _merge(parts, conv, _column_names(metrics, _cutoffs(metrics, ks)))
    trec = [m for m in metrics if is_trec_metric(m)]
    unknown = set(metrics) - set(METRICS) - set(trec)
    if unknown:
        raise ConfigurationError(
            f"unknown metrics {sorted(unknown)}; known: {list(METRICS)} and trec_eval's "
            f"{list(TREC_METRICS)} (see offeval_ir.trec_measures)"
        )
    cutoffs = _cutoffs(metrics, ks)  # metric -> its cut-offs
    ks = list(dict.fromkeys(k for m in metrics for k in cutoffs[m]))
    negative = _negative_grades(judgements, conv)
    tied = judgements.tie_group is not None and conv.ties == "expected"
    if tied and set(metrics) - set(TIE_LINEAR):
        raise ConfigurationError(
            "ties='expected' is defined here for precision, recall, dcg and ndcg; for "
            f"{sorted(set(metrics) - set(TIE_LINEAR))} choose a deterministic tie policy "
            f"({switch('ties', 'item_desc')}, item_asc or input_order)"
        )
    j = in_tie_order(judgements, conv)
    # ranks past the largest cut-off never matter (tie groups are averaged first, in full)
    n_ranks = j.max_length if None in ks else min(j.max_length, int(max(ks)))
    width = j.max_length if tied else n_ranks
    grades = np.maximum(j.grades[:, :width], 0) if negative else j.grades[:, :width]
    rel = (grades >= conv.relevance_threshold).astype(float)
    if conv.nonpositive_scores == "irrelevant" and j.positive is not None:
        rel *= j.positive[:, :width]
    gains_of = (lambda g: g) if conv.gain == "linear" else (lambda g: np.expm1(g * np.log(2)))
    graded = grades if conv.dcg_relevance == "graded" else rel
    trec_values = (
        trec_columns(j, trec, {m: cutoffs[m] for m in trec}, conv.relevance_threshold)
        if trec
        else {}
    )
    wanted = set(metrics) - set(trec)
    gain = gains_of(graded) if wanted & {"dcg", "ndcg", "idcg"} else None
    judged = (
        j.judged[:, :width].astype(float) if wanted & {"judged", "bpref", "rbp_residual"} else None
    )
    if tied:
        if judged is not None:
            judged = _tie_mean(judged, j.tie_group)[:, :n_ranks]
        rel = _tie_mean(rel, j.tie_group)[:, :n_ranks]
        gain = _tie_mean(gain, j.tie_group)[:, :n_ranks] if gain is not None else None
        graded = graded[:, :n_ranks]
    discounts = _discounts(n_ranks, conv.log_base)
    precision_terms = _precision_terms(rel) if "ap" in wanted else None
    first_hit = np.full(j.n_users, np.inf)
    if n_ranks and "rr" in wanted:
        found = rel.any(axis=1)
        first_hit[found] = np.argmax(rel[found] > 0, axis=1) + 1
    n_rel = j.n_relevant(conv.relevance_threshold).astype(float)
    err_terms = _err_terms(grades[:, :n_ranks], conv.err_max_grade) if "err" in wanted else None
    rbp_weights = (1 - conv.rbp_persistence) * conv.rbp_persistence ** np.arange(n_ranks)
    hits_before = np.cumsum(rel, axis=1) if "rprec" in wanted else None
    bpref_terms = None
    if "bpref" in wanted:  # trec_eval's bpref: a negative grade is not a judgement
        n_judged = j.n_judged - (j.label_grades < 0).sum(axis=1) if negative else j.n_judged
        scored = judged * (j.grades[:, :n_ranks] >= 0) if negative else judged
        # added rank by rank, as trec_eval adds them: its terms are fractions with small
        # denominators, so a value often lies on a tie of the fourth decimal, and numpy's
        # pairwise sum would round some of those the other way
        bpref_terms = np.cumsum(_bpref_terms(rel, scored, n_rel, n_judged), axis=1)
    if tied and conv.ideal == "list":
        raise ConfigurationError(
            "ideal='list' needs a definite top k: use a deterministic tie policy "
            f"({switch('ties', 'item_desc')}), or {switch('ideal', 'labels')}"
        )
    ideal = (
        _ideal_labels(j, conv, gains_of)
        if conv.ideal == "labels" and wanted & {"ndcg", "idcg"}
        else None
    )
    ideal_discounts = _discounts(ideal.shape[1], conv.log_base) if ideal is not None else None

    columns = {}
    for k in ks:
        kk = n_ranks if k is None else int(k)  # columns read
        cut = j.lengths.astype(float) if k is None else float(kk)  # no cut-off: the user's list
        suffix = "" if k is None else f"@{k}"
        in_list = np.minimum(cut, j.lengths)
        at_k = [m for m in metrics if k in cutoffs[m]]  # the columns computed at k
        here = wanted.intersection(at_k)
        h = (
            _upto(rel, kk)
            if here & {"precision", "recall", "f1", "hit_rate", "ap", "success"}
            else None
        )
        values = {}
        with np.errstate(divide="ignore", invalid="ignore"):
            if h is not None:
                p = h / (cut if conv.precision_denominator == "k" else in_list)
                r = h / (n_rel if conv.recall_denominator == "labels" else np.minimum(cut, n_rel))
                values.update(
                    precision=p,
                    recall=r,
                    hit_rate=(h > 0).astype(float),
                    f1=np.where(p + r > 0, 2 * p * r / (p + r), 0.0),
                    success=(h > 0).astype(float),
                )
            if "judged" in here:
                den = cut if conv.precision_denominator == "k" else in_list
                values["judged"] = _upto(judged, kk) / den
            if "rprec" in here:
                values["rprec"] = _r_precision(hits_before, n_rel, kk)
            if "bpref" in here:
                values["bpref"] = _running(bpref_terms, kk) / n_rel
            if "err" in here:
                values["err"] = _upto(err_terms, kk)
            if "rbp" in here:
                values["rbp"] = _upto(rel, kk, rbp_weights)
            if "rbp_residual" in here:
                # unjudged ranks of the list, then every rank past its end (or past k)
                p_rbp, depth = conv.rbp_persistence, np.minimum(cut, j.lengths)
                padding = p_rbp**depth - p_rbp ** min(kk, n_ranks)
                unjudged = _upto(1 - judged, kk, rbp_weights) - padding
                values["rbp_residual"] = unjudged + p_rbp**depth
            if "ap" in here:
                ap_den = {
                    "hits": h,
                    "min_k_list": in_list,
                    "labels": n_rel,
                    "min_k_labels": np.minimum(cut, n_rel),
                }[conv.ap_denominator]
                values["ap"] = np.where(ap_den > 0, precision_terms(kk) / ap_den, 0.0)
            if "rr" in here:
                values["rr"] = np.where(first_hit <= kk, 1 / first_hit, 0.0)
            if here & {"dcg", "ndcg", "idcg"}:
                if ideal is not None:
                    idcg = _upto(ideal, ideal.shape[1] if k is None else kk, ideal_discounts)
                else:
                    idcg = _ideal_of_top_k(graded, kk, conv, gains_of)
                values["dcg"] = _upto(gain, kk, discounts)
                values["idcg"] = idcg
                values["ndcg"] = np.where(idcg > 0, values["dcg"] / idcg, 0.0)
        for name in at_k:
            column = f"{name}{suffix}"
            columns[column] = (
                trec_values[column]
                if name in trec
                else np.nan_to_num(values[name], nan=0.0, posinf=0.0)
            )
    per_user = pd.DataFrame(columns, index=j.users)
    per_user.index.name = "user"
    return _apply_edge_cases(per_user, j, conv, n_rel)


def _check_mapping(metrics: Sequence[str], ks) -> None:
    """A mapping ``ks`` gives cut-offs for exactly the metrics computed."""
    if not isinstance(ks, Mapping):
        return
    missing = [m for m in metrics if m not in ks]
    extra = [m for m in ks if m not in metrics]
    if missing or extra:
        what = f"no cut-offs for {missing}" if missing else f"cut-offs for {extra}, not in metrics"
        raise ConfigurationError(f"ks maps each metric to its cut-offs; it gives {what}")


def _ks_of(ks, metrics: Sequence[str]):
    """The cut-offs ``ks`` gives ``metrics`` (all of a list; their entries of a mapping)."""
    return {m: ks[m] for m in metrics} if isinstance(ks, Mapping) else ks


def _cutoffs(metrics: Sequence[str], ks) -> dict[str, list[int | None]]:
    """Each metric's checked cut-offs (see :func:`compute`'s ``ks``)."""
    if not isinstance(ks, Mapping):
        checked = _checked_cutoffs(ks)
        return {m: checked for m in metrics}
    return {m: _checked_cutoffs(ks[m]) for m in metrics}


def _column_names(metrics: Sequence[str], cutoffs: Mapping[str, list]) -> list[str]:
    """The result's columns: for each cut-off (in order of first mention), the metrics
    computed at it, ``metric@k`` (``metric`` without a cut-off)."""
    ks = dict.fromkeys(k for m in metrics for k in cutoffs[m])
    return [f"{m}{'' if k is None else f'@{k}'}" for k in ks for m in metrics if k in cutoffs[m]]


def _checked_cutoffs(ks: Sequence[int | None]) -> list[int | None]:
    """``ks`` as a list of distinct cut-offs: not empty, each None or a whole number >= 1
    (as an int: 5.0 is the cut-off 5)."""
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Iterable):
        raise ConfigurationError(
            f"ks must be a list of cut-offs (whole numbers or None), got {ks!r}"
        )
    ks = list(ks)
    if not ks:
        raise ConfigurationError("ks is empty: give at least one cut-off (None: the whole list)")
    name = "ks: each cut-off k"
    return list(dict.fromkeys(check_whole(k, name, low=1, floats=True, optional=True) for k in ks))


def _negative_grades(j: Judgements, conv: Conventions) -> bool:
    """Whether ``j`` holds negative grades; an error unless the conventions read them."""
    negative = bool((j.label_grades < 0).any() or (j.grades < 0).any())
    if negative and conv.negative_grades == "error":
        raise ConfigurationError(
            "the labels hold negative grades and negative_grades='error'; "
            f"{switch('negative_grades', 'zero')} reads them as trec_eval does (gain 0, "
            "not relevant)"
        )
    return negative


def _err_terms(grades: np.ndarray, max_grade: float) -> np.ndarray:
    """ERR's summands: P(stop at rank r) / r, stopping at grade g with (2^g - 1) / 2^max."""
    stop = np.expm1(np.minimum(grades, max_grade) * np.log(2)) / 2.0**max_grade
    reach = np.cumprod(1 - stop, axis=1)
    reach = np.concatenate([np.ones((len(stop), 1)), reach[:, :-1]], axis=1)
    return stop * reach / np.arange(1, stop.shape[1] + 1)


def _r_precision(hits_before: np.ndarray, n_rel: np.ndarray, k: int) -> np.ndarray:
    """Relevant items in the top R (the user's number of relevant labels), over R;
    the list is cut at k."""
    read = np.minimum(np.minimum(n_rel, k), hits_before.shape[1]).astype(np.int64)
    rows = np.flatnonzero(read > 0)
    hits = np.zeros(len(n_rel))
    hits[rows] = hits_before[rows, read[rows] - 1]
    return hits / n_rel


def _bpref_terms(
    rel: np.ndarray, judged: np.ndarray, n_rel: np.ndarray, n_judged: np.ndarray
) -> np.ndarray:
    """trec_eval's bpref summands: at each relevant rank, 1 - min(n, R) / min(R, N), where
    n counts the judged non-relevant items ranked above, R the relevant labels and N the
    judged non-relevant labels (1 when n = 0). Unjudged items are skipped."""
    nonrel = judged * (1 - rel)
    above = np.cumsum(nonrel, axis=1) - nonrel
    r = n_rel[:, None]
    scale = np.minimum(r, (n_judged - n_rel)[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        penalty = np.where(above > 0, np.minimum(above, r) / scale, 0.0)
    return rel * (1 - penalty)


def _merge(parts: list[MetricResult], conv: Conventions, order: list[str]) -> MetricResult:
    """Join results computed under per-metric conventions, in the requested column order."""
    per_user = pd.concat([p.per_user for p in parts], axis=1)[order]
    counts = pd.concat([p.counts for p in parts]).loc[order]
    reasons = pd.concat([p.reasons for p in parts], axis=1)[order]
    return MetricResult(per_user, conv, counts, reasons)


def _ideal_of_top_k(graded: np.ndarray, k: int, conv: Conventions, gains_of) -> np.ndarray:
    """IDCG@k from the list itself: its top-k grades sorted in decreasing order."""
    best = -np.sort(-graded[:, :k], axis=1)
    return (gains_of(best) * _discounts(best.shape[1], conv.log_base)).sum(axis=1)


def _ideal_labels(j: Judgements, conv: Conventions, gains_of) -> np.ndarray:
    """Per user, the gains of the best labels in decreasing order (the ideal ranking)."""
    labels = np.maximum(j.label_grades, 0)
    if conv.dcg_relevance == "binary":
        labels = (labels >= conv.relevance_threshold).astype(float)
    return gains_of(labels)


def _apply_edge_cases(
    per_user: pd.DataFrame, j: Judgements, conv: Conventions, n_rel: np.ndarray
) -> MetricResult:
    """NaN for users left out by the conventions, with the reasons counted."""
    labelled = j.n_judged > 0 if conv.empty_labels == "judged" else n_rel > 0
    no_labels = ~labelled
    no_predictions = (j.lengths == 0) & labelled
    excluded = np.zeros(j.n_users, dtype=bool)
    if conv.empty_labels != "zero":
        excluded |= no_labels
    if conv.no_predictions == "nan":
        excluded |= no_predictions
    if excluded.any():
        per_user.loc[excluded] = np.nan
    code = np.zeros(j.n_users, dtype=np.int8)
    if conv.empty_labels != "zero":
        code[no_labels] = EXCLUSION_REASONS.index("no_labels")
    if conv.no_predictions == "nan":
        code[no_predictions] = EXCLUSION_REASONS.index("no_predictions")
    reasons = pd.DataFrame(
        np.repeat(code[:, None], per_user.shape[1], axis=1),
        index=per_user.index,
        columns=per_user.columns,
    )
    counts = pd.DataFrame(
        {
            "users": int((~excluded).sum()),
            "excluded_no_labels": int(no_labels.sum()) if conv.empty_labels != "zero" else 0,
            "excluded_no_predictions": (
                int(no_predictions.sum()) if conv.no_predictions == "nan" else 0
            ),
        },
        index=per_user.columns,
    )
    return MetricResult(per_user, conv, counts, reasons)
