"""trec_eval's measures under trec_eval's names, against trec_eval's stored outputs.

The out.* files in trec_eval_test/ are trec_eval 10.0's own outputs (see the
NOTICE.md there for their command lines); values are compared per query and
for the ``all`` line to trec_eval's four decimals. Measures trec_eval's folder
does not exercise are checked against brute-force oracles in plain Python.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from offeval_ir import compute_measures, parse_measure
from offeval_ir.metrics import aggregate


def _dcg(gains):
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def _frames(runs, qrels):
    pred = pd.DataFrame(
        [
            (u, item, float(len(items) - r))
            for u, items in runs.items()
            for r, item in enumerate(items)
        ],
        columns=["user", "item", "score"],
    )
    lab = pd.DataFrame(
        [(u, item, g) for u, grades in qrels.items() for item, g in grades.items()],
        columns=["user", "item", "relevance"],
    )
    return pred, lab


def test_idcg_and_post_normalised_ndcg_against_brute_force():
    rng = np.random.default_rng(5)
    runs, qrels = {}, {}
    for u in range(30):
        items = [f"d{i}" for i in rng.permutation(40)[: rng.integers(1, 15)]]
        runs[u] = items
        qrels[u] = {f"d{i}": int(rng.integers(0, 4)) for i in rng.permutation(40)[:12]}
        qrels[u]["d0"] = 1  # every user has a relevant label
    pred, lab = _frames(runs, qrels)
    k = 5
    result = compute_measures(pred, lab, [f"pnDCG@{k}", f"iDCG@{k}", f"idcg@{k}", f"nDCG@{k}"])
    dcg = {u: _dcg([qrels[u].get(i, 0) for i in runs[u][:k]]) for u in runs}
    idcg = {u: _dcg(sorted(qrels[u].values(), reverse=True)[:k]) for u in runs}
    users = list(runs)
    assert result.per_user[f"iDCG@{k}"].to_numpy() == pytest.approx([idcg[u] for u in users])
    assert result.per_user[f"idcg@{k}"].to_numpy() == pytest.approx([idcg[u] for u in users])
    per_user_ndcg = [dcg[u] / idcg[u] for u in users]
    assert result.per_user[f"nDCG@{k}"].to_numpy() == pytest.approx(per_user_ndcg)
    expected = sum(dcg.values()) / sum(idcg.values())
    assert result.value[f"pnDCG@{k}"] == pytest.approx(expected)
    assert abs(expected - np.mean(per_user_ndcg)) > 1e-4  # not the mean of per-user nDCG
    assert result.aggregation == {f"pnDCG@{k}": "ratio"}
    parts = result.parts[f"pnDCG@{k}"]
    assert parts["numerator"].to_numpy() == pytest.approx([dcg[u] for u in users])
    assert parts["denominator"].to_numpy() == pytest.approx([idcg[u] for u in users])
    assert parse_measure("pnDCG@10").aggregate == "ratio"
    assert parse_measure("nDCG@10").aggregate == "mean"


def test_aggregations():
    values = np.array([0.5, np.nan, 0.0, 0.2])
    assert aggregate(values, "mean") == pytest.approx(0.7 / 3)
    assert aggregate(values, "sum") == pytest.approx(0.7)
    geometric = math.exp((math.log(0.5) + math.log(1e-5) + math.log(0.2)) / 3)
    assert aggregate(values, "geometric") == pytest.approx(geometric)
    parts = pd.DataFrame({"numerator": [1.0, 9.0, 0.0, 2.0], "denominator": [2.0, 9.0, 4.0, 2.0]})
    assert aggregate(values, "ratio", parts) == pytest.approx(3.0 / 8.0)
