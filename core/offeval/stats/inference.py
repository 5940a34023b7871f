"""Delta-method inference on smooth functions of column means. Normal and Student-t
quantiles and tails are scipy.special's (``ndtri``, ``stdtrit``, ``ndtr``, ``stdtr``, what
scipy.stats' ``norm`` and ``t`` evaluate; a t needs ``df > 0``, else nan), without the half
a second of importing scipy.stats."""

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


def covariance_problem(cov: np.ndarray, names: list[str]) -> str | None:
    """What keeps ``cov`` from being a covariance of systems ``names``, or None: non-finite
    entries (an estimate not computed) are allowed in symmetric places, positive
    semi-definiteness is checked when every entry is finite."""
    negative = [name for name, v in zip(names, np.diag(cov), strict=True) if v < 0]
    if negative:
        return f"negative variance for policies {negative[:10]}"
    finite = np.isfinite(cov)
    scale = np.abs(cov[finite]).max(initial=0.0)
    gap = np.abs(np.where(finite & finite.T, cov - cov.T, 0.0))
    same = (finite == finite.T) & ((cov == cov.T) | ~finite | (gap <= SYMMETRY_TOLERANCE * scale))
    if not same.all():
        i, j = np.argwhere(~same)[0]
        return (
            f"must be symmetric: ({names[i]!r}, {names[j]!r}) is {float(cov[i, j]):.6g} "
            f"but ({names[j]!r}, {names[i]!r}) is {float(cov[j, i]):.6g}"
        )
    if finite.all() and scale > 0:
        unit = cov / scale  # scaled first: no overflow near the largest floats
        eigen = np.linalg.eigvalsh((unit + unit.T) / 2)
        if eigen.min() < -PSD_TOLERANCE * eigen.max():
            return (
                f"must be positive semi-definite: its smallest eigenvalue is "
                f"{eigen.min() * scale:.3g}, its largest {eigen.max() * scale:.3g}"
            )
    return None


@dataclass(frozen=True)
class Linearisation:
    """A value and its gradient with respect to the means of some columns (``columns``
    index the evaluation's); its variance is ``gradient' Cov gradient / n`` (delta method)."""

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
    """Linearised ratio of two column means of ``stats`` (a
    :class:`offeval.engine.estimator.ColumnStats`); NaN when the denominator's mean is 0."""
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
    """``gradients @ covariance @ gradients.T`` over the columns the gradients touch; a
    cross-covariance they need that was not computed (NaN) is an error, never a zero."""
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
    return two_sided(value, se, check_level(level), df)


def two_sided(value: float, se: float, level: float, df: float | None) -> tuple[float, float]:
    """:func:`interval` at a ``level`` already checked (by the entry point that took it)."""
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
