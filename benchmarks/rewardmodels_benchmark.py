"""Time DR (and DM, SNDR) for 12 policies beside IS, its floor and obp, on a bandit log.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/rewardmodels_benchmark.py [--rows 1000000]
        [--stream-rows 1000000 10000000] [--chunk-rows 250000] [--repeats 3]
        [--obp-python /path/to/python-with-obp] [--obp-bootstrap 100]

The log of ncis_benchmark.py (one impression per session, 10 actions, 12
target distributions), plus what the reward-model estimators read: a
candidate table listing the 10 actions of every session with the logger's
probability and a reward model's prediction (the true click rate plus noise).
Targets are probability tables over the actions (``TablePolicy``), so the
candidate table carries no column per policy.

Jobs, each in a fresh interpreter (runs interleaved, the load average
recorded at the start and end of each; offeval's after an untimed pass on
1,000 rows, which imports what the pass uses):

- ``run``: a log of ``--rows`` rows held in memory, one evaluation pass with
  intervals of IS, DR, and IS + DM + DR + SNDR; peak memory beyond the built log;
- ``run_streamed``: DR over ``--stream-rows`` rows given to ``evaluate`` as an
  iterable of chunk logs of ``--chunk-rows`` rows generated lazily (10M rows
  would need a 100M-row candidate table, about 4 GB, in memory): generating
  and validating each chunk (``InteractionLog.from_frame``) is timed apart
  from the pass; peak memory beyond imports (generation included);
- ``run_floor``: the hand-written numpy floor (:func:`run_dr_floor`, the
  least work for the same output): DR with standard errors for the same 12
  policies on the same data;
- ``run_obp`` (with ``--obp-python``): obp's ``DoublyRobust`` on arrays
  (``action_dist`` (n, 10, 1) per policy, ``estimated_rewards_by_reg_model``
  (n, 10, 1)), ``estimate_policy_value`` and ``estimate_interval`` timed apart.

Every job returns the 12 DR estimates; the script prints the largest
difference between offeval's and the floor's and obp's.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator

import numpy as np
import pandas as pd
from measure import in_subprocess, peak_mb, reset_peak
from ncis_benchmark import N_ACTIONS, N_POLICIES, synthetic

#: Rows of the untimed first pass of every offeval job (what it imports on first use).
WARM_UP_ROWS = 1_000


def model_of(seed: int = 1) -> np.ndarray:
    """The reward model's prediction per action: the click rates of another draw plus noise."""
    rng = np.random.default_rng(seed)
    return np.clip(rng.uniform(0.02, 0.2, N_ACTIONS) + rng.normal(0, 0.01, N_ACTIONS), 0, 1)


def frames(frame: pd.DataFrame, logging: np.ndarray, model: np.ndarray, first: int = 0):
    """The log's frame with its reward-model column, and its candidate table."""
    rows = len(frame)
    frame = frame[["trajectory", "item", "reward", "propensity"]].assign(
        reward_model=model[frame["item"].to_numpy()]
    )
    items = np.tile(np.arange(N_ACTIONS), rows)
    candidates = pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(first, first + rows), N_ACTIONS),
            "position": 1,
            "item": items,
            "propensity": logging[items],
            "reward_model": model[items],
        }
    )
    return frame, candidates


def table_policies(targets: np.ndarray) -> list:
    """The 12 targets as probability tables over the actions."""
    from offeval import TablePolicy

    return [
        TablePolicy(pd.DataFrame({"item": np.arange(N_ACTIONS), "probability": t}), f"pi_{j:02d}")
        for j, t in enumerate(targets)
    ]


def bandit_log(rows: int):
    """The log with its candidate table and reward model, and the 12 table policies."""
    from offeval import InteractionLog

    frame, logging, targets = synthetic(rows)
    frame, candidates = frames(frame, logging, model_of())
    return InteractionLog.from_frame(frame, candidates=candidates), table_policies(targets)


