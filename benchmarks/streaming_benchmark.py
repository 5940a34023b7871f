"""Linear scaling of the off-policy pass over a log streamed from Parquet.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/streaming_benchmark.py [--sizes 1e6,1e7,1e8]
        [--repeats N] [--batch-rows 250000] [--json PATH]

The workload of ``ncis_benchmark.py``: one impression per session, 10
actions, 12 target policies given as probability columns (``ColumnPolicy``),
IS, CIS(100) and NCIS(100) with standard errors and 95% intervals. Per size,
the log is written once to ``/tmp/offeval_stream_bench/`` in row groups,
generated batch by batch (100M rows never sit in memory; an existing file
with the right row count is reused). Then, in a fresh interpreter per run,
``evaluate(stream_parquet(path, ...), policies, estimators)`` is timed end to
end (reading, decoding, building each batch's log, the pass, the estimates).

Reported per size: median wall seconds, rows per second, time per row over
that of the smallest size (linear scaling: near 1), peak RSS of the process
(``getrusage``) and that peak minus the RSS right after imports (memory
beyond the data: flat if memory does not grow with rows). Runs are
interleaved (run 1 of every size, then run 2, ...); the load average is
recorded at the start and end of every run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from ncis_benchmark import N_ACTIONS, N_POLICIES

HERE = Path(__file__).resolve().parent
DIRECTORY = Path("/tmp/offeval_stream_bench")
MAPPING = {"item": "item"}
WRITE_ROWS = 1_000_000  # rows generated and written per row group


def log_path(rows: int, seed: int = 0) -> Path:
    """Where the log of ``rows`` rows lives."""
    return DIRECTORY / f"ncis_{rows}_seed{seed}.parquet"


def write_log(rows: int, seed: int = 0) -> dict:
    """Write the synthetic log to Parquet batch by batch, unless a full file is there.

    The logging, target and reward parameters are drawn as
    ``ncis_benchmark.synthetic`` draws them; actions and rewards then come
    batch by batch from the same generator, so memory holds one batch.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = log_path(rows, seed)
    if path.exists():
        try:
            if pq.ParquetFile(path).metadata.num_rows == rows:
                return {"write_s": 0.0, "file_mb": path.stat().st_size / 2**20}
        except (OSError, ValueError):
            pass  # unreadable (an interrupted write): write it again
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    logging = rng.dirichlet(np.ones(N_ACTIONS) * 2)
    targets = rng.dirichlet(np.ones(N_ACTIONS) * 2, size=N_POLICIES)
    quality = rng.uniform(0.02, 0.2, N_ACTIONS)
    start = time.perf_counter()
    partial = path.with_suffix(".partial")
    writer = None
    for lo in range(0, rows, WRITE_ROWS):
        n = min(WRITE_ROWS, rows - lo)
        action = rng.choice(N_ACTIONS, size=n, p=logging)
        columns = {
            "trajectory": np.arange(lo, lo + n, dtype=np.int64),
            "item": action.astype(np.int64),
            "reward": (rng.random(n) < quality[action]).astype(float),
            "propensity": logging[action],
        }
        columns.update({f"pi_{j:02d}": targets[j][action] for j in range(N_POLICIES)})
        table = pa.table(columns)
        if writer is None:
            writer = pq.ParquetWriter(partial, table.schema)
        writer.write_table(table, row_group_size=WRITE_ROWS)
    writer.close()
    partial.replace(path)
    return {"write_s": time.perf_counter() - start, "file_mb": path.stat().st_size / 2**20}


