"""Coverage of 95% intervals, by interval method, on two worlds whose truth is exact.

**The simulator** (``--world simulator``, ``book/data/coverage.csv``): every
registered estimator, on n = 500, 5,000 and 50,000 trajectories drawn from the
conformance kit's environment (:mod:`offeval.testing`: the built-in simulator,
with each estimator's declared assumptions, e.g. cascade users for RIPS) and
its target policy; each log is evaluated once for all estimators (one pass per
interval method, clicks declared in [0, 1]: ``reward_range=(0, 1)``), and each
interval is checked against the environment's exact value. Every estimator
with an estimand is measured with normal intervals, and with betting intervals
where it declares its betting columns (IS, IIPS, RIPS), whatever its default.
An estimator much slower than the others (it fits a classifier on each log) is
measured on a quarter of the logs; ``replications`` says how many each row used.

**An independent bandit** (``--world bandit``, ``book/data/coverage_bandit.csv``),
written here in plain numpy so that no claim rests on the simulator alone: one
row per trajectory, a softmax logger over K = 10 actions and four softmax
targets tilted towards the logger's rarest actions so that their largest
importance weight is 3, 30, 150 and 1,000 (the weights' tail); the rarer an
action, the higher its mean reward (so a log that misses the rare actions
underestimates). Rewards are Bernoulli and Beta on [0, 1], uniform within
[0, 10] and within [-1, 1] (declared as ``reward_range``, the bounds the
betting interval needs and the normal one is clipped to); the true value
sum_a pi(a) E[r | a] is exact. IS, SNIPS and CIS (its default cap, 100) with
normal intervals, IS with betting ones, on n = 50, 500, 5,000 and 10,000.

Both tables give per row: replications, coverage and its binomial standard
error, mean width (as reported: a normal interval clipped to the declared
bounds), the mean width of the unclipped normal interval (2 z se), how many
logs gave an interval of zero width, an empty one (lower end above the upper:
a betting interval whose every candidate value is rejected) or a clipped one,
the mean standard error, the standard deviation of the estimates, and bias in
units of that deviation (bias_over_sd) and of its Monte Carlo standard error
(bias_z).

    python benchmarks/coverage_study.py                  # both worlds
    python benchmarks/coverage_study.py --world bandit   # one of them
    python benchmarks/coverage_study.py --quick          # a few replications, to try it

Each world takes about 6 minutes on the project's two shared cores (the
bandit in two processes: 354 s on 2026-11-29, the simulator 5 minutes).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from offeval import ESTIMANDS, ColumnPolicy, InteractionLog, evaluate, get_registry
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
#: Where the tables go.
DATA = Path(__file__).resolve().parents[1] / "book" / "data"
OUT = DATA / "coverage.csv"
BANDIT_OUT = DATA / "coverage_bandit.csv"
LEVEL = 0.95
#: z of the normal 95% interval.
Z = 1.959963984540054
#: The simulator's rewards are clicks.
SIMULATOR_REWARDS = (0.0, 1.0)

#: The bandit: actions, the logger's softmax scores -LOGGER_SLOPE * s (s from 0 to 1: its
#: rarest action has propensity 4.9e-4), the targets' largest importance weights.
ACTIONS = 10
LOGGER_SLOPE = 7.0
MAX_WEIGHTS = (3, 30, 150, 1_000)
#: Rewards: a draw u in [0, 1] with mean MEANS[a], scaled to the declared range.
MEANS = np.linspace(0.1, 0.9, ACTIONS)
REWARDS = {
    "bernoulli": (0.0, 1.0),
    "beta": (0.0, 1.0),
    "uniform_0_10": (0.0, 10.0),
    "uniform_-1_1": (-1.0, 1.0),
}
#: Trajectories per log -> independent logs drawn for each reward distribution (each log
#: serves the four targets).
BANDIT_SIZES = {50: 500, 500: 500, 5_000: 500, 10_000: 500}
BANDIT_ESTIMATORS = ("is", "snips", "cis")


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
        betting = [e for e in ests if "betting" in declaration_of(e).intervals]
        runs = [([e], "normal") for e in ests] if clock is not None else [(ests, "normal")]
        runs += [(betting, "betting")] if betting else []
        for chosen, method in runs:
            if not chosen:
                continue
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ev = evaluate(
                    prepared,
                    [policy],
                    chosen,
                    progress=False,
                    interval=method,
                    reward_range=SIMULATOR_REWARDS,
                )
            if clock is not None and method == "normal":
                clock[ev.declarations[0].label] = time.perf_counter() - start
            for est, declared in zip(chosen, ev.declarations, strict=True):
                e = ev.estimate(policy.name, declared.label)
                value = truth[declared.estimand]
                rows.append(
                    {
                        "estimator": declared.label,
                        "method": method,
                        **checked(e, value),
                        "user_model": dict(declaration_of(est).assumptions).get(
                            "user_model", "position_based"
                        ),
                    }
                )
    return rows


def checked(e, truth: float) -> dict:
    """What one estimate's interval says about the truth: covered, widths, degenerate."""
    width = e.ci_high - e.ci_low
    return {
        "value": e.value,
        "se": e.se,
        "covered": bool(e.ci_low <= truth <= e.ci_high),
        "width": max(width, 0.0),
        "width_unclipped": 2 * Z * e.se if e.interval_method == "normal" else max(width, 0.0),
        "zero_width": bool(width == 0),
        "empty": bool(width < 0),
        "clipped": bool(e.diagnostics.get("interval_clipped", False)),
        "truth": truth,
    }