def chunk_arrays(rows: int, chunk_rows: int, seed: int = 0) -> Iterator[dict]:
    """The synthetic log of ``rows`` rows, chunk by chunk (memory holds one chunk).

    Parameters drawn as ``ncis_benchmark.synthetic`` draws them; actions and
    rewards then come chunk by chunk from the same generator.
    """
    rng = np.random.default_rng(seed)
    logging = rng.dirichlet(np.ones(N_ACTIONS) * 2)
    targets = rng.dirichlet(np.ones(N_ACTIONS) * 2, size=N_POLICIES)
    quality = rng.uniform(0.02, 0.2, N_ACTIONS)
    for lo in range(0, rows, chunk_rows):
        n = min(chunk_rows, rows - lo)
        action = rng.choice(N_ACTIONS, size=n, p=logging)
        yield {
            "first": lo,
            "action": action,
            "reward": (rng.random(n) < quality[action]).astype(float),
            "logging": logging,
            "targets": targets,
        }


def whole_arrays(rows: int) -> dict:
    """The in-memory log's data (``ncis_benchmark.synthetic``) as one chunk of arrays."""
    frame, logging, targets = synthetic(rows)
    action, reward = frame["item"].to_numpy(), frame["reward"].to_numpy()
    return {"first": 0, "action": action, "reward": reward, "logging": logging, "targets": targets}


def _data(chunk_rows: int | None) -> str:
    """Which data a job read: the in-memory log's, or the lazily generated chunks'."""
    return "in memory" if chunk_rows is None else f"chunks of {chunk_rows:,} rows"


class Clock:
    """Wall and CPU seconds of this process, summed over the sections timed (``with clock:``)."""

    def __init__(self):
        self.wall = self.cpu = 0.0

    def __enter__(self) -> Clock:
        self._started = (time.perf_counter(), time.process_time())
        return self

    def __exit__(self, *exc) -> None:
        self.wall += time.perf_counter() - self._started[0]
        self.cpu += time.process_time() - self._started[1]

    def report(self, rows: int, minus: Clock | None = None) -> dict:
        """Seconds (wall and CPU, less ``minus``'s) and rows per wall second."""
        wall, cpu = self.wall - (minus.wall if minus else 0), self.cpu - (minus.cpu if minus else 0)
        return {"seconds": wall, "cpu_s": cpu, "rows_per_s": rows / wall}


class LazyLog:
    """An iterable of chunk logs generated on demand, timing its own generation.

    ``n_rows`` gives ``evaluate`` its total; ``build`` (a :class:`Clock`)
    sums the time spent generating and validating chunks (not the pass's).
    """

    def __init__(self, rows: int, chunk_rows: int):
        self.n_rows, self.chunk_rows, self.build = rows, chunk_rows, Clock()

    def __iter__(self):
        from offeval import InteractionLog

        model = model_of()
        for c in chunk_arrays(self.n_rows, self.chunk_rows):
            with self.build:
                n = len(c["action"])
                frame = pd.DataFrame(
                    {
                        "trajectory": np.arange(c["first"], c["first"] + n),
                        "item": c["action"],
                        "reward": c["reward"],
                        "propensity": c["logging"][c["action"]],
                    }
                )
                frame, candidates = frames(frame, c["logging"], model, c["first"])
                log = InteractionLog.from_frame(frame, candidates=candidates)
            yield log
            del log  # the engine holds the chunk while it folds it, not this generator


def _estimators(which: str) -> list:
    from offeval_importance import IS
    from offeval_rewardmodels import DM, DR, SNDR

    return {"is": [IS()], "dr": [DR()], "is+dm+dr+sndr": [IS(), DM(), DR(), SNDR()]}[which]


def _dr(frame: pd.DataFrame) -> tuple[list, list]:
    """The 12 DR estimates and standard errors of an evaluation's frame, if it has DR."""
    dr = frame[frame["estimator"] == "dr"] if "estimator" in frame else frame.iloc[:0]
    return dr["value"].tolist(), dr["se"].tolist()


def run(rows: int, which: str) -> dict:
    """One evaluation pass of 12 policies with the named estimators, the log in memory."""
    from offeval import evaluate

    log, policies = bandit_log(rows)
    estimators = _estimators(which)
    evaluate(log.slice_rows(0, WARM_UP_ROWS), policies, estimators)  # imports, not timed
    base = reset_peak()
    with Clock() as clock:
        frame = evaluate(log, policies, estimators).to_frame()
    values, ses = _dr(frame)
    return {
        "job": f"offeval {which}",
        "data": _data(None),
        "rows": rows,
        **clock.report(rows),
        "peak_extra_mb": peak_mb() - base,
        "values": values,
        "ses": ses,
    }