def run(rows: int, batch_rows: int, seed: int = 0) -> dict:
    """Time evaluate() over the streamed file; run in a fresh interpreter."""
    import resource

    import pyarrow.parquet  # noqa: F401  (imported by stream_parquet; an import, not data)
    from measure import reset_peak

    from offeval import ColumnPolicy, evaluate, stream_parquet
    from offeval_importance import CIS, IS, NCIS

    after_imports = reset_peak()
    load_start = os.getloadavg()[0]
    policies = [ColumnPolicy(f"pi_{j:02d}") for j in range(N_POLICIES)]
    estimators = [IS(), CIS(cap=100), NCIS(cap=100)]
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    stream = stream_parquet(log_path(rows, seed), MAPPING, batch_rows=batch_rows)
    frame = evaluate(stream, policies, estimators).to_frame()
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
    assert len(frame) == N_POLICIES * 3 and (frame["n_units"] == rows).all()
    return {
        "rows": rows,
        "seconds": seconds,
        "cpu_s": cpu,
        "peak_mb": usage.ru_maxrss / 1024,
        "after_imports_mb": after_imports,
        "load": [load_start, os.getloadavg()[0]],
    }


def _child(call: str) -> dict:
    """``call`` (a function of this module) in a fresh interpreter; its dict back."""
    code = (
        f"import sys, json; sys.path.insert(0, {str(HERE)!r}); "
        f"import streaming_benchmark as b; print(json.dumps(b.{call}))"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode:
        raise RuntimeError(f"{call} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def markdown(results: list[dict]) -> str:
    """The per-size medians (seconds) and maxima (memory) as a Markdown table."""
    head = (
        "| rows | write (s) | file (MB) | seconds | rows / s | time per row / smallest "
        "| CPU s | peak RSS (MB) | RSS after imports (MB) | peak beyond imports (MB) | load |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
    )
    base = min(results, key=lambda r: r["rows"])
    per_row = base["seconds"] / base["rows"]
    lines = []
    for r in results:
        lines.append(
            f"| {r['rows']:,} | {r['write_s']:.1f} | {r['file_mb']:,.0f} | {r['seconds']:.2f} "
            f"| {r['rows'] / r['seconds'] / 1e6:.2f} M | {r['seconds'] / r['rows'] / per_row:.2f} "
            f"| {r['cpu_s']:.2f} | {r['peak_mb']:,.0f} | {r['after_imports_mb']:,.0f} "
            f"| {r['peak_mb'] - r['after_imports_mb']:,.0f} | {r['load']} |"
        )
    return head + "\n".join(lines)


def main() -> None:
    """Write the logs, run the sizes interleaved, print the table (and the runs as JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6,1e7,1e8", help="rows, comma-separated")
    parser.add_argument("--repeats", type=int, help="runs per size (default 3; 1 from 100M)")
    parser.add_argument("--batch-rows", type=int, default=250_000)
    parser.add_argument("--json", help="also write the runs here")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    repeats = {n: args.repeats or (1 if n >= 100_000_000 else 3) for n in sizes}
    written = {}
    for n in sizes:
        written[n] = _child(f"write_log({n})")
        print(f"log of {n:,} rows: {written[n]}", flush=True)
    runs: dict[int, list[dict]] = {n: [] for n in sizes}
    for repeat in range(max(repeats.values())):
        for n in (n for n in sizes if repeat < repeats[n]):
            runs[n].append(_child(f"run({n}, {args.batch_rows})"))
            print(f"[{repeat + 1}] {n:>12,} rows: {runs[n][-1]}", flush=True)
    results = []
    for n in sizes:
        loads = [x for r in runs[n] for x in r["load"]]
        results.append(
            {
                **written[n],
                "rows": n,
                "seconds": float(np.median([r["seconds"] for r in runs[n]])),
                "cpu_s": float(np.median([r["cpu_s"] for r in runs[n]])),
                "peak_mb": max(r["peak_mb"] for r in runs[n]),
                "after_imports_mb": float(np.median([r["after_imports_mb"] for r in runs[n]])),
                "load": f"{min(loads):.2f}-{max(loads):.2f}",
            }
        )
    print(f"\nbatch_rows={args.batch_rows:,}, OPENBLAS_NUM_THREADS=1, medians of runs\n")
    print(markdown(results))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": results, "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
