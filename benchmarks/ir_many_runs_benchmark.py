"""Many runs, one qrels: nDCG@100 and DCG@100 of 200 top-100 matrices, offeval vs numpy and peers.

Usage: python benchmarks/ir_many_runs_benchmark.py [--runs 200] [--users 1000] [--repeats 3]

A recommender's evaluation: 1,000 users, 2,000 items, held-out interactions
(2% of the cells per user, at least one, graded 1-5) and 200 models, each a
(users x 100) top-n matrix of item indices in rank order. Every job starts
from the same qrels frame (user, item, relevance) and top-n matrices and
ends with each model's mean nDCG@100 and DCG@100 (the ``trec_eval``
preset: linear gain, log2 discount, ideal ranking from the labels):

- ``offeval compute_topn``: the qrels prepared once (``prepare_qrels``:
  checked, numbered, sorted), then per model ``compute_topn`` (per-user
  values, means);
- ``offeval evaluate_topn``: the same through the statistics engine, with
  standard errors and intervals for every model (``RunEvaluation.table``);
- ``offeval evaluate_runs``: the models as long run frames (user, item,
  score), judged a block of runs at a time (``PreparedQrels.runs_measures``),
  with intervals (the frames are built before the clock starts);
- ``offeval compute_measures``: the frames one at a time with the per-run
  path (every run re-checks and re-sorts the qrels; the path before
  prepared qrels);
- ``numpy floor``: a users x items relevance matrix, the ideal DCG from the
  sorted labels once, then per model one gather of the top-n cells' grades,
  ``grades @ discounts`` and the nDCG ratio;
- ``pytrec_eval`` (ndcg_cut_100; it has no DCG) and ``ranx`` (ndcg@100 and
  dcg@100): the qrels converted once, each model converted to the tool's run
  (scores 100 down to 1) and evaluated. ranx's just-in-time compilation is
  warmed on a first model outside the clock. Peers are timed on the first
  ``--peer-runs`` models (default 20) and reported per model.

Each job runs in a fresh interpreter, its modules imported before the clock
starts (offeval's load some modules on first use; they are imported first);
repeats are interleaved (every job's
first run, then every job's second, ...), and the table gives the median
time per model and its ratio to the numpy floor's, with the mean nDCG@100
and DCG@100 over the first 20 models (all tools agree).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time

import numpy as np
import pandas as pd
from measure import in_subprocess

ITEMS, N, SHARE = 2000, 100, 0.02
#: The means shown are over the first CHECK models, which every job times.
CHECK = 20


def data(runs: int, users: int, seed: int = 0):
    """The qrels frame, the relevance matrix and ``runs`` top-N matrices."""
    rng = np.random.default_rng(seed)
    relevant = rng.random((users, ITEMS)) < SHARE
    relevant[np.arange(users), rng.integers(0, ITEMS, users)] = True  # every user judged
    grades = np.where(relevant, rng.integers(1, 6, (users, ITEMS)), 0)
    u, i = np.nonzero(grades)
    qrels = pd.DataFrame({"user": u, "item": i, "relevance": grades[u, i]})
    tops = []
    for _ in range(runs):
        skill = rng.uniform(0, 1.5)
        noisy = grades * skill + rng.normal(size=(users, ITEMS)).astype(np.float32)
        part = np.argpartition(-noisy, N, axis=1)[:, :N]
        order = np.argsort(-np.take_along_axis(noisy, part, axis=1), axis=1)
        tops.append(np.take_along_axis(part, order, axis=1))
    return qrels, grades, tops


def _frames(tops: list[np.ndarray]) -> list[pd.DataFrame]:
    users, width = tops[0].shape
    user = np.repeat(np.arange(users), width)
    score = np.tile(np.arange(width, 0, -1, dtype=float), users)
    return [pd.DataFrame({"user": user, "item": t.ravel(), "score": score}) for t in tops]


def _imported(modules: tuple[str, ...]) -> None:
    """Import ``modules`` (imports are not part of a job)."""
    for module in modules:
        importlib.import_module(module)


def _result(tool: str, runs: int, users: int, seconds: float, ndcg, dcg) -> dict:
    """A job's row: its time, and the mean nDCG@100 and DCG@100 of the first CHECK models."""
    return {
        "tool": tool,
        "runs": runs,
        "users": users,
        "seconds": seconds,
        "ms_per_run": 1000 * seconds / runs,
        "ndcg@100": float(np.mean(list(ndcg)[:CHECK])),
        "dcg@100": float(np.mean(list(dcg)[:CHECK])) if dcg is not None else float("nan"),
    }


