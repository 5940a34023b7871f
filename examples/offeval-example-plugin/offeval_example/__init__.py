"""Example offeval plugin: trimmed importance sampling.

Built on offeval's declared plugin API (:mod:`offeval.plugin`) only.
"""

from __future__ import annotations

import numpy as np

from offeval.plugin import (
    BaseEstimator,
    Contribution,
    Linearisation,
    PolicyView,
    Tally,
    check_number,
    hookimpl,
)


class TrimmedIS(BaseEstimator):
    """Trimmed IS: mean of r * w * [w <= max_weight] per impression.

    Rows whose importance weight exceeds ``max_weight`` contribute nothing, a
    bias towards zero that trades for variance differently from capping. The
    number and share of trimmed rows are reported in the diagnostics.
    """

    name = "trimmed_is"
    tags = {"linear_in_reward": True}
    estimand = "reward_per_impression"
    requires = ("propensity",)

    def __init__(self, max_weight: float = 50.0):
        check_number(max_weight, "max_weight", low=0, low_open=True, finite=False)
        self.max_weight = max_weight

    @property
    def guarantee(self) -> str | None:
        """Unbiased when nothing is trimmed; biased (towards zero) otherwise."""
        return "unbiased" if self.max_weight == float("inf") else None

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * w where w <= max_weight, and 1 per row."""
        w = view.weights()
        kept = w <= self.max_weight
        tally = Tally()
        tally.add("rows", w.size)
        tally.count("trimmed", np.count_nonzero(~kept))
        numerator = np.where(kept, view.log.column("reward") * w, 0.0)
        return Contribution({"trimmed_rw": numerator, "rows": np.ones(w.size)}, tally=tally)

    def combine(self, stats) -> Linearisation:
        """Ratio of the two column means (delta-method standard error)."""
        y, n = stats.mean("trimmed_rw"), stats.mean("rows")
        cols = np.array([stats.index("trimmed_rw"), stats.index("rows")])
        return Linearisation(y / n, cols, np.array([1 / n, -y / n**2]))

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Share of rows trimmed away (the count itself is reported by the engine)."""
        return {"trimmed_share": tally.counts["trimmed"] / tally.sums["rows"]}


@hookimpl
def register_estimators(register):
    """Register ``trimmed_is``."""
    register(TrimmedIS.name, TrimmedIS)
