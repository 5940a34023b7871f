"""offeval_ir.measure.dcg: DCG, iDCG, nDCG and pnDCG against pytrec_eval, scikit-learn and
by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from measure_cases import assert_agree, case, ours, pytrec_eval_values, ranked

from offeval_ir import PRESETS, compute_measures, parse_measure

TREC = {"ndcg": "ndcg", "ndcg_cut_5": "ndcg_cut_5", "ndcg_cut_10": "ndcg_cut_10"}


def _dcg(gains):
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


@pytest.mark.parametrize("seed", [0, 1])
def test_trec_eval_s_ndcg_and_ndcg_cut(seed):
    run, qrels = case(seed, negative=True)
    theirs = pytrec_eval_values(run, qrels, {"ndcg", "ndcg_cut.5,10"})
    assert_agree(ours(run, qrels, list(TREC)), theirs, TREC)


def test_exp_log2_and_the_lists_own_ideal_by_hand():
    run, qrels = case(2)
    names = ["nDCG(dcg=exp-log2)@5", "iDCG(dcg=exp-log2)@5", "dcg@5"]
    values = ours(run, qrels, names, ideal="list", empty_labels="zero")
    for user, (grades, _) in ranked(run, qrels).items():
        top = [g or 0 for g in grades[:5]]
        exp = _dcg([2**g - 1 for g in top])
        ideal = _dcg(sorted((2**g - 1 for g in top), reverse=True))
        assert values.loc[user, names[1]] == pytest.approx(ideal, abs=1e-12)
        assert values.loc[user, names[0]] == pytest.approx(exp / ideal if ideal else 0.0)
        assert values.loc[user, "dcg@5"] == pytest.approx(_dcg(top), abs=1e-12)


def test_ndcg_with_averaged_ties_is_scikit_learns():
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(3)
    truth = rng.integers(0, 4, (12, 9))
    scores = np.round(rng.random((12, 9)) * 3)  # ties
    users, items = np.divmod(np.arange(truth.size), 9)
    run = pd.DataFrame({"user": users, "item": items, "score": scores.ravel()})
    qrels = pd.DataFrame({"user": users, "item": items, "relevance": truth.ravel()})
    values = compute_measures(run, qrels, ["nDCG@5"], PRESETS["sklearn"]()).per_user
    theirs = [ndcg_score(truth[[u]], scores[[u]], k=5) for u in range(12)]
    assert values["nDCG@5"].to_numpy() == pytest.approx(theirs, abs=1e-12)


def test_idcg_and_post_normalised_ndcg_against_brute_force():
    rng = np.random.default_rng(5)
    runs, qrels = {}, {}
    for u in range(30):
        runs[u] = [f"d{i}" for i in rng.permutation(40)[: rng.integers(1, 15)]]
        qrels[u] = {f"d{i}": int(rng.integers(0, 4)) for i in rng.permutation(40)[:12]}
        qrels[u]["d0"] = 1  # every user has a relevant label
    pred = pd.DataFrame(
        [(u, i, float(len(items) - r)) for u, items in runs.items() for r, i in enumerate(items)],
        columns=["user", "item", "score"],
    )
    lab = pd.DataFrame(
        [(u, item, g) for u, grades in qrels.items() for item, g in grades.items()],
        columns=["user", "item", "relevance"],
    )
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
