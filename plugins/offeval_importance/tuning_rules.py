"""Choosing an estimator's parameter from the log: SLOPE and the estimated MSE.

An estimator with a parameter that trades bias for variance (a clip, a
switch, a shrinkage) is computed at every value of a grid in the one pass;
then one value is chosen from the candidates' estimates, standard errors and
estimated biases, by the two rules of obp 0.5.7's ``*Tuning`` estimators:

- ``"slope"``: SLOPE (Su, Srinath and Krishnamurthy, ICML 2020), in the
  form obp implements (Tucker and Lee's SLOPE++, 2021): candidates are taken
  from the widest confidence width to the narrowest, and each is kept while
  its estimate lies within ``width_i + (sqrt(6) - 1) width_j`` of every
  candidate kept before it; the last one kept is chosen. The width is the
  one-sided Student-t half-width ``t_{n-1}(1 - delta) se`` (obp's
  ``estimate_student_t_lower_bound``);
- ``"mse"``: the smallest estimated MSE, ``variance + bias^2``, where the
  variance is the squared standard error with divisor n (obp's ``np.var``)
  and the bias is ``|mean((w - w_hat)(r - q_hat))|`` (Su, Dimakopoulou,
  Krishnamurthy and Dudík, ICML 2020), optionally raised to a
  high-probability upper bound by ``sqrt(2 mean(w^2) log(2/delta) / n) +
  2 max(w) log(2/delta) / (3 n)`` over the n log rows.

Ties go as in obp, within :data:`offeval.stats.ties.RTOL` (1e-9, relative):
widths, estimates and MSEs that agree to that tolerance are equal, so the
choice does not depend on rounding (a BLAS kernel, the chunking). SLOPE
visits candidates of equal width in reverse grid order (obp reverses a stable
ascending sort) and keeps a candidate whose distance equals its bound; the
MSE rule takes the first minimum in grid order. Where every candidate gives
the same estimate (all weights 1, say), both rules choose the first value in
grid order, as obp does in exact arithmetic. The chosen estimate's standard error is that of the
estimator at the chosen value: the selection's own uncertainty is not in it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from offeval import ConfigurationError, OffevalError
from offeval.plugin import check_choice, check_number
from offeval.stats import Linearisation, first_minimum, tie_groups, tied

#: The selection rules.
TUNING_METHODS = ("slope", "mse")
#: obp's benchmark grid for clipping, switching and shrinkage (``benchmark/ope``).
LARGE_WEIGHTS = (10.0, 50.0, 100.0, 500.0, 1000.0, 5000.0, 10000.0, math.inf)
#: obp's test grid for the sub-Gaussian parameter (``tests/ope/test_offline_estimation``).
SUBGAUSSIAN = (0.005, 0.01, 0.05, 0.1, 0.5)

#: SLOPE's constant: a candidate's estimate may differ from a wider one's by its own
#: width plus this times the other's (Tucker and Lee 2021; obp's ``C``).
SLOPE_CONSTANT = math.sqrt(6) - 1


class Grid(tuple):
    """Checked candidate values: a tuple of floats, spelled ``[10, 100, inf]`` in labels."""

    @property
    def spec(self) -> str:
        """The grid as a spec value reads it back."""
        return "[" + ", ".join(f"{v:g}" for v in self) + "]"


def check_grid(
    values: Any, name: str = "lambdas", *, low: float = 0, high: float = math.inf
) -> Grid:
    """A grid of candidate values as a :class:`Grid` of floats, each in [low, high] (inf allowed
    when ``high`` is), none twice.

    Accepts a list or tuple of numbers, or their text as a spec gives it
    (``"[10, 100, inf]"``).
    """
    if isinstance(values, str):
        parts = [p.strip() for p in values.strip().strip("[]()").split(",") if p.strip()]
        values = [_number_text(p, name) for p in parts]
    if not isinstance(values, (list, tuple)) or not values:
        raise ConfigurationError(
            f"{name} must be a non-empty list of numbers, e.g. [10, 100, inf]; got {values!r}"
        )
    finite = high != math.inf
    top = high if finite else None
    grid = Grid(
        check_number(v, f"each of {name}", low=low, high=top, finite=finite) for v in values
    )
    twice = sorted({v for v in grid if grid.count(v) > 1})
    if twice:
        raise ConfigurationError(f"{name} must not repeat a value, got {twice[0]:g} twice")
    return grid


def _number_text(text: str, name: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return text  # refused by check_number with the user's text


def check_tuning(method: Any, delta: Any) -> tuple[str, float]:
    """The rule's name (one of :data:`TUNING_METHODS`) and its delta in (0, 1)."""
    method = check_choice(method, "tuning_method", TUNING_METHODS)
    return method, check_number(delta, "delta", low=0, high=1, low_open=True, high_open=True)


