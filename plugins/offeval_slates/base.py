"""What the slate estimators share: parameters, declarations, columns, combination."""

from __future__ import annotations

import numpy as np

from offeval import BaseEstimator, ConfigurationError, Contribution, PolicyView
from offeval.plugin import check_choice, check_flag
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_ranking import exposure
from offeval_slates.combine import by_position
from offeval_slates.layout import layout
from offeval_slates.support import support_diagnostics

PER = ("impression", "trajectory")


def check_column_name(name: str, value, optional: bool = False) -> None:
    """A parameter naming a column: a non-empty string (or None when optional)."""
    if optional and value is None:
        return
    if not isinstance(value, str) or not value:
        what = "None or a column name" if optional else "a column name"
        raise ConfigurationError(f"{name} must be {what}, got {value!r}")


def both(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """Trajectories included by two rules (None: all)."""
    if a is None or b is None:
        return b if a is None else a
    return a & b


def weight_tally(weights: np.ndarray, tally: Tally | None = None) -> Tally:
    """Mergeable weight diagnostics: sums for the effective sample size, extremes."""
    tally = Tally() if tally is None else tally
    tally.add("weights", weights.size)
    tally.add("sum_w", float(weights.sum()))
    tally.add("sum_w2", float(np.square(weights).sum()))
    tally.maximum("max_weight", float(weights.max(initial=-np.inf)))
    tally.minimum("min_weight", float(weights.min(initial=np.inf)))
    return tally


class SlateEstimator(BaseEstimator):
    """Shared parameters, declarations, columns and combination."""

    tags = {"linear_in_reward": True}
    self_normalized = False
    per = "impression"
    support = "fail"
    #: Reported in the weight table: the effective sample size as a share of the weights too.
    weight_diagnostics = (
        "ess",
        "ess_share",
        "mean_weight",
        "max_weight",
        "support_violations",
        "unsupported_mass_per_slot",
    )

    def _check(self) -> None:
        check_flag(self.self_normalized, "self_normalized")
        check_choice(self.per, "per", PER)
        check_choice(self.support, "support", exposure.SUPPORT_POLICIES)

    @property
    def estimand(self) -> str:
        """Reward per impression or per trajectory, as ``per`` says."""
        return f"reward_per_{self.per}"

    @property
    def guarantee(self) -> str | None:
        """Unbiased where the assumption holds; self-normalised, consistent."""
        return "consistent" if self.self_normalized else "unbiased"

    def row_columns(
        self, view: PolicyView, weights: np.ndarray, included: np.ndarray | None
    ) -> Contribution:
        """Columns of a row-weighted estimator: r w per row, or per position when normalised.

        ``weights`` are zero on excluded trajectories; ``included`` flags the
        trajectories used (None: all). An estimator that declares betting
        columns (:class:`BettingIntervals`) also gets the weights and the rows
        used, which betting intervals read.
        """
        betting = getattr(self, "betting_columns", None) is not None
        log = view.log
        used = np.ones(log.n_units) if included is None else included.astype(float)
        rows = used[log.unit_index]
        y = log.column("reward") * weights
        units = {"units": used} if self.per == "trajectory" else {}
        if not self.self_normalized:
            columns = (
                {"y": y} if self.per == "trajectory" and not betting else {"y": y, "rows": rows}
            )
            if betting:
                columns["w"] = weights
            return Contribution(columns, units)
        lay = layout(log)
        parts = {"y": lay.padded(y, 0.0), "w": lay.padded(weights, 0.0), "n": lay.padded(rows, 0)}
        for k in range(lay.longest):
            for part, matrix in parts.items():
                units[part, k + 1] = matrix[:, k]
        return Contribution(unit_columns=units)

    def combine(self, stats) -> Linearisation:
        """Mean of r w per row or trajectory; normalised position by position when asked."""
        if self.self_normalized:
            return by_position(stats, "units" if self.per == "trajectory" else None)
        return ratio_of_means(stats, "y", "units" if self.per == "trajectory" else "rows")

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Effective sample size (and its share of the weights), mean, largest and smallest
        weight, and the support check's violations and unsupported mass per slot."""
        s, nan = tally.sums, float("nan")
        n = s.get("weights", 0.0)
        ess = s["sum_w"] ** 2 / s["sum_w2"] if s.get("sum_w2", 0) > 0 else 0.0
        return {
            **tally.counts,
            "ess": ess,
            "ess_share": ess / n if n else nan,
            "mean_weight": s["sum_w"] / n if n else nan,
            "max_weight": tally.maxima.get("max_weight", nan) if n else nan,
            "min_weight": tally.minima.get("min_weight", nan) if n else nan,
            **support_diagnostics(tally),
        }


class BettingIntervals:
    """A row-weighted slate estimator that offers betting intervals (Waudby-Smith and Ramdas
    2023) when not self-normalised: its weights are non-negative with mean one under the
    logger, so the interval holds whatever their tails, for rewards within the log's range.

    ``betting_columns`` names what the interval reads: per row r w, w and the
    rows used; the value divides by the rows (per impression) or the
    trajectories used (per trajectory). With ``support="drop"`` the weights of
    the trajectories kept need not average one, and the guarantee is then
    only approximate.
    """

    self_normalized: bool
    per: str

    @property
    def betting_columns(self) -> dict[str, str] | None:
        """The columns by role (None when self-normalised: no betting interval)."""
        if self.self_normalized:
            return None
        divisor = "units" if self.per == "trajectory" else "rows"
        return {"rewards": "y", "weights": "w", "rows": "rows", "divisor": divisor}
