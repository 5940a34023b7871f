"""Counter-based random numbers: one stream per banner, from the random seed and the banner's key.

A banner's numbers depend only on the random seed, its key and the counter of the
number (SplitMix64: state = mix(key, seed), the i-th number mix(state +
(i + 1) * golden)), so they are the same whatever the chunking of the log or
the other banners computed with it, and every banner's are computed at once.
"""

from __future__ import annotations

import numpy as np

from offeval.plugin import check_whole

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, element-wise on uint64 (modulo 2^64)."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def states(keys: np.ndarray, seed: int) -> np.ndarray:
    """Each banner's stream state from its uint64 key and the random seed (a whole number >= 0)."""
    seed = check_whole(seed, "seed", low=0, high=2**64 - 1, rule="a whole number in [0, 2^64)")
    with np.errstate(over="ignore"):
        return mix(np.asarray(keys, dtype=np.uint64) ^ mix(np.uint64(seed) + GOLDEN))


def uniforms(state: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """Numbers ``counters`` of each stream, uniform in (0, 1), shaped state + counters."""
    counters = np.asarray(counters, dtype=np.uint64)
    state = np.asarray(state, dtype=np.uint64).reshape(np.shape(state) + (1,) * counters.ndim)
    with np.errstate(over="ignore"):
        x = mix(state + (counters + np.uint64(1)) * GOLDEN)
    return ((x >> np.uint64(11)).astype(float) + 0.5) / 2.0**53
