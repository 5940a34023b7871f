"""Target and logging exposures of the logged rows, and the support check.

Exposure eps(x, a) = sum_i e(i) P(rank of a = i | x). The target's comes
from the policy's ``exposure(rows, examination)`` (:func:`target_exposure`,
computed once per chunk and model). The logging policy's, eps0, comes from
one of:

- ``"exposure"``: the log's ``exposure`` column, computed by whoever logged it;
- ``"rank_probabilities"``: columns ``rank_probability_1..L`` (the logged
  item's marginal at every rank), combined with the estimator's examination
  model;
- ``"rank"``: e(logged rank), Jeunen et al. (2024)'s Eq. 11 (deterministic logging ranker,
  fixed candidate generator);
- a ranking policy object (anything with ``exposure(rows, examination)``).

``"auto"`` takes the first of the three columns-based sources the log has.
An examination model e is a callable on 1-based ranks (:func:`at_ranks`
evaluates it once per distinct rank). The ``ranking`` plugin's estimators, and
any exposure-based estimator (``requires = ("exposure()",)``), build on this
module, through :mod:`offeval.plugin`'s ``exposure``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

from offeval import ColumnError, ConfigurationError, InteractionLog, PolicyView, SupportError
from offeval.plugin import check_choice, describe_rows

RANK_PREFIX = "rank_probability_"
SOURCES = ("auto", "exposure", "rank_probabilities", "rank")
SUPPORT_POLICIES = ("fail", "drop", "warn")


def rank_probability_columns(log: InteractionLog) -> dict[int, str]:
    """The log's ``rank_probability_i`` columns by rank i; a misnamed one is an error."""
    out = {}
    for column in log.frame.columns:
        if str(column).startswith(RANK_PREFIX):
            rank = str(column)[len(RANK_PREFIX) :]
            if not rank.isdigit() or int(rank) < 1:
                raise ColumnError(
                    str(column), f"expected {RANK_PREFIX}<rank>, rank a whole number >= 1"
                )
            out[int(rank)] = column
    return dict(sorted(out.items()))


def at_ranks(model: Callable[[np.ndarray], np.ndarray], ranks: np.ndarray) -> np.ndarray:
    """e(rank) for many 1-based ranks, evaluating the model once per distinct rank."""
    ranks = np.asarray(ranks, dtype=np.int64)
    if ranks.size == 0:
        return np.zeros(0)
    if ranks.min() < 1:
        raise ConfigurationError("ranks are 1-based: every rank must be >= 1")
    table = np.asarray(model(np.arange(1, int(ranks.max()) + 1)), dtype=float)
    return table[ranks - 1]


def logging_source(log: InteractionLog, logging) -> str:
    """Which source gives eps0 on this log (resolving ``"auto"``)."""
    if not isinstance(logging, str):
        return "policy"
    check_choice(logging, "logging", SOURCES, rule=f"a policy or one of {SOURCES}")
    if logging != "auto":
        return logging
    if "exposure" in log.frame:
        return "exposure"
    if rank_probability_columns(log):
        return "rank_probabilities"
    return "rank"


def model_key(model) -> str:
    """A hashable key of an examination model: its spec."""
    return getattr(model, "spec", None) or repr(model)


def target_exposure(view: PolicyView, model) -> np.ndarray:
    """The target's exposure of each logged row's item under ``model``, once per chunk."""
    return view.memo(_row_exposure, model, key=model_key(model))


def _row_exposure(view: PolicyView, model) -> np.ndarray:
    return view.ask("exposure", model)


def candidate_exposure(view: PolicyView, model) -> np.ndarray:
    """The target's exposure of each distinct (trajectory, item) of the candidate table."""
    return view.memo(_candidate_exposure, model, key=model_key(model))


def _candidate_exposure(view: PolicyView, model) -> np.ndarray:
    rows, labels = view.log.memo(_candidate_rows)
    return view.ask("exposure", model, rows=rows, labels=labels, table="candidate rows")


