"""``offeval trec_eval`` against trec_eval itself on a large synthetic collection, as whole
processes.

Usage::

    python benchmarks/trec_eval_benchmark.py --trec-eval /path/to/trec_eval \\
        [--queries 20000] [--repeats 3] [--baseline /path/to/older/checkout]

The collection: ``--queries`` queries of 100 retrieved documents each (out of
3,000), scores rounded to one decimal (many ties), text docids, and 30 judged
documents per query graded -1 (in the pool, not judged), 0, 1, 2 or 3, two
thirds of them retrieved. At 20,000 queries the run has 2M lines. Each command
line (``-q`` with trec_eval's default measures, and ``-q -m all_trec``) runs
as a fresh process for trec_eval (a compiled trec_eval 10.0, given by
``--trec-eval``; left out without it), ``offeval trec_eval`` and, with
``--baseline``, an older checkout's ``offeval trec_eval``; repeats are
interleaved and medians reported. The outputs of offeval and trec_eval are
compared line for line once, and the number of differing lines is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from startup_benchmark import checkout_env, time_process

DOCUMENTS = 3_000
RETRIEVED = 100
JUDGED = 30
GRADES = np.array([-1, 0, 0, 1, 2, 3])
COMMAND_LINES = {"-q (official)": ["-q"], "-q -m all_trec": ["-q", "-m", "all_trec"]}


def write_collection(folder: Path, queries: int, seed: int = 21) -> tuple[Path, Path]:
    """A run and qrels of ``queries`` queries as TREC files in ``folder``."""
    rng = np.random.default_rng(seed)
    qids = np.char.add("q", np.arange(1, queries + 1).astype(str))
    retrieved = np.argsort(rng.random((queries, DOCUMENTS)), axis=1)[:, :RETRIEVED]
    scores = np.round(rng.normal(size=(queries, RETRIEVED)), 1)
    ranks = np.broadcast_to(np.arange(1, RETRIEVED + 1), retrieved.shape)
    run = folder / "run.txt"  # the names main() reads
    lines = np.char.add(
        np.char.add(np.repeat(qids, RETRIEVED), " Q0 D"),
        np.char.zfill(retrieved.ravel().astype(str), 5),
    )
    tails = np.char.add(
        np.char.add(" ", ranks.ravel().astype(str)),
        np.char.add(np.char.add(" ", np.char.mod("%.1f", scores.ravel())), " synth"),
    )
    run.write_text("\n".join(np.char.add(lines, tails)) + "\n")
    from_run = retrieved[:, : 2 * JUDGED // 3]
    others = rng.integers(0, DOCUMENTS, (queries, JUDGED - from_run.shape[1]))
    judged = np.concatenate([from_run, others], axis=1)
    first = np.sort(judged, axis=1)
    keep = np.ones_like(first, dtype=bool)
    keep[:, 1:] = first[:, 1:] != first[:, :-1]  # a docid judged once per query
    qrel_qids = np.repeat(qids, JUDGED).reshape(queries, JUDGED)[keep]
    grades = rng.choice(GRADES, size=first.shape)[keep]
    qrels = folder / "qrels.txt"
    qrel_lines = np.char.add(
        np.char.add(qrel_qids, " 0 D"), np.char.zfill(first[keep].astype(str), 5)
    )
    qrels.write_text(
        "\n".join(np.char.add(np.char.add(qrel_lines, " "), grades.astype(str))) + "\n"
    )
    return qrels, run


def commands(args: argparse.Namespace) -> dict[str, tuple[list[str], dict[str, str]]]:
    """tool -> the command before trec_eval's arguments and its environment."""
    env = dict(os.environ)
    tools = {}
    if args.trec_eval:
        tools["trec_eval"] = ([args.trec_eval], env)
    if args.baseline:
        tools["offeval (before)"] = (
            [sys.executable, "-m", "offeval", "trec_eval"],
            checkout_env(args.baseline),
        )
    tools["offeval"] = ([sys.executable, "-m", "offeval", "trec_eval"], env)
    return tools


def differing_lines(tools: dict, arguments: list[str], qrels: Path, run: Path) -> int | None:
    """Lines in which offeval's output and trec_eval's differ (None without trec_eval)."""
    if "trec_eval" not in tools:
        return None
    outputs = []
    for tool in ("trec_eval", "offeval"):
        command, env = tools[tool]
        done = subprocess.run(
            [*command, *arguments, str(qrels), str(run)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(done.stdout.splitlines())
    ours, theirs = outputs[1], outputs[0]
    return sum(a != b for a, b in zip(ours, theirs, strict=False)) + abs(len(ours) - len(theirs))


def main() -> None:
    """Write the collection, time every tool on every command line, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", help="a compiled trec_eval binary")
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", help="an older checkout, timed as 'offeval (before)'")
    parser.add_argument("--write-to", help=argparse.SUPPRESS)  # the child that writes the files
    args = parser.parse_args()
    if args.write_to:
        write_collection(Path(args.write_to), args.queries)
        return
    tools = commands(args)
    with tempfile.TemporaryDirectory() as folder:
        # Written by a child process, so that the timed processes (forked from this one)
        # do not start with the generator's memory in their peak.
        write = [sys.executable, __file__, "--write-to", folder, "--queries", str(args.queries)]
        subprocess.run(write, check=True)
        qrels, run = Path(folder) / "qrels.txt", Path(folder) / "run.txt"
        print(f"{args.queries} queries, {args.queries * RETRIEVED} run lines", file=sys.stderr)
        times: dict[tuple[str, str], list[dict]] = {}
        for repeat in range(args.repeats + 1):  # the first round warms the file cache
            for line, arguments in COMMAND_LINES.items():
                for tool, (command, env) in tools.items():
                    done = time_process([*command, *arguments, str(qrels), str(run)], env)
                    if repeat:
                        times.setdefault((line, tool), []).append(done)
        print(f"{'command line':<16} {'tool':<17} {'median s':>9} {'cpu s':>7} {'peak MB':>8}")
        for (line, tool), done in times.items():
            print(
                f"{line:<16} {tool:<17} {statistics.median(d['seconds'] for d in done):>9.2f} "
                f"{statistics.median(d['cpu_s'] for d in done):>7.2f} "
                f"{max(d['peak_mb'] for d in done):>8.0f}"
            )
        for line, arguments in COMMAND_LINES.items():
            differ = differing_lines(tools, arguments, qrels, run)
            if differ is not None:
                print(f"{line}: {differ} lines differ from trec_eval's output")


if __name__ == "__main__":
    main()
