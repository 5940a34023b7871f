"""offeval_ir.measure.bpref: bpref against pytrec_eval, and added rank by rank as trec_eval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from measure_cases import assert_agree, case, ours, pytrec_eval_values

from offeval_ir import compute_measures


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trec_eval_s_bpref(seed, level):
    run, qrels = case(seed, negative=True)
    theirs = pytrec_eval_values(run, qrels, {"bpref"}, level)
    assert_agree(ours(run, qrels, ["bpref"], relevance_threshold=level), theirs, {"bpref": "bpref"})


def test_bpref_adds_its_terms_rank_by_rank_as_trec_eval():
    """A bpref on a tie of the fourth decimal: R = 16 relevant labels, N = 10 judged
    non-relevant, the list relevant, non, non, relevant, non, relevant, non, relevant.
    trec_eval adds 1, 1 - 2/10, 1 - 3/10 and 1 - 4/10 in rank order (3.1 / 16, printed
    0.1938, as the trec_eval binary prints it); a pairwise sum of the row (numpy's, eight
    accumulators) lands just below the tie and prints 0.1937."""
    docs = ["r0", "n0", "n1", "r1", "n2", "r2", "n3", "r3"]
    run = pd.DataFrame({"user": "q", "item": docs, "score": np.arange(len(docs), 0, -1.0)})
    labels = [*(f"r{i}" for i in range(16)), *(f"n{i}" for i in range(10))]
    qrels = pd.DataFrame({"user": "q", "item": labels, "relevance": [1] * 16 + [0] * 10})
    got = compute_measures(run, qrels, ["bpref"]).per_user.loc["q", "bpref"]
    total, nonrel = 0.0, 0
    for doc in docs:  # trec_eval's loop (m_bpref.c)
        if doc.startswith("n"):
            nonrel += 1
        else:
            total += 1.0 - min(nonrel, 16) / min(10, 16) if nonrel else 1.0
    assert got == total / 16
    assert f"{got:6.4f}" == "0.1938"
    row = np.array([[1.0, 0.0, 0.0, 1 - 2 / 10, 0.0, 1 - 3 / 10, 0.0, 1 - 4 / 10]])
    assert f"{row.sum(axis=1)[0] / 16:6.4f}" == "0.1937"  # the sum this guards against
