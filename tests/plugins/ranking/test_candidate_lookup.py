"""The (context, item) -> candidate index table: exact, and one per candidate array."""

from __future__ import annotations

import gc

import numpy as np

from offeval_ranking import ranking


def test_the_table_finds_every_candidate_and_nothing_else():
    rng = np.random.default_rng(0)
    cands = np.array([rng.choice(40, 6, replace=False) for _ in range(30)])
    table = ranking.candidate_lookup(cands)
    for ctx in range(30):
        for item in range(40):
            where = np.flatnonzero(cands[ctx] == item)
            assert table[ctx, item] == (where[0] if where.size else -1)


def test_no_table_for_ids_it_cannot_index_and_none_kept_for_a_dead_array():
    assert ranking.candidate_lookup(np.array([["a", "b"]])) is None
    assert ranking.candidate_lookup(np.array([[-1, 2]])) is None
    cands = np.array([[0, 5], [5, 1]])
    key = id(cands)
    assert ranking.candidate_lookup(cands) is not None and key in ranking._LOOKUPS
    del cands
    gc.collect()
    assert key not in ranking._LOOKUPS
