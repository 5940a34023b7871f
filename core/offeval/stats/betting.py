"""Betting confidence intervals for importance-weighted rewards (Waudby-Smith and Ramdas 2023).

An estimate of the form V = E[y] / E[d], where per unit y = sum_k w_k r_k,
w = sum_k w_k over the unit's m weighted rows and d is what the value divides
by (m for a reward per row, 1 per trajectory), with weights w_k >= 0 whose
mean is one under the logging policy (E[w] = E[m]) and rewards in
[low, high], has two non-negative companions whose means are known up to V:

- a = y - low w >= 0, with E[a] = V E[d] - low E[m];
- b = high w - y >= 0, with E[b] = high E[m] - V E[d].

A lower confidence bound of a non-negative mean is not fooled by a heavy
right tail (a large weight the sample missed would only raise it), so each
bound is found by betting against one companion: for a candidate v, the
capital prod_t (1 + lambda_t x_t(v)), with x_t(v) = (a_t - c_t(v)) / S(v),
c_t(v) = v d_t - low m_t the unit's share of the mean under v and S(v) the
largest c_t(v) (so x_t >= -1), and predictable bets lambda_t in [0, MAX_BET]
(the predictable plug-in of Waudby-Smith and Ramdas, Section 5), is a
non-negative supermartingale when V <= v; v is rejected when the capital
ever reaches 2 / alpha (Ville's inequality), and the lower bound is the
smallest v not rejected. The upper bound is the same with b. The interval is
valid at every sample size at once (a confidence sequence, read at the last
unit), whatever the tails of the weights: it needs only non-negative mean-one
weights and bounded rewards. Units are taken in the order given (the engine
orders them by a hash of their ids, so that the interval does not depend on
how the log was chunked or split among workers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from offeval.errors import ConfigurationError, OffevalError
from offeval.validation import check_level, check_number

#: Largest bet (a share of the capital) on one unit: bets stay bounded away from ruin.
MAX_BET = 0.5
#: Steps of the bisection that finds each bound (its precision: range / 2**STEPS).
STEPS = 60


def betting_interval(
    y: np.ndarray,
    w: np.ndarray,
    m: np.ndarray,
    d: np.ndarray,
    low: float,
    high: float,
    level: float = 0.95,
) -> tuple[float, float]:
    """The betting interval of V = E[y] / E[d] (see the module docstring), at ``level``.

    ``y`` (weighted rewards), ``w`` (weights), ``m`` (weighted rows) and ``d``
    (divisor) are per-unit sums in the order the bets are placed; units with
    ``d == 0`` (left out by the estimator) are skipped. Rewards lie in
    [``low``, ``high``], bounds known before the data (the user's or the
    estimator's declaration, never the sample's: a bound read off the sample
    would not hold for rewards the sample missed). Returns (low bound, high
    bound), within the values the rewards allow; (nan, nan) when no unit counts.
    """
    check_level(level)
    y, w, m, d = (np.asarray(a, dtype=float) for a in (y, w, m, d))
    used = d > 0
    y, w, m, d = y[used], w[used], m[used], d[used]
    if not d.size:
        return float("nan"), float("nan")
    if not (np.isfinite(low) and np.isfinite(high) and low <= high):
        raise OffevalError(f"betting intervals need finite reward bounds, got [{low}, {high}]")
    a, b = y - low * w, high * w - y
    scale = np.abs(y).max(initial=0.0) + max(abs(low), abs(high)) * np.abs(w).max(initial=0.0)
    slack = 1e-9 * max(scale, 1e-300)
    if (w < -slack).any() or (a < -slack).any() or (b < -slack).any():
        raise OffevalError(
            f"betting intervals need non-negative weights and rewards within [{low:g}, "
            f"{high:g}] on every unit: use the normal interval for this estimator"
        )
    a, b = np.maximum(a, 0.0), np.maximum(b, 0.0)
    ratio = m.sum() / d.sum()
    if high == low:
        return float(low * ratio), float(high * ratio)
    alpha = 1 - level
    lower = _bound(a, d, -low * m, low * ratio, high * ratio, alpha)
    upper = -_bound(b, d, high * m, -high * ratio, -low * ratio, alpha)  # in -v
    return float(lower), float(upper)


def check_reward_range(value: Any, name: str = "reward_range") -> tuple[float, float]:
    """Known bounds of the rewards as ``(low, high)``: finite numbers, ``low < high``.

    Accepts a pair of numbers or their text ``"LOW,HIGH"`` (``"0,1"``).
    """
    if isinstance(value, str):
        value = [p.strip() for p in value.split(",")]
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise ConfigurationError(
            f"{name} must be two numbers, the lowest and highest reward possible (e.g. 0,1); "
            f"got {value!r}"
        )
    low, high = (
        _number(v, f"{name}'s {end}") for v, end in zip(value, ("low", "high"), strict=True)
    )
    if not low < high:
        raise ConfigurationError(
            f"{name} must have its low end below its high end, got {low:g},{high:g}"
        )
    return low, high


def _number(value: Any, name: str) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ConfigurationError(f"{name} must be a number, got {value!r}") from None
    return float(check_number(value, name))


def capital(x: np.ndarray, alpha: float) -> float:
    """Largest log capital over time of betting on ``x`` (values >= -1) having a positive mean.

    Bets are the predictable plug-in min(MAX_BET, sqrt(2 log(2 / alpha) / (N s^2))),
    s^2 the running variance of the units before (prior 1/4).
    """
    t = np.arange(1, x.size + 1)
    mean = np.cumsum(x) / (t + 1)
    spread = (0.25 + np.cumsum(np.square(x - mean))) / (t + 1)
    before = np.r_[0.25, spread[:-1]]
    bets = np.minimum(MAX_BET, np.sqrt(2 * np.log(2 / alpha) / (x.size * before)))
    return float(np.cumsum(np.log1p(bets * x)).max())


def _rejected(part, slope, offset, v: float, alpha: float) -> bool:
    """Whether the capital against E[part] = E[slope v + offset] reaches 2 / alpha."""
    share = slope * v + offset
    top = share.max()
    if top <= 0:  # every unit's share is at most 0: any positive part rejects
        return bool((part > share).any())
    return capital((part - share) / top, alpha) >= np.log(2 / alpha)


def _bound(part, slope, offset, start: float, stop: float, alpha: float) -> float:
    """The smallest v in [start, stop] not rejected (bisection; rejection falls with v)."""
    if not _rejected(part, slope, offset, start, alpha):
        return start
    if _rejected(part, slope, offset, stop, alpha):
        return stop
    lo, hi = start, stop
    for _ in range(STEPS):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if _rejected(part, slope, offset, mid, alpha):
            lo = mid
        else:
            hi = mid
    return hi
