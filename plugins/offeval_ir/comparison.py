"""What ranx's comparison report adds to paired tests: win/tie/loss counts and Tukey's HSD.

Both are computed from the runs' per-query values on the queries every run
averages (a runs x queries matrix), for all pairs at once, and join the
table of :meth:`offeval_ir.RunEvaluation.compare` (and
:func:`offeval_ir.compare_systems`) as the columns ``wins``, ``ties``,
``losses`` and ``p_tukey``; ``test="tukey"`` makes Tukey's HSD decide
``significant``.

- **Win/tie/loss** of run a against run b: the queries where a's value is
  above b's, equal to it, below it, as ranx's ``compare`` counts them (values
  within :data:`TIE_TOLERANCE` of each other are a tie: the same ranking
  summed in another order can differ in the last bit).
- **Tukey's honestly significant difference** test, as ranx runs it
  (``scipy.stats.tukey_hsd`` on each run's per-query values; statsmodels'
  ``pairwise_tukeyhsd`` gives the same p-values): the runs are k groups of n
  values, the error mean square is pooled over them with k(n - 1) degrees of
  freedom, and |mean_a - mean_b| / sqrt(MSE / n) is referred to the
  studentized range distribution of k means. Its p-values already hold the
  family-wise error over the pairs of one measure, so no further correction
  applies. It treats the queries of different runs as independent samples
  (ignoring the pairing), so it is more conservative than the paired tests.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import studentized_range

#: Per-query values this close are a tie in win/tie/loss counts.
TIE_TOLERANCE = 1e-12


def win_tie_loss(
    values: np.ndarray, a: np.ndarray, b: np.ndarray, tolerance: float = TIE_TOLERANCE
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Wins, ties and losses of run ``a[i]`` against run ``b[i]`` (row numbers into the
    runs x queries ``values``), one count per pair."""
    difference = values[np.asarray(a)] - values[np.asarray(b)]  # pairs x queries
    ties = np.abs(difference) <= tolerance
    wins = (difference > 0) & ~ties
    losses = (difference < 0) & ~ties
    return wins.sum(axis=1), ties.sum(axis=1), losses.sum(axis=1)


def tukey_hsd(values: np.ndarray) -> np.ndarray:
    """Tukey's HSD p-values of every pair of runs (rows of the runs x queries ``values``,
    every run over the same n queries), as a runs x runs matrix with ones on the diagonal.

    NaN when there are fewer than two runs or queries; when the pooled error is 0, a pair
    whose means differ gets 0 and a pair whose means are equal 1.
    """
    values = np.asarray(values, dtype=float)
    k, n = values.shape
    if k < 2 or n < 2:
        return np.full((k, k), np.nan)
    means = values.mean(axis=1)
    df = k * (n - 1)
    mse = ((values - means[:, None]) ** 2).sum() / df
    gap = np.abs(means[:, None] - means[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        q = gap / np.sqrt(mse / n)
    p = studentized_range.sf(np.where(np.isfinite(q), q, 0.0), k, df)
    p = np.where(np.isinf(q), 0.0, p)
    p = np.where(np.isnan(q) | (gap == 0), 1.0, p)
    return np.clip(p, 0.0, 1.0)


def pair_statistics(values: np.ndarray, a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    """Per pair (a[i], b[i]): ``wins``, ``ties``, ``losses`` of a against b and Tukey's
    HSD ``p_tukey`` (over all the runs of ``values``)."""
    wins, ties, losses = win_tie_loss(values, a, b)
    p = tukey_hsd(values)[np.asarray(a), np.asarray(b)]
    return pd.DataFrame({"wins": wins, "ties": ties, "losses": losses, "p_tukey": p})
