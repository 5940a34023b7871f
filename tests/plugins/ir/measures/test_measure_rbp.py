"""offeval_ir.measure.rbp: RBP (binary at the threshold) and its residual by hand."""

from __future__ import annotations

import pytest
from measure_cases import case, ours, ranked

from offeval_ir import PRESETS, Judgements, compute, compute_measures


@pytest.mark.parametrize(("text", "p", "k"), [("RBP", 0.8, None), ("RBP(p=0.5,rel=2)@4", 0.5, 4)])
def test_rbp_by_hand(text, p, k):
    run, qrels = case(6)
    values = ours(run, qrels, [text])
    threshold = 2 if "rel=2" in text else 1
    for user, (grades, _) in ranked(run, qrels).items():
        top = grades if k is None else grades[:k]
        rbp = sum((1 - p) * p**i for i, g in enumerate(top) if g is not None and g >= threshold)
        assert values.loc[user, text] == pytest.approx(rbp, abs=1e-12), user


def test_the_residual_is_the_weight_of_the_unjudged_ranks_and_of_those_past_the_list():
    run, qrels = case(7)
    conv = PRESETS["trec_eval"](rbp_persistence=0.7)
    result = compute_measures(run, qrels, ["RBP(p=0.7)@6"], conv)
    j = Judgements.from_frames(run, qrels, order_by="score")
    residual = compute(j, ["rbp_residual"], [6], conv).per_user["rbp_residual@6"]
    p = 0.7
    for user, (grades, _) in ranked(run, qrels).items():
        top = grades[:6]
        unjudged = sum((1 - p) * p**i for i, g in enumerate(top) if g is None)
        assert residual[user] == pytest.approx(unjudged + p ** len(top), abs=1e-12), user
        assert result.per_user.loc[user, "RBP(p=0.7)@6"] + residual[user] <= 1 + 1e-12
