"""IPS estimators that choose their clip or sub-Gaussian shrinkage from the log (obp's
``InverseProbabilityWeightingTuning`` and ``SubGaussianInverseProbabilityWeightingTuning``):
every candidate's weighted reward is a shared column of the one pass, and the choice is
:class:`~offeval.plugin.GridTuned`'s.
"""

from __future__ import annotations

from offeval import Contribution, PolicyView, Shared
from offeval.stats import Linearisation, ratio_of_means
from offeval_importance import tuning_rules as tuning
from offeval_importance.estimators import INF, _ISFamily
from offeval_importance.grid_tuned import GridTuned
from offeval_importance.subgaussian import shrunk_rewards
from offeval_importance.weights import ROWS, capped_reward_column, weight_tally


class _Tuned(GridTuned, _ISFamily):
    """An IPS variant at every value of ``lambdas``, one chosen by ``tuning_method``.

    Subclasses give the candidate's weighted-reward column (:meth:`candidate`)
    and, through :class:`~offeval.plugin.GridTuned`, the grid's bounds,
    default and order.
    """

    tags = {"linear_in_reward": True}
    untuned_key = "ips"

    def __init__(
        self,
        lambdas=tuning.LARGE_WEIGHTS,
        tuning_method: str = "slope",
        use_bias_upper_bound: bool = True,
        delta: float = 0.1,
    ):
        self.set_tuning(lambdas, tuning_method, use_bias_upper_bound, delta)

    def candidate(self, lambda_: float) -> Shared:
        """The candidate's weighted reward per row."""
        raise NotImplementedError

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r w, each candidate's weighted reward and 1 per row (all shared); w^2 for
        the estimated MSE's bias bound."""
        columns = {"rows": ROWS, "ips": capped_reward_column(INF), **self.tuning_columns()}
        columns.update({self.candidate_key(lam): self.candidate(lam) for lam in self.grid})
        return Contribution(columns, tally=weight_tally(view, INF))

    def candidate_value(self, stats, key) -> Linearisation:
        """The candidate's per-row mean."""
        return ratio_of_means(stats, key, "rows")


class IPSTuning(_Tuned):
    """Clipped IPS with its clip chosen from the log (obp's ``InverseProbabilityWeightingTuning``).

    Candidates mean of r min(w, lambda) for each lambda of ``lambdas``, one
    chosen by ``tuning_method`` (``"slope"`` or ``"mse"``, as
    :class:`~offeval.plugin.GridTuned` says, with where its MSE bound differs
    from obp's). ``use_bias_upper_bound`` and ``delta`` are the MSE rule's
    bound and SLOPE's level, as obp names them; the chosen clip is reported
    as ``fitted_lambda_``, and the interval is the chosen candidate's. obp
    requires ``lambdas``; the default here is obp's benchmark grid (10, 50,
    100, 500, 1000, 5000, 10000, inf). Biased (``guarantee = None``) unless
    the unclipped candidate is chosen.
    """

    name = "ips_tuning"

    def candidate(self, lambda_: float) -> Shared:
        """r min(w, lambda)."""
        return capped_reward_column(float(lambda_))


class SubGaussianIPSTuning(_Tuned):
    """Sub-Gaussian IPS tuned on the log (obp's SubGaussianInverseProbabilityWeightingTuning).

    Candidates mean of r w / (1 - lambda + lambda w), lambda in [0, 1],
    chosen as :class:`IPSTuning` chooses; obp requires ``lambdas``, the
    default here is the grid of obp's tests (0.005, 0.01, 0.05, 0.1, 0.5).
    The interval is the chosen candidate's.
    """

    name = "sg_ips_tuning"
    default_lambdas = tuning.SUBGAUSSIAN
    high = 1.0
    descending = False

    def __init__(
        self,
        lambdas=tuning.SUBGAUSSIAN,
        tuning_method: str = "slope",
        use_bias_upper_bound: bool = True,
        delta: float = 0.1,
    ):
        super().__init__(lambdas, tuning_method, use_bias_upper_bound, delta)

    def candidate(self, lambda_: float) -> Shared:
        """r w / (1 - lambda + lambda w)."""
        return Shared(shrunk_rewards, (float(lambda_),))
