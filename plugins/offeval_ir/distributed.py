"""Runs and qrels on Dask: judged a partition of users at a time, means through the engine.

:func:`evaluate_runs_dask` takes runs and qrels as Dask DataFrames (qrels
may also be a pandas frame) and gives the
:class:`~offeval_ir.run_statistics.RunEvaluation` that
:func:`~offeval_ir.runs.evaluate_runs` gives in memory, with the same
numbers up to floating-point rounding:

1. the user columns' types are checked (a run whose ids are numbers cannot
   meet qrels whose ids are text, nor the other way: the error of
   :func:`~offeval_ir.runs.evaluate_runs`, before any work); every frame is
   shuffled by user into the same ``partitions`` (a user's rows of every run
   and of the qrels land in the same partition, wherever they were in the
   input; ids are hashed in a canonical form, a whole float as the integer,
   so that 3.0 in the qrels meets 3 in a run as it does in memory);
2. on the workers, each partition's qrels are prepared once
   (:func:`~offeval_ir.prepared.prepare_qrels`) and every run's rows of that
   partition judged against them, giving one row per user with each run's
   value of each measure, the reason a user is left out, and a ratio
   measure's numerator and denominator (``map_partitions``);
3. those rows come to the client (one row per user, a few numbers per run and
   measure) and are folded by the engine as users, as in memory
   (:func:`~offeval_ir.run_statistics.evaluate_results`): means, standard
   errors, their covariances and the paired comparisons on common queries. A
   run none of whose users is in the qrels is the error ``evaluate_runs``
   raises.

The runs and the qrels never come to the client: the judging, the costly part,
happens where the partitions live.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from offeval import ConfigurationError, OffevalError
from offeval.plugin import hash_ids
from offeval_ir.conventions import PRESETS, Conventions
from offeval_ir.judgements import role_names
from offeval_ir.metrics import EXCLUSION_REASONS, MetricResult
from offeval_ir.prepared import measure_groups, prepare_qrels
from offeval_ir.run_statistics import (
    RunEvaluation,
    evaluate_results,
    no_common_queries,
    run_values,
)

#: The column holding each row's partition number while frames are shuffled.
PART = "_offeval_partition"


def _is_dask(frame) -> bool:
    return hasattr(frame, "to_delayed") and hasattr(frame, "npartitions")


def evaluate_runs_dask(
    runs: Mapping[str, object],
    labels,
    measures: Sequence[str],
    conventions: Conventions | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    level: float = 0.95,
    partitions: int | None = None,
) -> RunEvaluation:
    """Means of ``measures`` for every run with standard errors, runs and qrels on Dask.

    ``runs`` maps names to Dask DataFrames (user, item, rank or score, as
    :func:`~offeval_ir.runs.evaluate_runs` takes them); ``labels`` is a Dask
    or pandas frame (user, item, relevance). Users may be spread over
    partitions in the input: every frame is shuffled by user into
    ``partitions`` (default: the most partitions of any input). The result is
    that of ``evaluate_runs`` on the same frames in memory (see the module
    docstring), for any Dask scheduler.
    """
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise OffevalError(
            "evaluate_runs on Dask needs dask: pip install 'offeval[dask]'"
        ) from None
    if not isinstance(runs, Mapping) or not runs:
        raise ConfigurationError("give at least one run, as {name: Dask DataFrame}")
    bad = [name for name in runs if not isinstance(name, str)]
    if bad:
        raise ConfigurationError(f"run names must be text, got {bad[0]!r}")
    conv = conventions or PRESETS["trec_eval"]()
    names, groups = measure_groups(measures, conv)
    aggregation = {m.name: m.aggregate for _, g in groups for m in g if m.aggregate != "mean"}
    user = role_names(columns)["user"]
    frames = {"labels": labels, **runs}
    for what, frame in frames.items():
        if not _is_dask(frame) and not isinstance(frame, pd.DataFrame):
            raise OffevalError(
                f"{'the labels' if what == 'labels' else f'run {what!r}'} must be a Dask or "
                f"pandas DataFrame, got {type(frame).__name__}"
            )
        if user not in frame.columns:
            raise ConfigurationError(
                f"{'the labels' if what == 'labels' else f'run {what!r}'} have no user column "
                f"{user!r} (columns: {', '.join(map(str, list(frame.columns)[:10]))})"
            )
    _check_id_types(runs, labels, user)
    count = partitions or max(f.npartitions for f in frames.values() if _is_dask(f))
    shuffled = [_by_user(frame, user, count, dd) for frame in frames.values()]
    layout = list(runs)
    meta = _meta(shuffled[0]._meta, user, layout, names, aggregation)
    per_user = dd.map_partitions(
        _judge_partition,
        *shuffled,
        user=user,
        layout=layout,
        measures=list(measures),
        conventions=conv,
        columns=columns,
        meta=meta,
        align_dataframes=False,
    )
    local = per_user.compute()
    _check_common_queries(local, user, layout)
    return evaluate_results(_results(local, user, layout, names, aggregation, conv), level=level)


def _by_user(frame, user: str, count: int, dd):
    """``frame`` shuffled so that partition p holds the users whose hash is p mod count."""
    if not _is_dask(frame):
        frame = dd.from_pandas(frame, npartitions=1)

    def numbered(part: pd.DataFrame) -> pd.DataFrame:
        ids = canonical_ids(part[user].to_numpy())
        codes = (hash_ids(ids) % np.uint64(count)).astype(np.int64)
        return part.assign(**{PART: codes})

    meta = frame._meta.assign(**{PART: np.int64(0)})
    return frame.map_partitions(numbered, meta=meta).shuffle(PART, npartitions=count)


def canonical_ids(ids: np.ndarray) -> np.ndarray:
    """Ids as they are hashed to partitions: a whole float as the integer (3.0 as 3, so
    that it meets 3 as pandas matches them), anything else as it is."""
    if ids.dtype.kind == "f":
        whole = np.isfinite(ids) & (ids == np.round(ids))
        if whole.all():
            return ids.astype(np.int64)
        out = ids.astype(object)
        out[whole] = ids[whole].astype(np.int64)
        return out
    if pd.api.types.is_object_dtype(ids.dtype):
        return np.array(
            [
                int(x)
                if isinstance(x, float | np.floating) and np.isfinite(x) and x == int(x)
                else x
                for x in ids
            ],
            dtype=object,
        )
    return ids


def _id_kind(dtype) -> str | None:
    """``numbers``, ``text``, or None (an object column may hold either)."""
    if pd.api.types.is_object_dtype(dtype):
        return None
    if dtype.kind in "iuf":
        return "numbers"
    return "text" if pd.api.types.is_string_dtype(dtype) else None


def _check_id_types(runs: Mapping, labels, user: str) -> None:
    """The error of ``evaluate_runs`` for a run whose user ids are numbers and the qrels'
    text (or the other way), from the frames' types, before any work: such ids never
    meet (a few ids of each side, from their first rows, are named)."""
    theirs = _id_kind(labels[user].dtype)
    for name, frame in runs.items():
        ours = _id_kind(frame[user].dtype)
        if ours is None or theirs is None or ours == theirs:
            continue
        run_ids, label_ids = _first_ids(frame[user]), _first_ids(labels[user])
        raise no_common_queries(
            f"run {name!r}",
            run_ids,
            label_ids,
            advice=f"the run's ids are {ours} and the qrels' {theirs}: make both sides text "
            "(the file readers do)",
        )


def _first_ids(column, rows: int = 5) -> pd.Index:
    """The distinct ids among a column's first rows (a Dask column's first partition)."""
    with warnings.catch_warnings():  # Dask warns when the first partition is shorter
        warnings.simplefilter("ignore", UserWarning)
        return pd.Index(pd.unique(column.head(rows).to_numpy()))


def _check_common_queries(local: pd.DataFrame, user: str, layout) -> None:
    """The error of ``evaluate_runs`` for a run none of whose users is in the qrels."""
    labelled = local["l"].to_numpy()
    for j, name in enumerate(layout):
        ranked = local[f"i{j}"].to_numpy()
        if ranked.any() and not (ranked & labelled).any():
            raise no_common_queries(
                f"run {name!r}",
                pd.Index(local[user][ranked].to_numpy()),
                pd.Index(local[user][labelled].to_numpy()),
            )


def _meta(labels_meta: pd.DataFrame, user: str, layout, names, aggregation) -> pd.DataFrame:
    """The empty per-user frame: the user, whether the qrels have it, then per run j and
    measure k its value, reason (and a ratio's numerator and denominator)."""
    data = {user: labels_meta[user].iloc[:0], "l": pd.Series([], dtype=bool)}
    for j in range(len(layout)):
        data[f"u{j}"] = pd.Series([], dtype=bool)
        data[f"i{j}"] = pd.Series([], dtype=bool)
        for k, m in enumerate(names):
            data[f"v{j}_{k}"] = pd.Series([], dtype=float)
            data[f"r{j}_{k}"] = pd.Series([], dtype=np.int8)
            if aggregation.get(m) == "ratio":
                data[f"n{j}_{k}"] = pd.Series([], dtype=float)
                data[f"d{j}_{k}"] = pd.Series([], dtype=float)
    return pd.DataFrame(data)


def _judge_partition(labels, *runs, user, layout, measures, conventions, columns):
    """One partition's users: every run judged against the partition's qrels."""
    labels = labels.drop(columns=PART)
    prepared = prepare_qrels(labels, conventions, columns=columns)
    results = {}
    for name, run in zip(layout, runs, strict=True):
        run = run.drop(columns=PART)  # judged even when empty: the qrels' users count
        results[name] = prepared.measures(run, measures, conventions, columns=columns)
    names, groups = measure_groups(measures, conventions)
    aggregation = {m.name: m.aggregate for _, g in groups for m in g if m.aggregate != "mean"}
    users, _, _, _ = run_values(results)
    frame = _rows(users, user, layout, names, aggregation, results)
    frame["l"] = users.isin(labels[user]) if len(labels) else False
    for j, run in enumerate(runs):
        frame[f"i{j}"] = users.isin(run[user]) if len(run) else False
    return frame


def _rows(users, user, layout, names, aggregation, results) -> pd.DataFrame:
    """The per-user frame of one partition: whether the qrels have the user (``l``),
    per run whether its result has the user (``u{j}``) and whether the run ranks it
    (``i{j}``), then per measure the value and reason (``no_labels`` for a user of
    another run only, as in memory) and a ratio's numerator and denominator."""
    no_labels = EXCLUSION_REASONS.index("no_labels")
    data = {user: users, "l": False}
    for j, name in enumerate(layout):
        result = results[name]
        data[f"u{j}"] = users.isin(result.per_user.index)
        data[f"i{j}"] = False
        for k, m in enumerate(names):
            v = result.per_user[m].reindex(users).to_numpy(dtype=float)
            r = result.reasons[m].reindex(users).fillna(no_labels).to_numpy().astype(np.int8)
            if aggregation.get(m) == "ratio":
                part = result.parts[m].reindex(users)
                num = part["numerator"].to_numpy(dtype=float)
                den = part["denominator"].to_numpy(dtype=float)
            data[f"v{j}_{k}"] = v
            data[f"r{j}_{k}"] = r
            if aggregation.get(m) == "ratio":
                data[f"n{j}_{k}"] = np.nan_to_num(num)
                data[f"d{j}_{k}"] = np.nan_to_num(den)
    return pd.DataFrame(data).reset_index(drop=True)


def _results(local: pd.DataFrame, user, layout, names, aggregation, conv) -> dict:
    """Each run's :class:`MetricResult` from the per-user frame (users the run neither
    ranks nor has labels for dropped, as in memory)."""
    results = {}
    for j, name in enumerate(layout):
        own = local[local[f"u{j}"].to_numpy()]
        index = pd.Index(own[user].to_numpy(), name="user")
        per_user = pd.DataFrame(
            {m: own[f"v{j}_{k}"].to_numpy() for k, m in enumerate(names)}, index=index
        )
        reasons = pd.DataFrame(
            {m: own[f"r{j}_{k}"].to_numpy() for k, m in enumerate(names)}, index=index
        )
        counts = pd.DataFrame(
            {
                "users": (reasons == 0).sum(),
                "excluded_no_labels": (reasons == EXCLUSION_REASONS.index("no_labels")).sum(),
                "excluded_no_predictions": (
                    reasons == EXCLUSION_REASONS.index("no_predictions")
                ).sum(),
            }
        )
        parts = {
            m: pd.DataFrame(
                {
                    "numerator": own[f"n{j}_{k}"].to_numpy(),
                    "denominator": own[f"d{j}_{k}"].to_numpy(),
                },
                index=index,
            )
            for k, m in enumerate(names)
            if aggregation.get(m) == "ratio"
        }
        results[name] = MetricResult(per_user, conv, counts, reasons, dict(aggregation), parts)
    return results