def standard_error(stats, lin: Linearisation) -> float:
    """The delta-method standard error of ``lin`` from ``stats`` (a ``ColumnStats``): the
    covariances of the columns it reads, over ``stats.n`` units."""
    key_of = {index: key for key, index in stats.keys.items()}
    keys = [key_of[int(c)] for c in lin.columns]
    cov = np.array([[stats.cov(a, b) for b in keys] for a in keys])
    variance = float(lin.gradient @ cov @ lin.gradient) / stats.n if stats.n > 0 else math.nan
    return math.sqrt(max(variance, 0.0))


def slope_widths(ses: np.ndarray, units: int, delta: float) -> np.ndarray:
    """One-sided Student-t half-widths ``t_{units-1}(1 - delta) se`` (nan below 2 units)."""
    from scipy import special

    quantile = special.stdtrit(units - 1, 1 - delta) if units >= 2 else math.nan
    return quantile * np.asarray(ses, dtype=float)


def slope(values: Sequence[float], widths: Sequence[float]) -> int:
    """The index SLOPE chooses among candidates with these estimates and widths.

    From the widest to the narrowest (widths tied within
    :data:`~offeval.stats.ties.RTOL` in reverse index order), a candidate is
    kept while ``|value_j - value_i| <= width_i + C width_j`` holds, within the
    same tolerance, for every candidate j kept before it (C =
    :data:`SLOPE_CONSTANT`); the last kept is chosen.
    """
    values, widths = np.asarray(values, dtype=float), np.asarray(widths, dtype=float)
    order = np.lexsort((-np.arange(widths.size), -tie_groups(widths)))
    for i in range(1, order.size):
        kept = order[:i]
        distance = np.abs(values[kept] - values[order[i]])
        allowed = widths[order[i]] + SLOPE_CONSTANT * widths[kept]
        if not np.all((distance <= allowed) | tied(distance, allowed)):
            return int(order[i - 1])
    return int(order[-1])


@dataclass(frozen=True)
class WeightBound:
    """What the bias's high-probability bound reads: the log's importance weights w = pi/mu
    over its ``rows`` rows (their mean square and largest value)."""

    mean_square: float
    largest: float
    rows: float

    def slack(self, delta: float) -> float:
        """``sqrt(2 mean(w^2) log(2/delta) / n) + 2 max(w) log(2/delta) / (3 n)``."""
        log = math.log(2 / delta)
        n = self.rows
        return math.sqrt(2 * self.mean_square * log / n) + 2 * self.largest * log / (3 * n)


def squared_weights(view) -> np.ndarray:
    """w_i^2 per log row of a ``PolicyView``: as ``Shared(squared_weights)``, the column whose
    mean :func:`weight_bound` reads (one column, however many estimators ask for it)."""
    w = view.weights()
    return w * w


def weight_bound(stats, squares, rows) -> WeightBound:
    """The :class:`WeightBound` of a log from an estimator's ``ColumnStats``: its columns
    ``squares`` (w^2 per row) and ``rows`` (1 per row), and the largest weight.

    The largest weight is the tally's ``max_weight`` (:func:`weight_tally`'s)
    when the engine hands the estimator's tally to ``combine`` as
    ``stats.tally``; else sqrt(sum w^2), an upper bound of it (the bound is
    then looser than obp's).
    """
    n = stats.mean(rows) * stats.n
    sum_squares = stats.mean(squares) * stats.n
    tally = getattr(stats, "tally", None)
    largest = tally.maxima.get("max_weight") if tally is not None else None
    if largest is None:
        largest = math.sqrt(max(sum_squares, 0.0))
    return WeightBound(sum_squares / n, float(largest), n)


def estimated_mse(
    ses: np.ndarray, units: int, biases: np.ndarray, bound: WeightBound | None, delta: float
) -> np.ndarray:
    """``se^2 (n-1)/n + (|bias| + slack)^2`` per candidate (slack 0 without a bound)."""
    ses, biases = np.asarray(ses, dtype=float), np.asarray(biases, dtype=float)
    slack = bound.slack(delta) if bound is not None else 0.0
    return ses**2 * (units - 1) / units + (np.abs(biases) + slack) ** 2


@dataclass(frozen=True)
class Candidate:
    """One value of the parameter: the estimate there and its estimated bias
    ``mean((w - w_hat)(r - q_hat))`` (0 where nothing is clipped, switched or shrunk)."""

    estimate: Linearisation
    bias: float


def choose(
    stats,
    candidates: Sequence[Candidate],
    method: str,
    delta: float,
    bound: WeightBound | None = None,
) -> int:
    """The index of the candidate ``method`` chooses, candidates in obp's grid order.

    ``stats`` is the estimator's ``ColumnStats``; ``bound`` (``"mse"`` only)
    raises the estimated bias to its high-probability bound.
    """
    if not candidates:
        raise OffevalError("no candidate to choose from")
    ses = np.array([standard_error(stats, c.estimate) for c in candidates])
    if method == "slope":
        values = [c.estimate.value for c in candidates]
        return slope(values, slope_widths(ses, stats.n, delta))
    mse = estimated_mse(ses, stats.n, np.array([c.bias for c in candidates]), bound, delta)
    return first_minimum(mse)