def run_streamed(rows: int, chunk_rows: int, which: str = "dr") -> dict:
    """DR over a lazily generated iterable of chunk logs: memory bounded by a chunk."""
    from offeval import evaluate

    estimators = _estimators(which)
    targets = next(chunk_arrays(1, 1))["targets"]
    policies = table_policies(targets)
    evaluate(LazyLog(WARM_UP_ROWS, WARM_UP_ROWS), policies, estimators)  # imports, not timed
    base = reset_peak()
    stream = LazyLog(rows, chunk_rows)
    with Clock() as clock:
        frame = evaluate(stream, policies, estimators, progress=False).to_frame()
    values, ses = _dr(frame)
    return {
        "job": f"offeval {which}, streamed",
        "data": _data(chunk_rows),
        "rows": rows,
        **clock.report(rows, minus=stream.build),
        "build_s": stream.build.wall,
        "total_s": clock.wall,
        "peak_extra_mb": peak_mb() - base,
        "values": values,
        "ses": ses,
    }


def run_floor(rows: int, chunk_rows: int | None = None) -> dict:
    """The numpy floor on the in-memory log's data (``chunk_rows``: the streamed one's)."""
    chunks = [whole_arrays(rows)] if chunk_rows is None else chunk_arrays(rows, chunk_rows)
    out = run_dr_floor(chunks, model_of())
    return {"job": "numpy floor", "data": _data(chunk_rows), "rows": rows, **out}


def run_dr_floor(chunks, model: np.ndarray) -> dict:
    """DR with standard errors for 12 table policies, knowing the candidate table's layout.

    Per chunk of arrays (``rewardmodels_benchmark.chunk_arrays``): the reward
    model's predictions as an (n, actions) matrix Q (built untimed: it is the
    data; the floor does not use that this benchmark's Q has equal rows), the
    model's value of every target in one product Q @ T', the weights
    T'[a] / mu, the per-row terms y = Q T' + w (r - q̂(a)), and their sums and
    sums of squares; the estimates and standard errors from those.
    """
    base = reset_peak()
    clock, n = Clock(), 0
    total = total2 = None
    for c in chunks:
        action, reward, logging, targets = c["action"], c["reward"], c["logging"], c["targets"]
        rows, actions = len(action), len(logging)
        q = model[np.tile(np.arange(actions), rows)].reshape(rows, actions)
        with clock:
            t = targets.T  # (actions, policies)
            y = q @ t
            w = t[action] / logging[action][:, None]
            y += w * (reward - q[np.arange(rows), action])[:, None]
            s, s2 = y.sum(axis=0), np.einsum("ij,ij->j", y, y)
            total, total2 = (s, s2) if total is None else (total + s, total2 + s2)
            n += rows
    with clock:
        values = total / n
        ses = np.sqrt((total2 - n * values**2) / (n - 1) / n)
    return {
        **clock.report(n),
        "peak_extra_mb": peak_mb() - base,
        "values": values.tolist(),
        "ses": ses.tolist(),
    }


def run_obp(rows: int, bootstrap: int) -> dict:
    """obp 0.5.7's DoublyRobust on the in-memory log's data, 12 policies (run with obp's python)."""
    from obp.ope import DoublyRobust

    frame, logging, targets = synthetic(rows)
    action = frame["item"].to_numpy()
    reward = frame["reward"].to_numpy()
    pscore = frame["propensity"].to_numpy()
    position = np.zeros(rows, dtype=int)
    q_hat = np.repeat(model_of()[None, :, None], rows, axis=0)  # (rows, actions, 1), as a model's
    base = reset_peak()
    values, value, interval = [], Clock(), Clock()
    for t in targets:
        dist = np.repeat(t[None, :, None], rows, axis=0)
        arrays = dict(
            reward=reward,
            action=action,
            position=position,
            pscore=pscore,
            action_dist=dist,
            estimated_rewards_by_reg_model=q_hat,
        )
        with value:
            values.append(float(DoublyRobust().estimate_policy_value(**arrays)))
        if bootstrap:
            with interval:
                DoublyRobust().estimate_interval(
                    **arrays, n_bootstrap_samples=bootstrap, random_state=0
                )
        del dist, arrays
    return {
        "job": "obp 0.5.7 DoublyRobust",
        "data": _data(None),
        "rows": rows,
        **value.report(rows),
        "interval_s": interval.wall,
        "bootstrap": bootstrap,
        "peak_extra_mb": peak_mb() - base,
        "values": values,
    }


