"""Delta-method inference on smooth functions of column means.

The normal and Student-t quantiles and tails are scipy.special's functions,
the ones scipy.stats' ``norm`` and ``t`` evaluate (``ndtri``, ``stdtrit``,
``ndtr``, ``stdtr``), with its rule that a t needs ``df > 0`` (else nan):
the same numbers without importing scipy.stats (half a second), which a
command computing a few intervals would otherwise spend most of its time on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from offeval.errors import OffevalError
from offeval.validation import check_choice, check_level

#: A covariance is symmetric when its entries differ from their transposes by at most this
#: share of its largest entry (the rounding of a covariance computed in double precision).
SYMMETRY_TOLERANCE = 1e-8
#: ... and positive semi-definite when no eigenvalue is below minus this share of the largest.
PSD_TOLERANCE = 1e-9

#: The alternatives :func:`p_value` tests against.
ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class Linearisation:
    """A value and its gradient with respect to the means of some columns.

    ``columns`` are indices into the evaluation's global column space. The
    variance of the value is ``gradient' Cov gradient / n`` (the delta method),
    and the covariance of two linearised values uses the cross-covariance of
    their columns, which is what makes paired comparisons on one log work.
    """

    value: float
    columns: np.ndarray
    gradient: np.ndarray

    def dense(self, k: int) -> np.ndarray:
        """The gradient as a length-k vector over all columns."""
        g = np.zeros(k)
        np.add.at(g, self.columns, self.gradient)
        return g

    def ratio(self, other: Linearisation) -> Linearisation:
        """The linearisation of self / other."""
        cols = np.r_[self.columns, other.columns]
        grad = np.r_[self.gradient / other.value, -self.value * other.gradient / other.value**2]
        return Linearisation(self.value / other.value, cols, grad)

    def minus(self, other: Linearisation) -> Linearisation:
        """The linearisation of self - other."""
        cols = np.r_[self.columns, other.columns]
        return Linearisation(self.value - other.value, cols, np.r_[self.gradient, -other.gradient])


def ratio_of_means(stats, numerator, denominator) -> Linearisation:
    """Linearised ratio of two column means; NaN when the denominator's mean is 0.

    ``stats`` is any :class:`offeval.engine.estimator.ColumnStats` (``mean`` and
    ``index`` by column key).
    """
    y, d = stats.mean(numerator), stats.mean(denominator)
    if d == 0:
        return Linearisation(float("nan"), np.array([stats.index(numerator)]), np.array([np.nan]))
    cols = np.array([stats.index(numerator), stats.index(denominator)])
    return Linearisation(y / d, cols, np.array([1 / d, -y / d**2]))


def variance(lin: Linearisation, covariance: np.ndarray, n: int) -> float:
    """Delta-method variance of a linearised estimate from n units."""
    g = lin.dense(covariance.shape[0])[None, :]
    return float(quadratic_form(g, covariance)[0, 0]) / n if n > 0 else float("nan")


def quadratic_form(gradients: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """``gradients @ covariance @ gradients.T`` over the columns the gradients touch.

    Cross-covariances that were not computed (NaN: columns of different
    estimators, see ``evaluate(covariances=...)``) are an error when a
    gradient needs them, never a silent zero.
    """
    touched = np.flatnonzero(np.any(gradients != 0, axis=0))
    part = covariance[np.ix_(touched, touched)]
    finite = np.isfinite(np.diag(part))
    if (np.isnan(part) & finite[:, None] & finite[None, :]).any():  # finite variances: not data
        raise OffevalError(
            "this combines estimates of different estimators, whose covariances were not "
            "computed: evaluate with covariances='all'"
        )
    g = gradients[:, touched]
    return g @ part @ g.T


def _degrees(df: Any) -> np.ndarray:
    """``df`` as floats, nan where it is not positive (scipy.stats' t is nan there)."""
    df = np.asarray(df, dtype=float)
    return np.where(df > 0, df, np.nan)


def _cdf(x: Any, df: Any) -> Any:
    """The normal (``df=None``) or Student-t distribution function at ``x``."""
    from scipy import special

    x = np.asarray(x, dtype=float)
    return special.ndtr(x) if df is None else special.stdtr(_degrees(df), x)


def interval(
    value: float, se: float, level: float = 0.95, df: float | None = None
) -> tuple[float, float]:
    """Two-sided normal (``df=None``) or Student-t confidence interval."""
    check_level(level)
    from scipy import special

    tail = (1 + level) / 2
    q = special.ndtri(tail) if df is None else special.stdtrit(_degrees(df), tail)
    return value - q * se, value + q * se


def p_value(z: float | np.ndarray, alternative: str = "two-sided", df: float | None = None):
    """P-value of a z (or t) statistic; ``alternative`` is two-sided, greater or less."""
    check_choice(alternative, "alternative", ALTERNATIVES, error=OffevalError)
    z = np.asarray(z, dtype=float)
    if alternative == "two-sided":
        return 2 * _cdf(-np.abs(z), df)
    return _cdf(-z, df) if alternative == "greater" else _cdf(z, df)