def summarise(raw: pd.DataFrame, keys=("estimator", "method", "n")) -> pd.DataFrame:
    """Coverage, its binomial SE, widths, degenerate intervals and bias per ``keys``."""

    def one(part: pd.DataFrame) -> pd.Series:
        r = len(part)
        cover = part["covered"].mean()
        sd = part["value"].std(ddof=1)
        bias = part["value"].mean() - part["truth"].iloc[0]
        labels = ("user_model", "reward_low", "reward_high")
        first = {c: part[c].iloc[0] for c in labels if c in part}
        return pd.Series(
            {
                **first,
                "replications": r,
                "coverage": cover,
                "coverage_se": np.sqrt(cover * (1 - cover) / r),
                "mean_width": part["width"].mean(),
                "mean_width_unclipped": part["width_unclipped"].mean(),
                "zero_width": int(part["zero_width"].sum()),
                "empty": int(part["empty"].sum()),
                "clipped": int(part["clipped"].sum()),
                "mean_se": part["se"].mean(),
                "sd": sd,
                "bias_over_sd": bias / sd if sd > 0 else np.nan,
                "bias_z": bias / (sd / np.sqrt(r)) if sd > 0 else np.nan,
                "truth": part["truth"].iloc[0],
            }
        )

    return raw.groupby(list(keys), sort=True).apply(one, include_groups=False).reset_index()


def logger() -> np.ndarray:
    """The bandit logger's propensities: a softmax, falling from 0.54 to 4.9e-4."""
    p = np.exp(-LOGGER_SLOPE * np.linspace(0, 1, ACTIONS))
    return p / p.sum()


def target(max_weight: float) -> np.ndarray:
    """The softmax of t s (s from 0 to 1) whose largest weight pi / mu is ``max_weight``.

    pi / mu grows with s for every t > -LOGGER_SLOPE (t = -LOGGER_SLOPE is the logger), so
    the largest weight is the last action's; t is found by bisection."""
    s, mu = np.linspace(0, 1, ACTIONS), logger()
    low, high = -LOGGER_SLOPE, 50.0
    for _ in range(200):
        t = (low + high) / 2
        p = np.exp(t * s)
        p /= p.sum()
        low, high = (t, high) if p[-1] / mu[-1] < max_weight else (low, t)
    return p


