"""offeval_ir.measure.trec_eval.gains: trec_eval's gain measures (at its default gains)
against pytrec_eval; with gain parameters, test_trec_eval_measures checks them against
transcriptions of trec_eval's loops."""

from __future__ import annotations

from measure_cases import agree_with_pytrec_eval


def test_gain_measures_are_pytrec_eval_s():
    agree_with_pytrec_eval(["G", "binG", "ndcg_rel", "Rndcg"])
