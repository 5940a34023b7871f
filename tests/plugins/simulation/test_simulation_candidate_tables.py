"""The simulation plugin's policies and the core's (context, item) candidate table: one table
per candidate array, shared by the policies over it, and the same answers as comparing with
every candidate (moved from tests/core, which runs without plugins)."""

from __future__ import annotations

import numpy as np

from offeval_ranking import ranking


def test_policies_over_one_candidate_array_share_one_table(env):
    first, second = env.candidate_policies(2)
    assert first.candidates is second.candidates
    assert first._slots is second._slots is ranking.candidate_lookup(env.candidates)


def test_simulated_policy_finds_candidates_by_table_and_by_comparison(env, monkeypatch):
    """The (context, item) lookup table gives what comparing with every candidate gives."""
    log = env.simulate(env.logging_policy(), 400, seed=1, with_candidates=True)
    rows = log.candidates.assign(context=log.frame["context"].to_numpy()[log.candidates["slot"]])
    rows["item"] = rows["item"].astype(float)
    rows.loc[rows.index[:7], "item"] = [-1, 10_000, 3.5, 0, 1, 2, 59]  # outside, fractional
    policy = env.candidate_policies(2)[1]
    by_table = policy.probabilities(rows)
    assert policy._slots is not None
    monkeypatch.setattr(ranking, "LOOKUP_CELLS", 0)
    monkeypatch.setattr(ranking, "_LOOKUPS", {})  # the shared table, built again
    other = env.candidate_policies(2)[1]
    np.testing.assert_array_equal(other.probabilities(rows), by_table)
    assert other._slots is None
    truth = [
        policy.marginals[c, list(policy.candidates[c]).index(i), p - 1]
        if i in policy.candidates[c] and p <= policy.n_positions
        else 0.0
        for c, i, p in zip(rows["context"], rows["item"], rows["position"], strict=True)
    ]
    np.testing.assert_array_equal(by_table, truth)