def draw_rewards(kind: str, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rewards of ``kind`` for the logged actions: u in [0, 1] with mean MEANS[a], scaled to
    the kind's range (Bernoulli, Beta(2 m, 2 (1 - m)), uniform on [m - h, m + h] with
    h = min(m, 1 - m))."""
    m = MEANS[actions]
    if kind == "bernoulli":
        u = (rng.random(actions.size) < m).astype(float)
    elif kind == "beta":
        u = rng.beta(2 * m, 2 * (1 - m))
    else:
        h = np.minimum(m, 1 - m)
        u = m - h + 2 * h * rng.random(actions.size)
    low, high = REWARDS[kind]
    return low + (high - low) * u


def bandit_truth(kind: str, max_weight: float) -> float:
    """The exact value of the target: sum_a pi(a) E[r | a]."""
    low, high = REWARDS[kind]
    return float(low + (high - low) * target(max_weight) @ MEANS)


def bandit_logs(task: tuple[str, int, range]) -> list[dict]:
    """Every estimate and interval on the bandit logs of ``task``: (reward kind, n, seeds)."""
    kind, n, seeds = task
    registry = get_registry()
    estimators = [registry.create_from_spec("estimator", spec) for spec in BANDIT_ESTIMATORS]
    betting = [e for e in estimators if "betting" in declaration_of(e).intervals]
    mu, pis = logger(), {w: target(w) for w in MAX_WEIGHTS}
    policies = [ColumnPolicy(f"target_{w}", name=f"max_weight_{w}") for w in MAX_WEIGHTS]
    truth = {w: bandit_truth(kind, w) for w in MAX_WEIGHTS}
    bounds = REWARDS[kind]
    rows = []
    for seed in seeds:
        rng = np.random.default_rng([seed, n, list(REWARDS).index(kind)])
        actions = rng.choice(ACTIONS, size=n, p=mu)
        frame = pd.DataFrame(
            {
                "trajectory": np.arange(n),
                "item": actions,
                "reward": draw_rewards(kind, actions, rng),
                "propensity": mu[actions],
                **{f"target_{w}": p[actions] for w, p in pis.items()},
            }
        )
        log = InteractionLog.from_frame(frame)
        for chosen, method in ((estimators, "normal"), (betting, "betting")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ev = evaluate(
                    log, policies, chosen, progress=False, interval=method, reward_range=bounds
                )
            for w, policy in zip(MAX_WEIGHTS, policies, strict=True):
                for declared in ev.declarations:
                    e = ev.estimate(policy.name, declared.label)
                    rows.append(
                        {
                            "rewards": kind,
                            "max_weight": w,
                            "estimator": declared.label,
                            "method": method,
                            "n": n,
                            "reward_low": bounds[0],
                            "reward_high": bounds[1],
                            **checked(e, truth[w]),
                        }
                    )
    return rows


def bandit_study(quick: bool, out: Path, processes: int = 2) -> pd.DataFrame:
    """The bandit world's table, computed by ``processes`` worker processes."""
    tasks = []
    for n, replications in BANDIT_SIZES.items():
        replications = 3 if quick else replications
        step = max(1, replications // 10)
        for kind in REWARDS:
            for first in range(0, replications, step):
                tasks.append((kind, n, range(first, min(first + step, replications))))
    start = time.perf_counter()
    raw = []
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        for rows in pool.imap_unordered(bandit_logs, tasks):
            raw.extend(rows)
    print(f"bandit: {len(tasks)} tasks in {time.perf_counter() - start:.0f} s", flush=True)
    keys = ("rewards", "max_weight", "estimator", "method", "n")
    table = summarise(pd.DataFrame(raw), keys)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False, float_format="%.6g")
    print(f"wrote {out} ({len(table)} rows)", flush=True)
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 replications per size")
    parser.add_argument("--world", choices=("all", "simulator", "bandit"), default="all")
    parser.add_argument("--out", type=Path, default=OUT, help="the simulator's table")
    parser.add_argument("--bandit-out", type=Path, default=BANDIT_OUT, help="the bandit's table")
    args = parser.parse_args(argv)
    if args.world in ("all", "bandit"):
        bandit_study(args.quick, args.bandit_out)
    if args.world in ("all", "simulator"):
        simulator_study(args.quick, args.out)


def simulator_study(quick: bool, out: Path) -> None:
    """The simulator's table (written after each size: a partial table survives)."""
    chosen = estimators()
    raw = []
    for n, replications in SIZES.items():
        replications = 3 if quick else replications
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
        out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(out, index=False, float_format="%.6g")
        print(f"wrote {out} ({len(table)} rows)", flush=True)


if __name__ == "__main__":
    main()
