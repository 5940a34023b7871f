"""RerankPolicy against brute force: ranks, exposures and Plackett-Luce marginals; the
policies' scalar arguments."""

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offeval import ConfigurationError, RerankPolicy, TablePolicy

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


# -- scalar arguments -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "positions, message",
    [
        (4, r"^positions must be a whole number in 1\.\.3, got 4$"),
        (0, r"^positions must be a whole number in 1\.\.3, got 0$"),
        (1.0, r"^positions must be a whole number in 1\.\.3, got 1\.0$"),
        (True, r"^positions must be a whole number in 1\.\.3, got True$"),
    ],
)
def test_a_uniform_policy_takes_as_many_positions_as_items_at_most(positions, message):
    with pytest.raises(ConfigurationError, match=message):
        TablePolicy.uniform(["a", "b", "c"], positions=positions)
    with pytest.raises(ConfigurationError, match="^a uniform policy needs items, got none$"):
        TablePolicy.uniform([], positions=1)
    policy = TablePolicy.uniform(["a", "b", "c"], positions=np.int64(2))
    shown = pd.DataFrame({"item": ["a", "c", "b"], "position": [2, 1, 3]})
    np.testing.assert_allclose(policy.probabilities(shown), [1 / 3, 1 / 3, 0.0])


@pytest.mark.parametrize("temperature", [0, -1.0, np.nan, "2", True])
def test_a_rerank_policy_refuses_a_temperature_that_is_not_a_positive_number(temperature):
    with pytest.raises(ConfigurationError, match="^temperature must be a positive number, inf"):
        RerankPolicy("score", temperature=temperature)


def test_a_rerank_policy_takes_numpy_and_infinite_temperatures_as_floats():
    assert RerankPolicy("score", temperature=np.float64(0.5)).temperature == 0.5
    assert RerankPolicy("score", temperature=np.inf).temperature == np.inf
    assert RerankPolicy("score").temperature is None
