"""Importance weights, capping, and the diagnostics every IS estimator reports."""

from __future__ import annotations

import numpy as np

from offeval import ConfigurationError, Contribution, PolicyView, Shared
from offeval.stats import Tally


def check_cap(cap: float) -> float:
    """A cap must be a positive number (``inf`` for none)."""
    if not isinstance(cap, (int, float)) or isinstance(cap, bool) or not cap > 0:
        raise ConfigurationError(f"cap must be a positive number or inf, got {cap!r}")
    return float(cap)


def weight_tally(view: PolicyView, cap: float) -> Tally:
    """Mergeable weight diagnostics: sums for ESS, the largest weight, clipping."""
    w = view.weights()
    sum_w, sum_w2, max_w = view.weight_summary()
    tally = Tally()
    tally.add("rows", w.size)
    tally.add("sum_w", sum_w)
    tally.add("sum_w2", sum_w2)
    tally.add("clipped", np.count_nonzero(w > cap) if cap < max_w else 0)
    tally.maximum("max_weight", max_w)
    if view.log.has_candidates:
        violations, mass = view.support()
        tally.add("support_violations", violations)
        tally.add("unsupported_mass", mass)
        tally.add("slots", view.log.n_rows)
    return tally


def weight_diagnostics(tally: Tally) -> dict[str, float]:
    """Effective sample size, mean and largest weight, share of clipped weights."""
    s, m = tally.sums, tally.maxima
    rows = s.get("rows", 0.0)
    out = {
        "ess": s["sum_w"] ** 2 / s["sum_w2"] if s.get("sum_w2", 0) > 0 else 0.0,
        "mean_weight": s["sum_w"] / rows if rows else float("nan"),
        "max_weight": m.get("max_weight", float("nan")),
        "clipped_share": s.get("clipped", 0.0) / rows if rows else float("nan"),
    }
    if "support_violations" in s:
        out["support_violations"] = int(s["support_violations"])
        out["unsupported_mass_per_slot"] = s["unsupported_mass"] / s["slots"]
    return out


def ratio_contribution(numerator: np.ndarray, denominator: np.ndarray, keys, tally: Tally):
    """A Contribution with a numerator and a denominator column."""
    return Contribution({keys[0]: numerator, keys[1]: denominator}, tally)


ROWS = Shared("rows")


def row_ones(view: PolicyView) -> np.ndarray:
    """One per logged row: the denominator of per-impression rates."""
    return view.log.ones
