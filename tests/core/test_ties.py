"""Discrete choices from floats: values tied within RTOL are one value, and the first in the
given order wins; real differences still decide."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import jitter

from offeval.stats.ties import RTOL, first_maximum, first_minimum, tie_groups, tolerant_order

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


def test_exact_and_near_ties_go_to_the_first_in_order():
    assert first_minimum([2.0, 1.0, 1.0, 3.0]) == 1
    assert first_minimum([2.0, 1.0 + 1e-14, 1.0, 3.0]) == 1  # near tie: still the first
    assert first_minimum([2.0, 1.0 + 1e-6, 1.0, 3.0]) == 2  # a real difference decides
    assert first_maximum([0.5, 0.7, 0.7 * (1 + 1e-13)]) == 1
    assert first_minimum([math.nan, 4.0, math.nan]) == 1
    assert first_minimum([math.nan, math.nan]) == 0
    assert first_minimum([0.0, -0.0]) == 0


@given(st.lists(finite, min_size=1, max_size=12), st.integers(0, 2**32 - 1))
def test_a_choice_survives_rounding_noise(values, seed):
    """Noise far below RTOL never changes which index is chosen, nor the tolerant order."""
    values = np.asarray(values)
    spread = np.abs(values[:, None] - values[None, :])
    scale = np.maximum(np.abs(values[:, None]), np.abs(values[None, :]))
    # only values that are either tied or clearly apart (no value within 1e3 RTOL of a boundary)
    ambiguous = (spread > RTOL * scale / 10) & (spread < 1e3 * RTOL * scale)
    if ambiguous.any():
        return
    noisy = jitter(values, seed)
    assert first_minimum(noisy) == first_minimum(values)
    assert first_maximum(noisy) == first_maximum(values)
    np.testing.assert_array_equal(tolerant_order(noisy), tolerant_order(values))
    np.testing.assert_array_equal(
        tolerant_order(noisy, descending=True), tolerant_order(values, descending=True)
    )


def test_tie_groups_never_chain_beyond_the_tolerance():
    step = 0.6 * RTOL
    values = [1.0, 1.0 + step, 1.0 + 2 * step, 1.0 + 3 * step]
    groups = tie_groups(values)
    assert groups.tolist() == [0, 0, 1, 1]  # 1 + 2 step is not tied with 1


@pytest.mark.parametrize("noise", [0.0, 1e-15, -1e-15])
def test_estimated_mse_ties_take_the_first_in_grid_order(noise):
    mse = np.array([0.2 * (1 + noise), 0.2, 0.2 * (1 - noise), 0.5])
    assert first_minimum(mse) == 0
