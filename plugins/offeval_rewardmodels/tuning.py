"""DR estimators that choose their clip, switch or shrinkage from the log (obp's ``*Tuning``).

Each computes, in the one pass, its DR variant at every value of the grid
``lambdas`` (every candidate's correction is a shared column), and its
``combine`` chooses one value by SLOPE or by the estimated MSE
(:mod:`offeval.plugin`'s ``tuning``, as obp 0.5.7's
``BaseOffPolicyEstimatorTuning``). The estimate is the chosen candidate's,
with that candidate's standard error: the uncertainty of the choice itself is
not in the interval. The chosen value is reported as ``fitted_lambda_``.
"""

from __future__ import annotations

import numpy as np

from offeval.plugin import (
    ROWS,
    Contribution,
    Linearisation,
    PolicyView,
    Shared,
    check_flag,
    rewardmodel,
    tuning,
    weight_tally,
)
from offeval_rewardmodels.columns import (
    correction_column,
    model_column,
    shrunk_residuals,
    switched_residuals,
)
from offeval_rewardmodels.estimators import INF, _RewardModelEstimator
from offeval_rewardmodels.weighting import clipped_column, subgaussian_column

#: obp's benchmark grid for clipping, switching and shrinkage (``benchmark/ope``).
LARGE_WEIGHTS = (10.0, 50.0, 100.0, 500.0, 1000.0, 5000.0, 10000.0, INF)
#: obp's test grid for the sub-Gaussian parameter (``tests/ope/test_offline_estimation``).
SUBGAUSSIAN = (0.005, 0.01, 0.05, 0.1, 0.5)


def model_plus(stats, correction) -> Linearisation:
    """(mean(model) + mean(correction)) / mean(rows) for one candidate's correction column."""
    m, c, n = stats.mean("model"), stats.mean(correction), stats.mean("rows")
    cols = np.array([stats.index("model"), stats.index(correction), stats.index("rows")])
    return Linearisation((m + c) / n, cols, np.array([1 / n, 1 / n, -(m + c) / n**2]))


class _Tuned(_RewardModelEstimator):
    """A DR variant at every value of ``lambdas``, one chosen by ``tuning_method``.

    Subclasses give the candidate's correction column (:meth:`correction`),
    the grid's bounds and default, and obp's order of the grid
    (``descending``): ties are broken in that order, as obp breaks them.
    """

    default_lambdas: tuple[float, ...] = LARGE_WEIGHTS
    high: float = INF
    descending: bool = True

    def __init__(
        self,
        lambdas=LARGE_WEIGHTS,
        tuning_method: str = "slope",
        use_bias_upper_bound: bool = True,
        delta: float = 0.1,
        reward_model: str = rewardmodel.DEFAULT_COLUMN,
    ):
        super().__init__(reward_model)
        self.lambdas = tuning.check_grid(lambdas, "lambdas", high=self.high)
        self.tuning_method, self.delta = tuning.check_tuning(tuning_method, delta)
        self.use_bias_upper_bound = check_flag(use_bias_upper_bound, "use_bias_upper_bound")

    def label_params(self) -> dict:
        """The changed parameters, the grid only when it is not the default one."""
        out = self.changed_params()
        if out.get("lambdas") == tuning.check_grid(self.default_lambdas, high=self.high):
            del out["lambdas"]
        return out

    @property
    def grid(self) -> tuple[float, ...]:
        """The candidates in obp's order (descending for clips and switches, else ascending)."""
        return tuple(sorted(self.lambdas, reverse=self.descending))

    def correction(self, lambda_: float) -> Shared:
        """The candidate's correction column."""
        raise NotImplementedError

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: q̂(x_i, pi), 1 per row, DR's correction and each candidate's (all shared);
        w_i^2 for the estimated MSE's bias bound."""
        column = self.reward_model
        tally = self.model_tally(view, weight_tally(view, INF))
        columns = {"model": model_column(column), "rows": ROWS, "dr": correction_column(column)}
        columns.update({("correction", lam): self.correction(lam) for lam in self.grid})
        if self.tuning_method == "mse" and self.use_bias_upper_bound:
            columns["w2"] = Shared(tuning.squared_weights)
        return Contribution(columns, tally=tally)

    def chosen(self, stats) -> int:
        """The index in :attr:`grid` of the candidate the rule chooses."""
        rows = stats.mean("rows")
        candidates = [
            tuning.Candidate(
                model_plus(stats, ("correction", lam)),
                (stats.mean("dr") - stats.mean(("correction", lam))) / rows,
            )
            for lam in self.grid
        ]
        bound = None
        if self.tuning_method == "mse" and self.use_bias_upper_bound:
            bound = tuning.weight_bound(stats, "w2", "rows")
        return tuning.choose(stats, candidates, self.tuning_method, self.delta, bound)

    def combine(self, stats) -> Linearisation:
        """The chosen candidate's DR value and gradient."""
        return model_plus(stats, ("correction", self.grid[self.chosen(stats)]))

    def fitted(self, stats) -> dict[str, float]:
        """The chosen value of the parameter."""
        return {"lambda_": self.grid[self.chosen(stats)]}


class DRTuning(_Tuned):
    """Clipped DR with its clip chosen from the log (obp's ``DoublyRobustTuning``).

    Candidates q̂(x_i, pi) + min(w_i, lambda) (r_i - q̂_i) for each lambda of
    ``lambdas``, one chosen by ``tuning_method``: ``"slope"`` (SLOPE, Su,
    Srinath and Krishnamurthy, ICML 2020, as obp implements it) or ``"mse"``
    (the smallest estimated variance + squared bias, the bias raised to a
    high-probability bound with ``use_bias_upper_bound``, at level
    ``delta``). The interval is the chosen candidate's: the choice's own
    uncertainty is not in it. The bound's largest-weight term reads
    sqrt(sum of w^2), at least the largest weight, where obp reads the
    largest weight (the engine does not hand ``combine`` the tally that holds
    it): with the bound, the MSE rule may choose a less clipped candidate
    than obp's. obp requires ``lambdas``; the default here is
    obp's benchmark grid (10, 50, 100, 500, 1000, 5000, 10000, inf).
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
    default_lambdas = SUBGAUSSIAN
    high = 1.0
    descending = False

    def __init__(
        self,
        lambdas=SUBGAUSSIAN,
        tuning_method: str = "slope",
        use_bias_upper_bound: bool = True,
        delta: float = 0.1,
        reward_model: str = rewardmodel.DEFAULT_COLUMN,
    ):
        super().__init__(lambdas, tuning_method, use_bias_upper_bound, delta, reward_model)

    def correction(self, lambda_: float) -> Shared:
        """w / (1 - lambda + lambda w) (r - q̂)."""
        return subgaussian_column(self.reward_model, lambda_)