def _timed(python: str, call: str) -> dict:
    """``call`` in a fresh interpreter, with the load average at its start and end."""
    load = os.getloadavg()[0]
    out = in_subprocess(python, "rewardmodels_benchmark", call)
    return {**out, "load": [round(load, 2), round(os.getloadavg()[0], 2)]}


def summary(runs: list[dict]) -> pd.DataFrame:
    """Per job and size: median wall and CPU seconds, rows per second of each, the wall
    seconds' range, the largest peak memory, the load average's range."""
    table = []
    for (job, data, rows), group in pd.DataFrame(runs).groupby(["job", "data", "rows"], sort=False):
        seconds = group["seconds"].to_numpy()
        loads = [x for pair in group["load"] for x in pair]
        row = {
            "job": job,
            "data": data,
            "rows": rows,
            "runs": len(group),
            "seconds": np.median(seconds),
            "M rows/s": rows / np.median(seconds) / 1e6,
            "CPU s": np.median(group["cpu_s"]),
            "M rows/CPU s": rows / np.median(group["cpu_s"]) / 1e6,
            "range (s)": f"{seconds.min():.2f}-{seconds.max():.2f}",
            "peak extra (MB)": group["peak_extra_mb"].max(),
            "load": f"{min(loads):.2f}-{max(loads):.2f}",
        }
        for extra in ("build_s", "interval_s"):
            if extra in group and group[extra].notna().any():
                row[extra] = np.median(group[extra])
        table.append(row)
    return pd.DataFrame(table)


def agreement(runs: list[dict]) -> list[str]:
    """Per data, the largest difference of each job's 12 DR values (and SEs) from offeval's."""
    first: dict[tuple, dict] = {}
    seen, lines = set(), []
    for r in runs:
        if not r.get("values"):
            continue
        ref = first.setdefault((r["data"], r["rows"]), r)
        if (r["data"], r["rows"], r["job"]) in seen or r is ref:
            continue
        seen.add((r["data"], r["rows"], r["job"]))
        if r["job"] == ref["job"]:
            continue
        dv = np.max(np.abs(np.subtract(r["values"], ref["values"])))
        line = f"{r['rows']:,} rows ({r['data']}): {r['job']} vs {ref['job']}: values <= {dv:.1e}"
        if r.get("ses") and ref.get("ses"):
            ds = np.max(np.abs(np.subtract(r["ses"], ref["ses"])) / np.array(ref["ses"]))
            line += f", SEs <= {ds:.1e} relative"
        lines.append(line)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--stream-rows", type=int, nargs="*", default=[1_000_000, 10_000_000])
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--obp-python", help="python of an environment where obp 0.5.7 is")
    parser.add_argument("--obp-bootstrap", type=int, default=100)
    args = parser.parse_args()
    calls = [(sys.executable, f"run({n}, {w!r})") for n in args.rows for w in _ESTIMATORS]
    calls += [(sys.executable, f"run_floor({n})") for n in args.rows]
    for n in args.stream_rows:
        calls.append((sys.executable, f"run_streamed({n}, {args.chunk_rows})"))
        calls.append((sys.executable, f"run_floor({n}, {args.chunk_rows})"))
    runs = []
    for repeat in range(args.repeats):
        for python, call in calls:
            runs.append(_timed(python, call))
            print(f"[{repeat + 1}] {call}: {runs[-1]['seconds']:.2f} s", flush=True)
    if args.obp_python:
        for n in args.rows:
            call = f"run_obp({n}, {args.obp_bootstrap})"
            runs.append(_timed(args.obp_python, call))
            print(f"[obp] {call}: {runs[-1]['seconds']:.2f} s", flush=True)
    with pd.option_context("display.width", 200, "display.float_format", "{:,.3f}".format):
        print(summary(runs).to_string(index=False))
    print("\n".join(agreement(runs)))
    print(f"{N_POLICIES} policies, {N_ACTIONS} candidate actions per session, one BLAS thread")


_ESTIMATORS = ("is", "dr", "is+dm+dr+sndr")

if __name__ == "__main__":
    main()
