"""Means of measures in [0, 1] get normal intervals inside [0, 1] (clipped, so they cover the
truth exactly as often); measures without bounds keep theirs."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from offeval_ir import evaluate_runs


def one_hit_in_ten():
    """Ten users, one relevant document each; the run finds it at rank 1 for user 0 only."""
    users = [f"q{i}" for i in range(10)]
    qrels = pd.DataFrame({"query_id": users, "doc_id": "rel", "relevance": 1})
    run = pd.DataFrame({"query_id": users, "doc_id": ["rel"] + ["other"] * 9, "score": 1.0})
    return {"run": run}, qrels


@pytest.mark.parametrize("measure", ["nDCG@5", "RR", "P@1", "ndcg_cut_5"])
def test_a_rate_near_zero_keeps_its_interval_above_zero(measure):
    """Mean 0.1 over 10 users, se sqrt(0.1 x 0.9 / 9) = 0.1: the plain interval's lower end is
    0.1 - 1.96 x 0.1 = -0.096."""
    runs, qrels = one_hit_in_ten()
    table = evaluate_runs(runs, qrels, [measure]).table().iloc[0]
    assert table["mean"] == pytest.approx(0.1) and table["se"] == pytest.approx(0.1)
    assert table["ci_low"] == 0.0
    assert table["ci_high"] == pytest.approx(0.1 + 1.959964 * 0.1, rel=1e-6)


def test_an_unbounded_measure_keeps_its_plain_interval():
    runs, qrels = one_hit_in_ten()
    table = evaluate_runs(runs, qrels, ["DCG@5"]).table().iloc[0]
    assert table["ci_low"] == pytest.approx(0.1 - 1.959964 * 0.1, rel=1e-6)
    assert math.isclose(table["mean"], 0.1)
