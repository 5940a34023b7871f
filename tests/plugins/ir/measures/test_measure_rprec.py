"""offeval_ir.measure.rprec: R-precision against pytrec_eval."""

from __future__ import annotations

import pytest
from measure_cases import assert_agree, case, ours, pytrec_eval_values


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("seed", [0, 1])
def test_trec_eval_s_rprec(seed, level):
    run, qrels = case(seed, negative=True)
    theirs = pytrec_eval_values(run, qrels, {"Rprec"}, level)
    values = ours(run, qrels, ["Rprec"], relevance_threshold=level)
    assert_agree(values, theirs, {"Rprec": "Rprec"})
