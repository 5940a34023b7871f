"""RerankPolicy against brute force: ranks, exposures and Plackett-Luce marginals; TablePolicy's
lookups and the target's expectation over each slot's candidates against loops; the
policies' scalar arguments."""

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import candidate_log

from offeval import ColumnError, ConfigurationError, InteractionLog, RowError, TablePolicy
from offeval.engine.estimator import PolicyView
from offeval_ranking import RerankPolicy

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


# -- table lookups and sums over candidates ---------------------------------------------------


def _table(rng: np.random.Generator, by_position: bool) -> tuple[pd.DataFrame, dict]:
    """Probabilities for items 1..4 (positions 1..2): items 0 and 5 are outside the table."""
    keys = (
        [(i, k) for i in range(1, 5) for k in (1, 2)]
        if by_position
        else [(i,) for i in range(1, 5)]
    )
    keys = [key for key in keys if rng.random() < 0.8] or keys[:1]  # some keys absent: 0
    p = rng.dirichlet(np.ones(len(keys) + 1))[:-1]  # sums below 1 per position a fortiori
    names = ["item", "position"][: len(keys[0])]
    return pd.DataFrame(keys, columns=names).assign(probability=p), dict(zip(keys, p, strict=True))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.sampled_from(["int64", "int32", "uint8"]))
