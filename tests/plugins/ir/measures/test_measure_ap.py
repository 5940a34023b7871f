"""offeval_ir.measure.ap: AP against pytrec_eval, and each denominator by hand."""

from __future__ import annotations

import pytest
from measure_cases import assert_agree, case, ours, pytrec_eval_values, ranked

TREC = {"map": "map", "map_cut_5": "map_cut_5", "map_cut_10": "map_cut_10"}


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("seed", [0, 1])
def test_trec_eval_s_map_and_map_cut(seed, level):
    run, qrels = case(seed, negative=True)
    theirs = pytrec_eval_values(run, qrels, {"map", "map_cut.5,10"}, level)
    assert_agree(ours(run, qrels, list(TREC), relevance_threshold=level), theirs, TREC)


@pytest.mark.parametrize("denominator", ["hits", "min_k_list", "labels", "min_k_labels"])
def test_every_denominator_by_hand(denominator):
    run, qrels = case(3)
    values = ours(run, qrels, ["ap@4"], ap_denominator=denominator, empty_labels="zero")
    for user, (grades, labels) in ranked(run, qrels).items():
        relevant = [g is not None and g >= 1 for g in grades[:4]]
        terms = [sum(relevant[: i + 1]) / (i + 1) for i, rel in enumerate(relevant) if rel]
        n_rel = sum(g >= 1 for g in labels)
        den = {
            "hits": sum(relevant),
            "min_k_list": min(4, len(grades)),
            "labels": n_rel,
            "min_k_labels": min(4, n_rel),
        }[denominator]
        assert values.loc[user, "ap@4"] == pytest.approx(sum(terms) / den if den else 0.0)
