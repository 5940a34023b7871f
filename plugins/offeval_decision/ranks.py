"""How likely each system is to rank 1st, 2nd, 3rd, ... when the offline evaluation is re-drawn.

Gruson et al. (WSDM 2019, section 3.3): one log evaluates every candidate, so
the estimates are strongly correlated. Draw r ~ N(mu, Sigma) many times from
the evaluation's values and their covariance (already divided by n), rank
each draw, and count. Singular covariances work (a baseline fixed at 1 has
zero variance): draws use an eigen factorisation. Only the top ranks asked
for are sorted in each draw (a partial sort), so 1,000 systems x 100,000
draws take seconds, in batches whose memory does not grow with the number
of draws. Expected ranks are exact: E[rank_i] = 1 + sum_j P(X_j > X_i), each
term a normal probability of a paired difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from offeval import ConfigurationError, Evaluation, OffevalError
from offeval.summary import EstimatorSummary

#: Draw-by-system cells held at once.
BATCH_CELLS = 4_000_000


@dataclass(frozen=True)
class RankDistribution:
    """P(rank r) for the top ``depth`` ranks of every system, with expected ranks.

    ``probabilities`` is (systems, depth): column r - 1 is P(ranked r-th);
    ``expected_rank`` is exact (not simulated). Every probability's Monte
    Carlo standard error is sqrt(p (1 - p) / draws).
    """

    names: list[str]
    probabilities: np.ndarray
    expected_rank: np.ndarray
    draws: int
    seed: int

    @property
    def depth(self) -> int:
        """How many top ranks were tabulated."""
        return self.probabilities.shape[1]

    def p_rank(self, rank: int) -> pd.Series:
        """P(ranked ``rank``-th) of every system."""
        if not 1 <= rank <= self.depth:
            raise ConfigurationError(
                f"rank must lie in 1..{self.depth} (the depth drawn), got {rank}"
            )
        return pd.Series(self.probabilities[:, rank - 1], index=self.names, name=f"p_rank_{rank}")

    @property
    def best(self) -> pd.Series:
        """P(ranked first) of every system."""
        return self.p_rank(1)

    def top(self, m: int) -> pd.Series:
        """P(among the top m) of every system."""
        if not 1 <= m <= self.depth:
            raise ConfigurationError(f"m must lie in 1..{self.depth} (the depth drawn), got {m}")
        return pd.Series(self.probabilities[:, :m].sum(axis=1), index=self.names, name=f"p_top_{m}")

    def se(self, probability) -> np.ndarray:
        """Monte Carlo standard error of probabilities estimated from these draws."""
        p = np.asarray(probability, dtype=float)
        return np.sqrt(p * (1 - p) / self.draws)

    def to_frame(self) -> pd.DataFrame:
        """One row per system: P(rank r) and its standard error for each rank, expected rank."""
        frame = pd.DataFrame(index=pd.Index(self.names, name="policy"))
        for r in range(self.depth):
            frame[f"p_rank_{r + 1}"] = self.probabilities[:, r]
            frame[f"se_rank_{r + 1}"] = self.se(self.probabilities[:, r])
        frame["expected_rank"] = self.expected_rank
        return frame


def _inputs(source, estimator, baseline, names, covariance):
    """(names, values oriented so that higher is better, covariance) from any accepted source."""
    if isinstance(source, Evaluation):
        source = source.summary(estimator, baseline)
    if isinstance(source, EstimatorSummary):
        sign = 1.0 if source.higher_is_better else -1.0
        return list(source.policies), sign * source.values, source.covariance
    if names is None or covariance is None:
        raise OffevalError(
            "give an Evaluation, an EstimatorSummary, or values with names= and covariance="
        )
    return list(names), np.asarray(source, dtype=float), np.asarray(covariance, dtype=float)


def rank_distribution(
    source,
    estimator: str | None = None,
    *,
    baseline: str | None = None,
    names: Sequence[str] | None = None,
    covariance=None,
    draws: int = 100_000,
    seed: int = 0,
    depth: int | None = None,
) -> RankDistribution:
    """Simulate the offline evaluation ``draws`` times and tabulate each system's rank.

    ``source`` is an :class:`offeval.Evaluation` (with ``estimator`` and an
    optional ``baseline``), an :class:`offeval.summary.EstimatorSummary` (for
    instance loaded from ``summaries.json``), or a vector of values with
    ``names`` and their ``covariance``. Lower-is-better metrics are ranked
    by their negation. ``depth`` top ranks are tabulated (all of them up to
    20 systems, else 3). Reproducible for a given ``seed``, whatever the batching.
    """
    names, mean, cov = _inputs(source, estimator, baseline, names, covariance)
    k = len(names)
    if mean.shape != (k,) or cov.shape != (k, k):
        raise OffevalError(f"{k} names need {k} values and a {k}x{k} covariance")
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(cov))):
        raise OffevalError("values and covariance must be finite")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ConfigurationError(f"draws must be a whole number >= 1, got {draws!r}")
    depth = (k if k <= 20 else 3) if depth is None else depth
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 1 <= depth <= k:
        raise ConfigurationError(f"depth must be a whole number in 1..{k}, got {depth!r}")
    values, vectors = np.linalg.eigh((cov + cov.T) / 2)
    if values.min() < -1e-9 * max(values.max(), 1e-300):
        raise OffevalError("the covariance is not positive semi-definite")
    # the noise in single precision (its relative error, 1e-7, is far below any Monte Carlo
    # error), added to the values in double: twice as fast for many systems
    root = (vectors * np.sqrt(np.clip(values, 0, None))).astype(np.float32)
    rng = np.random.default_rng(seed)
    counts = np.zeros(k * depth, dtype=np.int64)
    batch = max(1, BATCH_CELLS // k)
    done = 0
    while done < draws:
        m = min(batch, draws - done)
        sample = mean + rng.standard_normal((m, k), dtype=np.float32) @ root.T
        counts += np.bincount(
            _top(sample, depth).ravel() * depth + np.tile(np.arange(depth), m), minlength=k * depth
        )
        done += m
    probabilities = counts.reshape(k, depth) / draws
    return RankDistribution(names, probabilities, expected_ranks(mean, cov), int(draws), seed)


def _top(sample: np.ndarray, depth: int) -> np.ndarray:
    """(draws, depth) indices of the highest values of each draw, best first."""
    k = sample.shape[1]
    if depth < k:
        part = np.argpartition(-sample, depth - 1, axis=1)[:, :depth]
    else:
        part = np.broadcast_to(np.arange(k), sample.shape)
    order = np.argsort(-np.take_along_axis(sample, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def expected_ranks(mean: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """Exact E[rank] = 1 + sum over others of P(the other is higher); ties count a half."""
    diff = mean[None, :] - mean[:, None]  # [i, j]: mu_j - mu_i
    var = np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance
    sd = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        higher = np.where(
            sd > 0, norm.cdf(diff / sd), np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))
        )
    np.fill_diagonal(higher, 0.0)
    return 1.0 + higher.sum(axis=1)
