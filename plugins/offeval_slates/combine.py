"""Linearisations of the slate estimators from their column means.

Plain forms are ratios of means. Self-normalised forms follow obp: the
weights are normalised position by position (Swaminathan and Joachims 2015,
applied to each slot), so

    V = sum_k (n_k / d) * (Y_k / W_k)

with Y_k, W_k the means over trajectories of r w and w at position k, n_k
the mean number of rows at position k, and d the mean number of rows
(reward per impression) or of trajectories used (reward per trajectory).
"""

from __future__ import annotations

import numpy as np

from offeval.plugin import Linearisation


def by_position(stats, denominator: str | None) -> Linearisation:
    """sum_k (n_k / d)(Y_k / W_k); ``denominator`` None means d = sum_k n_k (per impression)."""
    positions = sorted(key[1] for key in stats.keys if key[0] == "y")
    y = np.array([stats.mean(("y", k)) for k in positions])
    w = np.array([stats.mean(("w", k)) for k in positions])
    n = np.array([stats.mean(("n", k)) for k in positions])
    d = n.sum() if denominator is None else stats.mean(denominator)
    covered = w > 0
    ratio = np.where(covered, y / np.where(covered, w, 1.0), 0.0)
    value = float((n * ratio).sum() / d) if d > 0 else float("nan")
    grad_y = np.where(covered, n / (d * np.where(covered, w, 1.0)), 0.0)
    grad_w = -grad_y * ratio
    grad_n = ratio / d
    cols = [stats.index((part, k)) for part in ("y", "w", "n") for k in positions]
    grad = np.r_[grad_y, grad_w, grad_n]
    if denominator is None:  # d = sum_k n_k
        grad[2 * len(positions) :] -= value / d
    else:
        cols.append(stats.index(denominator))
        grad = np.r_[grad, -value / d]
    return Linearisation(value, np.array(cols), grad)


def scaled_ratio(stats, numerator: str, weight: str, units: str, rows: str) -> Linearisation:
    """(Y / W) * (U / R): a self-normalised per-trajectory mean, put per row."""
    y, w, u, r = (stats.mean(k) for k in (numerator, weight, units, rows))
    cols = np.array([stats.index(k) for k in (numerator, weight, units, rows)])
    if w == 0 or r == 0:
        return Linearisation(float("nan"), cols, np.full(4, np.nan))
    value = y / w * u / r
    grad = np.array([u / (w * r), -value / w, y / (w * r), -value / r])
    return Linearisation(value, cols, grad)
