"""Time DR (and DM, SNDR) for 12 policies beside IS, with intervals, on a bandit log.

Usage: python benchmarks/rewardmodels_benchmark.py [--rows 1000000 3000000]

The log of ncis_benchmark.py (one impression per session, 10 actions, 12
target distributions), plus what the reward-model estimators read: a
candidate table listing the 10 actions of every session with the logger's
probability and a reward model's prediction (the true click rate plus noise).
Targets are probability tables over the actions (``TablePolicy``), so the
candidate table carries no column per policy. Each job runs in a fresh
subprocess; reported: seconds and log rows per second of one evaluation pass.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from measure import in_subprocess, peak_mb, reset_peak
from ncis_benchmark import N_ACTIONS, N_POLICIES, synthetic


def bandit_log(rows: int):
    """The log with its candidate table and reward model, and the 12 table policies."""
    from offeval import InteractionLog, TablePolicy

    frame, logging, targets = synthetic(rows)
    rng = np.random.default_rng(1)
    model = np.clip(rng.uniform(0.02, 0.2, N_ACTIONS) + rng.normal(0, 0.01, N_ACTIONS), 0, 1)
    frame = frame[["trajectory", "item", "reward", "propensity"]].assign(
        reward_model=model[frame["item"].to_numpy()]
    )
    items = np.tile(np.arange(N_ACTIONS), rows)
    candidates = pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(rows), N_ACTIONS),
            "position": 1,
            "item": items,
            "propensity": logging[items],
            "reward_model": model[items],
        }
    )
    log = InteractionLog.from_frame(frame, candidates=candidates)
    policies = [
        TablePolicy(pd.DataFrame({"item": np.arange(N_ACTIONS), "probability": t}), f"pi_{j:02d}")
        for j, t in enumerate(targets)
    ]
    return log, policies


def run(rows: int, which: str) -> dict:
    """One evaluation pass of 12 policies with the named estimators."""
    from offeval import evaluate
    from offeval_ncis import IS
    from offeval_rewardmodels import DM, DR, SNDR

    estimators = {"is": [IS()], "dr": [DR()], "is+dm+dr+sndr": [IS(), DM(), DR(), SNDR()]}
    log, policies = bandit_log(rows)
    base = reset_peak()
    start = time.perf_counter()
    evaluate(log, policies, estimators[which]).to_frame()
    seconds = time.perf_counter() - start
    return {
        "estimators": which,
        "rows": rows,
        "seconds": seconds,
        "rows_per_s": rows / seconds,
        "peak_extra_mb": peak_mb() - base,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    args = parser.parse_args()
    results = [
        in_subprocess(sys.executable, "rewardmodels_benchmark", f"run({rows}, {which!r})")
        for rows in args.rows
        for which in ("is", "dr", "is+dm+dr+sndr")
    ]
    print(pd.DataFrame(results).round(3).to_string(index=False))
    print(f"{N_POLICIES} policies, {N_ACTIONS} candidate actions per session")


if __name__ == "__main__":
    main()
