"""Runs judged against qrels by measure strings, through the statistics engine.

:func:`compute_measures` gives each user's value of measure strings
(``nDCG@10``, ``P(rel=2)@5``, ``map_cut_100``) under one set of conventions.
:func:`evaluate_runs` sends those per-user values through offeval's engine,
as the off-policy estimators are: users are the units, each run is a policy
and each measure an estimator whose value is the mean over the users it
averages. So every mean gets a standard error and interval, and runs are
compared pairwise with the same delta-method grid (and multiple-testing
corrections) as off-policy estimates, on paired users (the engine's side,
:class:`RunEvaluation` and :func:`evaluate_results`, is
:mod:`offeval_ir.run_statistics`'s; runs on Dask are
:mod:`offeval_ir.distributed`'s).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from offeval import ConfigurationError, OffevalError
from offeval_ir.blocks import compute_frames
from offeval_ir.conventions import PRESETS, Conventions
from offeval_ir.distributed import evaluate_runs_dask
from offeval_ir.judgements import role_names
from offeval_ir.measures import Measure
from offeval_ir.metrics import MetricResult
from offeval_ir.peer_inputs import as_qrels, as_results, as_run, as_runs, measure_names
from offeval_ir.prepared import measure_groups, measures_of, prepare_qrels
from offeval_ir.run_statistics import RunEvaluation, evaluate_results, no_common_queries


def compute_measures(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    measures: Sequence[str | Measure],
    conventions: Conventions | None = None,
    *,
    users: Sequence | None = None,
    columns: Mapping[str, str] | None = None,
    chunk_rows: int = 2_000_000,
) -> MetricResult:
    """Each user's value of each measure, columns named as the measures were written.

    ``measures`` are measure strings in ir-measures, trec_eval or offeval
    syntax (see :mod:`offeval_ir.measures`); what a string states (``rel=2``,
    ``dcg=exp-log2``, RBP's ``p``) overrides ``conventions`` (default: the
    ``trec_eval`` preset) for that measure only. Other arguments as
    :func:`~offeval_ir.blocks.compute_frames`. Measures not aggregated by a
    mean (:attr:`Measure.aggregate <offeval_ir.measures.Measure.aggregate>`)
    are named in the result's ``aggregation``; a ``ratio`` measure (pnDCG@k)
    has its per-user numerator and denominator in the result's ``parts``.
    """
    conv = conventions or PRESETS["trec_eval"]()
    predictions, labels = as_run(predictions, columns=columns), as_qrels(labels, columns=columns)
    measures = measure_names(measures)  # ir-measures' measure objects, peer inputs: see there
    names, groups = measure_groups(measures, conv)

    def result_of(metrics, ks, group_conv):
        return compute_frames(
            predictions,
            labels,
            metrics,
            ks,
            group_conv,
            users=users,
            columns=columns,
            chunk_rows=chunk_rows,
        )

    return measures_of(names, groups, conv, result_of)


def evaluate_runs(
    runs: Mapping[str, pd.DataFrame],
    labels: pd.DataFrame,
    measures: Sequence[str],
    conventions: Conventions | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    level: float = 0.95,
    chunk_rows: int = 2_000_000,
    qrels_name: str = "",
) -> RunEvaluation:
    """Means of ``measures`` for every run with standard errors, through the engine.

    Users are the units; a user a run does not average (no judgement, or no
    ranking under trec_eval's default) is counted as excluded with its
    reason, never silently. Paired comparisons between runs are on the
    users every run averages (see :meth:`RunEvaluation.compare`). A run none
    of whose queries is in the labels is an error (``qrels_name`` names the
    labels in it). Several runs are judged on qrels prepared once
    (:func:`~offeval_ir.prepared.prepare_qrels`); runs and labels on Dask
    (Dask DataFrames) are judged a partition of users at a time, with the
    same numbers (:func:`~offeval_ir.distributed.evaluate_runs_dask`).
    """
    runs = as_runs(runs, columns)  # ranx runs, dict-of-dict, ...: see offeval_ir.peer_inputs
    labels = as_qrels(labels, columns=columns)
    measures = measure_names(measures)
    if not isinstance(runs, Mapping) or not runs:
        raise ConfigurationError("give at least one run, as {name: predictions frame}")
    if any(hasattr(f, "npartitions") for f in (labels, *runs.values())):
        return evaluate_runs_dask(runs, labels, measures, conventions, columns=columns, level=level)
    conv = conventions or PRESETS["trec_eval"]()
    if _many(runs, labels, chunk_rows):
        stacked = _stacked(runs, labels, measures, conv, columns, chunk_rows, qrels_name)
        if stacked is not None:
            return evaluate_results(stacked, level=level)
    label_users = None  # the qrels' queries, found once for every run
    for name, frame in runs.items():
        label_users = check_common_queries(
            frame, labels, columns, f"run {name!r}", qrels_name, label_users=label_users
        )
    if _many(runs, labels, chunk_rows):  # the qrels checked, numbered and sorted once
        prepared = prepare_qrels(labels, conv, columns=columns, name=qrels_name)
        results = {
            name: prepared.measures(frame, measures, conv, columns=columns)
            for name, frame in runs.items()
        }
    else:
        results = {
            name: compute_measures(
                frame, labels, measures, conv, columns=columns, chunk_rows=chunk_rows
            )
            for name, frame in runs.items()
        }
    return evaluate_results(results, level=level)


def _stacked(
    runs: Mapping[str, pd.DataFrame],
    labels: pd.DataFrame,
    measures: Sequence[str],
    conv: Conventions,
    columns: Mapping[str, str] | None,
    chunk_rows: int,
    qrels_name: str,
) -> dict[str, MetricResult] | None:
    """Every run's measures on qrels prepared once, a block of runs judged at a time
    (:meth:`~offeval_ir.prepared.PreparedQrels.runs_measures`); None when some run or the
    qrels is refused, or the runs do not stack: judged again one run at a time, whose
    checks say which run and which rows, as they always have."""
    try:
        prepared = prepare_qrels(labels, conv, columns=columns, name=qrels_name)
        return prepared.runs_measures(runs, measures, conv, columns=columns, chunk_rows=chunk_rows)
    except OffevalError:
        return None


def _many(runs: Mapping, labels, chunk_rows: int) -> bool:
    """Whether to judge the runs on prepared qrels: several runs, each small enough to
    be judged whole (larger ones go a block of users at a time, bounding memory)."""
    return (
        len(runs) > 1
        and isinstance(labels, pd.DataFrame)
        and all(isinstance(f, pd.DataFrame) and len(f) <= chunk_rows for f in runs.values())
    )


def check_common_queries(
    run: pd.DataFrame,
    labels: pd.DataFrame,
    columns: Mapping[str, str] | None,
    run_name: str = "the run",
    qrels_name: str = "",
    *,
    label_users: pd.Index | None = None,
) -> pd.Index | None:
    """An error when no query (user) of ``run`` is in ``labels``, naming a few of each.

    Returns the labels' distinct queries (None when a frame lacks the column), to be
    given back as ``label_users`` when checking another run against the same labels."""
    user = role_names(columns)["user"]
    if not all(isinstance(f, pd.DataFrame) and user in f for f in (run, labels)):
        return None  # the measures name what is missing
    ours = pd.Index(pd.unique(run[user]))
    theirs = pd.Index(pd.unique(labels[user])) if label_users is None else label_users
    if ours.empty or ours.isin(theirs).any():
        return theirs
    raise no_common_queries(run_name, ours, theirs, qrels_name)


def compare_systems(
    results: Mapping[str, MetricResult],
    measures: Sequence[str] | None = None,
    *,
    test: str = "t",
    correction: str | None = "holm",
    alpha: float = 0.05,
    resamples: int = 10_000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Every pair of systems on every measure column (see :meth:`RunEvaluation.compare`);
    ``results`` may also hold per-query values computed elsewhere (see
    :func:`offeval_ir.peer_inputs.as_results`)."""
    evaluation = evaluate_results(as_results(results), level=level)
    return evaluation.compare(
        measures, test=test, correction=correction, alpha=alpha, resamples=resamples, seed=seed
    )
