"""offeval_ir.measure.judged: Judged@k by hand, over k or over min(k, list length)."""

from __future__ import annotations

import pytest
from measure_cases import case, ours, ranked


@pytest.mark.parametrize("denominator", ["k", "min_k_list"])
def test_judged_by_hand(denominator):
    run, qrels = case(5)
    values = ours(run, qrels, ["Judged@4"], precision_denominator=denominator, per_metric=())
    for user, (grades, _) in ranked(run, qrels).items():
        judged = sum(g is not None for g in grades[:4])
        den = 4 if denominator == "k" else min(4, len(grades))
        assert values.loc[user, "Judged@4"] == pytest.approx(judged / den, abs=1e-12)
