"""offeval_ir.measure.trec_eval.utility: utility against pytrec_eval, and a query missing from
the run under -c as trec_eval scores it."""

from __future__ import annotations

import pandas as pd
from measure_cases import agree_with_pytrec_eval

from offeval_ir import PRESETS, compute_measures, parse_measures


def test_utility_is_pytrec_eval_s():
    agree_with_pytrec_eval(["utility"])


def test_utility_of_a_query_missing_from_the_run_under_c():
    """trec_eval -c scores a query missing from the run on a one-document list of an
    unjudged document, then zeroes the value named 'utility' (trec_eval.c's bogus
    ranking): bare utility is 0, utility.a,b,c,d is b + c R - d (1 + R) (R = 3 here)."""
    run = pd.DataFrame({"user": ["q1"], "item": ["a"], "score": [1.0]})
    qrels = pd.DataFrame(
        {
            "user": ["q1", "q2", "q2", "q2", "q2"],
            "item": list("abcde"),
            "relevance": [1, 1, 2, 1, 0],
        }
    )
    measures = parse_measures(["utility", "utility.2,-1,3,0.5"])
    got = compute_measures(run, qrels, measures, PRESETS["trec_eval"](no_predictions="zero"))
    assert got.per_user.loc["q2"].tolist() == [0.0, -1 + 3 * 3 - 0.5 * (1 + 3)]
    assert got.per_user.loc["q1"].tolist() == [1.0, 2 * 1 + 0.5 * (1 - 1 - 1)]  # N = 0
