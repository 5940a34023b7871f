"""Importance weights, capping, and the diagnostics every IS estimator reports.

The capped columns are :class:`offeval.Shared` definitions: estimators that
ask for the same cap (CIS and NCIS share their numerator) get the same
values, computed once per chunk and policy.
"""

from __future__ import annotations

import numpy as np

from offeval import ConfigurationError, InteractionLog, PolicyView, Shared
from offeval.stats import Tally


def check_cap(cap: float) -> float:
    """A cap must be a positive number (``inf`` for none)."""
    if not isinstance(cap, (int, float, np.integer, np.floating)) or isinstance(cap, bool):
        raise ConfigurationError(f"cap must be a positive number or inf, got {cap!r}")
    if not cap > 0:
        raise ConfigurationError(f"cap must be a positive number or inf, got {cap!r}")
    return float(cap)


def weight_summary(view: PolicyView) -> tuple[float, float, float]:
    """Sum, sum of squares and maximum of the weights, computed once per view."""
    return view.memo(_weight_summary)


def _weight_summary(view: PolicyView) -> tuple[float, float, float]:
    w = view.weights()
    return float(w.sum()), float(w @ w), float(w.max(initial=0))


def capped_weights(view: PolicyView, cap: float) -> np.ndarray:
    """min(cap, pi/mu) per row (the weights themselves when the cap never binds)."""
    w = view.weights()
    return w if cap >= weight_summary(view)[2] else np.minimum(w, cap)


def capped_rewards(view: PolicyView, cap: float) -> np.ndarray:
    """reward * min(cap, pi/mu) per row (the uncapped array itself when the cap never binds)."""
    if cap != float("inf") and cap >= weight_summary(view)[2]:
        return view.memo(capped_rewards, float("inf"))
    return view.log.column("reward") * view.memo(capped_weights, cap)


def row_ones(log: InteractionLog) -> np.ndarray:
    """One per logged row: the denominator of per-impression rates."""
    return log.ones


#: One per row, the same for every policy: stored once.
ROWS = Shared(row_ones, policy_free=True)


def capped_reward_column(cap: float) -> Shared:
    """The shared column r * min(cap, w)."""
    return Shared(capped_rewards, (cap,))


def capped_weight_column(cap: float) -> Shared:
    """The shared column min(cap, w)."""
    return Shared(capped_weights, (cap,))


def support(view: PolicyView) -> tuple[int, float]:
    """Candidates the target may show but the logger never does: count and target mass."""
    return view.memo(_support)


def _support(view: PolicyView) -> tuple[int, float]:
    mu = view.log.require_candidates()["propensity"].to_numpy()
    if mu.min(initial=1.0) > 0:  # the logger may show every candidate: nothing to ask the target
        return 0, 0.0
    pi = view.candidate_probabilities()
    unsupported = (mu == 0) & (pi > 0)
    return int(unsupported.sum()), float(pi[unsupported].sum())


def weight_tally(view: PolicyView, cap: float) -> Tally:
    """Mergeable weight diagnostics: sums for ESS, the largest weight, clipping, support."""
    w = view.weights()
    sum_w, sum_w2, max_w = weight_summary(view)
    tally = Tally()
    tally.add("rows", w.size)
    tally.add("sum_w", sum_w)
    tally.add("sum_w2", sum_w2)
    tally.count("clipped", np.count_nonzero(w > cap) if cap < max_w else 0)
    tally.maximum("max_weight", max_w)
    if view.log.has_candidates:
        violations, mass = support(view)
        tally.count("support_violations", violations)
        tally.add("unsupported_mass", mass)
        tally.add("slots", view.log.n_rows)
    return tally


def weight_diagnostics(tally: Tally) -> dict[str, float]:
    """Effective sample size, mean and largest weight, share of clipped weights."""
    s, m, c = tally.sums, tally.maxima, tally.counts
    rows = s.get("rows", 0.0)
    out = {
        "ess": s["sum_w"] ** 2 / s["sum_w2"] if s.get("sum_w2", 0) > 0 else 0.0,
        "mean_weight": s["sum_w"] / rows if rows else float("nan"),
        "max_weight": m.get("max_weight", float("nan")),
        "clipped_share": c.get("clipped", 0) / rows if rows else float("nan"),
    }
    if "slots" in s:
        out["unsupported_mass_per_slot"] = s["unsupported_mass"] / s["slots"]
    return out
