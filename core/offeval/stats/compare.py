"""Comparisons: paired grids, unpaired A/B differences, rank correlations (scipy.stats and
statsmodels imported where used: a command listing its options loads neither)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from offeval.errors import OffevalError
from offeval.stats.corrections import CORRECTIONS
from offeval.stats.inference import interval, p_value
from offeval.validation import check_choice


@dataclass(frozen=True)
class PairwiseComparison:
    """Every pair (i, j) of systems: difference, standard error, p-value, verdict; ``table``
    has one row per unordered pair, :meth:`matrix` is the star grid of Gruson et al. (2019)
    and Jeunen et al. (2024)."""

    names: list[str]
    table: pd.DataFrame
    alpha: float
    correction: str | None

    def matrix(self) -> pd.DataFrame:
        """Square boolean frame: significant difference between row and column."""
        m = pd.DataFrame(False, index=self.names, columns=self.names)
        for row in self.table.itertuples():
            m.loc[row.a, row.b] = m.loc[row.b, row.a] = bool(row.significant)
        return m

    def n_significant(self) -> int:
        """How many pairs differ significantly."""
        return int(self.table["significant"].sum())

    def __repr__(self) -> str:
        how = self.correction or "no correction"
        return (
            f"PairwiseComparison({len(self.names)} systems, {self.n_significant()} of "
            f"{len(self.table)} pairs significant at alpha={self.alpha}, {how})"
        )


def adjusted_p_values(p: np.ndarray, alpha: float, correction: str | None) -> np.ndarray:
    """P-values adjusted for multiple comparisons (NaN stays NaN and is not counted);
    ``correction`` is a statsmodels ``multipletests`` method, or None for none. Holm is
    computed here (statsmodels' Holm calls gc.collect() each time)."""
    if correction is not None:
        check_choice(correction, "correction", CORRECTIONS, error=OffevalError)
    p = np.asarray(p, dtype=float)
    adjusted = p.copy()
    known = ~np.isnan(p)
    if correction == "holm" and known.any():
        order = np.argsort(p[known], kind="stable")
        steps = p[known][order] * np.arange(order.size, 0, -1)
        adjusted[np.flatnonzero(known)[order]] = np.minimum(np.maximum.accumulate(steps), 1.0)
    elif correction and known.any():
        from statsmodels.stats.multitest import multipletests

        adjusted[known] = multipletests(p[known], alpha=alpha, method=correction)[1]
    return adjusted


def pairwise_grid(
    names: Sequence[str],
    values: np.ndarray,
    covariance: np.ndarray,
    *,
    correction: str | None = None,
    alpha: float = 0.05,
    df: float | None = None,
) -> PairwiseComparison:
    """Tests of every pair from estimates and their joint covariance: paired with the
    covariance of paired estimates (same log), unpaired with a diagonal one (independent A/B
    cells); ``correction`` is a statsmodels ``multipletests`` method."""
    values = np.asarray(values, dtype=float)
    i, j = np.triu_indices(len(values), k=1)
    diff = values[i] - values[j]
    var = covariance[i, i] + covariance[j, j] - 2 * covariance[i, j]
    se = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / se, np.where(diff == 0, 0.0, np.inf * np.sign(diff)))
    z = np.where(np.isnan(se) | np.isnan(diff), np.nan, z)  # undefined, not significant
    p = p_value(z, df=df)
    adjusted = adjusted_p_values(p, alpha, correction)
    table = pd.DataFrame(
        {
            "a": np.asarray(names)[i],
            "b": np.asarray(names)[j],
            "difference": diff,
            "se": se,
            "z": z,
            "p_value": p,
            "p_adjusted": adjusted,
            "significant": np.nan_to_num(adjusted, nan=1.0) < alpha,
        }
    )
    return PairwiseComparison(list(names), table, alpha, correction)


@dataclass(frozen=True)
class Difference:
    """A difference between two estimates with its interval and p-value."""

    value: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float
    df: float | None


def unpaired_difference(
    mean_a: float,
    se_a: float,
    mean_b: float,
    se_b: float,
    *,
    n_a: int | None = None,
    n_b: int | None = None,
    level: float = 0.95,
) -> Difference:
    """Difference of two independent estimates (online A/B cells): with both sample sizes,
    Welch's t with Welch-Satterthwaite degrees of freedom; else a normal (z) comparison."""
    se = float(np.hypot(se_a, se_b))
    df = None
    if n_a is not None and n_b is not None and se > 0:
        df = se**4 / (se_a**4 / (n_a - 1) + se_b**4 / (n_b - 1))
    value = mean_a - mean_b
    low, high = interval(value, se, level, df)
    p = float(p_value(value / se, df=df)) if se > 0 else float(value == 0) or 0.0
    return Difference(value, se, low, high, p, df)


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its two-sided p-value."""

    statistic: float
    p_value: float
    n: int
    method: str


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Kendall's tau-b between two orderings, with the exact or asymptotic p-value."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.size < 2:
        raise OffevalError("kendall_tau needs two sequences of the same length (at least 2)")
    from scipy import stats

    res = stats.kendalltau(x, y)
    return Correlation(float(res.statistic), float(res.pvalue), x.size, "kendall")


def correlation(x: Sequence[float], y: Sequence[float], method: str = "pearson") -> Correlation:
    """Pearson, Spearman or Kendall correlation with a two-sided p-value."""
    check_choice(method, "method", ("pearson", "spearman", "kendall"), error=OffevalError)
    if method == "kendall":
        return kendall_tau(x, y)
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.size < 3:
        raise OffevalError("correlation needs two sequences of the same length (at least 3)")
    from scipy import stats

    funcs = {"pearson": stats.pearsonr, "spearman": stats.spearmanr}
    res = funcs[method](x, y)
    return Correlation(float(res.statistic), float(res.pvalue), x.size, method)