def candidate_items(log: InteractionLog) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the candidate table's distinct (trajectory, item) pairs; each's first row
    (computed once per log: :meth:`~offeval.InteractionLog.memo`)."""
    return log.memo(_candidate_items)


def _candidate_items(log: InteractionLog) -> tuple[np.ndarray, np.ndarray]:
    cands = log.require_candidates()
    unit = log.unit_index[cands["slot"].to_numpy()]
    items, uniques = pd.factorize(cands["item"].to_numpy())
    codes = pd.factorize(unit.astype(np.int64) * max(len(uniques), 1) + items)[0]
    running = np.maximum.accumulate(codes)
    first = np.flatnonzero(np.r_[True, running[1:] > running[:-1]])
    return codes, first


def _candidate_rows(log: InteractionLog) -> tuple[pd.DataFrame, np.ndarray]:
    """The distinct (trajectory, item) candidates as rows a policy can score, and their labels."""
    cands = log.require_candidates()
    first = candidate_items(log)[1]
    rows = cands.iloc[first][["trajectory", "item", "position"]]
    slots = cands["slot"].to_numpy()[first]
    rows = rows.assign(context=log.frame["context"].to_numpy()[slots])
    return rows, log.candidate_source_rows[first]


def logging_exposure(log: InteractionLog, logging, examination) -> tuple[np.ndarray, str]:
    """eps0 of every logged row under the logging policy, and the source used."""
    source = logging_source(log, logging)
    if source == "policy":
        return PolicyView(logging, log).ask("exposure", examination), source
    if source == "exposure":
        return log.column("exposure"), source
    if source == "rank_probabilities":
        cols = rank_probability_columns(log)
        if not cols:
            raise ConfigurationError(
                f"logging='rank_probabilities' needs columns {RANK_PREFIX}1, {RANK_PREFIX}2, ..."
            )
        e = at_ranks(examination, np.fromiter(cols, dtype=np.int64))
        probs = np.column_stack([_probabilities(log, column) for column in cols.values()])
        return probs @ e, source
    return at_ranks(examination, log.column("position")), source


def _probabilities(log: InteractionLog, column: str) -> np.ndarray:
    """A rank-probability column as numbers in [0, 1]; bad rows named by their labels."""
    values = pd.to_numeric(log.frame[column], errors="coerce").to_numpy(dtype=float)
    bad = ~((values >= 0) & (values <= 1))
    if bad.any():
        raise ColumnError(
            column, "rank probabilities must be numbers in [0, 1]", log.source_rows[bad]
        )
    return values


def check_support(violations: np.ndarray, mass: float, where: np.ndarray, policy: str) -> int:
    """Apply the support ``policy`` to violations (target exposure > 0, logging exposure 0).

    ``violations`` flags rows or trajectories, ``where`` labels them for the
    message. ``fail`` raises :class:`offeval.SupportError` naming them;
    ``warn`` warns (the violating rows get weight 0, so the estimate is
    biased); ``drop`` leaves it to the caller, who excludes and counts the
    trajectories. Returns the number of violations.
    """
    check_choice(policy, "support", SUPPORT_POLICIES)
    count = int(np.count_nonzero(violations))
    if count and policy == "fail":
        raise SupportError(
            f"full support violated {count} times: the target exposes items the logging policy "
            f"never exposes (at {describe_rows(np.asarray(where)[violations])}; target exposure "
            f"{mass:.4g}); choose support='drop' or 'warn' to go on"
        )
    if count and policy == "warn":
        warnings.warn(
            f"full support violated {count} times (target exposure {mass:.4g}); "
            "those items get weight 0 and the estimate is biased",
            stacklevel=3,
        )
    return count


def candidate_support(view: PolicyView, target_model, logging_model) -> tuple[np.ndarray, float]:
    """Violations among the log's candidate sets: count per trajectory, and target exposure.

    A candidate's logging exposure is the sum over its slots of e(slot
    position) x its propensity there (computed once per chunk for every
    policy); its target exposure comes from the policy. Needs the log's
    candidate table (one row per candidate per slot).
    """
    log = view.log
    eps0, unit = log.memo(_candidate_logging_exposure, logging_model, key=model_key(logging_model))
    if eps0.min(initial=1.0) > 0:  # every candidate exposed by the logger: no violation possible
        return np.zeros(log.n_units, dtype=np.int64), 0.0
    eps = candidate_exposure(view, target_model)
    bad = (eps0 <= 0) & (eps > 0)
    if not bad.any():
        return np.zeros(log.n_units, dtype=np.int64), 0.0
    return np.bincount(unit[bad], minlength=log.n_units), float(eps[bad].sum())


def _candidate_logging_exposure(log: InteractionLog, model) -> tuple[np.ndarray, np.ndarray]:
    """eps0 of each distinct (trajectory, item) candidate, and its trajectory index."""
    cands = log.candidates
    codes, first = candidate_items(log)
    weights = at_ranks(model, cands["position"].to_numpy()) * cands["propensity"].to_numpy()
    eps0 = np.bincount(codes, weights=weights, minlength=first.size)
    return eps0, log.unit_index[cands["slot"].to_numpy()[first]]
