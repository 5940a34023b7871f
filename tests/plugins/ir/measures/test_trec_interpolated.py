"""offeval_ir.measure.trec_eval.interpolated: iprec_at_recall and 11pt_avg against pytrec_eval,
and 11pt_avg's levels added as trec_eval adds them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from measure_cases import agree_with_pytrec_eval

from offeval_ir import compute_measures


def _trec_eval_9_differs(measure, n_rel: int) -> bool:
    """pytrec_eval runs trec_eval 9, whose recall level x reads floor(x R + 0.9) relevant
    items; trec_eval 10 (the stored outputs) rounds x R."""
    levels = [0.1 * i for i in range(11)]
    if measure.name.startswith("iprec"):
        levels = [float(measure.name.rsplit("_", 1)[1])]
    return any(math.floor(x * n_rel + 0.9) != math.floor(x * n_rel + 0.5) for x in levels)


def test_interpolated_precisions_are_pytrec_eval_s():
    agree_with_pytrec_eval(["iprec_at_recall", "11pt_avg"], skip=_trec_eval_9_differs)


def test_11pt_avg_adds_the_levels_from_the_last_as_trec_eval():
    """An 11pt_avg on a tie of the fourth decimal: 37 documents, 19 of them among R = 29
    relevant labels. m_11pt_avg.c adds the interpolated precisions from recall 1.0 down
    to 0.0 (0.43375, printed 0.4338 as the trec_eval binary prints it); added from 0.0 up
    they print 0.4337."""
    pattern = "1010011010110111011101011000000100101"
    relevant = iter(range(29))
    docs = [f"r{next(relevant)}" if c == "1" else f"n{i}" for i, c in enumerate(pattern)]
    run = pd.DataFrame({"user": "q", "item": docs, "score": np.arange(len(docs), 0, -1.0)})
    labels = [*(f"r{i}" for i in range(29)), *(d for d in docs if d[0] == "n")]
    grades = [int(d[0] == "r") for d in labels]
    qrels = pd.DataFrame({"user": "q", "item": labels, "relevance": grades})
    got = compute_measures(run, qrels, ["11pt_avg"]).per_user.loc["q"]
    hits = np.cumsum([c == "1" for c in pattern])
    precision = [h / (i + 1) for i, h in enumerate(hits)]
    best_after = [max(precision[i:]) for i in range(len(pattern))]
    at_hit = [best_after[i] for i, c in enumerate(pattern) if c == "1"]
    levels = []
    for level in [i / 10 for i in range(11)]:
        cut = math.floor(level * 29 + 0.5)  # C's lround: 0.5 x 29 = 14.5 gives 15
        levels.append(best_after[0] if cut == 0 else at_hit[cut - 1] if cut <= 19 else 0.0)
    total = 0.0
    for value in reversed(levels):  # m_11pt_avg.c: from the last cut-off down
        total += value
    assert got["11pt_avg"] == total / 11
    assert f"{got['11pt_avg']:6.4f}" == "0.4338"
    forward = 0.0
    for value in levels:
        forward += value
    assert f"{forward / 11:6.4f}" == "0.4337"  # the order this guards against
