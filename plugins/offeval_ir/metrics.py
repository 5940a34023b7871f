"""Top-n metrics for all users at once, at many cut-offs, under explicit conventions.

:func:`compute` hands each metric to the provider its declaration names
(:mod:`offeval_ir.measure.registry`): offeval's kernels, or trec_eval's own measures
(``num_ret``, ``infAP``, ``iprec_at_recall:0.1``, ...); :class:`MetricResult` says how
each column aggregates (:data:`AGGREGATIONS`).
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
from offeval_ir.measure.ranked import check_last
from offeval_ir.measure.registry import PROVIDERS, declaration, names

#: The metrics computed when none are named.
DEFAULT_METRICS = ("precision", "recall", "f1", "hit_rate", "ap", "rr", "dcg", "ndcg")
#: offeval's metrics: the defaults, then every other measure its kernels compute
#: (:mod:`offeval_ir.measure`); trec_eval's own are :data:`TREC_METRICS`.
METRICS = (*DEFAULT_METRICS, *(m for m in names("offeval") if m not in DEFAULT_METRICS))
#: trec_eval's measures only its provider computes (a parameter after ``:``).
TREC_METRICS = names("trec_eval")


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

    ``metrics`` may also name trec_eval's own measures (:data:`TREC_METRICS`, a
    parameter after ``:``, as ``iprec_at_recall:0.1`` or ``utility:2,-1,0,0``): each is
    computed on the lists cut at k (trec_eval's ``-M k``), and ``relative_P`` and ``unj``,
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
    declared = {m: declaration(m) for m in metrics}
    unknown = [m for m, d in declared.items() if d is None]
    if unknown:
        raise ConfigurationError(
            f"unknown metrics {sorted(unknown)}; known: {list(METRICS)} and trec_eval's "
            f"{list(TREC_METRICS)} (see offeval_ir.measure.trec_eval)"
        )
    cutoffs = _cutoffs(metrics, ks)  # metric -> its cut-offs
    _negative_grades(judgements, conv)
    tied = judgements.tie_group is not None and conv.ties == "expected"
    untied = sorted(m for m, d in declared.items() if not d.tie_linear)
    if tied and untied:
        raise ConfigurationError(
            "ties='expected' is defined here for precision, recall, dcg and ndcg; for "
            f"{untied} choose a deterministic tie policy "
            f"({switch('ties', 'item_desc')}, item_asc or input_order)"
        )
    if tied and conv.ideal == "list":
        raise ConfigurationError(
            "ideal='list' needs a definite top k: use a deterministic tie policy "
            f"({switch('ties', 'item_desc')}), or {switch('ideal', 'labels')}"
        )
    if judgements.tie_group is not None and conv.ties == "last":
        check_last(metrics, conv)
    j = in_tie_order(judgements, conv)
    values: dict[str, np.ndarray] = {}
    for provider in dict.fromkeys(d.provider for d in declared.values()):
        own = {m: cutoffs[m] for m, d in declared.items() if d.provider == provider}
        values.update(PROVIDERS[provider].resolve()(j, conv, own))
    order = _column_names(metrics, cutoffs)
    per_user = pd.DataFrame({column: values[column] for column in order}, index=j.users)
    per_user.index.name = "user"
    n_rel = j.n_relevant(conv.relevance_threshold).astype(float)
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


def _merge(parts: list[MetricResult], conv: Conventions, order: list[str]) -> MetricResult:
    """Join results computed under per-metric conventions, in the requested column order."""
    per_user = pd.concat([p.per_user for p in parts], axis=1)[order]
    counts = pd.concat([p.counts for p in parts]).loc[order]
    reasons = pd.concat([p.reasons for p in parts], axis=1)[order]
    return MetricResult(per_user, conv, counts, reasons)


def _apply_edge_cases(
    per_user: pd.DataFrame, j: Judgements, conv: Conventions, n_rel: np.ndarray
) -> MetricResult:
    """NaN for users left out by the conventions, with the reasons counted."""
    labelled = j.n_judged > 0 if conv.empty_labels == "judged" else n_rel > 0
    no_labels = ~labelled
    # nan_all: a user with neither list nor labels is left out for its list when its
    # labels would not leave it out
    everyone = conv.no_predictions == "nan_all" and conv.empty_labels == "zero"
    no_predictions = (j.lengths == 0) & (labelled | everyone)
    excluded = np.zeros(j.n_users, dtype=bool)
    if conv.empty_labels != "zero":
        excluded |= no_labels
    if conv.no_predictions != "zero":
        excluded |= no_predictions
    if excluded.any():
        per_user.loc[excluded] = np.nan
    code = np.zeros(j.n_users, dtype=np.int8)
    if conv.empty_labels != "zero":
        code[no_labels] = EXCLUSION_REASONS.index("no_labels")
    if conv.no_predictions != "zero":
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
                int(no_predictions.sum()) if conv.no_predictions != "zero" else 0
            ),
        },
        index=per_user.columns,
    )
    return MetricResult(per_user, conv, counts, reasons)
