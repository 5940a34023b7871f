"""offeval_ir.measure.precision: P, R, F1, hit rate and Success against pytrec_eval and by hand."""

from __future__ import annotations

import pytest
from measure_cases import assert_agree, case, ours, pytrec_eval_values, ranked

TREC = {"P_5": "P_5", "P_10": "P_10", "recall_5": "recall_5", "success_5": "success_5"}
TREC |= {"set_P": "set_P", "set_recall": "set_recall", "set_F": "set_F"}


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("seed", [0, 1])
def test_trec_eval_s_precision_recall_f_and_success(seed, level):
    run, qrels = case(seed, negative=True)
    names = {"P.5,10", "recall.5", "success.5", "set_P", "set_recall", "set_F"}
    theirs = pytrec_eval_values(run, qrels, names, level)
    assert_agree(ours(run, qrels, list(TREC), relevance_threshold=level), theirs, TREC)


def _by_hand(grades, labels, k, switches):
    hits = sum(g is not None and g >= 1 for g in grades[:k])
    n_rel = sum(g >= 1 for g in labels)
    p_den = k if switches["precision_denominator"] == "k" else min(k, len(grades))
    r_den = n_rel if switches["recall_denominator"] == "labels" else min(k, n_rel)
    p, r = hits / p_den, (hits / r_den if r_den else 0.0)
    return {
        "precision@3": p,
        "recall@3": r,
        "f1@3": 2 * p * r / (p + r) if p + r else 0.0,
        "hit_rate@3": float(hits > 0),
        "success@3": float(hits > 0),
    }


@pytest.mark.parametrize(
    "switches",
    [
        {"precision_denominator": "k", "recall_denominator": "labels"},
        {"precision_denominator": "min_k_list", "recall_denominator": "min_k_labels"},
    ],
)
def test_every_denominator_by_hand(switches):
    run, qrels = case(2)
    names = ["precision@3", "recall@3", "f1@3", "hit_rate@3", "success@3"]
    values = ours(run, qrels, names, empty_labels="zero", **switches)
    for user, (grades, labels) in ranked(run, qrels).items():
        for name, value in _by_hand(grades, labels, 3, switches).items():
            assert values.loc[user, name] == pytest.approx(value, abs=1e-12), (user, name)
