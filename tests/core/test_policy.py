"""RerankPolicy against brute force: ranks, exposures and Plackett-Luce marginals."""

from itertools import permutations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from offeval import RerankPolicy

lengths = st.lists(st.integers(1, 5), min_size=1, max_size=6)


def _frame(sizes: list[int], seed: int, ties: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    score = rng.integers(0, 3, n).astype(float) if ties else rng.normal(size=n)
    return pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(len(sizes)) * 7 + 3, sizes),
            "position": np.concatenate([np.arange(1, k + 1) for k in sizes]),
            "score": score,
        }
    )


def _brute_ranks(frame: pd.DataFrame) -> list[int]:
    out = []
    for _, group in frame.groupby("trajectory", sort=False):
        scores = list(group["score"])
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))  # ties: logged order
        rank = [0] * len(scores)
        for place, i in enumerate(order):
            rank[i] = place + 1
        out += rank
    return out


@settings(max_examples=60, deadline=None)
@given(lengths, st.integers(0, 10_000), st.booleans())
def test_deterministic_ranks_and_exposure_match_sorting(sizes, seed, ties):
    frame = _frame(sizes, seed, ties)
    policy = RerankPolicy("score")
    expected = np.array(_brute_ranks(frame))
    np.testing.assert_array_equal(policy.ranks(frame), expected)
    e = lambda ranks: 0.7 ** (np.asarray(ranks) - 1.0)  # noqa: E731
    np.testing.assert_allclose(policy.exposure(frame, e), e(expected), rtol=0, atol=0)
    table, length = policy.marginals(frame)
    assert length == max(sizes)
    np.testing.assert_array_equal(table[np.arange(len(frame)), expected - 1], 1.0)
    np.testing.assert_array_equal(table.sum(axis=1), 1.0)


@settings(max_examples=30, deadline=None)
@given(lengths, st.integers(0, 10_000))
def test_plackett_luce_marginals_match_enumeration(sizes, seed):
    frame = _frame(sizes, seed, ties=False)
    policy = RerankPolicy("score", temperature=0.5)
    table, length = policy.marginals(frame)
    start = 0
    for k in sizes:
        w = np.exp(frame["score"].to_numpy()[start : start + k] / 0.5)
        brute = np.zeros((k, length))
        for perm in permutations(range(k)):
            p, left = 1.0, w.sum()
            for i in perm:
                p *= w[i] / left
                left -= w[i]
            for place, i in enumerate(perm):
                brute[i, place] += p
        np.testing.assert_allclose(table[start : start + k], brute, atol=1e-12)
        start += k


def test_simulated_policy_finds_candidates_by_table_and_by_comparison(env, monkeypatch):
    """The (context, item) lookup table gives what comparing with every candidate gives."""
    from offeval.data import ranking

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
