"""offeval_ir.measure.trec_eval.infap: infAP against pytrec_eval."""

from __future__ import annotations

from measure_cases import agree_with_pytrec_eval


def test_inferred_ap_is_pytrec_eval_s():
    agree_with_pytrec_eval(["infAP"])
