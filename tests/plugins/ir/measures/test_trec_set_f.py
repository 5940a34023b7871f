"""offeval_ir.measure.trec_eval.set_f: set_F at trec_eval's default against pytrec_eval, and
with its parameter x by hand, as m_set_F.c computes it: (x + 1) P R / (x P + R)."""

from __future__ import annotations

import pytest
from measure_cases import agree_with_pytrec_eval, case, ours, ranked

from offeval_ir import parse_measures


def test_set_f_is_pytrec_eval_s():
    agree_with_pytrec_eval(["set_F"])


@pytest.mark.parametrize("level", [1, 2])
def test_set_f_weighs_recall_x_times_precision(level):
    run, qrels = case(5, negative=True)
    weights = (0.0, 0.5, 2.0, 1e6)
    measures = parse_measures([f"set_F.{x}" for x in weights])
    values = ours(run, qrels, measures, relevance_threshold=level)
    for user, (grades, labels) in ranked(run, qrels).items():
        found = sum(1 for g in grades if g is not None and g >= level)
        p, r = found / len(grades), found / max(1, sum(1 for g in labels if g >= level))
        for x in weights:
            want = (x + 1) * p * r / (x * p + r) if found else 0.0
            assert values.loc[user, f"set_F_{x}"] == pytest.approx(want, abs=1e-12), (user, x)
        if found:  # x = 0 is the set precision, a large x tends to the set recall
            assert values.loc[user, "set_F_0.0"] == pytest.approx(p, abs=1e-12)
            assert values.loc[user, "set_F_1000000.0"] == pytest.approx(r, abs=1e-4)
