"""SLOPE's choice from floats: candidates tied within RTOL are one candidate, the first in grid
order wins, and real differences still decide."""

import numpy as np
from oracles import jitter

from offeval_importance import tuning_rules as tuning


def test_slope_on_candidates_equal_in_exact_arithmetic_takes_the_first_in_grid_order():
    """All weights 1: every candidate has the same estimate and width, up to rounding. The
    old rule visited them in the order of their rounding noise."""
    widths = np.array([1.0, 1.0 + 2e-16, 1.0 - 2e-16, 1.0 + 4e-16])
    values = np.full(4, 0.3)
    assert tuning.slope(values, widths) == 0
    for seed in range(20):
        assert tuning.slope(jitter(values, seed), jitter(widths, seed)) == 0


def test_slope_keeps_a_candidate_at_its_bound():
    """|v_j - v_i| equal to width_i + C width_j, up to rounding, keeps candidate i."""
    widths = np.array([2.0, 1.0])
    bound = 1.0 + tuning.SLOPE_CONSTANT * 2.0
    assert tuning.slope(np.array([0.0, bound * (1 + 1e-15)]), widths) == 1
    assert tuning.slope(np.array([0.0, bound * (1 + 1e-6)]), widths) == 0


def test_slope_still_follows_real_differences():
    """Widest to narrowest: 0 (width 3), 1 (2), 2 (1); candidate 2 lies too far from 0."""
    widths = np.array([3.0, 2.0, 1.0])
    assert tuning.slope(np.array([0.0, 0.5, 0.6]), widths) == 2
    assert tuning.slope(np.array([0.0, 0.5, 20.0]), widths) == 1
