"""DR estimators that choose their clip, switch or shrinkage from the log (obp's ``*Tuning``):
every candidate's correction is a shared column of the one pass, and the choice is
:class:`~offeval.plugin.GridTuned`'s.
"""

from __future__ import annotations

import numpy as np

from offeval import Contribution, PolicyView, Shared
from offeval.stats import Linearisation
from offeval_importance import ROWS, GridTuned, weight_tally
from offeval_importance import tuning_rules as tuning
from offeval_rewardmodels import rewardmodel
from offeval_rewardmodels.columns import (
    correction_column,
    model_column,
    shrunk_residuals,
    switched_residuals,
)
from offeval_rewardmodels.estimators import INF, _RewardModelEstimator
from offeval_rewardmodels.weighting import clipped_column, subgaussian_column


def model_plus(stats, correction) -> Linearisation:
    """(mean(model) + mean(correction)) / mean(rows) for one candidate's correction column."""
    m, c, n = stats.mean("model"), stats.mean(correction), stats.mean("rows")
    cols = np.array([stats.index("model"), stats.index(correction), stats.index("rows")])
    return Linearisation((m + c) / n, cols, np.array([1 / n, 1 / n, -(m + c) / n**2]))


class _Tuned(GridTuned, _RewardModelEstimator):
    """A DR variant at every value of ``lambdas``, one chosen by ``tuning_method``.

    Subclasses give the candidate's correction column (:meth:`correction`)
    and, through :class:`~offeval.plugin.GridTuned`, the grid's bounds,
    default and order.
    """

    untuned_key = "dr"

    def __init__(
        self,
        lambdas=tuning.LARGE_WEIGHTS,
        tuning_method: str = "slope",
        use_bias_upper_bound: bool = True,
        delta: float = 0.1,
        reward_model: str = rewardmodel.DEFAULT_COLUMN,
    ):
        super().__init__(reward_model)
        self.set_tuning(lambdas, tuning_method, use_bias_upper_bound, delta)

    def correction(self, lambda_: float) -> Shared:
        """The candidate's correction column."""
        raise NotImplementedError

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: q̂(x_i, pi), 1 per row, DR's correction and each candidate's (all shared);
        w_i^2 for the estimated MSE's bias bound."""
        column = self.reward_model
        tally = self.model_tally(view, weight_tally(view, INF))
        columns = {"model": model_column(column), "rows": ROWS, "dr": correction_column(column)}
        columns.update({self.candidate_key(lam): self.correction(lam) for lam in self.grid})
        columns.update(self.tuning_columns())
        return Contribution(columns, tally=tally)

    def candidate_value(self, stats, key) -> Linearisation:
        """The candidate's DR value and gradient."""
        return model_plus(stats, key)


class DRTuning(_Tuned):
    """Clipped DR with its clip chosen from the log (obp's ``DoublyRobustTuning``).

    Candidates q̂(x_i, pi) + min(w_i, lambda) (r_i - q̂_i) for each lambda of
    ``lambdas``, one chosen by ``tuning_method`` (``"slope"`` or ``"mse"``, as
    :class:`~offeval.plugin.GridTuned` says, with where its MSE bound differs
    from obp's). ``use_bias_upper_bound`` and ``delta`` are the MSE rule's
    bound and SLOPE's level, as obp names them; the chosen clip is reported
    as ``fitted_lambda_``, and the interval is the chosen candidate's. obp
    requires ``lambdas``; the default here is obp's benchmark grid (10, 50,
    100, 500, 1000, 5000, 10000, inf).
    Biased (``guarantee = None``) unless the unclipped candidate is chosen.
    """

    name = "dr_tuning"

    def correction(self, lambda_: float) -> Shared:
        """min(w, lambda) (r - q̂)."""
        return clipped_column(self.reward_model, lambda_)


class SwitchDRTuning(_Tuned):
    """Switch-DR with its threshold chosen from the log (obp's ``SwitchDoublyRobustTuning``).

    Candidates q̂(x_i, pi) + 1{w_i <= lambda} w_i (r_i - q̂_i), chosen as
    :class:`DRTuning` chooses (``"slope"`` or ``"mse"``); obp requires
    ``lambdas``, the default here is obp's benchmark grid (10, 50, ...,
    10000, inf). The interval is the chosen candidate's.
    """

    name = "switch_dr_tuning"

    def correction(self, lambda_: float) -> Shared:
        """1{w <= lambda} w (r - q̂)."""
        return Shared(switched_residuals, (self.reward_model, float(lambda_)))


class DROSTuning(_Tuned):
    """DR-OS with its shrinkage chosen from the log (obp's ``DoublyRobustWithShrinkageTuning``).

    Candidates q̂(x_i, pi) + lambda w_i / (w_i^2 + lambda) (r_i - q̂_i),
    chosen as :class:`DRTuning` chooses; obp requires ``lambdas``, the
    default here is obp's benchmark grid (10, 50, ..., 10000, inf). The
    interval is the chosen candidate's.
    """

    name = "dr_os_tuning"
    descending = False

    def correction(self, lambda_: float) -> Shared:
        """lambda w / (w^2 + lambda) (r - q̂)."""
        return Shared(shrunk_residuals, (self.reward_model, float(lambda_)))


class SubGaussianDRTuning(_Tuned):
    """Sub-Gaussian DR, its lambda_ chosen from the log (obp's SubGaussianDoublyRobustTuning).

    Candidates q̂(x_i, pi) + w_i / (1 - lambda + lambda w_i) (r_i - q̂_i),
    lambda in [0, 1], chosen as :class:`DRTuning` chooses; obp requires
    ``lambdas``, the default here is the grid of obp's tests (0.005, 0.01,
    0.05, 0.1, 0.5). The interval is the chosen candidate's.
    """

    name = "sg_dr_tuning"
    default_lambdas = tuning.SUBGAUSSIAN
    high = 1.0
    descending = False

    def __init__(
        self,
        lambdas=tuning.SUBGAUSSIAN,
        tuning_method: str = "slope",
        use_bias_upper_bound: bool = True,
        delta: float = 0.1,
        reward_model: str = rewardmodel.DEFAULT_COLUMN,
    ):
        super().__init__(lambdas, tuning_method, use_bias_upper_bound, delta, reward_model)

    def correction(self, lambda_: float) -> Shared:
        """w / (1 - lambda + lambda w) (r - q̂)."""
        return subgaussian_column(self.reward_model, lambda_)
