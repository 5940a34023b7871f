"""Brute-force references computed straight from a log with numpy."""

from __future__ import annotations

import numpy as np

from offeval import InteractionLog


def unit_sums(log: InteractionLog, values: np.ndarray) -> np.ndarray:
    """Sum row values per trajectory with a plain groupby (independent of the engine)."""
    codes = log.frame["trajectory"].factorize()[0]
    return np.bincount(codes, weights=values)


def delta_se(func, unit_columns: np.ndarray, eps: float = 1e-7) -> tuple[float, float]:
    """Value and delta-method se of func(column means), with a numerical gradient."""
    means = unit_columns.mean(axis=0)
    value = func(means)
    grad = np.empty_like(means)
    for j in range(means.size):
        step = np.zeros_like(means)
        step[j] = eps * max(1.0, abs(means[j]))
        grad[j] = (func(means + step) - func(means - step)) / (2 * step[j])
    cov = np.cov(unit_columns, rowvar=False)
    return value, float(np.sqrt(grad @ cov @ grad / len(unit_columns)))
