"""PyTerrier's ``pt.Experiment`` with offeval as ir-measures' first provider, on runs made
with ``pt.Transformer.from_df``: offeval computes the numbers (a spy counts its calls), they
are pytrec_eval's to 1e-12 and trec_eval's stored output (4 decimals) on trec_eval's test
collection, and no Java virtual machine starts (nor is the Java bridge imported). Slow:
importing PyTerrier, and the peers ir-measures looks for, takes seconds."""

from __future__ import annotations

import sys
from pathlib import Path

import ir_measures as M
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import pytrec_eval

import offeval_ir.provider as provider

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent / "trec_eval_test"
#: pt.Experiment's measures, as a PyTerrier user writes them (objects and trec_eval names).
MEASURES = [M.nDCG @ 10, M.AP, M.P @ 5, M.RR, "ndcg", "Rprec"]
#: pytrec_eval's name of each measure, as pt.Experiment prints it.
PEER = {
    "nDCG@10": "ndcg_cut_10",
    "AP": "map",
    "P@5": "P_5",
    "RR": "recip_rank",
    "ndcg": "ndcg",
    "Rprec": "Rprec",
}


def pyterrier_frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """trec_eval's test run, its run with scores reversed, and its qrels, in PyTerrier's
    columns (qid, docno, score; qid, docno, label)."""
    run = pd.DataFrame(M.read_trec_run(str(HERE / "results.test")))
    run = run.rename(columns={"query_id": "qid", "doc_id": "docno"})[["qid", "docno", "score"]]
    qrels = pd.DataFrame(M.read_trec_qrels(str(HERE / "qrels.test")))
    qrels = qrels.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    return run, run.assign(score=-run["score"]), qrels[["qid", "docno", "label"]]


def pytrec_eval_means(run: pd.DataFrame, qrels: pd.DataFrame) -> tuple[dict, dict]:
    """pytrec_eval's per-query values and means of :data:`PEER`'s measures."""
    judged = {
        q: dict(zip(g.docno, g.label.astype(int), strict=True)) for q, g in qrels.groupby("qid")
    }
    ranked = {q: dict(zip(g.docno, g.score, strict=True)) for q, g in run.groupby("qid")}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, set(PEER.values()))
    per_query = pd.DataFrame(evaluator.evaluate(ranked)).T
    return per_query, per_query.mean().to_dict()


@pytest.fixture
def offeval_first(monkeypatch):
    """offeval first in ir-measures' default pipeline, its calls counted; undone after."""
    calls = []
    compute = provider.compute_measures

    def counted(*args, **kwargs):
        calls.append(kwargs)
        return compute(*args, **kwargs)

    monkeypatch.setattr(provider, "compute_measures", counted)
    provider.register(default_pipeline=True)
    try:
        yield calls
    finally:
        provider.unregister()
        provider.register()


def test_pt_experiment_takes_offevals_numbers_which_are_the_peers(offeval_first):
    run, reversed_run, qrels = pyterrier_frames()
    systems = [pt.Transformer.from_df(run), pt.Transformer.from_df(reversed_run)]
    topics = pd.DataFrame({"qid": run["qid"].unique(), "query": "unused"})
    table = pt.Experiment(systems, topics, qrels, MEASURES, names=["test", "reversed"])
    assert len(offeval_first) == 2  # one evaluation per system, by offeval
    table = table.set_index("name")
    for name, frame in (("test", run), ("reversed", reversed_run)):
        _, means = pytrec_eval_means(frame, qrels)
        for ours, theirs in PEER.items():
            assert table.loc[name, ours] == pytest.approx(means[theirs], abs=1e-12), ours
    # trec_eval 10.0's own output for this run (out.test: 4 decimals)
    printed = {"map": 0.1785, "recip_rank": 0.4064, "P_5": 0.2667, "Rprec": 0.2174}
    for ours, theirs in PEER.items():
        if theirs in printed:
            assert table.loc["test", ours] == pytest.approx(printed[theirs], abs=5e-5)
    assert not pt.java.started()
    assert "jnius" not in sys.modules  # PyTerrier's Java bridge never imported


def test_pt_experiment_per_query_values_are_pytrec_evals(offeval_first):
    run, _, qrels = pyterrier_frames()
    topics = pd.DataFrame({"qid": run["qid"].unique(), "query": "unused"})
    table = pt.Experiment(
        [pt.Transformer.from_df(run)], topics, qrels, MEASURES, names=["test"], perquery=True
    )
    assert offeval_first
    ours = table.pivot(index="qid", columns="measure", values="value")
    theirs, _ = pytrec_eval_means(run, qrels)
    for measure, peer in PEER.items():
        np.testing.assert_allclose(
            ours.loc[theirs.index, measure], theirs[peer], rtol=0, atol=1e-12, err_msg=measure
        )
    assert not pt.java.started()
