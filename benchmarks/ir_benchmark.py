"""nDCG@10 and MAP@100 end to end from long DataFrames, offeval vs ranx, pytrec_eval, ir-measures.

Usage: python benchmarks/ir_benchmark.py [--users 100000]

100,000 users x 100 ranked recommendations; per user 10 relevant items out of
200 candidates, graded 1-3. Each tool starts from the same two long DataFrames
(user, item, score) and (user, item, relevance) and ends with the two means;
everything in between (conversions, index building, evaluation) is timed.
Each tool runs in a fresh subprocess with its modules imported before the
clock starts (ranx's just-in-time compilation happens on first use, so it is
timed); peak memory is measured from the moment the DataFrames exist. The
means of all tools are printed to show they agree.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import numpy as np
import pandas as pd
from measure import in_subprocess, peak_mb, reset_peak

CANDIDATES, RELEVANT, LIST = 200, 10, 100


def data(users: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Long predictions (user, item, score) and labels (user, item, relevance)."""
    rng = np.random.default_rng(seed)
    candidates = np.argsort(rng.random((users, CANDIDATES)), axis=1)
    relevant = candidates[:, :RELEVANT]
    grades = rng.integers(1, 4, (users, RELEVANT))
    boost = np.zeros((users, CANDIDATES))
    np.put_along_axis(boost, relevant, grades, axis=1)
    scores = boost * 0.5 + rng.normal(size=(users, CANDIDATES))
    top = np.argsort(-scores, axis=1)[:, :LIST]
    predictions = pd.DataFrame(
        {
            "user": np.repeat(np.arange(users), LIST),
            "item": top.ravel(),
            "score": np.take_along_axis(scores, top, axis=1).ravel(),
        }
    )
    labels = pd.DataFrame(
        {
            "user": np.repeat(np.arange(users), RELEVANT),
            "item": relevant.ravel(),
            "relevance": grades.ravel(),
        }
    )
    return predictions, labels


def _timed(tool: str, users: int, run, modules: tuple[str, ...]) -> dict:
    for module in modules:  # imports are not part of the job
        importlib.import_module(module)
    predictions, labels = data(users)
    base = reset_peak()
    start = time.perf_counter()
    ndcg, ap = run(predictions, labels)
    seconds = time.perf_counter() - start
    return {
        "tool": tool,
        "users": users,
        "seconds": seconds,
        "peak_extra_mb": peak_mb() - base,
        "ndcg@10": ndcg,
        "map@100": ap,
    }


def run_offeval(users: int) -> dict:
    def run(predictions, labels):
        from offeval_ir import PRESETS

        conv = PRESETS["trec_eval"](ties="item_desc")
        try:
            from offeval_ir import compute_frames
        except ImportError:  # an older offeval (benchmarks/run_all.py --baseline)
            from offeval_ir import Judgements, compute

            judgements = Judgements.from_frames(predictions, labels, ties="item_desc")
            ndcg = compute(judgements, ["ndcg"], [10], conv).mean["ndcg@10"]
            return float(ndcg), float(compute(judgements, ["ap"], [100], conv).mean["ap@100"])
        means = compute_frames(predictions, labels, ["ndcg", "ap"], [10, 100], conv).mean
        return float(means["ndcg@10"]), float(means["ap@100"])

    return _timed("offeval", users, run, ("offeval_ir",))


def run_ranx(users: int) -> dict:
    def run(predictions, labels):
        from ranx import Qrels, Run, evaluate

        pred = predictions.astype({"user": str, "item": str}).astype(
            {"user": object, "item": object}
        )
        lab = labels.astype({"user": str, "item": str}).astype({"user": object, "item": object})
        qrels = Qrels.from_df(lab, q_id_col="user", doc_id_col="item", score_col="relevance")
        ranked = Run.from_df(pred, q_id_col="user", doc_id_col="item", score_col="score")
        out = evaluate(qrels, ranked, ["ndcg@10", "map@100"])
        return float(out["ndcg@10"]), float(out["map@100"])

    return _timed("ranx", users, run, ("ranx",))


def _nested(frame: pd.DataFrame, value: str, cast) -> dict:
    users = frame["user"].astype(str).to_numpy()
    items = frame["item"].astype(str).to_numpy()
    values = frame[value].to_numpy()
    starts = np.flatnonzero(np.r_[True, users[1:] != users[:-1]])
    ends = np.r_[starts[1:], len(users)]
    return {
        users[a]: dict(zip(items[a:b], map(cast, values[a:b]), strict=True))
        for a, b in zip(starts, ends, strict=True)
    }


def run_pytrec_eval(users: int) -> dict:
    def run(predictions, labels):
        import pytrec_eval

        qrels = _nested(labels, "relevance", int)
        ranked = _nested(predictions, "score", float)
        per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map_cut_100"}).evaluate(
            ranked
        )
        ndcg = np.mean([m["ndcg_cut_10"] for m in per_query.values()])
        ap = np.mean([m["map_cut_100"] for m in per_query.values()])
        return float(ndcg), float(ap)

    return _timed("pytrec_eval", users, run, ("pytrec_eval",))


def run_ir_measures(users: int) -> dict:
    def run(predictions, labels):
        import ir_measures

        qrels = labels.rename(columns={"user": "query_id", "item": "doc_id"}).astype(
            {"query_id": str, "doc_id": str}
        )
        ranked = predictions.rename(columns={"user": "query_id", "item": "doc_id"}).astype(
            {"query_id": str, "doc_id": str}
        )
        out = ir_measures.calc_aggregate(
            [ir_measures.nDCG @ 10, ir_measures.AP @ 100], qrels, ranked
        )
        return float(out[ir_measures.nDCG @ 10]), float(out[ir_measures.AP @ 100])

    return _timed("ir-measures", users, run, ("ir_measures",))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument(
        "--tools", nargs="+", default=["offeval", "ranx", "pytrec_eval", "ir_measures"]
    )
    args = parser.parse_args()
    rows = [
        in_subprocess(sys.executable, "ir_benchmark", f"run_{tool}({args.users})")
        for tool in args.tools
    ]
    with pd.option_context("display.width", 160, "display.float_format", "{:,.6f}".format):
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