def _timed(tool: str, runs: int, users: int, job, modules: tuple[str, ...] = ()) -> dict:
    _imported(modules)
    qrels, grades, tops = data(runs, users)
    start = time.perf_counter()
    ndcg, dcg = job(qrels, grades, tops)
    return _result(tool, runs, users, time.perf_counter() - start, ndcg, dcg)


MEASURES = ["nDCG@100", "DCG@100"]
#: What offeval's jobs import before the clock starts (its plugin and the modules that
#: load on first use: the IR modules, the engine, scipy's distributions).
OFFEVAL = (
    "offeval_ir",
    "offeval_ir.prepared",
    "offeval_ir.topn",
    "offeval_ir.runs",
    "offeval.engine.evaluation",
    "offeval.stats.inference",
    "scipy.special",
    "scipy.stats",
)


def run_compute_topn(runs: int, users: int) -> dict:
    def job(qrels, grades, tops):
        from offeval_ir.prepared import prepare_qrels
        from offeval_ir.topn import compute_topn

        prepared = prepare_qrels(qrels)
        means = [compute_topn(t, prepared, MEASURES).mean for t in tops]
        return [m["nDCG@100"] for m in means], [m["DCG@100"] for m in means]

    return _timed("offeval compute_topn", runs, users, job, OFFEVAL)


def run_evaluate_topn(runs: int, users: int) -> dict:
    def job(qrels, grades, tops):
        from offeval_ir.topn import evaluate_topn

        names = [f"m{j}" for j in range(len(tops))]
        table = evaluate_topn(dict(zip(names, tops, strict=True)), qrels, MEASURES).table()
        means = table.pivot(index="run", columns="measure", values="mean").loc[names]
        return means["nDCG@100"], means["DCG@100"]

    return _timed("offeval evaluate_topn", runs, users, job, OFFEVAL)


def run_evaluate_runs(runs: int, users: int) -> dict:
    _imported(OFFEVAL)
    from offeval_ir import evaluate_runs

    qrels, _, tops = data(runs, users)
    frames = {f"m{j}": f for j, f in enumerate(_frames(tops))}
    start = time.perf_counter()
    table = evaluate_runs(frames, qrels, MEASURES).table()
    seconds = time.perf_counter() - start
    means = table.pivot(index="run", columns="measure", values="mean").loc[list(frames)]
    return _result(
        "offeval evaluate_runs", runs, users, seconds, means["nDCG@100"], means["DCG@100"]
    )


def run_compute_measures(runs: int, users: int) -> dict:
    _imported(OFFEVAL)
    from offeval_ir import compute_measures

    qrels, _, tops = data(runs, users)
    frames = _frames(tops)
    start = time.perf_counter()
    means = [compute_measures(f, qrels, MEASURES).mean for f in frames]
    seconds = time.perf_counter() - start
    return _result(
        "offeval compute_measures (per run)",
        runs,
        users,
        seconds,
        [m["nDCG@100"] for m in means],
        [m["DCG@100"] for m in means],
    )


