"""The shared columns every reward-model estimator reads.

The reward model enters as columns of the log and its candidate table
(:mod:`offeval.plugin`'s ``rewardmodel``: ``logged_predictions``,
``candidate_predictions``, ``residuals``). From them, per log row (slot) i,
with the target's probabilities pi and the importance weight
w_i = pi(a_i|x_i)/mu(a_i|x_i):

- the model's value of the target, q̂(x_i, pi) = sum_a pi(a|x_i) q̂(x_i, a),
  summed over the slot's candidates (:func:`model_value`);
- the residual r_i - q̂(x_i, a_i) and its weighted forms (:func:`weighted_residuals`).

Each is a :class:`offeval.Shared` column, computed once per chunk and policy
however many estimators read it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from offeval import PolicyView, RowError, Shared
from offeval.plugin import PROBABILITY_TOLERANCE
from offeval_rewardmodels import rewardmodel

#: How far above 1 the target's probabilities over a slot's candidates may sum (rounding):
#: as far as from_obp and TablePolicy allow.
MASS_TOLERANCE = PROBABILITY_TOLERANCE


class ModelSide(NamedTuple):
    """The model's value of the target per slot, and the target's mass over the candidates."""

    value: np.ndarray
    mass: float


def model_side(view: PolicyView, column: str, estimator: str) -> ModelSide:
    """sum_a pi(a|x, pos) q̂(x, a) per log row, once per chunk and policy."""
    return view.memo(_model_side, column, estimator, key=column)


def _model_side(view: PolicyView, column: str, estimator: str) -> ModelSide:
    log = view.log
    q = rewardmodel.candidate_predictions(log, column, estimator)
    value, mass = view.slot_expectation(q, key=("candidate predictions", column))
    _check_slot_mass(view, mass)
    return ModelSide(value, float(mass.sum()))


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


def weighted_residuals(view: PolicyView, column: str) -> np.ndarray:
    """The shared column w_i (r_i - q̂(x_i, a_i)): DR's correction."""
    return view.weights() * rewardmodel.residuals(view.log, column)


def switched_residuals(view: PolicyView, column: str, tau: float) -> np.ndarray:
    """The shared column 1{w_i <= tau} w_i (r_i - q̂_i): Switch-DR's correction."""
    w = view.weights()
    if tau >= w.max(initial=0.0):  # nothing switches: DR's own column (stored once)
        return view.memo(weighted_residuals, column)
    return np.where(w <= tau, w, 0.0) * rewardmodel.residuals(view.log, column)


def shrunk_residuals(view: PolicyView, column: str, lambda_: float) -> np.ndarray:
    """The shared column lambda w_i / (w_i^2 + lambda) (r_i - q̂_i): DR-OS's correction."""
    if lambda_ == float("inf"):
        return view.memo(weighted_residuals, column)
    w = view.weights()
    if lambda_ == 0:  # every weight shrunk to 0 (DM), the residuals still read and checked
        return 0.0 * rewardmodel.residuals(view.log, column)
    return lambda_ * w / (w * w + lambda_) * rewardmodel.residuals(view.log, column)


def model_column(column: str) -> Shared:
    """q̂(x_i, pi) as a shared column."""
    return Shared(model_value, (column,))


def correction_column(column: str) -> Shared:
    """w_i (r_i - q̂_i) as a shared column."""
    return Shared(weighted_residuals, (column,))
