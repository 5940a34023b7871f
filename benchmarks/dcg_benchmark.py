"""Time unbiased DCG, clipped DCG and nDCG for 12 deterministic targets.

Usage: python benchmarks/dcg_benchmark.py [--trajectories 1000000] [--ranks 10]

The log has ``trajectories`` sessions of ``ranks`` rows each, logged by a
deterministic ranker (so the logging exposure is e(logged rank), the seed's
Eq. 11); each of the 12 targets re-ranks every session's items by its own
score column (:class:`offeval.RerankPolicy`). One pass computes all three
estimators for all 12 policies, with intervals. Each measurement runs in a
fresh subprocess so peak memory is its own: reported is the peak RSS during
the pass minus the RSS once the log is built.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from measure import in_subprocess, peak_mb, reset_peak, workers_peak_mb

N_POLICIES = 12


def synthetic(trajectories: int, ranks: int, seed: int = 0) -> pd.DataFrame:
    """Sessions of ``ranks`` items with clicks from a position-based user, 12 score columns."""
    rng = np.random.default_rng(seed)
    rows = trajectories * ranks
    position = np.tile(np.arange(1, ranks + 1), trajectories)
    quality = rng.beta(1, 6, rows)
    examined = rng.random(rows) < 0.8 ** (position - 1)
    frame = pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(trajectories), ranks),
            "item": rng.integers(0, 100_000, rows),
            "position": position,
            "reward": (examined & (rng.random(rows) < quality)).astype(float),
        }
    )
    for j in range(N_POLICIES):
        frame[f"score_{j:02d}"] = quality * (0.2 + 0.05 * j) + rng.normal(size=rows)
    return frame


def run_offeval(trajectories: int, ranks: int, workers: int = 1) -> dict:
    """Build the log, then time one evaluation pass (``workers`` processes); seconds, memory."""
    from offeval import InteractionLog, evaluate
    from offeval_ranking import DCG, NDCG, RerankPolicy

    frame = synthetic(trajectories, ranks)
    start = time.perf_counter()
    log = InteractionLog.from_frame(frame)
    build = time.perf_counter() - start
    del frame
    policies = [RerankPolicy(f"score_{j:02d}", name=f"p{j:02d}") for j in range(N_POLICIES)]
    model = "exponential(gamma=0.8)"
    estimators = [
        DCG(examination=model, logging="rank"),
        DCG(examination=model, logging="rank", cap=10.0),
        NDCG(examination=model, logging="rank"),
    ]
    base = reset_peak()
    start = time.perf_counter()
    result = evaluate(log, policies, estimators, progress=False, workers=workers)
    seconds = time.perf_counter() - start
    _ = result.to_frame()
    return {
        "rows": log.n_rows,
        "build_seconds": build,
        "seconds": seconds,
        "rows_per_second": log.n_rows / seconds,
        "extra_memory_mb": peak_mb() - base,
        "worker_peak_mb": workers_peak_mb(),
    }


def run_build(trajectories: int, ranks: int, shuffled: bool) -> dict:
    """Build the log from the frame, rows grouped by trajectory or shuffled."""
    from offeval import InteractionLog

    frame = synthetic(trajectories, ranks)
    if shuffled:
        frame = frame.sample(frac=1.0, random_state=0, ignore_index=True)
    base = reset_peak()
    start = time.perf_counter()
    InteractionLog.from_frame(frame)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_extra_mb": peak_mb() - base}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=1_000_000)
    parser.add_argument("--ranks", type=int, default=10)
    args = parser.parse_args()
    out = in_subprocess(
        sys.executable, "dcg_benchmark", f"run_offeval({args.trajectories}, {args.ranks})"
    )
    print(
        f"offeval dcg: {out['rows']:,} rows, 12 policies x (DCG, clipped DCG, nDCG): "
        f"{out['seconds']:.2f} s ({out['rows_per_second'] / 1e6:.2f}M rows/s), "
        f"extra memory {out['extra_memory_mb']:.0f} MB (log built in {out['build_seconds']:.1f} s)"
    )


if __name__ == "__main__":
    main()
