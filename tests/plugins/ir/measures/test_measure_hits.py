"""offeval_ir.measure.hits: Hits@k against ranx's hits, query for query."""

from __future__ import annotations

import numpy as np
import pytest
from measure_cases import case, ours


def _nested(frame, value: str) -> dict:
    """{query: {doc: value}}, as ranx holds runs and qrels."""
    return {q: dict(zip(g.item, g[value].tolist(), strict=True)) for q, g in frame.groupby("user")}


@pytest.mark.parametrize("seed", [0, 1])
def test_hits_is_ranx_s(seed):
    ranx = pytest.importorskip("ranx")
    run, qrels = case(seed)
    run["score"] += np.arange(len(run)) * 1e-6  # no ties: ranx orders tied scores its own way
    values = ours(run, qrels, ["hits@5", "hits(rel=2)@10", "hits"])
    for column, rel, k in (("hits@5", 1, 5), ("hits(rel=2)@10", 2, 10), ("hits", 1, 15)):
        relevant = qrels[qrels.relevance >= rel]
        judged = ranx.Qrels.from_dict(_nested(relevant, "relevance"))
        ranked = ranx.Run.from_dict(_nested(run[run.user.isin(relevant.user)], "score"))
        ranx.evaluate(judged, ranked, f"hits@{k}")
        theirs = ranked.scores[f"hits@{k}"]
        assert theirs and all(values.loc[q, column] == v for q, v in theirs.items()), column