def run_floor(runs: int, users: int) -> dict:
    def job(qrels, grades, tops):
        discounts = 1 / np.log2(np.arange(2, N + 2))
        ideal = -np.sort(-grades, axis=1)[:, :N] @ discounts
        rows = np.arange(grades.shape[0])[:, None]
        ndcg, dcg = [], []
        for top in tops:
            d = grades[rows, top] @ discounts
            ndcg.append((d / ideal).mean())
            dcg.append(d.mean())
        return ndcg, dcg

    return _timed("numpy floor", runs, users, job)


def _qrels_dict(qrels: pd.DataFrame) -> dict:
    out: dict = {}
    for u, i, g in zip(
        qrels["user"].astype(str), qrels["item"].astype(str), qrels["relevance"], strict=True
    ):
        out.setdefault(u, {})[i] = int(g)
    return out


def _run_dict(top: np.ndarray) -> dict:
    scores = [float(s) for s in range(top.shape[1], 0, -1)]
    return {
        str(u): dict(zip(map(str, row.tolist()), scores, strict=True)) for u, row in enumerate(top)
    }


def run_pytrec_eval(runs: int, users: int) -> dict:
    def job(qrels, grades, tops):
        import pytrec_eval

        evaluator = pytrec_eval.RelevanceEvaluator(_qrels_dict(qrels), {"ndcg_cut_100"})
        ndcg = []
        for top in tops:
            per_query = evaluator.evaluate(_run_dict(top))
            ndcg.append(np.mean([m["ndcg_cut_100"] for m in per_query.values()]))
        return ndcg, None

    return _timed("pytrec_eval", runs, users, job, ("pytrec_eval",))


def run_ranx(runs: int, users: int) -> dict:
    from ranx import Qrels, Run, evaluate

    qrels, _, tops = data(runs + 1, users)
    evaluate(Qrels(_qrels_dict(qrels)), Run(_run_dict(tops[-1])), ["ndcg@100", "dcg@100"])  # JIT
    start = time.perf_counter()
    ranx_qrels = Qrels(_qrels_dict(qrels))
    ndcg, dcg = [], []
    for top in tops[:-1]:
        out = evaluate(ranx_qrels, Run(_run_dict(top)), ["ndcg@100", "dcg@100"])
        ndcg.append(out["ndcg@100"])
        dcg.append(out["dcg@100"])
    return _result("ranx", runs, users, time.perf_counter() - start, ndcg, dcg)


JOBS = {
    "floor": "numpy floor",
    "compute_topn": "offeval compute_topn",
    "evaluate_topn": "offeval evaluate_topn",
    "evaluate_runs": "offeval evaluate_runs",
    "compute_measures": "offeval compute_measures (per run)",
    "pytrec_eval": "pytrec_eval",
    "ranx": "ranx",
}
PEERS = ("pytrec_eval", "ranx", "compute_measures")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--peer-runs", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", nargs="+", default=list(JOBS), choices=list(JOBS))
    args = parser.parse_args()
    times: dict[str, list[dict]] = {job: [] for job in args.only}
    for repeat in range(args.repeats):
        for job in args.only:
            runs = args.peer_runs if job in PEERS else args.runs
            out = in_subprocess(
                sys.executable, "ir_many_runs_benchmark", f"run_{job}({runs}, {args.users})"
            )
            times[job].append(out)
            print(
                f"[{repeat + 1}/{args.repeats}] {out['tool']:36} {out['ms_per_run']:9.2f} ms/run",
                flush=True,
            )
    floor = statistics.median(r["ms_per_run"] for r in times["floor"]) if "floor" in times else None
    rows = []
    for outs in times.values():
        ms = statistics.median(r["ms_per_run"] for r in outs)
        rows.append(
            {
                "tool": outs[0]["tool"],
                "runs timed": outs[0]["runs"],
                "ms per run (median)": ms,
                "/ floor": ms / floor if floor else float("nan"),
                "mean nDCG@100": outs[0]["ndcg@100"],
                "mean DCG@100": outs[0]["dcg@100"],
            }
        )
    with pd.option_context("display.width", 160, "display.float_format", "{:,.4f}".format):
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
