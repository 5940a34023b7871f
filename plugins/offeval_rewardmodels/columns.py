"""The reward model as columns, and the shared columns every reward-model estimator reads.

A reward model q̂(x, a) enters as data, whatever produced it:

- a column of the log (default ``reward_model``): q̂ of the logged item at
  its slot, q̂(x_i, a_i);
- a column of the same name in the candidate table: q̂ of every candidate of
  every slot (the slot's position included, so position-aware models work).

From them, per log row (slot) i, with the target's probabilities pi and the
importance weight w_i = pi(a_i|x_i)/mu(a_i|x_i):

- the model's value of the target, q̂(x_i, pi) = sum_a pi(a|x_i) q̂(x_i, a),
  summed over the slot's candidates (:func:`model_value`);
- the residual r_i - q̂(x_i, a_i) and its weighted forms (:func:`weighted_residuals`).

Each is a :class:`offeval.Shared` column, computed once per chunk and policy
however many estimators read it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from offeval.plugin import (
    PROBABILITY_TOLERANCE,
    ROLES,
    ColumnError,
    ConfigurationError,
    InteractionLog,
    PolicyView,
    RowError,
    Shared,
    hint,
)

#: Default name of the reward-model column (log and candidate table).
DEFAULT_COLUMN = "reward_model"
#: Largest relative difference allowed between a logged row's q̂ and its candidate's.
AGREEMENT = 1e-9
#: How far above 1 the target's probabilities over a slot's candidates may sum (rounding):
#: as far as from_obp and TablePolicy allow.
MASS_TOLERANCE = PROBABILITY_TOLERANCE


def check_column(column: str) -> str:
    """A reward-model column name: a non-empty string that is not one of the log's roles."""
    if not isinstance(column, str) or not column:
        raise ConfigurationError(f"reward_model must name a column, got {column!r}")
    if column in ROLES or column == "slot":
        raise ConfigurationError(
            f"reward_model={column!r} names a column the log reserves for its role: "
            "give the column of the model's predicted rewards"
        )
    return column


def _numbers(values: pd.Series, column: str, labels: np.ndarray, table: str) -> np.ndarray:
    """Finite floats; anything else is an error naming the column and rows."""
    if values.dtype.kind in "biuf":
        out = values.to_numpy(dtype=float)
    else:
        out = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(out)
    if bad.any():
        raise ColumnError(
            column, "predicted rewards must be finite numbers", labels[bad], table=table
        )
    return out


def logged_predictions(log: InteractionLog, column: str) -> np.ndarray:
    """q̂(x_i, a_i) of every log row, checked once per chunk."""
    return log.memo(_logged_predictions, column)


def _logged_predictions(log: InteractionLog, column: str) -> np.ndarray:
    if column not in log.frame:
        raise ColumnError(
            column,
            "the log needs the reward model's prediction for each logged item in this column "
            + hint(
                "(see offeval_rewardmodels.fit_reward_model)",
                "(a column of the log file; --estimator NAME:reward_model=COLUMN names another)",
            ),
        )
    return _numbers(log.frame[column], column, log.source_rows, "rows")


def candidate_predictions(log: InteractionLog, column: str, estimator: str) -> np.ndarray:
    """q̂(x, a) of every candidate-table row, checked once per chunk.

    Where the log also has the column, each logged item's candidate must
    carry the same prediction as its log row.
    """
    if not log.has_candidates:
        build = hint(
            "build the log with InteractionLog.from_frame(..., candidates=table), or "
            "from_obp(..., with_candidates=True) for obp's bandit_feedback",
            "offeval evaluate cannot read a candidate table yet (dm, dr, sndr and the other "
            "reward-model estimators need one): build the log in Python with "
            "offeval.InteractionLog.from_frame and its candidates argument, or offeval.from_obp "
            "with with_candidates=True, and evaluate it there",
        )
        raise ConfigurationError(
            f"{estimator} needs the log's candidate table with a {column!r} column (the reward "
            "model's prediction for every candidate of every slot), to sum the target's "
            f"probabilities times the predictions over each slot: {build}"
        )
    return log.memo(_candidate_predictions, column)


