"""Comparing recommenders on the same users: paired tests with corrections."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from offeval import ConfigurationError
from offeval_ir.metrics import MetricResult

#: Resamples held in memory at once, as resamples x users.
BLOCK_CELLS = 20_000_000


def _randomization_p(diff: np.ndarray, resamples: int, rng: np.random.Generator) -> float:
    """Two-sided Fisher randomisation (sign-flip) test of a zero mean difference."""
    observed = abs(diff.mean())
    extreme = 0
    step = max(1, BLOCK_CELLS // max(diff.size, 1))
    for start in range(0, resamples, step):
        m = min(step, resamples - start)
        signs = rng.integers(0, 2, (m, diff.size), dtype=np.int8) * 2 - 1
        extreme += int((np.abs(signs @ diff) / diff.size >= observed - 1e-12).sum())
    return (extreme + 1) / (resamples + 1)


def _bootstrap_interval(
    diff: np.ndarray, resamples: int, level: float, rng: np.random.Generator
) -> tuple[float, float]:
    """Percentile interval of the mean difference, resampling users."""
    means = np.empty(resamples)
    step = max(1, BLOCK_CELLS // max(diff.size, 1))
    for start in range(0, resamples, step):
        m = min(step, resamples - start)
        idx = rng.integers(0, diff.size, (m, diff.size))
        means[start : start + m] = diff[idx].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def compare_systems(
    results: Mapping[str, MetricResult],
    metrics: Sequence[str] | None = None,
    *,
    correction: str | None = "holm",
    resamples: int = 10_000,
    level: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Paired comparison of every pair of systems on every metric column.

    For each (pair, metric): the mean difference over users that have a value
    under both systems, a paired t-test, a Fisher randomisation (sign-flip)
    test and a bootstrap percentile interval of the difference. P-values are
    corrected across all pairs and metrics together with ``correction`` (a
    statsmodels ``multipletests`` method such as ``holm`` or ``fdr_bh``; None
    for none).
    """
    if len(results) < 2:
        raise ConfigurationError("compare at least two systems")
    names = list(results)
    columns = list(metrics or results[names[0]].per_user.columns)
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in combinations(names, 2):
        for col in columns:
            frame = pd.concat(
                [results[a].per_user[col], results[b].per_user[col]],
                axis=1,
                keys=[a, b],
                join="inner",
            ).dropna()
            diff = (frame[a] - frame[b]).to_numpy()
            if diff.size < 2:
                raise ConfigurationError(f"{a} vs {b} on {col}: fewer than two common users")
            t = stats.ttest_rel(frame[a], frame[b]) if diff.std() > 0 else None
            low, high = _bootstrap_interval(diff, resamples, level, rng)
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "metric": col,
                    "users": diff.size,
                    "mean_a": frame[a].mean(),
                    "mean_b": frame[b].mean(),
                    "difference": diff.mean(),
                    "ci_low": low,
                    "ci_high": high,
                    "p_t": float(t.pvalue) if t is not None else float(diff.mean() == 0) or 0.0,
                    "p_randomization": _randomization_p(diff, resamples, rng),
                }
            )
    table = pd.DataFrame(rows)
    for test in ("p_t", "p_randomization"):
        p = table[test].to_numpy()
        adjusted = multipletests(p, alpha=alpha, method=correction)[1] if correction else p
        table[f"{test}_adjusted"] = adjusted
    table["significant"] = table["p_randomization_adjusted"] < alpha
    table.attrs["correction"] = correction
    return table
