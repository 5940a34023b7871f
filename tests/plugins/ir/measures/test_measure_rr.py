"""offeval_ir.measure.rr: RR against pytrec_eval, and at a cut-off by hand."""

from __future__ import annotations

import pytest
from measure_cases import assert_agree, case, ours, pytrec_eval_values, ranked


@pytest.mark.parametrize("level", [1, 3])
def test_trec_eval_s_recip_rank(level):
    run, qrels = case(0, negative=True)
    theirs = pytrec_eval_values(run, qrels, {"recip_rank"}, level)
    values = ours(run, qrels, ["recip_rank"], relevance_threshold=level)
    assert_agree(values, theirs, {"recip_rank": "recip_rank"})


def test_a_cut_off_by_hand():
    run, qrels = case(1)
    values = ours(run, qrels, ["RR@3"])
    for user, (grades, _) in ranked(run, qrels).items():
        first = [i + 1 for i, g in enumerate(grades[:3]) if g is not None and g >= 1]
        assert values.loc[user, "RR@3"] == (1 / first[0] if first else 0.0)
