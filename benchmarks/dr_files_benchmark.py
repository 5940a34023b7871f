"""DR from files at the command line: a log and its candidate table streamed from Parquet.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/dr_files_benchmark.py [--rows 1000000 10000000]
        [--repeats 3] [--batch-rows 250000]

The data of ``rewardmodels_benchmark.py``'s streamed job (one impression per
session, 10 actions, 12 target policies, a reward model's prediction per
action), written once per size to ``/tmp/offeval_dr_files/`` as two Parquet
files, batch by batch: the log (one row per session, each policy's
probability of the logged action as a column) and the candidate table (the 10
actions of every session with the logger's probability, the prediction and
each policy's probability): 100M candidate rows at 10M sessions. Each run is
``offeval evaluate LOG --candidates CANDS --stream --estimator dr --policy
...`` in a fresh interpreter (the command line's ``main``), timed end to end
(imports, reading, checking, the pass, writing ``estimates.csv``) with its
own peak resident memory. Row groups hold at most 1,048,576 rows (pyarrow's
default cap): 1M log rows, about 105,000 sessions of candidates. The 12
values are checked against a numpy computation of DR on the generated arrays
(chunk by chunk, no file read).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from measure import in_subprocess, peak_mb
from ncis_benchmark import N_ACTIONS, N_POLICIES
from rewardmodels_benchmark import chunk_arrays, model_of

DIRECTORY = Path("/tmp/offeval_dr_files")
#: Sessions generated and written per row group.
WRITE_ROWS = 1_000_000


def paths(rows: int, group: int = WRITE_ROWS) -> tuple[Path, Path]:
    """The log's and the candidate table's files for ``rows`` sessions, ``group`` sessions per
    Parquet row group."""
    return (
        DIRECTORY / f"log_{rows}_{group}.parquet",
        DIRECTORY / f"cands_{rows}_{group}.parquet",
    )


def write(rows: int, group: int = WRITE_ROWS) -> dict:
    """Write both files (unless complete ones are there) and DR's 12 values by numpy."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    log_file, cand_file = paths(rows, group)
    truth = DIRECTORY / f"dr_{rows}_{group}.json"
    if truth.exists() and log_file.exists() and cand_file.exists():
        return json.loads(truth.read_text())
    DIRECTORY.mkdir(parents=True, exist_ok=True)
    model = model_of()
    writers: dict = {}
    sums = np.zeros(N_POLICIES)
    start = time.perf_counter()
    for c in chunk_arrays(rows, group):
        action, reward, logging, targets = c["action"], c["reward"], c["logging"], c["targets"]
        n = len(action)
        ids = np.arange(c["first"], c["first"] + n)
        log = {"trajectory": ids, "item": action, "reward": reward}
        log.update(propensity=logging[action], reward_model=model[action])
        log.update({f"pi_{j:02d}": targets[j][action] for j in range(N_POLICIES)})
        items = np.tile(np.arange(N_ACTIONS), n)
        cands = {
            "trajectory": np.repeat(ids, N_ACTIONS),
            "position": np.ones(n * N_ACTIONS, dtype=np.int64),
        }
        cands.update(item=items, propensity=logging[items], reward_model=model[items])
        cands.update({f"pi_{j:02d}": targets[j][items] for j in range(N_POLICIES)})
        for name, columns in (("log", log), ("cands", cands)):
            table = pa.table(columns)
            if name not in writers:
                target = log_file if name == "log" else cand_file
                writers[name] = pq.ParquetWriter(target.with_suffix(".partial"), table.schema)
            writers[name].write_table(table)
        # DR per policy: model's value under the target + w (r - q(a)), summed over sessions
        w = targets[:, action] / logging[action]
        sums += (targets @ model) * n + w @ (reward - model[action])
    for name, writer in writers.items():
        writer.close()
        target = log_file if name == "log" else cand_file
        target.with_suffix(".partial").replace(target)
    out = {"values": (sums / rows).tolist(), "write_s": time.perf_counter() - start}
    truth.write_text(json.dumps(out))
    return out


def run_cli(rows: int, batch_rows: int, group: int = WRITE_ROWS) -> dict:
    """``offeval evaluate`` on the files, streamed, in this (fresh) interpreter: timed from
    before its imports; the peak is this process's own (VmHWM)."""
    start = time.perf_counter()
    import pandas as pd

    from offeval.cli.shell import main

    log_file, cand_file = paths(rows, group)
    policies = [a for j in range(N_POLICIES) for a in ("--policy", f"p{j:02d}=pi_{j:02d}")]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out"
        argv = ["evaluate", str(log_file), "--candidates", str(cand_file), "--stream"]
        argv += ["--chunk-rows", str(batch_rows), "--estimator", "dr", *policies]
        argv += ["--quiet", "--out", str(out)]
        code = main(argv)
        seconds = time.perf_counter() - start
        assert code == 0, code
        table = pd.read_csv(out / "estimates.csv").sort_values("policy")
    values = table["value"].tolist()
    return {"rows": rows, "seconds": seconds, "peak_mb": peak_mb(), "values": values}


def run_read_floor(rows: int, batch_rows: int, group: int = WRITE_ROWS) -> dict:
    """The least a streamed read of both files costs: pyarrow decoding every column of the
    log in batches of ``batch_rows`` and of the candidate table in batches of ten times that
    (the candidates of a batch of sessions), nothing converted or checked."""
    import pyarrow.parquet as pq

    start = time.perf_counter()
    for path, size in zip(paths(rows, group), (batch_rows, batch_rows * N_ACTIONS), strict=True):
        for batch in pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=size):
            del batch
    seconds = time.perf_counter() - start
    return {"rows": rows, "seconds": seconds, "peak_mb": peak_mb()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-rows", type=int, default=250_000)
    parser.add_argument(
        "--row-group", type=int, default=WRITE_ROWS, help="sessions per Parquet row group"
    )
    args = parser.parse_args()
    truth = {}
    for rows in args.rows:
        truth[rows] = write(rows, args.row_group)
        sizes = [p.stat().st_size / 2**20 for p in paths(rows, args.row_group)]
        print(f"{rows:,} sessions: files of {sizes[0]:.0f} MB and {sizes[1]:.0f} MB", flush=True)
    jobs = {"offeval evaluate --stream": "run_cli", "pyarrow read floor": "run_read_floor"}
    runs: dict = {(job, rows): [] for job in jobs for rows in args.rows}
    for repeat in range(args.repeats):
        for (job, rows), results in runs.items():
            load = os.getloadavg()[0]
            call = f"{jobs[job]}({rows}, {args.batch_rows}, {args.row_group})"
            out = in_subprocess(sys.executable, "dr_files_benchmark", call)
            results.append(out)
            check = ""
            if "values" in out:
                gap = np.max(np.abs(np.array(out["values"]) - truth[rows]["values"]))
                check = f"; DR values within {gap:.1e} of numpy"
            print(
                f"[{repeat + 1}] {job}, {rows:,} rows: {out['seconds']:.2f} s, peak RSS "
                f"{out['peak_mb']:.0f} MB, load {load:.2f}{check}",
                flush=True,
            )
    print("| job | rows | seconds (median, range) | log rows / s | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|")
    for (job, rows), results in runs.items():
        seconds = sorted(r["seconds"] for r in results)
        median = float(np.median(seconds))
        peak = max(r["peak_mb"] for r in results)
        print(
            f"| {job} | {rows:,} | {median:.2f} ({seconds[0]:.2f}-{seconds[-1]:.2f}) | "
            f"{rows / median / 1e6:.2f} M | {peak:.0f} |"
        )


if __name__ == "__main__":
    main()
