"""A grid of 14 clipping caps beside one estimator (issue 31), and a numpy floor.

On the ``ncis_benchmark`` synthetic log (1M rows, one per session, 12 column
policies): ``evaluate`` with one ``cis`` (cap 10), with the 14-cap ``cis``
grid, with the 14-cap ``ncis`` grid, and a hand-written numpy loop computing
the same 14 x 12 CIS means and standard errors. Each job runs several times
in a fresh interpreter (:func:`measure.in_subprocess`); the medians are
printed. Run from the repository root: ``python benchmarks/cap_grid_benchmark.py``.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from measure import in_subprocess
from ncis_benchmark import N_POLICIES, offeval_log, synthetic

ROWS = 1_000_000
CAPS = (1.5, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 200, 500)
REPEATS = 3
RUNS = 5


def offeval_job(name: str, caps: tuple[float, ...], rows: int = ROWS) -> dict:
    """Best of REPEATS warm timings of ``evaluate`` with one estimator per cap."""
    from offeval import evaluate, get_registry

    log, policies, _ = offeval_log(rows)
    registry = get_registry()
    estimators = [registry.create("estimator", name, cap=float(c)) for c in caps]
    evaluate(log, policies, estimators[:1])  # imports and first-use set-up
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        evaluate(log, policies, estimators)
        times.append(time.perf_counter() - start)
    return {"seconds": min(times)}


def floor_job(rows: int = ROWS) -> dict:
    """Best of REPEATS timings of numpy alone: per policy and cap, mean and SE of r min(w, cap)."""
    frame, _, _ = synthetic(rows)
    reward = frame["reward"].to_numpy()
    propensity = frame["propensity"].to_numpy()
    targets = [frame[f"pi_{j:02d}"].to_numpy() for j in range(N_POLICIES)]
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        means = np.empty((len(CAPS), N_POLICIES))
        ses = np.empty_like(means)
        for j, pi in enumerate(targets):
            w = pi / propensity
            for c, cap in enumerate(CAPS):
                x = reward * np.minimum(w, cap)
                means[c, j] = x.mean()
                ses[c, j] = x.std(ddof=1) / np.sqrt(rows)
        times.append(time.perf_counter() - start)
    return {"seconds": min(times)}


JOBS = {
    "one cis (cap 10)": "offeval_job('cis', (10.0,))",
    "14-cap cis grid": f"offeval_job('cis', {CAPS!r})",
    "14-cap ncis grid": f"offeval_job('ncis', {CAPS!r})",
    "numpy floor (14 x 12 CIS)": "floor_job()",
}


def main() -> None:
    """Each job RUNS times in fresh interpreters; medians, and ratios to one estimator."""
    medians = {}
    for label, call in JOBS.items():
        runs = [
            in_subprocess(sys.executable, "cap_grid_benchmark", call)["seconds"]
            for _ in range(RUNS)
        ]
        medians[label] = statistics.median(runs)
    one = medians["one cis (cap 10)"]
    for label, seconds in medians.items():
        print(f"{label:28s} {seconds:7.3f} s  {seconds / one:5.2f}x one")


if __name__ == "__main__":
    main()
