"""offeval_ir.measure.trec_eval.relative: Rprec_mult, relative_P, set_relative_P and set_map
against pytrec_eval."""

from __future__ import annotations

from measure_cases import agree_with_pytrec_eval


def test_precisions_relative_to_r_are_pytrec_eval_s():
    agree_with_pytrec_eval(["Rprec_mult", "relative_P", "set_relative_P", "set_map"])
