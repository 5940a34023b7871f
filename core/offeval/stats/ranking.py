"""Probabilities that each system ranks 1st, 2nd, ... under estimation noise."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def rank_probabilities(
    names: Sequence[str],
    mean: np.ndarray,
    covariance: np.ndarray,
    *,
    draws: int = 100_000,
    seed: int = 0,
    batch: int = 20_000,
) -> pd.DataFrame:
    """Simulate r ~ N(mean, covariance) and tabulate the rank of each system.

    ``covariance`` is the covariance of the estimates (Sigma / n). Singular
    covariances (a baseline fixed at 1) are fine: draws use an eigen
    factorisation. Rank 1 is the highest value. Returns one row per system:
    the probability of each rank and the expected rank.
    """
    mean = np.asarray(mean, float)
    k = mean.size
    vals, vecs = np.linalg.eigh((covariance + covariance.T) / 2)
    root = vecs * np.sqrt(np.clip(vals, 0, None))
    rng = np.random.default_rng(seed)
    counts = np.zeros((k, k))
    done = 0
    while done < draws:
        m = min(batch, draws - done)
        sample = mean + rng.standard_normal((m, k)) @ root.T
        ranks = np.argsort(np.argsort(-sample, axis=1), axis=1)
        np.add.at(counts, (np.tile(np.arange(k), m), ranks.ravel()), 1)
        done += m
    probs = counts / draws
    frame = pd.DataFrame(probs, index=list(names), columns=[f"p_rank_{r + 1}" for r in range(k)])
    frame["expected_rank"] = probs @ np.arange(1, k + 1)
    return frame
