"""Time exact counterfactual disagreement on 1M banners, and the rank-probability kernels against n.

Usage: python benchmarks/disagreement_benchmark.py [--banners 1000000] [--sizes 8 12]
       [--sampled 200]

Each measurement runs in a fresh subprocess so that peak memory is its own.

1. End to end: banners of n products drawn by Plackett-Luce from a pool of
   2n candidates (rest mass logged), every banner with exactly one click at a
   uniform rank (the worst case: every banner needs its rank row), one test
   model. Timed: ``evaluate`` with CD (value, standard error, interval), next
   to the floor of the same run: the one-pass rank-row kernel alone on the
   same banners (``rank_rows``), i.e. the numbers CD cannot do without.
2. Kernels per banner against n: the one-pass row (``rank_rows``), every rank
   at once (``forward_backward``), the seed's subset DP (``subset_dp``, up to
   n = 10) and Monte Carlo with 1,000 samples (``monte_carlo``).
3. The hard cases: CD end to end past the exact limit (banners of 25
   products, Monte Carlo at the default 10,000 samples), and every rank at
   once in log space (16 banners of 18 and 20 products whose logits span
   hundreds of nepers, normal with sd 60), with peak memory.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from measure import in_subprocess, peak_mb, reset_peak


def banner_log(banners: int, n: int, seed: int = 0):
    """An InteractionLog of Plackett-Luce banners with one click each; also the raw arrays."""
    from offeval import InteractionLog

    rng = np.random.default_rng(seed)
    pool = rng.normal(size=(banners, 2 * n))
    order = np.argsort(-(pool + rng.gumbel(size=pool.shape)), axis=1)
    shown = order[:, :n]
    logits = np.take_along_axis(pool, shown, axis=1)
    hidden = np.take_along_axis(pool, order[:, n:], axis=1)
    rest = np.log(np.exp(hidden).sum(axis=1))
    click_rank = rng.integers(0, n, banners)
    reward = np.zeros((banners, n))
    reward[np.arange(banners), click_rank] = 1.0
    frame = pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(banners), n),
            "item": shown.ravel(),
            "position": np.tile(np.arange(1, n + 1), banners),
            "reward": reward.ravel(),
            "logging_score": logits.ravel(),
            "logging_pool": np.repeat(rest, n),
            "model": rng.normal(size=banners * n),
        }
    )
    return InteractionLog.from_frame(frame), logits, rest, click_rank + 1


def run_cd(banners: int, n: int) -> dict:
    from offeval import evaluate
    from offeval_disagreement import CounterfactualDisagreement
    from offeval_ranking import RerankPolicy

    start = time.perf_counter()
    log, _, _, _ = banner_log(banners, n)
    build = time.perf_counter() - start
    base = reset_peak()
    start = time.perf_counter()
    estimate = evaluate(log, [RerankPolicy("model")], [CounterfactualDisagreement()]).estimate(
        "model"
    )
    seconds = time.perf_counter() - start
    return {
        "what": f"cd end to end, n={n}",
        "banners": banners,
        "build_log_s": build,
        "seconds": seconds,
        "us_per_banner": 1e6 * seconds / banners,
        "peak_extra_mb": peak_mb() - base,
        "value": estimate.value,
    }


def run_floor(banners: int, n: int) -> dict:
    from offeval_disagreement.given_set import rank_rows

    _, logits, rest, ranks = banner_log(banners, n)
    base = reset_peak()
    start = time.perf_counter()
    rank_rows(logits, rest, ranks)
    seconds = time.perf_counter() - start
    return {
        "what": f"floor: rank_rows alone, n={n}",
        "banners": banners,
        "build_log_s": 0.0,
        "seconds": seconds,
        "us_per_banner": 1e6 * seconds / banners,
        "peak_extra_mb": peak_mb() - base,
        "value": float("nan"),
    }


def run_kernel(name: str, n: int, banners: int) -> dict:
    from offeval_disagreement.given_set import forward_backward, monte_carlo, rank_rows, subset_dp

    rng = np.random.default_rng(n)
    logits, rest = rng.normal(size=(banners, n)), rng.normal(size=banners)
    calls = {
        "rank_rows": lambda: rank_rows(logits, rest, rng.integers(1, n + 1, banners)),
        "forward_backward": lambda: forward_backward(logits, rest),
        "forward_backward_wide": lambda: forward_backward(60 * logits, rest),
        "subset_dp": lambda: subset_dp(logits, rest),
        "monte_carlo_1000": lambda: monte_carlo(logits, rest, samples=1_000, seed=0),
    }
    base = reset_peak()
    start = time.perf_counter()
    calls[name]()
    seconds = time.perf_counter() - start
    return {
        "kernel": name,
        "n": n,
        "banners": banners,
        "us_per_banner": 1e6 * seconds / banners,
        "peak_extra_mb": peak_mb() - base,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--banners", type=int, default=1_000_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 12])
    parser.add_argument("--kernel-sizes", type=int, nargs="+", default=[2, 4, 6, 8, 10, 12, 14, 16])
    parser.add_argument("--sampled", type=int, default=200, help="banners of 25 products")
    args = parser.parse_args()
    end_to_end = []
    for n in args.sizes:
        banners = args.banners if n <= 8 else args.banners // 10
        end_to_end.append(
            in_subprocess(sys.executable, "disagreement_benchmark", f"run_cd({banners}, {n})")
        )
        end_to_end.append(
            in_subprocess(sys.executable, "disagreement_benchmark", f"run_floor({banners}, {n})")
        )
    kernels = []
    for n in args.kernel_sizes:
        banners = max(50, 2_000_000 >> n)
        for name in ("rank_rows", "forward_backward", "subset_dp", "monte_carlo_1000"):
            if name == "subset_dp" and n > 10:
                continue
            count = {"subset_dp": max(20, banners // 20), "monte_carlo_1000": 200}.get(
                name, banners
            )
            call = f"run_kernel({name!r}, {n}, {count})"
            kernels.append(in_subprocess(sys.executable, "disagreement_benchmark", call))
    hard = [in_subprocess(sys.executable, "disagreement_benchmark", f"run_cd({args.sampled}, 25)")]
    for n in (18, 20):
        call = f"run_kernel('forward_backward_wide', {n}, 16)"
        hard.append(in_subprocess(sys.executable, "disagreement_benchmark", call))
    with pd.option_context("display.width", 160, "display.float_format", "{:,.2f}".format):
        print(pd.DataFrame(end_to_end).to_string(index=False))
        print()
        table = pd.DataFrame(kernels).pivot(index="n", columns="kernel", values="us_per_banner")
        print("microseconds per banner:")
        print(table.to_string())
        print()
        print(pd.DataFrame(hard).to_string(index=False))


if __name__ == "__main__":
    main()
