"""Time rank probabilities for many systems: 1,000 systems x 100,000 draws.

Usage: python benchmarks/decision_benchmark.py [--systems 1000] [--draws 100000]

Each measurement runs in a fresh subprocess so that peak memory is its own.
Compared in the same run: ``rank_distribution`` (top 3 ranks, batched, exact
expected ranks), a hand-written numpy floor (the same single-precision
draws, one matrix product and one partial sort per batch, nothing else),
and the naive way (a full argsort of every draw, as offeval's earlier core
function did).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from measure import in_subprocess, peak_mb, reset_peak


def problem(k: int, seed: int = 0):
    """Values and a covariance with strong positive correlation (one log evaluated all)."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=(k, 1))
    own = rng.normal(size=(k, k)) / np.sqrt(k)
    factor = np.hstack([common, own]) * 1e-3
    return rng.normal(size=k) * 1e-3, factor @ factor.T


def run(kind: str, k: int, draws: int) -> dict:
    from offeval_decision import rank_distribution
    from offeval_decision.ranks import BATCH_CELLS

    mean, cov = problem(k)
    names = [f"s{i}" for i in range(k)]
    base = reset_peak()
    start = time.perf_counter()
    if kind == "rank_distribution":
        rank_distribution(mean, names=names, covariance=cov, draws=draws, seed=0, depth=3)
    else:
        values, vectors = np.linalg.eigh(cov)
        root = (vectors * np.sqrt(np.clip(values, 0, None))).astype(np.float32)
        rng = np.random.default_rng(0)
        batch = max(1, BATCH_CELLS // k)
        counts = np.zeros((k, 3))
        for lo in range(0, draws, batch):
            noise = rng.standard_normal((min(batch, draws - lo), k), dtype=np.float32)
            sample = mean + noise @ root.T
            if kind == "numpy floor":
                top = np.argpartition(-sample, 2, axis=1)[:, :3]
            else:  # naive: rank every system in every draw
                top = np.argsort(-sample, axis=1)[:, :3]
            np.add.at(counts, (top.ravel(), np.tile(np.arange(3), len(sample))), 1)
    seconds = time.perf_counter() - start
    return {
        "what": kind,
        "systems": k,
        "draws": draws,
        "seconds": seconds,
        "peak_extra_mb": peak_mb() - base,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=1_000)
    parser.add_argument("--draws", type=int, default=100_000)
    args = parser.parse_args()
    rows = [
        in_subprocess(
            sys.executable, "decision_benchmark", f"run({kind!r}, {args.systems}, {args.draws})"
        )
        for kind in ("rank_distribution", "numpy floor", "naive full sort")
    ]
    with pd.option_context("display.width", 160, "display.float_format", "{:,.2f}".format):
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
