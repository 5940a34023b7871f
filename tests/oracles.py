"""Brute-force references computed straight from a log with numpy."""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval import BaseEstimator, ColumnPolicy, Contribution, InteractionLog
from offeval.stats import Linearisation


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


def synthetic_log(n: int = 20_000, seed: int = 0) -> tuple[InteractionLog, ColumnPolicy, float]:
    """A two-position log over four items with a known target value.

    Each trajectory fills positions 1 and 2, each slot drawing an item from
    its own logging distribution; clicks are Bernoulli with a slot-specific
    rate. Returns the log, the target policy (column ``target``, also in the
    candidate table) and the target's true reward per impression. Column
    ``target_score`` lets a ranking policy re-rank each trajectory's items
    (estimators tagged ``policy="ranking"`` are checked with it).
    """
    rng = np.random.default_rng(seed)
    mu = np.array([[0.4, 0.3, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]])
    pi = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])
    q = np.array([[0.10, 0.20, 0.30, 0.50], [0.05, 0.10, 0.20, 0.30]])
    truth = float((pi * q).sum(axis=1).mean())
    slots = np.repeat([[0, 1]], n, axis=0).ravel()
    u = rng.random(slots.size)[:, None]
    items = (u > np.cumsum(mu, axis=1)[slots]).sum(axis=1)
    frame = pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(n), 2),
            "item": items,
            "position": slots + 1,
            "reward": (rng.random(slots.size) < q[slots, items]).astype(float),
            "propensity": mu[slots, items],
            "target": pi[slots, items],
            "target_score": pi[slots, items] * q[slots, items],
            "group": np.repeat(rng.integers(0, 2, n), 2),
        }
    )
    cand_slot = np.repeat(np.arange(slots.size), 4)
    cand_item = np.tile(np.arange(4), slots.size)
    candidates = pd.DataFrame(
        {
            "trajectory": np.repeat(frame["trajectory"].to_numpy(), 4),
            "position": np.repeat(frame["position"].to_numpy(), 4),
            "item": cand_item,
            "propensity": mu[slots[cand_slot], cand_item],
            "target": pi[slots[cand_slot], cand_item],
        }
    )
    return InteractionLog.from_frame(frame, candidates=candidates), ColumnPolicy("target"), truth


def rank_probabilities_by_enumeration(logits, log_rest=-np.inf) -> np.ndarray:
    """P(P_r = p | D) by enumerating all n! orderings, in log space.

    Plackett-Luce over the displayed products plus a rest mass exp(log_rest):
    each draw's normaliser is the rest mass plus the weights not yet placed.
    Returns (n, n) indexed [rank - 1, product].
    """
    from itertools import permutations

    from scipy.special import logsumexp

    logits = np.asarray(logits, dtype=float)
    n = logits.size
    orders = np.array(list(permutations(range(n))))
    log_p = np.zeros(len(orders))
    for step in range(n):
        remaining = logits[orders[:, step:]]
        rest = np.full((len(orders), 1), log_rest)
        log_p += logits[orders[:, step]] - logsumexp(np.hstack([remaining, rest]), axis=1)
    weight = np.exp(log_p - logsumexp(log_p))
    out = np.zeros((n, n))
    for rank in range(n):
        np.add.at(out[rank], orders[:, rank], weight)
    return out


def candidate_log(rng: np.random.Generator, per_slot: int | None, shuffle: bool):
    """A log of 1-3 positions per trajectory; each slot's candidates a set of items 0..5
    holding the logged one (``per_slot`` of them, or 1 to 6 at random), with predictions q."""
    slots = [(t, k) for t in range(int(rng.integers(1, 6))) for k in range(1, rng.integers(2, 5))]
    rows, cands = [], []
    for t, k in slots:
        size = per_slot or int(rng.integers(1, 7))
        items = rng.permutation(6)[:size]
        mu = rng.uniform(0.1, 1)  # the logged item's propensity, in the log and its candidates
        rows.append((t * 10, k, items[0], rng.random(), mu))
        cands += [
            (t * 10, k, i, mu if i == items[0] else rng.uniform(0.1, 1), rng.normal())
            for i in items
        ]
    frame = pd.DataFrame(rows, columns=["trajectory", "position", "item", "reward", "propensity"])
    columns = ["trajectory", "position", "item", "propensity", "q"]
    cands = pd.DataFrame(cands, columns=columns)
    if shuffle:
        cands = cands.iloc[rng.permutation(len(cands))]
    return InteractionLog.from_frame(frame, candidates=cands), cands


def jitter(values, seed):
    """Each value moved by a few ulps-worth of relative noise (far below RTOL)."""
    rng = np.random.default_rng(seed)
    values = np.asarray(values, dtype=float)
    return values * (1 + rng.uniform(-1e-13, 1e-13, values.size))


class Constant(BaseEstimator):
    """An estimator the kit must fail: 0.5 whatever the data, with a made-up standard error."""

    name = "constant"
    estimand = "reward_per_impression"
    guarantee = "unbiased"

    def contribute(self, view):
        """One column of ones: the data is not read."""
        return Contribution({"rows": view.log.ones})

    def combine(self, stats):
        """0.5, standard error 0.01."""
        return Linearisation(0.5, np.array([stats.index("rows")]), np.array([0.01]))
