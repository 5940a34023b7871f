"""Betting confidence intervals for importance-weighted rewards (Waudby-Smith and Ramdas 2023,
"Estimating means of bounded random variables by betting", JRSS B).

The value V = E[y] / E[d] has per unit y = sum_k w_k r_k over its m weighted rows
(weights w_k >= 0 of mean one under the logging policy, E[w] = E[m]; rewards in
[low, high]) and a divisor d (m for a reward per row, 1 per trajectory). Its
companions a = y - low w >= 0 and b = high w - y >= 0 have means V E[d] - low E[m]
and high E[m] - V E[d]. For a candidate v, the capital prod_t (1 + lambda_t x_t(v)),
with x_t(v) = (a_t - c_t(v)) / S(v), c_t(v) = v d_t - low m_t, S(v) = max_t c_t(v)
(so x_t >= -1) and predictable bets lambda_t in [0, MAX_BET] (the predictable
plug-in, Section 5), is a non-negative supermartingale when V <= v: v is rejected
when the capital ever reaches 2 / alpha (Ville's inequality), and the lower bound is
the smallest v not rejected; the upper bound is the same with b. A confidence
sequence read at the last unit, valid whatever the tails of the weights; units are
taken in the order given (the engine orders them by a hash of their ids, so that
the interval does not depend on chunks or workers).

:class:`Betting` is this plugin's interval method ``"betting"``, :class:`BettingFold`
its fold state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from offeval import ConfigurationError, OffevalError
from offeval.plugin import check_level, hint

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

    ``y``, ``w``, ``m``, ``d`` are per-unit sums in the order of the bets; units with
    ``d == 0`` are skipped. [``low``, ``high``] bound the rewards, known before the data
    (never read off the sample). Returns (low, high); (nan, nan) when no unit counts.
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


#: The roles of an estimator's ``betting_columns``: per unit, y, w, m and d of the module
#: docstring (weighted rewards, weights, weighted rows, divisor).
BETTING_ROLES = ("rewards", "weights", "rows", "divisor")


class Betting:
    """The betting interval of importance-weighted rewards (Waudby-Smith and Ramdas 2023).

    An estimator offers it by declaring ``betting_columns`` (its column keys by role of
    :data:`BETTING_ROLES`); it needs the rewards' bounds known before the data (the
    user's ``reward_range``, else the estimator's).
    """

    #: What an estimator must declare to offer it (in the declaration's refusal).
    needs = f"betting_columns (its column keys by role: {list(BETTING_ROLES)})"

    def reads(self, estimator: Any) -> dict[str, Any] | None:
        """The estimator's betting columns by role, checked (None: it offers none)."""
        value = getattr(estimator, "betting_columns", None)
        if value is None:
            return None
        if not isinstance(value, Mapping) or set(value) != set(BETTING_ROLES):
            raise ConfigurationError(
                f"betting_columns must map each of {list(BETTING_ROLES)} to a column key, "
                f"got {value!r}"
            )
        return {role: value[role] for role in BETTING_ROLES}

    def unavailable(self, labels: list[str], key: str) -> str:
        """Why estimators ``labels`` cannot have it (``key``: the name the user chose by)."""
        return hint(
            f"interval 'betting' needs an estimator of importance-weighted rewards that "
            f"declares its betting_columns; {labels} do not: choose interval='normal' for "
            "them (interval={label: 'betting'} picks estimators)",
            f"--interval {key}=betting: {', '.join(labels)} offers no betting intervals "
            "(it needs betting_columns, which only estimators of importance weights with mean one "
            "can declare)",
        )

    def check(self, declarations: list, reward_range: tuple[float, float] | None) -> None:
        """The rewards' bounds, known before the data, for each estimator using it."""
        missing = [d.label for d in declarations if (reward_range or d.reward_range) is None]
        if missing:
            raise OffevalError(
                hint(
                    f"betting intervals ({', '.join(missing)}) need the rewards' known bounds, "
                    "declared before the data: pass reward_range=(low, high), e.g. (0, 1) for "
                    "clicks, or interval='normal'",
                    f"betting intervals ({', '.join(missing)}) need the rewards' known bounds: "
                    "add --reward-range LOW,HIGH (e.g. 0,1 for clicks), or choose "
                    "--interval normal",
                )
            )

    def start(self, uses: Mapping[tuple[int, int], dict[str, Any]]) -> BettingFold:
        """An empty fold of the (policy, estimator) pairs ``uses`` (their columns by role)."""
        return BettingFold(dict(uses))

    def bounds(self, case: Any, fold: BettingFold) -> tuple[float, float]:
        """The betting interval of ``case`` under its known reward bounds (not widened to
        hold the estimate, which can leave the rewards' range where the interval cannot)."""
        low, high = case.reward_range
        seen = fold.rewards
        if seen[0] < low or seen[1] > high:
            raise OffevalError(
                f"{case.label}'s betting interval assumes rewards in [{low:g}, "
                f"{high:g}], and the log has rewards from {seen[0]:g} to {seen[1]:g}: "
                + hint(
                    "pass reward_range=(low, high) with the true bounds, or interval='normal'",
                    "give --reward-range LOW,HIGH with the true bounds, or --interval normal",
                )
            )
        return betting_interval(*fold.units(case.p, case.e), low, high, case.level)

    def unreadable(self, case: Any, low: float, high: float) -> str | None:
        """Why an empty interval (low above high) cannot be read."""
        if low > high:
            return (
                "an empty betting interval: the log contradicts its assumptions (weights of "
                "mean one, rewards within the declared range) at this level"
            )
        return None


