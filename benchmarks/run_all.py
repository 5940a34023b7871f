"""Every row of the performance table, beside its floor and peers, in one command.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/run_all.py            # full sizes, 3 runs
    OPENBLAS_NUM_THREADS=1 python benchmarks/run_all.py --quick    # a tenth of the sizes
    python benchmarks/run_all.py --only offpolicy dcg --repeats 5
    python benchmarks/run_all.py --baseline /path/to/older/checkout   # before and after

Each measurement runs in a fresh interpreter (so peak memory is its own) and
the runs are interleaved: run 1 of every job, then run 2 of every job, so
load from other work falls on all of them alike. Reported per job: the
median, min and max seconds over the runs, the peak memory beyond the data,
and the ratio of offeval's median to the job it is compared with (its floor
or the fastest peer). ``--baseline`` times offeval's jobs a second time with
an older checkout's ``core`` and ``plugins`` first on the path ("before").
Peers that are not installed are skipped and listed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent


@dataclass
class Job:
    """One timed command: a function of a benchmark module, run in a fresh interpreter."""

    row: str
    tool: str
    module: str
    call: str
    seconds_key: str = "seconds"
    compare_to: str | None = None  # the tool of the same row offeval is measured against
    needs: str | None = None  # module that must be importable (peers)
    offeval: bool = False  # runs offeval code (timed again under --baseline)
    runs: list[dict] = field(default_factory=list)


def ours(row: str, tool: str, module: str, call: str, compare_to: str) -> Job:
    """An offeval job of ``row``, measured against the job ``compare_to`` of the same row."""
    return Job(row, tool, module, call, compare_to=compare_to, offeval=True)


def jobs(quick: bool) -> list[Job]:
    """The table's rows at full size (or a tenth of it with ``quick``)."""
    scale = 10 if quick else 1
    rows, traj, users = 10_000_000 // scale, 1_000_000 // scale, 100_000 // scale
    big_users, banners = 1_000_000 // scale, 1_000_000 // scale
    chunk = 250_000
    out = [
        Job(
            "offpolicy",
            "offeval",
            "ncis_benchmark",
            f"run_offeval({rows}, {chunk})",
            "estimate_s",
            "same-output floor",
            offeval=True,
        ),
        Job(
            "offpolicy",
            "offeval, 2 workers",
            "ncis_benchmark",
            f"run_offeval({rows}, {chunk}, 2)",
            "estimate_s",
            "same-output floor",
            offeval=True,
        ),
        Job("offpolicy", "same-output floor", "floors", f"run_dsyrk_floor({rows}, {chunk})"),
        Job("offpolicy", "moments floor", "floors", f"run_moments_floor({rows})"),
        ours(
            "one_policy_is",
            "offeval",
            "ncis_benchmark",
            f"run_offeval_one({rows}, {chunk})",
            "moments floor",
        ),
        Job("one_policy_is", "moments floor", "floors", f"run_moments_floor({rows}, 1)"),
        ours(
            "log_build",
            "offeval, grouped",
            "dcg_benchmark",
            f"run_build({traj}, 10, False)",
            "read floor",
        ),
        ours(
            "log_build",
            "offeval, shuffled",
            "dcg_benchmark",
            f"run_build({traj}, 10, True)",
            "read floor",
        ),
        Job("log_build", "read floor", "floors", f"run_read_floor({traj}, 10)"),
        ours("dcg", "offeval", "dcg_benchmark", f"run_offeval({traj}, 10)", "numpy floor"),
        ours(
            "dcg",
            "offeval, 2 workers",
            "dcg_benchmark",
            f"run_offeval({traj}, 10, 2)",
            "numpy floor",
        ),
        Job("dcg", "numpy floor", "floors", f"run_dcg_floor({traj}, 10)"),
        ours("ir_100k", "offeval", "ir_benchmark", f"run_offeval({users})", "fastest peer"),
        Job(
            "ir_100k",
            "pytrec_eval",
            "ir_benchmark",
            f"run_pytrec_eval({users})",
            needs="pytrec_eval",
        ),
        Job("ir_100k", "ranx", "ir_benchmark", f"run_ranx({users})", needs="ranx"),
        Job(
            "ir_100k",
            "ir-measures",
            "ir_benchmark",
            f"run_ir_measures({users})",
            needs="ir_measures",
        ),
        ours("ir_1m", "offeval", "ir_benchmark", f"run_offeval({big_users})", "offeval 100k x 10"),
        Job("demo", "offeval demo", "run_all", "run_demo()", offeval=True),
        ours(
            "disagreement",
            "offeval",
            "disagreement_benchmark",
            f"run_cd({banners}, 8)",
            "rank-rows floor",
        ),
        Job(
            "disagreement", "rank-rows floor", "disagreement_benchmark", f"run_floor({banners}, 8)"
        ),
        ours(
            "decision",
            "offeval",
            "decision_benchmark",
            f"run('rank_distribution', 1000, {100_000 // scale})",
            "numpy floor",
        ),
        Job(
            "decision",
            "numpy floor",
            "decision_benchmark",
            f"run('numpy floor', 1000, {100_000 // scale})",
        ),
    ]
    return out


