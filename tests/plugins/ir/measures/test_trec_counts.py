"""offeval_ir.measure.trec_eval.counts: trec_eval's counts against pytrec_eval."""

from __future__ import annotations

from measure_cases import agree_with_pytrec_eval


def test_counts_are_pytrec_eval_s():
    agree_with_pytrec_eval(["num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"])
