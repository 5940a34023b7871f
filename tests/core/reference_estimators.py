"""Reference estimators for core tests, built on :mod:`offeval.plugin` alone.

Core tests that need "some estimator" use these instead of a plugin's: plain
importance sampling (``is``) and its self-normalised form (``snis``), each
a few lines that a reader can check by hand. :class:`ReferencePlugin`
registers both, for tests of the registry and the command line.
"""

from __future__ import annotations

from offeval import BaseEstimator, Contribution, PolicyView, hookimpl
from offeval.stats import Linearisation, Tally, ratio_of_means


class IS(BaseEstimator):
    """Importance sampling: the per-row mean of r * pi/mu."""

    name = "is"
    estimand = "reward_per_impression"
    guarantee = "unbiased"
    requires = ("propensity",)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * pi/mu and 1 per row."""
        tally = Tally()
        tally.add("rows", view.log.n_rows)
        columns = {"rw": view.log.column("reward") * view.weights(), "rows": view.log.ones}
        return Contribution(columns, tally=tally)

    def combine(self, stats) -> Linearisation:
        """Mean of r * pi/mu per row."""
        return ratio_of_means(stats, "rw", "rows")


class SNIS(BaseEstimator):
    """Self-normalised importance sampling: sum r * pi/mu / sum pi/mu."""

    name = "snis"
    estimand = "reward_per_impression"
    guarantee = "consistent"
    requires = ("propensity",)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * pi/mu and pi/mu."""
        weights = view.weights()
        return Contribution({"rw": view.log.column("reward") * weights, "w": weights})

    def combine(self, stats) -> Linearisation:
        """Ratio of the two column means."""
        return ratio_of_means(stats, "rw", "w")


class ReferencePlugin:
    """A plugin registering the reference estimators under their names."""

    @hookimpl
    def register_estimators(self, register) -> None:
        """``is`` and ``snis``."""
        register("is", IS)
        register("snis", SNIS)
