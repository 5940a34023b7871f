"""Start-up: ``offeval --help``, argument mistakes and a small ``offeval metrics``, as whole
processes.

Usage::

    python benchmarks/startup_benchmark.py [--repeats 5] [--baseline /path/to/older/checkout]

Each command runs as a fresh ``python -m offeval`` process (what the ``offeval``
script runs); wall time and peak resident memory come from ``os.wait4``. The
runs are interleaved (run 1 of every command, then run 2, ...) so load from
other work falls on all of them alike; medians are reported. ``--baseline``
runs the same commands with an older checkout's ``core`` and ``plugins`` first
on ``PYTHONPATH`` ("before"). ``metrics`` reads trec_eval's own test collection
(tests/plugins/ir/trec_eval_test: results.test against qrels.test).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREC = ROOT / "tests" / "plugins" / "ir" / "trec_eval_test"
#: name -> the arguments of ``offeval`` (each timed as one whole process).
COMMANDS = {
    "offeval --help": ["--help"],
    "offeval metrics (argument error)": ["metrics"],
    "offeval evaluate (argument error)": ["evaluate"],
    "offeval nosuch (unknown command)": ["nosuch"],
    "offeval metrics RUN QRELS": ["metrics", str(TREC / "results.test"), str(TREC / "qrels.test")],
}


def time_process(command: list[str], env: dict[str, str] | None = None) -> dict:
    """One process: exit code, wall seconds, CPU seconds and peak memory (MB)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    return {
        "code": os.waitstatus_to_exitcode(status),
        "seconds": seconds,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
    }


def checkout_env(checkout: str) -> dict[str, str]:
    """This environment with an older checkout's ``core`` and ``plugins`` first on
    ``PYTHONPATH`` (its offeval runs instead of this one's)."""
    base = Path(checkout).resolve()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(base / "core"), str(base / "plugins"), env.get("PYTHONPATH", "")]
    )
    return env


def run_once(args: list[str], env: dict[str, str] | None) -> dict:
    """One ``python -m offeval args`` process, in ``env`` (None: this environment)."""
    return time_process([sys.executable, "-m", "offeval", *args], env)


def main() -> None:
    """Time every command (and the baseline's), interleaved, and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", help="an older checkout, timed as 'before'")
    parser.add_argument("--json", help="also write every run here")
    args = parser.parse_args()
    versions: dict[str, dict[str, str] | None] = {}  # version -> its environment
    if args.baseline:
        versions["before"] = checkout_env(args.baseline)
    versions["after"] = None
    runs: dict[tuple[str, str], list[dict]] = {
        (version, name): [] for name in COMMANDS for version in versions
    }
    for command in COMMANDS.values():  # a warm-up run of each (file caches)
        for env in versions.values():
            run_once(command, env)
    for repeat in range(args.repeats):
        for name, command in COMMANDS.items():
            for version, env in versions.items():
                runs[version, name].append(run_once(command, env))
        print(f"run {repeat + 1}/{args.repeats} done", file=sys.stderr, flush=True)
    width = max(map(len, COMMANDS))
    print(
        f"{'command':<{width}}  {'version':<7} {'exit':>4} {'median s':>9} "
        f"{'min s':>7} {'max s':>7} {'cpu s':>7} {'peak MB':>8}"
    )
    for name in COMMANDS:
        for version in versions:
            done = runs[version, name]
            wall = [r["seconds"] for r in done]
            print(
                f"{name:<{width}}  {version:<7} {done[-1]['code']:>4} "
                f"{statistics.median(wall):>9.3f} {min(wall):>7.3f} {max(wall):>7.3f} "
                f"{statistics.median(r['cpu_s'] for r in done):>7.3f} "
                f"{max(r['peak_mb'] for r in done):>8.1f}"
            )
    if args.json:
        table = [{"command": n, "version": v, "runs": r} for (v, n), r in runs.items()]
        Path(args.json).write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()
