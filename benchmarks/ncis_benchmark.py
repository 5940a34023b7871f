"""Time 12 policies x {IS, CIS, NCIS} with intervals and paired significance grids.

Usage: python benchmarks/ncis_benchmark.py [--rows 10000000] [--chunk-rows 250000]

Each measurement runs in a fresh subprocess so that peak memory is its own.
Reported: seconds and rows per second of the estimator pass (one pass, all
policies and estimators, intervals and the 66-pair grid of every estimator),
and peak memory beyond the data (peak RSS during the pass minus RSS once the
log is built). With obp installed, obp's IPW and SNIPW with their bootstrap
intervals are timed on the same data (obp needs dense action distributions,
so it runs on a smaller log by default).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from measure import in_subprocess, peak_mb, reset_peak, workers_peak_mb

N_POLICIES = 12
N_ACTIONS = 10


def synthetic(rows: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """One impression per session: action, reward, logging and 12 target distributions."""
    rng = np.random.default_rng(seed)
    logging = rng.dirichlet(np.ones(N_ACTIONS) * 2)
    targets = rng.dirichlet(np.ones(N_ACTIONS) * 2, size=N_POLICIES)
    quality = rng.uniform(0.02, 0.2, N_ACTIONS)
    action = rng.choice(N_ACTIONS, size=rows, p=logging)
    frame = pd.DataFrame(
        {
            "trajectory": np.arange(rows),
            "item": action,
            "reward": (rng.random(rows) < quality[action]).astype(float),
            "propensity": logging[action],
        }
    )
    for j in range(N_POLICIES):
        frame[f"pi_{j:02d}"] = targets[j][action]
    return frame, logging, targets


def offeval_log(rows: int):
    """The synthetic log as an InteractionLog, its 12 policies, and the build time."""
    from offeval import ColumnPolicy, InteractionLog

    frame, _, _ = synthetic(rows)
    start = time.perf_counter()
    log = InteractionLog.from_frame(frame, {"item": "item"})
    policies = [ColumnPolicy(f"pi_{j:02d}") for j in range(N_POLICIES)]
    return log, policies, time.perf_counter() - start


def run_offeval(rows: int, chunk_rows: int, workers: int = 1) -> dict:
    """One pass with intervals and grids; ``workers`` forked processes share it."""
    from offeval import evaluate
    from offeval_importance import CIS, IS, NCIS

    log, policies, build = offeval_log(rows)
    base = reset_peak()
    start = time.perf_counter()
    evaluation = evaluate(
        log, policies, [IS(), CIS(cap=100), NCIS(cap=100)], chunk_rows=chunk_rows, workers=workers
    )
    grids = [evaluation.grid(label, correction="holm") for label in evaluation.estimators]
    seconds = time.perf_counter() - start
    assert all(len(g.table) == 66 for g in grids)
    return {
        "tool": "offeval",
        "rows": rows,
        "build_log_s": build,
        "estimate_s": seconds,
        "rows_per_s": rows / seconds,
        "peak_extra_mb": peak_mb() - base,
        "worker_peak_mb": workers_peak_mb(),
    }


def run_offeval_one(rows: int, chunk_rows: int) -> dict:
    """One policy, IS alone, with its interval: the engine's fixed costs per row."""
    from offeval import evaluate
    from offeval_importance import IS

    log, policies, build = offeval_log(rows)
    base = reset_peak()
    start = time.perf_counter()
    evaluate(log, policies[:1], [IS()], chunk_rows=chunk_rows).to_frame()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_extra_mb": peak_mb() - base}


def run_offeval_bootstrap(rows: int, replicates: int, chunk_rows: int) -> dict:
    from offeval_importance import IS, NCIS, bootstrap

    log, policies, build = offeval_log(rows)
    base = reset_peak()
    start = time.perf_counter()
    bootstrap(
        log, policies, [IS(), NCIS(cap=float("inf"))], replicates=replicates, chunk_rows=chunk_rows
    )
    seconds = time.perf_counter() - start
    return {
        "tool": f"offeval (IS+SNIPS, {replicates} bootstrap)",
        "rows": rows,
        "build_log_s": build,
        "estimate_s": seconds,
        "rows_per_s": rows / seconds,
        "peak_extra_mb": peak_mb() - base,
    }


def run_obp(rows: int, bootstrap: int) -> dict:
    from obp.ope import InverseProbabilityWeighting, SelfNormalizedInverseProbabilityWeighting

    frame, _, targets = synthetic(rows)
    action = frame["item"].to_numpy()
    reward = frame["reward"].to_numpy()
    pscore = frame["propensity"].to_numpy()
    position = np.zeros(rows, dtype=int)
    base = reset_peak()
    start = time.perf_counter()
    for j in range(N_POLICIES):
        dist = np.broadcast_to(targets[j][None, :, None], (rows, N_ACTIONS, 1))
        for estimator in (
            InverseProbabilityWeighting(),
            SelfNormalizedInverseProbabilityWeighting(),
        ):
            estimator.estimate_interval(
                reward=reward,
                action=action,
                position=position,
                pscore=pscore,
                action_dist=dist,
                n_bootstrap_samples=bootstrap,
                random_state=0,
            )
    seconds = time.perf_counter() - start
    return {
        "tool": f"obp (IPW+SNIPW, {bootstrap} bootstrap)",
        "rows": rows,
        "build_log_s": 0.0,
        "estimate_s": seconds,
        "rows_per_s": rows / seconds,
        "peak_extra_mb": peak_mb() - base,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000])
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--obp-python", help="python of an environment where obp is installed")
    parser.add_argument("--obp-rows", type=int, default=1_000_000)
    parser.add_argument("--obp-bootstrap", type=int, default=100)
    args = parser.parse_args()
    results = [
        in_subprocess(sys.executable, "ncis_benchmark", f"run_offeval({n}, {args.chunk_rows})")
        for n in args.rows
    ]
    call = f"run_offeval_bootstrap({args.obp_rows}, {args.obp_bootstrap}, {args.chunk_rows})"
    results.append(in_subprocess(sys.executable, "ncis_benchmark", call))
    if args.obp_python:
        call = f"run_obp({args.obp_rows}, {args.obp_bootstrap})"
        results.append(in_subprocess(args.obp_python, "ncis_benchmark", call))
    table = pd.DataFrame(results)
    with pd.option_context("display.width", 160, "display.float_format", "{:,.2f}".format):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
