"""offeval plugin ``example``: importance sampling with an optional weight cap.

Built on offeval's user API (:mod:`offeval`), its statistics (:mod:`offeval.stats`) and its
plugin API (:mod:`offeval.plugin`) only.
"""

from __future__ import annotations

import numpy as np

from offeval import BaseEstimator, Contribution, PolicyView, hookimpl
from offeval.plugin import check_number
from offeval.stats import Linearisation, Tally, ratio_of_means


class Example(BaseEstimator):
    """Importance sampling per impression: mean of r * min(cap, pi/mu) over the logged rows.

    Unbiased without a cap (the default) when the logged propensities are
    right and the logging policy shows every row the target policy may show;
    a finite cap trades a downward bias for a smaller variance.
    """

    name = "example"
    estimand = "reward_per_impression"
    requires = ("propensity",)
    tags = {"linear_in_reward": True}

    def __init__(self, cap: float = float("inf")):
        check_number(cap, "cap", low=0, low_open=True, finite=False)
        self.cap = cap

    @property
    def guarantee(self) -> str | None:
        """Unbiased without a cap; biased downwards where a cap binds."""
        return "unbiased" if self.cap == float("inf") else None

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns per logged row: r * min(cap, w) and 1; rows whose weight was capped counted."""
        weights = view.weights()
        tally = Tally()
        tally.add("rows", weights.size)
        tally.count("capped", np.count_nonzero(weights > self.cap))
        rewards = view.log.column("reward") * np.minimum(weights, self.cap)
        return Contribution({"rw": rewards, "rows": np.ones(weights.size)}, tally=tally)

    def combine(self, stats) -> Linearisation:
        """The mean reward per row: the ratio of the two columns' means (delta method)."""
        return ratio_of_means(stats, "rw", "rows")

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Share of rows whose weight was capped (the engine reports the count itself)."""
        return {"capped_share": tally.counts["capped"] / tally.sums["rows"]}


@hookimpl
def register_estimators(register):
    """Register the estimator ``example``."""
    register(Example.name, Example)
