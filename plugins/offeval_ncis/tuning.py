"""IPS estimators that choose their clip or sub-Gaussian shrinkage from the log (obp's
``InverseProbabilityWeightingTuning`` and ``SubGaussianInverseProbabilityWeightingTuning``).

Each computes, in the one pass, its IPS variant at every value of the grid
``lambdas`` (every candidate's weighted reward is a shared column), and its
``combine`` chooses one value by SLOPE or by the estimated MSE
(:mod:`offeval.plugin`'s ``tuning``, as obp 0.5.7's
``BaseOffPolicyEstimatorTuning``). The estimate is the chosen candidate's,
with that candidate's standard error: the uncertainty of the choice itself is
not in the interval. The chosen value is reported as ``fitted_lambda_``.
"""

from __future__ import annotations

from offeval.plugin import (
    ROWS,
    Contribution,
    Linearisation,
    PolicyView,
    Shared,
    capped_reward_column,
    check_flag,
    ratio_of_means,
    tuning,
    weight_tally,
)
from offeval_ncis.estimators import INF, _ISFamily
from offeval_ncis.subgaussian import shrunk_rewards

#: obp's benchmark grid for clipping (``benchmark/ope``).
LARGE_WEIGHTS = (10.0, 50.0, 100.0, 500.0, 1000.0, 5000.0, 10000.0, INF)
#: obp's test grid for the sub-Gaussian parameter (``tests/ope/test_offline_estimation``).
SUBGAUSSIAN = (0.005, 0.01, 0.05, 0.1, 0.5)


class _Tuned(_ISFamily):
    """An IPS variant at every value of ``lambdas``, one chosen by ``tuning_method``.

    Subclasses give the candidate's weighted-reward column (:meth:`candidate`),
    the grid's bounds and default, and obp's order of the grid
    (``descending``): ties are broken in that order, as obp breaks them.
    """

    tags = {"linear_in_reward": True}
    default_lambdas: tuple[float, ...] = LARGE_WEIGHTS
    high: float = INF
    descending: bool = True

    def __init__(
        self,
        lambdas=LARGE_WEIGHTS,
        tuning_method: str = "slope",
        use_bias_upper_bound: bool = True,
        delta: float = 0.1,
    ):
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
        """The candidates in obp's order (descending for clips, ascending for shrinkage)."""
        return tuple(sorted(self.lambdas, reverse=self.descending))

    def candidate(self, lambda_: float) -> Shared:
        """The candidate's weighted reward per row."""
        raise NotImplementedError

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r w, each candidate's weighted reward and 1 per row (all shared); w^2 for
        the estimated MSE's bias bound."""
        columns = {"rows": ROWS, "ips": capped_reward_column(INF)}
        columns.update({("rw", lam): self.candidate(lam) for lam in self.grid})
        if self.tuning_method == "mse" and self.use_bias_upper_bound:
            columns["w2"] = Shared(tuning.squared_weights)
        return Contribution(columns, tally=weight_tally(view, INF))

    def chosen(self, stats) -> int:
        """The index in :attr:`grid` of the candidate the rule chooses."""
        rows = stats.mean("rows")
        candidates = [
            tuning.Candidate(
                ratio_of_means(stats, ("rw", lam), "rows"),
                (stats.mean("ips") - stats.mean(("rw", lam))) / rows,
            )
            for lam in self.grid
        ]
        bound = None
        if self.tuning_method == "mse" and self.use_bias_upper_bound:
            bound = tuning.weight_bound(stats, "w2", "rows")
        return tuning.choose(stats, candidates, self.tuning_method, self.delta, bound)

    def combine(self, stats) -> Linearisation:
        """The chosen candidate's per-row mean."""
        return ratio_of_means(stats, ("rw", self.grid[self.chosen(stats)]), "rows")

    def fitted(self, stats) -> dict[str, float]:
        """The chosen value of the parameter."""
        return {"lambda_": self.grid[self.chosen(stats)]}


class IPSTuning(_Tuned):
    """Clipped IPS with its clip chosen from the log (obp's ``InverseProbabilityWeightingTuning``).

    Candidates mean of r min(w, lambda) for each lambda of ``lambdas``, one
    chosen by ``tuning_method``: ``"slope"`` (SLOPE, Su, Srinath and
    Krishnamurthy, ICML 2020, as obp implements it) or ``"mse"`` (the
    smallest estimated variance + squared bias, the bias raised to a
    high-probability bound with ``use_bias_upper_bound``, at level
    ``delta``). The interval is the chosen candidate's: the choice's own
    uncertainty is not in it. The bound's largest-weight term reads
    sqrt(sum of w^2), at least the largest weight, where obp reads the
    largest weight (the engine does not hand ``combine`` the tally that holds
    it): with the bound, the MSE rule may choose a less clipped candidate
    than obp's. obp requires ``lambdas``; the default here is
    obp's benchmark grid (10, 50, 100, 500, 1000, 5000, 10000, inf). Biased
    (``guarantee = None``) unless the unclipped candidate is chosen.
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
    default_lambdas = SUBGAUSSIAN
    high = 1.0
    descending = False

    def __init__(
        self,
        lambdas=SUBGAUSSIAN,
        tuning_method: str = "slope",
        use_bias_upper_bound: bool = True,
        delta: float = 0.1,
    ):
        super().__init__(lambdas, tuning_method, use_bias_upper_bound, delta)

    def candidate(self, lambda_: float) -> Shared:
        """r w / (1 - lambda + lambda w)."""
        return Shared(shrunk_rewards, (float(lambda_),))