def _candidate_predictions(log: InteractionLog, column: str) -> np.ndarray:
    cands = log.candidates
    labels = log.candidate_source_rows
    if column not in cands:
        raise ColumnError(
            column,
            "the candidate table needs the reward model's prediction for every candidate in "
            "this column (the log has a candidate table without it)",
        )
    q = _numbers(cands[column], column, labels, "candidate rows")
    if column in log.frame:
        slot = cands["slot"].to_numpy()
        logged = cands["item"].to_numpy() == log.frame["item"].to_numpy()[slot]
        q_log = logged_predictions(log, column)[slot[logged]]
        off = np.abs(q[logged] - q_log) > AGREEMENT * np.maximum(1.0, np.abs(q_log))
        if off.any():
            raise ColumnError(
                column,
                "the logged item's prediction differs from its candidate's in the candidate "
                "table (the two columns must come from the same model)",
                labels[np.flatnonzero(logged)[off]],
                table="candidate rows",
            )
    return q


class ModelSide(NamedTuple):
    """The model's value of the target per slot, and the target's mass over the candidates."""

    value: np.ndarray
    mass: float


def model_side(view: PolicyView, column: str, estimator: str) -> ModelSide:
    """sum_a pi(a|x, pos) q̂(x, a) per log row, once per chunk and policy."""
    return view.memo(_model_side, column, estimator, key=column)


def _model_side(view: PolicyView, column: str, estimator: str) -> ModelSide:
    log = view.log
    q = candidate_predictions(log, column, estimator)
    pi = view.candidate_probabilities()
    slot = log.candidates["slot"].to_numpy()
    _check_slot_mass(view, np.bincount(slot, weights=pi, minlength=log.n_rows))
    return ModelSide(np.bincount(slot, weights=pi * q, minlength=log.n_rows), float(pi.sum()))


def _check_slot_mass(view: PolicyView, mass: np.ndarray) -> None:
    """The target's probabilities over each slot's candidates sum to at most 1 (+ MASS_TOLERANCE).

    A slot shows one item: more than 1 means the probabilities are not the
    target's (a score, or one slot's table repeated), and q̂(x, pi) would
    count some of the model's reward twice. Less than 1 is allowed (the
    target may show an item outside the candidates): ``target_mass_per_slot``
    reports it.
    """
    over = mass > 1 + MASS_TOLERANCE
    if over.any():
        name = getattr(view.policy, "name", type(view.policy).__name__)
        raise RowError(
            f"policy {name!r}",
            f"its probabilities over a slot's candidates must sum to at most 1, they sum to up "
            f"to {mass[over].max():.6g}",
            view.log.source_rows[over],
        )


def model_value(view: PolicyView, column: str) -> np.ndarray:
    """The shared column q̂(x_i, pi): the model's expected reward of the target at each slot."""
    return model_side(view, column, "a reward-model estimator").value


def residuals(log: InteractionLog, column: str) -> np.ndarray:
    """r_i - q̂(x_i, a_i) per log row, once per chunk (the same for every policy)."""
    return log.memo(_residuals, column)


def _residuals(log: InteractionLog, column: str) -> np.ndarray:
    return log.column("reward") - logged_predictions(log, column)


def weighted_residuals(view: PolicyView, column: str) -> np.ndarray:
    """The shared column w_i (r_i - q̂(x_i, a_i)): DR's correction."""
    return view.weights() * residuals(view.log, column)


def switched_residuals(view: PolicyView, column: str, tau: float) -> np.ndarray:
    """The shared column 1{w_i <= tau} w_i (r_i - q̂_i): Switch-DR's correction."""
    w = view.weights()
    if tau >= w.max(initial=0.0):  # nothing switches: DR's own column (stored once)
        return view.memo(weighted_residuals, column)
    return np.where(w <= tau, w, 0.0) * residuals(view.log, column)


def shrunk_residuals(view: PolicyView, column: str, lambda_: float) -> np.ndarray:
    """The shared column lambda w_i / (w_i^2 + lambda) (r_i - q̂_i): DR-OS's correction."""
    if lambda_ == float("inf"):
        return view.memo(weighted_residuals, column)
    w = view.weights()
    if lambda_ == 0:  # every weight shrunk to 0 (DM), the residuals still read and checked
        return 0.0 * residuals(view.log, column)
    return lambda_ * w / (w * w + lambda_) * residuals(view.log, column)


def model_column(column: str) -> Shared:
    """q̂(x_i, pi) as a shared column."""
    return Shared(model_value, (column,))


def correction_column(column: str) -> Shared:
    """w_i (r_i - q̂_i) as a shared column."""
    return Shared(weighted_residuals, (column,))
