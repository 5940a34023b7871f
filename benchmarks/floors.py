"""Hand-written numpy floors: the least work that produces each benchmark's output.

Each floor reads the same synthetic data as the offeval row it sits beside
and computes the same numbers (or the part of them offeval cannot do
without), with no validation, no bookkeeping and full knowledge of the data's
layout. The ratio offeval / floor is what our generality costs.
"""

from __future__ import annotations

import time

import numpy as np
from measure import peak_mb, reset_peak
from scipy.linalg.blas import dsyrk

N_POLICIES = 12
CAP = 100.0


def _ncis_columns(rows: int):
    from ncis_benchmark import synthetic

    frame, _, _ = synthetic(rows)
    reward = frame["reward"].to_numpy()
    mu = frame["propensity"].to_numpy()
    pis = [frame[f"pi_{j:02d}"].to_numpy() for j in range(N_POLICIES)]
    return reward, mu, pis


def run_moments_floor(rows: int, policies: int = N_POLICIES) -> dict:
    """Per policy, the sums IS, CIS and NCIS need for values and standard errors.

    w = pi / mu, y = w r, capped w_c = min(w, cap), y_c = w_c r: sums of y, y^2,
    y_c, y_c^2, w_c, w_c^2 and y_c w_c (no cross-policy covariances).
    """
    reward, mu, pis = _ncis_columns(rows)
    base = reset_peak()
    start = time.perf_counter()
    out = []
    for pi in pis[:policies]:
        w = pi / mu
        y = w * reward
        wc = np.minimum(w, CAP)
        yc = wc * reward
        out.append((y.sum(), y @ y, yc.sum(), yc @ yc, wc.sum(), wc @ wc, yc @ wc))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_extra_mb": peak_mb() - base}


def run_dsyrk_floor(rows: int, chunk_rows: int = 250_000) -> dict:
    """The same output as offeval's pass: sums and full cross-products of the 37 columns.

    Per chunk, the columns go into one reused Fortran block, are centred and
    folded with one ``dsyrk``; chunks merge by the pairwise update.
    """
    reward, mu, pis = _ncis_columns(rows)
    k = 3 * N_POLICIES + 1
    base = reset_peak()
    start = time.perf_counter()
    block = np.empty((chunk_rows, k), order="F")
    n, mean, comoment = 0, np.zeros(k), np.zeros((k, k))
    for lo in range(0, rows, chunk_rows):
        hi = min(lo + chunk_rows, rows)
        b = block[: hi - lo]
        r, m = reward[lo:hi], mu[lo:hi]
        for j, pi in enumerate(pis):
            w = pi[lo:hi] / m
            np.multiply(w, r, out=b[:, 3 * j])
            np.minimum(w, CAP, out=b[:, 3 * j + 2])
            np.multiply(b[:, 3 * j + 2], r, out=b[:, 3 * j + 1])
        b[:, -1] = 1.0
        chunk_mean = b.mean(axis=0)
        b -= chunk_mean
        upper = dsyrk(1.0, b, trans=1)
        chunk_co = np.triu(upper) + np.triu(upper, 1).T
        total = n + (hi - lo)
        delta = chunk_mean - mean
        comoment += chunk_co + np.outer(delta, delta) * (n * (hi - lo) / total)
        mean += delta * ((hi - lo) / total)
        n = total
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_extra_mb": peak_mb() - base}


def run_read_floor(trajectories: int, ranks: int) -> dict:
    """Reading every column of the DCG benchmark's frame once (a sum per column)."""
    from dcg_benchmark import synthetic

    frame = synthetic(trajectories, ranks)
    base = reset_peak()
    start = time.perf_counter()
    for column in frame.columns:
        frame[column].to_numpy().sum()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_extra_mb": peak_mb() - base}


def run_dcg_floor(trajectories: int, ranks: int) -> dict:
    """Unbiased DCG, clipped DCG and nDCG of 12 re-rankings, values and standard errors.

    Knows every trajectory has ``ranks`` rows in position order: per policy,
    one row-wise argsort of the scores gives the target ranks; exposures
    e(target rank) / e(logged rank) weight the rewards; per-trajectory sums
    give the unit values, their mean and variance the estimate and its error.
    """
    from dcg_benchmark import synthetic

    frame = synthetic(trajectories, ranks)
    shape = (trajectories, ranks)
    reward = frame["reward"].to_numpy().reshape(shape)
    scores = [frame[f"score_{j:02d}"].to_numpy().reshape(shape) for j in range(N_POLICIES)]
    del frame
    base = reset_peak()
    start = time.perf_counter()
    e = 0.8 ** np.arange(ranks)
    inverse = 1.0 / e  # logged position j has exposure e[j]
    labels = {"dcg": reward * inverse, "clipped": reward * np.minimum(10.0, inverse)}
    ideal = (-np.sort(-labels["dcg"], axis=1)) @ e
    positive = ideal > 0
    offsets = (np.arange(trajectories) * ranks)[:, None]
    target = np.empty(trajectories * ranks)
    for s in scores:
        order = np.argsort(-s, axis=1, kind="stable") + offsets
        target[order.reshape(-1)] = np.tile(e, trajectories)
        exposure = target.reshape(shape)
        for name, label in labels.items():
            per_unit = (label * exposure).sum(axis=1)
            _ = per_unit.mean(), per_unit.std(ddof=1)
            if name == "dcg":
                ndcg = per_unit[positive] / ideal[positive]
                _ = ndcg.mean(), ndcg.std(ddof=1)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_extra_mb": peak_mb() - base}
