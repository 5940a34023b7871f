"""Importance weights, capping, and the diagnostics every IS estimator reports.

The capped columns are :class:`offeval.Shared` definitions: estimators that
ask for the same cap (CIS and NCIS share their numerator) get the same
values, computed once per chunk and policy. The ``importance`` plugin's IS family
and the plugins that declare they build on it (the ``rewardmodels`` plugin's
doubly robust estimators, the ``slates`` plugin's) import them from
:mod:`offeval_importance`.
"""

from __future__ import annotations

import warnings

import numpy as np

from offeval import InteractionLog, OffevalWarning, PolicyView, Shared
from offeval.plugin import check_number
from offeval.stats import Tally


def check_cap(cap: float) -> float:
    """A cap must be a positive number (``inf`` for none)."""
    return check_number(cap, "cap", low=0, low_open=True, finite=False)


def weight_summary(view: PolicyView) -> tuple[float, float, float]:
    """Sum, sum of squares and maximum of the weights, computed once per view."""
    return view.memo(_weight_summary)


def _weight_summary(view: PolicyView) -> tuple[float, float, float]:
    w = view.weights()
    return float(w.sum()), float(w @ w), float(w.max(initial=0))


def trajectory_weight_moments(view: PolicyView) -> tuple[float, float, float]:
    """Sums over trajectories of W^2, W N and N^2 (W: a trajectory's weights summed, N:
    its rows), from which the mean weight's standard error follows; once per view."""
    return view.memo(_trajectory_weight_moments)


def _trajectory_weight_moments(view: PolicyView) -> tuple[float, float, float]:
    log = view.log
    if log.n_units == log.n_rows:
        w = view.weights()
        return float(w @ w), float(w.sum()), float(log.n_rows)
    sums = np.add.reduceat(view.weights(), log.unit_starts)
    rows = np.diff(np.r_[log.unit_starts, log.n_rows]).astype(float)
    return float(sums @ sums), float(sums @ rows), float(rows @ rows)


def capped_weights(view: PolicyView, cap: float) -> np.ndarray:
    """min(cap, pi/mu) per row (the weights themselves when the cap never binds)."""
    w = view.weights()
    return w if cap >= weight_summary(view)[2] else np.minimum(w, cap)


def capped_rewards(view: PolicyView, cap: float) -> np.ndarray:
    """reward * min(cap, pi/mu) per row (the uncapped array itself when the cap never binds)."""
    if cap != float("inf") and cap >= weight_summary(view)[2]:
        return view.memo(capped_rewards, float("inf"))
    return view.log.memo(_rewards) * view.memo(capped_weights, cap)


def _rewards(log: InteractionLog) -> np.ndarray:
    """The reward column, read once per chunk (not once per cap and policy)."""
    return log.column("reward")


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


def support(view: PolicyView) -> tuple[int, float] | None:
    """Candidates the target may show but the logger never does: count and target mass.

    None when the candidates' propensities are unknown (NaN: ``from_obp``
    without ``pi_b``): the support cannot be checked, and is not reported.
    """
    return view.memo(_support)


def _support(view: PolicyView) -> tuple[int, float] | None:
    known, full = view.log.memo(_logger_support)
    if not known:
        return None
    if full:  # the logger may show every candidate: nothing to ask the target
        return 0, 0.0
    mu = view.log.candidates["propensity"].to_numpy()
    pi = view.candidate_probabilities()
    unsupported = (mu == 0) & (pi > 0)
    return int(unsupported.sum()), float(pi[unsupported].sum())


def _logger_support(log: InteractionLog) -> tuple[bool, bool]:
    """Whether the candidates' propensities are known (no NaN), and all positive; once per chunk."""
    low = log.require_candidates()["propensity"].to_numpy().min(initial=1.0)
    return not np.isnan(low), bool(low > 0)


def weight_tally(view: PolicyView, cap: float) -> Tally:
    """Mergeable weight diagnostics: sums for ESS, the largest weight, clipping, support.
    Only the clipped count depends on the cap: the rest is built once per view."""
    base = view.memo(_cap_free_tally)
    max_w = base.maxima["max_weight"]
    clipped = np.count_nonzero(view.weights() > cap) if cap < max_w else 0
    counts = {"clipped": int(clipped), **base.counts}
    return Tally(counts, dict(base.sums), dict(base.maxima), dict(base.minima))


def _cap_free_tally(view: PolicyView) -> Tally:
    w = view.weights()
    sum_w, sum_w2, max_w = weight_summary(view)
    tally = Tally()
    tally.add("rows", w.size)
    tally.add("sum_w", sum_w)
    tally.add("sum_w2", sum_w2)
    tally.maximum("max_weight", max_w)
    moments = trajectory_weight_moments(view)
    for name, value in zip(("sum_W2", "sum_WN", "sum_N2"), moments, strict=True):
        tally.add(name, value)
    tally.add("weight_units", view.log.n_units)
    if view.log.has_candidates and support(view) is not None:
        violations, mass = support(view)
        tally.count("support_violations", violations)
        tally.add("unsupported_mass", mass)
        tally.add("slots", view.log.n_rows)
    return tally


#: How many standard errors from 1 the mean importance weight may be before a warning.
MEAN_WEIGHT_Z = 3.0


def weight_diagnostics(tally: Tally) -> dict[str, float]:
    """Effective sample size, mean weight (with its standard error and z against 1),
    largest weight, share of clipped weights, unsupported mass.

    The weights pi/mu have mean 1 under the logging policy when the
    propensities are right and the logger covers the target; a mean weight
    more than :data:`MEAN_WEIGHT_Z` standard errors (clustered by trajectory)
    from 1 warns (:class:`offeval.OffevalWarning`).
    """
    s, m, c = tally.sums, tally.maxima, tally.counts
    rows = s.get("rows", 0.0)
    mean = s["sum_w"] / rows if rows else float("nan")
    out = {
        "ess": s["sum_w"] ** 2 / s["sum_w2"] if s.get("sum_w2", 0) > 0 else 0.0,
        "mean_weight": mean,
        "mean_weight_se": float("nan"),
        "mean_weight_z": float("nan"),
        "max_weight": m.get("max_weight", float("nan")),
        "clipped_share": c.get("clipped", 0) / rows if rows else float("nan"),
    }
    if rows and "sum_W2" in s and s.get("weight_units", 0) >= 2:  # else no standard error
        spread = s["sum_W2"] - 2 * mean * s["sum_WN"] + mean**2 * s["sum_N2"]
        if spread <= 1e-12 * s["sum_W2"]:  # rounding of a zero spread (equal weights)
            spread = 0.0
        se = float(np.sqrt(spread)) / rows
        out["mean_weight_se"] = se
        if se > 0:
            out["mean_weight_z"] = (mean - 1) / se
        elif mean != 1:  # every weight equal, and not 1: certainly not a mean of 1
            out["mean_weight_z"] = float(np.sign(mean - 1) * np.inf)
        if abs(out["mean_weight_z"]) > MEAN_WEIGHT_Z:
            warnings.warn(
                f"the mean importance weight is {mean:.4g}, {out['mean_weight_z']:+.1f} "
                "standard errors from 1: the logging propensities may be wrong, or the "
                "target puts mass where the logger shows nothing",
                OffevalWarning,
                stacklevel=2,
            )
    if "slots" in s:
        out["unsupported_mass_per_slot"] = s["unsupported_mass"] / s["slots"]
    return out