def run_demo() -> dict:
    """``offeval demo`` as a user runs it: wall time and the peak resident memory."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        command = [sys.executable, "-m", "offeval", "demo", "--quiet"]
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=directory, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
    if status:
        raise RuntimeError(f"offeval demo failed with status {status}")
    return {"seconds": seconds, "peak_mb": usage.ru_maxrss / 1024}


def _run(job: Job, pythonpath: str | None) -> dict:
    code = (
        f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import {job.module} as b; "
        f"print(json.dumps(b.{job.call}))"
    )
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=HERE.parent
    )
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["seconds"] = result[job.seconds_key]
    return result


def _table(all_jobs: list[Job]) -> pd.DataFrame:
    rows = []
    for job in all_jobs:
        done = [r for r in job.runs if "seconds" in r]
        times = pd.Series([r["seconds"] for r in done], dtype=float)
        errors = [r["error"] for r in job.runs if "error" in r]
        memory = [r.get("peak_extra_mb", r.get("peak_mb")) for r in done]
        rows.append(
            {
                "row": job.row,
                "tool": job.tool,
                "median_s": times.median(),
                "min_s": times.min(),
                "max_s": times.max(),
                "peak_mb": max((m for m in memory if m is not None), default=float("nan")),
                "error": errors[0] if errors else "",
                "compare_to": job.compare_to or "",
            }
        )
    table = pd.DataFrame(rows)
    table["ratio"] = [_ratio(table, row) for _, row in table.iterrows()]
    return table


def _ratio(table: pd.DataFrame, row: pd.Series) -> float:
    """offeval's median over the median of the job it is compared with."""
    target = row["compare_to"]
    if not target:
        return float("nan")
    same = table[
        (table["row"] == row["row"]) & ~table["tool"].str.startswith(("offeval", "before"))
    ]
    if target == "fastest peer":
        reference = same["median_s"].min()
    elif target == "offeval 100k x 10":
        small = table[(table["row"] == "ir_100k") & (table["tool"] == row["tool"])]
        reference = 10 * small["median_s"].min()
    else:
        reference = same.loc[same["tool"] == target, "median_s"].min()
    return row["median_s"] / reference


def main() -> None:
    """Run the selected rows, interleaved, and print the table (markdown with ``--markdown``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of every size")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", nargs="+", help="rows to run (default: all)")
    parser.add_argument("--baseline", help="an older checkout, timed as 'before'")
    parser.add_argument("--json", help="also write the runs here")
    args = parser.parse_args()
    selected = [j for j in jobs(args.quick) if not args.only or j.row in args.only]
    missing = sorted(
        {j.needs for j in selected if j.needs and not importlib.util.find_spec(j.needs)}
    )
    selected = [j for j in selected if j.needs not in missing]
    if args.baseline:
        base = Path(args.baseline).resolve()
        path = os.pathsep.join([str(base / "core"), str(base / "plugins")])
        before = [
            Job(j.row, f"before: {j.tool}", j.module, j.call, j.seconds_key, j.compare_to, j.needs)
            for j in selected
            if j.offeval
        ]
        paths = {id(j): path for j in before}
        selected = selected + before
    else:
        paths = {}
    for repeat in range(args.repeats):
        for job in selected:
            job.runs.append(_run(job, paths.get(id(job))))
            last = job.runs[-1]
            shown = f"{last['seconds']:.2f} s" if "seconds" in last else last["error"]
            print(f"[{repeat + 1}/{args.repeats}] {job.row:14} {job.tool:22} {shown}", flush=True)
    table = _table(selected)
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(table.round(3).to_string(index=False))
    if missing:
        print(f"peers not installed, skipped: {', '.join(missing)}")
    if args.json:
        Path(args.json).write_text(json.dumps([vars(j) for j in selected], indent=1, default=str))


if __name__ == "__main__":
    main()
