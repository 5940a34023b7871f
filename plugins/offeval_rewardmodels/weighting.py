"""The corrections of clipped and sub-Gaussian DR, as shared columns.

Per log row i, with w_i = pi/mu and the residual r_i - q̂(x_i, a_i):

- clipped: min(w_i, lambda) (r_i - q̂_i) (obp's ``DoublyRobust(lambda_)``);
- sub-Gaussian: w_i / (1 - lambda + lambda w_i) (r_i - q̂_i) (Metelli, Russo
  and Restelli, NeurIPS 2021; obp's ``SubGaussianDoublyRobust``).

Where the parameter changes nothing (a clip at or above the largest weight,
lambda = 0 for the sub-Gaussian weight) the column is DR's own, stored once.
"""

from __future__ import annotations

import numpy as np

from offeval import PolicyView, Shared
from offeval_rewardmodels import rewardmodel
from offeval_rewardmodels.columns import weighted_residuals


def clipped_residuals(view: PolicyView, column: str, lambda_: float) -> np.ndarray:
    """The shared column min(w_i, lambda) (r_i - q̂_i): clipped DR's correction."""
    w = view.weights()
    if lambda_ >= w.max(initial=0.0):  # nothing clipped: DR's own column
        return view.memo(weighted_residuals, column)
    return np.minimum(w, lambda_) * rewardmodel.residuals(view.log, column)


def subgaussian_weights(view: PolicyView, lambda_: float) -> np.ndarray:
    """w / (1 - lambda + lambda w) per row, 0 where w = 0 (obp divides 0 by 0 at lambda = 1)."""
    w = view.weights()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(w > 0, w / (1 - lambda_ + lambda_ * w), 0.0)


def subgaussian_residuals(view: PolicyView, column: str, lambda_: float) -> np.ndarray:
    """The shared column w_i / (1 - lambda + lambda w_i) (r_i - q̂_i): SG-DR's correction."""
    if lambda_ == 0:
        return view.memo(weighted_residuals, column)
    shrunk = view.memo(subgaussian_weights, lambda_)
    return shrunk * rewardmodel.residuals(view.log, column)


def clipped_column(column: str, lambda_: float) -> Shared:
    """min(w, lambda) (r - q̂) as a shared column."""
    return Shared(clipped_residuals, (column, float(lambda_)))


def subgaussian_column(column: str, lambda_: float) -> Shared:
    """w / (1 - lambda + lambda w) (r - q̂) as a shared column."""
    return Shared(subgaussian_residuals, (column, float(lambda_)))