@dataclass
class BettingFold:
    """What betting intervals keep of a pass: per (policy, estimator), each chunk's
    (n_units, 4) unit sums by role; the units' places in the order of the bets; the range
    of the rewards seen."""

    columns: dict[tuple[int, int], dict[str, Any]]
    ids: list[np.ndarray] = field(default_factory=list)
    parts: dict[tuple[int, int], list[np.ndarray]] = field(default_factory=dict)
    rewards: tuple[float, float] = (np.inf, -np.inf)

    def add(self, chunk: Any) -> None:
        """Keep one chunk's unit sums (read before the engine centres them)."""
        for (p, e), roles in self.columns.items():
            emitted = chunk.columns(p, e)
            missing = [k for k in roles.values() if k not in emitted]
            if missing:
                raise OffevalError(
                    f"estimator {chunk.label(e)!r} declares betting columns "
                    f"{missing} it never emitted (its columns: {list(emitted)})"
                )
            sums = [chunk.sums(p, e, roles[role]) for role in BETTING_ROLES]
            self.parts.setdefault((p, e), []).append(np.column_stack(sums))
        self.ids.append(chunk.order)
        rewards = chunk.log.column("reward")
        if rewards.size:
            self.rewards = (
                min(self.rewards[0], float(rewards.min())),
                max(self.rewards[1], float(rewards.max())),
            )

    def merge(self, other: BettingFold) -> BettingFold:
        """Both folds (over different units)."""
        parts = {
            pe: [*self.parts.get(pe, []), *other.parts.get(pe, [])]
            for pe in {*self.parts, *other.parts}
        }
        rewards = (min(self.rewards[0], other.rewards[0]), max(self.rewards[1], other.rewards[1]))
        return BettingFold(
            {**other.columns, **self.columns}, [*self.ids, *other.ids], parts, rewards
        )

    def units(self, p: int, e: int) -> tuple[np.ndarray, ...]:
        """The unit sums of (p, e), one array per role, in the order of the bets."""
        order = np.argsort(np.concatenate(self.ids), kind="stable")
        parts = np.concatenate(self.parts[p, e])[order]
        return tuple(parts[:, j] for j in range(parts.shape[1]))
