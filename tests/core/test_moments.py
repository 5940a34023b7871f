"""Mergeable moments match direct numpy computation, whatever the chunking."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from offeval.stats import Moments, Tally

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@st.composite
def data_and_cuts(draw):
    n = draw(st.integers(2, 200))
    k = draw(st.integers(1, 5))
    x = draw(arrays(float, (n, k), elements=finite))
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=8))))
    return x, cuts


def assert_matches_numpy(m: Moments, x: np.ndarray) -> None:
    scale = max(1.0, np.abs(x).max())
    assert m.n == len(x)
    np.testing.assert_allclose(m.mean, x.mean(axis=0), rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(
        m.covariance(),
        np.cov(x, rowvar=False).reshape(m.covariance().shape),
        rtol=1e-9,
        atol=1e-9 * scale**2,
    )


@settings(max_examples=200, deadline=None)
@given(data_and_cuts())
def test_merged_chunks_equal_whole_array(case):
    x, cuts = case
    parts = np.split(x, cuts)
    merged = Moments.empty(x.shape[1])
    for part in parts:
        merged = merged.merge(Moments.from_array(part))
    assert_matches_numpy(merged, x)


@settings(max_examples=100, deadline=None)
@given(data_and_cuts())
def test_merge_order_does_not_matter(case):
    x, cuts = case
    parts = [Moments.from_array(p) for p in np.split(x, cuts)]
    left = parts[0]
    for p in parts[1:]:
        left = left.merge(p)
    right = parts[-1]
    for p in reversed(parts[:-1]):
        right = p.merge(right)
    scale = max(1.0, np.abs(x).max()) ** 2 * len(x)
    np.testing.assert_allclose(left.comoment, right.comoment, rtol=1e-9, atol=1e-12 * scale)


def test_stable_with_large_offset():
    rng = np.random.default_rng(0)
    x = 1e9 + rng.normal(size=(10_000, 2))
    merged = Moments.empty(2)
    for part in np.array_split(x, 37):
        merged = merged.merge(Moments.from_array(part))
    exact = np.cov(x - 1e9, rowvar=False)  # the subtraction is exact for these floats
    naive = (x.T @ x - len(x) * np.outer(x.mean(0), x.mean(0))) / (len(x) - 1)
    assert np.abs(naive - exact).max() > 1.0  # the textbook formula is useless here
    np.testing.assert_allclose(merged.covariance(), exact, rtol=0, atol=1e-6)


def test_extended_columns_are_zero():
    m = Moments.from_array(np.array([[1.0], [3.0]])).extended(2)
    assert m.mean.tolist() == [2.0, 0.0, 0.0]
    assert m.covariance()[0, 0] == 2.0 and not m.covariance()[1:].any()


def test_tally_merges_sums_and_extremes():
    a, b = Tally(), Tally()
    a.add("n", 2)
    a.maximum("w", 3)
    b.add("n", 5)
    b.maximum("w", 9)
    b.minimum("lo", -1)
    merged = a.merge(b)
    assert (
        merged.sums == {"n": 7.0} and merged.maxima == {"w": 9.0} and merged.minima == {"lo": -1.0}
    )
