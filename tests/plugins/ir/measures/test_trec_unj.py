"""offeval_ir.measure.trec_eval.unj: the share of the top k not judged, by hand (pytrec_eval's
trec_eval has no unj)."""

from __future__ import annotations

import pytest
from measure_cases import case, ours, ranked

from offeval_ir import trec_eval_measures


def test_unj_by_hand():
    run, qrels = case(8)
    measures = trec_eval_measures(["unj"])
    assert [m.name for m in measures] == ["unj_5", "unj_10", "unj_20"]
    values = ours(run, qrels, measures)
    for user, (grades, _) in ranked(run, qrels).items():
        for m in measures:
            unjudged = sum(g is None for g in grades[: m.k])
            assert values.loc[user, m.name] == pytest.approx(unjudged / m.k, abs=1e-12)
