"""Linearisations of the slate estimators from their column means.

Plain forms are ratios of means. Self-normalised forms follow obp: the
weights are normalised position by position (Swaminathan and Joachims 2015,
applied to each slot), so

    V = sum_k (n_k / d) * (Y_k / W_k)

with Y_k, W_k the means over trajectories of r w and w at position k, n_k
the mean number of rows at position k, and d the mean number of rows
(reward per impression) or of trajectories used (reward per trajectory).
Self-normalised Cascade-DR adds a second family, its baseline term B_k over
the mean V_k of the weights of the prefix above k: sum_k (n_k / d)(Y_k / W_k
+ B_k / V_k).
"""

from __future__ import annotations

import numpy as np

from offeval.stats import Linearisation


def by_position(
    stats, denominator: str | None, pairs: tuple[tuple[str, str], ...] = (("y", "w"),)
) -> Linearisation:
    """sum_k (n_k / d) sum_p (Y_pk / W_pk); ``denominator`` None means d = sum_k n_k.

    ``pairs`` names each (numerator, weight) family of columns: one for the
    self-normalised IS forms, two for self-normalised Cascade-DR (its
    residual term and its baseline term, each normalised by its own weights).
    """
    positions = sorted(key[1] for key in stats.keys if key[0] == pairs[0][0])
    n = np.array([stats.mean(("n", k)) for k in positions])
    d = n.sum() if denominator is None else stats.mean(denominator)
    ratios, cols, grads = np.zeros(len(positions)), [], []
    for top, weight in pairs:
        y = np.array([stats.mean((top, k)) for k in positions])
        w = np.array([stats.mean((weight, k)) for k in positions])
        covered = w > 0
        ratio = np.where(covered, y / np.where(covered, w, 1.0), 0.0)
        grad_y = np.where(covered, n / (d * np.where(covered, w, 1.0)), 0.0)
        ratios += ratio
        cols += [stats.index((part, k)) for part in (top, weight) for k in positions]
        grads += [grad_y, -grad_y * ratio]
    value = float((n * ratios).sum() / d) if d > 0 else float("nan")
    cols += [stats.index(("n", k)) for k in positions]
    grad_n = ratios / d
    if denominator is None:  # d = sum_k n_k
        grad_n = grad_n - value / d
    else:
        cols.append(stats.index(denominator))
        grad_n = np.r_[grad_n, -value / d]
    return Linearisation(value, np.array(cols), np.concatenate([*grads, grad_n]))


def scaled_ratio(stats, numerator: str, weight: str, units: str, rows: str) -> Linearisation:
    """(Y / W) * (U / R): a self-normalised per-trajectory mean, put per row."""
    y, w, u, r = (stats.mean(k) for k in (numerator, weight, units, rows))
    cols = np.array([stats.index(k) for k in (numerator, weight, units, rows)])
    if w == 0 or r == 0:
        return Linearisation(float("nan"), cols, np.full(4, np.nan))
    value = y / w * u / r
    grad = np.array([u / (w * r), -value / w, y / (w * r), -value / r])
    return Linearisation(value, cols, grad)