def test_table_lookups_match_a_dictionary(seed, by_position, dtype):
    rng = np.random.default_rng(seed)
    frame, table = _table(rng, by_position)
    rows = pd.DataFrame(
        {"item": rng.integers(0, 6, 40).astype(dtype), "position": rng.integers(1, 4, 40)}
    )
    keys = rows[list(frame.columns[:-1])].itertuples(index=False, name=None)
    expected = [table.get(tuple(int(v) for v in key), 0.0) for key in keys]
    np.testing.assert_allclose(TablePolicy(frame).probabilities(rows), expected, rtol=0, atol=0)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(0, 10_000),
    st.booleans(),
    st.sampled_from([None, 1, 3, 6]),
    st.booleans(),
    st.sampled_from([None, "q"]),
)
def test_slot_expectation_matches_a_loop_over_each_slots_candidates(
    seed, by_position, per_slot, shuffle, key
):
    """With a key, a table over few integer keys (items 0..5 against 6 candidates per slot)
    reads per-slot sums by cell: the same numbers."""
    rng = np.random.default_rng(seed)
    log, cands = candidate_log(rng, per_slot, shuffle)
    frame, table = _table(rng, by_position)
    keys = list(frame.columns[:-1])
    value, mass = PolicyView(TablePolicy(frame), log).slot_expectation(
        log.candidates["q"].to_numpy(), key=key
    )
    expected_value, expected_mass = [], []
    for t, k in log.frame[["trajectory", "position"]].itertuples(index=False, name=None):
        mine = cands[(cands["trajectory"] == t) & (cands["position"] == k)]
        p = [table.get(tuple(int(v) for v in key), 0.0) for key in mine[keys].to_numpy()]
        expected_value.append(float(np.dot(p, mine["q"])))
        expected_mass.append(float(np.sum(p)))
    np.testing.assert_allclose(value, expected_value, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(mass, expected_mass, rtol=1e-12, atol=1e-15)
    sizes = cands.groupby(["trajectory", "position"]).size()
    assert log.regular_slots == (sizes.iloc[0] if sizes.nunique() == 1 else None)


def _loop_expectation(log, cands, lookup, keys):
    """Per slot: sum over its candidates of lookup(keys) * q, and of lookup(keys)."""
    value, mass = [], []
    for t, k in log.frame[["trajectory", "position"]].itertuples(index=False, name=None):
        mine = cands[(cands["trajectory"] == t) & (cands["position"] == k)]
        p = [lookup(tuple(int(v) for v in key)) for key in mine[keys].to_numpy()]
        value.append(float(np.dot(p, mine["q"])))
        mass.append(float(np.sum(p)))
    return np.array(value), np.array(mass)


@pytest.mark.parametrize("seed", range(6))
def test_slot_expectation_by_cell_of_an_item_by_position_table(seed):
    """A table over items 1..2 x positions 1..3 (6 cells, as many as each slot's candidates):
    the per-cell path, with candidates outside the grid (items 0, 3..5) at probability 0."""
    rng = np.random.default_rng(seed)
    log, cands = candidate_log(rng, 6, shuffle=bool(seed % 2))
    keys = [(i, k) for i in (1, 2) for k in (1, 2, 3)]
    p = dict(zip(keys, rng.dirichlet(np.ones(7))[:-1], strict=True))
    frame = pd.DataFrame(keys, columns=["item", "position"]).assign(probability=list(p.values()))
    policy = TablePolicy(frame)
    assert policy.dense is not None and policy.dense.probabilities.size == 6
    view = PolicyView(policy, log)
    value, mass = view.slot_expectation(log.candidates["q"].to_numpy(), key="q")
    expected = _loop_expectation(log, cands, lambda key: p.get(key, 0.0), ["item", "position"])
    np.testing.assert_allclose(value, expected[0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(mass, expected[1], rtol=1e-12, atol=1e-15)


def test_a_table_subclass_that_answers_otherwise_is_asked_per_candidate():
    """The per-cell path reads the table; a subclass whose probabilities differ from it (here
    halved) is asked for every candidate instead."""

    class Halved(TablePolicy):
        def probabilities(self, rows):
            return super().probabilities(rows) / 2

    rng = np.random.default_rng(1)
    log, cands = candidate_log(rng, 6, shuffle=False)
    frame = pd.DataFrame({"item": range(6), "probability": rng.dirichlet(np.ones(6))})
    table = dict(zip(((i,) for i in range(6)), frame["probability"] / 2, strict=True))
    value, mass = PolicyView(Halved(frame), log).slot_expectation(
        log.candidates["q"].to_numpy(), key="q"
    )
    expected = _loop_expectation(log, cands, lambda key: table.get(key, 0.0), ["item"])
    np.testing.assert_allclose(value, expected[0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(mass, expected[1], rtol=1e-12, atol=1e-15)


class _Answers:
    """A policy answering given numbers, whatever the rows."""

    name = "answers"

    def __init__(self, values):
        self.values = values

    def probabilities(self, rows):
        return np.asarray(self.values)


@pytest.mark.parametrize(
    "values, bad",
    [
        ([0.0, 1.0, 5e-324, -0.0, 0.5, 1.0], None),  # -0.0 is 0: accepted
        ([0.0, 1.0, -1e-300, 0.5, 0.2, 0.1], [2]),
        ([0.0, 1.0 + 2**-52, 0.5, 0.1, 1.5, 0.3], [1, 4]),
        ([0.0, 0.1, 0.5, 0.1, np.nan, 0.3], [4]),
        ([np.inf, 0.5, -np.inf, 0.1, 0.2, 0.3], [0, 2]),
    ],
)
def test_target_probabilities_are_checked_to_lie_in_zero_one(values, bad):
    log = InteractionLog.from_frame(
        pd.DataFrame({"trajectory": range(6), "item": 1, "reward": 0.0}, index=list("abcdef"))
    )
    view = PolicyView(_Answers(values), log)
    if bad is None:
        np.testing.assert_array_equal(view.probabilities(), values)
        return
    with pytest.raises(RowError, match=r"policy 'answers'") as error:
        view.probabilities()
    assert all(f"'{label}'" in str(error.value) for label in np.array(list("abcdef"))[bad])


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


def test_a_rerank_score_column_of_decimal_commas_says_to_give_decimal():
    rows = pd.DataFrame({"trajectory": [1, 1, 2], "score": ["0,5", "1,25", "0,75"]})
    with pytest.raises(ColumnError, match=r"'score'.*decimal commas \(0,\d+\)"):
        RerankPolicy("score").scores(rows)
