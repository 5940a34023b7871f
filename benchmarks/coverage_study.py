"""Coverage of every registered estimator's 95% intervals on the simulator, by interval method.

For n = 500, 5,000 and 50,000 trajectories, many independent logs are drawn
from the conformance kit's environment (:mod:`offeval.testing`: the built-in
simulator, with each estimator's declared assumptions, e.g. cascade users for
RIPS) and its target policy; each log is evaluated once for all estimators
(one pass per interval method), and each interval is checked against the
environment's exact value. Every estimator with an estimand is measured with
normal intervals, and with betting intervals where it declares its betting
columns. Written per (estimator, method, n): replications, coverage and its
binomial standard error, mean width, mean standard error, the standard
deviation of the estimates, and bias in units of that deviation (bias_over_sd)
and of its Monte Carlo standard error (bias_z).

    python benchmarks/coverage_study.py            # book/data/coverage.csv
    python benchmarks/coverage_study.py --quick    # a few replications, to try it

The estimators that offer betting intervals (those declaring their betting
columns: IS, IIPS, RIPS) are measured both ways, whatever their default. An
estimator much slower than the others (it fits a classifier on each log) is
measured on a quarter of the logs; ``replications`` says how many each row used.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from offeval import ESTIMANDS, evaluate, get_registry
from offeval.engine.declaration import declaration_of
from offeval.testing import _environment

#: Trajectories per log, and the independent logs drawn at each size.
SIZES = {500: 400, 5_000: 200, 50_000: 60}
#: An estimator whose evaluation of the first log takes longer than this many seconds per
#: 10,000 trajectories (one that fits a classifier on the log, say) is measured on
#: one log in SLOW_SHARE only (the whole study: about 6 minutes on two cores).
SLOW_SECONDS = 1.0
SLOW_SHARE = 4
#: ... and never less than this many seconds (the first call of an estimator warms up).
SLOW_FLOOR = 0.25
#: Where the table goes.
OUT = Path(__file__).resolve().parents[1] / "book" / "data" / "coverage.csv"
LEVEL = 0.95


def estimators() -> list:
    """Every registered estimator at its defaults that estimates an online reward, once
    (aliases, and names that build the same estimator, left out)."""
    registry = get_registry()
    out, seen = [], set()
    for component in registry.components("estimator"):
        if component.alias is not None:
            continue
        estimator = registry.create("estimator", component.name)
        key = (type(estimator), repr(sorted(estimator.get_params().items())))
        if declaration_of(estimator).estimand is not None and key not in seen:
            seen.add(key)
            out.append(estimator)
    return out


def groups(chosen: list) -> dict:
    """Estimators by environment (their declared assumptions) and by log preparation."""
    out: dict = {}
    for estimator in chosen:
        declared = declaration_of(estimator)
        key = tuple(sorted(declared.assumptions.items()))
        prepare = declared.prepare_kit_log
        tag = None if prepare is None else type(estimator).prepare_kit_log.__qualname__
        out.setdefault(key, {}).setdefault(tag, []).append(estimator)
    return out


def one_log(
    env, n: int, seed: int, by_preparation: dict, policy, truth, skip=frozenset(), clock=None
) -> list[dict]:
    """Every estimator's estimate on one simulated log, with each interval method (but those
    whose labels ``skip`` names); ``clock`` (a dict) gets each one's seconds."""
    needs = any(
        "candidates" in declaration_of(e).requires for ests in by_preparation.values() for e in ests
    )
    log = env.simulate(env.logging_policy(), n, seed=seed, with_candidates=needs)
    rows = []
    for ests in by_preparation.values():
        prepare = declaration_of(ests[0]).prepare_kit_log
        prepared = log if prepare is None else prepare(log)
        ests = [e for e in ests if declaration_of(e).label not in skip]
        betting = [e for e in ests if declaration_of(e).betting_columns is not None]
        runs = [([e], "normal") for e in ests] if clock is not None else [(ests, "normal")]
        runs += [(betting, "betting")] if betting else []
        for chosen, method in runs:
            if not chosen:
                continue
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ev = evaluate(prepared, [policy], chosen, progress=False, interval=method)
            if clock is not None and method == "normal":
                clock[ev.declarations[0].label] = time.perf_counter() - start
            for est, declared in zip(chosen, ev.declarations, strict=True):
                e = ev.estimate(policy.name, declared.label)
                value = truth[declared.estimand]
                rows.append(
                    {
                        "estimator": declared.label,
                        "method": method,
                        "value": e.value,
                        "se": e.se,
                        "covered": e.ci_low <= value <= e.ci_high,
                        "width": e.ci_high - e.ci_low,
                        "truth": value,
                        "user_model": dict(declaration_of(est).assumptions).get(
                            "user_model", "position_based"
                        ),
                    }
                )
    return rows


def summarise(raw: pd.DataFrame) -> pd.DataFrame:
    """Coverage, its binomial SE, widths and bias per (estimator, method, n)."""

    def one(part: pd.DataFrame) -> pd.Series:
        r = len(part)
        cover = part["covered"].mean()
        sd = part["value"].std(ddof=1)
        bias = part["value"].mean() - part["truth"].iloc[0]
        return pd.Series(
            {
                "user_model": part["user_model"].iloc[0],
                "replications": r,
                "coverage": cover,
                "coverage_se": np.sqrt(cover * (1 - cover) / r),
                "mean_width": part["width"].mean(),
                "mean_se": part["se"].mean(),
                "sd": sd,
                "bias_over_sd": bias / sd if sd > 0 else np.nan,
                "bias_z": bias / (sd / np.sqrt(r)) if sd > 0 else np.nan,
                "truth": part["truth"].iloc[0],
            }
        )

    keys = ["estimator", "method", "n"]
    return raw.groupby(keys, sort=True).apply(one, include_groups=False).reset_index()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 replications per size")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    chosen = estimators()
    raw = []
    for n, replications in SIZES.items():
        replications = 3 if args.quick else replications
        start = time.perf_counter()
        for key, by_preparation in groups(chosen).items():
            env = _environment(key)
            policy = list(env.candidate_policies(4))[0]  # the kit's target policy
            truth = {k: env.true_value(policy, k) for k in ESTIMANDS}
            clock: dict[str, float] = {}
            slow: frozenset = frozenset()
            for r in range(replications):
                skip = slow if r % SLOW_SHARE else frozenset()
                timed = clock if r == 0 else None
                for row in one_log(env, n, 1_000 + r, by_preparation, policy, truth, skip, timed):
                    raw.append({**row, "n": n})
                if r == 0:
                    limit = max(SLOW_FLOOR, SLOW_SECONDS * n / 1e4)
                    slow = frozenset(k for k, v in clock.items() if v > limit)
        print(f"n={n:,}: {replications} logs in {time.perf_counter() - start:.0f} s", flush=True)
        table = summarise(pd.DataFrame(raw))  # written at each size: a partial table survives
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out, index=False, float_format="%.6g")
        print(f"wrote {args.out} ({len(table)} rows)", flush=True)


if __name__ == "__main__":
    main()
