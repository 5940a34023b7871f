"""Sub-Gaussian importance sampling (Metelli, Russo and Restelli, NeurIPS 2021).

The importance weight w = pi/mu is replaced by its power mean with 1,
w / (1 - lambda_ + lambda_ w): a smooth shrinkage bounded by 1 / lambda_,
whose estimator has sub-Gaussian tails where plain IPS is heavy-tailed.
"""

from __future__ import annotations

import numpy as np

from offeval import BaseEstimator, Contribution, PolicyView, Shared
from offeval.plugin import check_number
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_importance.weights import ROWS, weight_diagnostics, weight_tally


def check_lambda(lambda_: float) -> float:
    """The shrinkage: a number in [0, 1]."""
    return check_number(lambda_, "lambda_", low=0, high=1)


def shrunk_weights(view: PolicyView, lambda_: float) -> np.ndarray:
    """w / (1 - lambda_ + lambda_ w) per row; 0 where w = 0 (also at lambda_ = 1, where obp
    divides 0 by 0)."""
    w = view.weights()
    if lambda_ == 0:
        return w
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(w > 0, w / (1 - lambda_ + lambda_ * w), 0.0)


def shrunk_rewards(view: PolicyView, lambda_: float) -> np.ndarray:
    """reward * w / (1 - lambda_ + lambda_ w) per row."""
    return view.log.column("reward") * view.memo(shrunk_weights, lambda_)


class SubGaussianIPS(BaseEstimator):
    """Sub-Gaussian IPS: mean of r w / (1 - lambda_ + lambda_ w), w = pi/mu (Metelli et al.).
    obp's SubGaussianInverseProbabilityWeighting (sg-ipw), same parameter and default:
    lambda_=0 is IPS.

    Shrinking the weights towards 1 / lambda_ trades a bias (towards lower
    values where the weights are large) for far lighter tails; at lambda_ = 1
    every supported row gets weight 1. Unbiased only at lambda_ = 0. Its
    diagnostics describe the raw weights (ESS, largest weight, mean weight)
    and the shrunk ones (``ess_shrunk``, ``max_shrunk_weight``). obp returns
    NaN for a row with w = 0 at lambda_ = 1; here such a row contributes 0.
    """

    name = "sg_ips"
    estimand = "reward_per_impression"
    requires = ("propensity",)
    tags = {"linear_in_reward": True}

    def __init__(self, lambda_: float = 0.0):
        check_lambda(lambda_)
        self.lambda_ = lambda_

    @property
    def guarantee(self) -> str | None:
        """Unbiased at lambda_ = 0 (IPS); biased otherwise."""
        return "unbiased" if self.lambda_ == 0 else None

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * shrunk weight, and 1 per row; tallies of the raw and shrunk weights."""
        lam = float(self.lambda_)
        shrunk = view.memo(shrunk_weights, lam)
        tally = weight_tally(view, float("inf"))
        tally.add("sum_shrunk", shrunk.sum())
        tally.add("sum_shrunk2", shrunk @ shrunk)
        tally.maximum("max_shrunk_weight", shrunk.max(initial=0.0))
        columns = {"rw": Shared(shrunk_rewards, (lam,)), "rows": ROWS}
        return Contribution(columns, tally=tally)

    def combine(self, stats) -> Linearisation:
        """Per-row mean of the shrunk weighted reward."""
        return ratio_of_means(stats, "rw", "rows")

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """The raw weights' diagnostics, and the shrunk weights' ESS and largest value."""
        s = tally.sums
        out = weight_diagnostics(tally)
        out["ess_shrunk"] = s["sum_shrunk"] ** 2 / s["sum_shrunk2"] if s["sum_shrunk2"] else 0.0
        out["max_shrunk_weight"] = tally.maxima["max_shrunk_weight"]
        return out
