"""Selections from rank probabilities: ties within rounding go by the order of names."""

from __future__ import annotations

import numpy as np

from offeval_decision.choices import select
from offeval_decision.ranks import RankDistribution


def test_top_selection_breaks_rounding_ties_in_the_order_of_names():
    """P(top 3) summed from equal probabilities in another order differs in its last bit
    (0.5499999999999999 against 0.55): a tie, so the first name wins, not the rounding."""
    probabilities = np.array([[0.05, 0.35, 0.15], [0.05, 0.15, 0.35], [0.9, 0.5, 0.5]])
    top = probabilities.sum(axis=1)
    assert top[0] < top[1]
    dist = RankDistribution(
        names=["x", "y", "z"],
        probabilities=probabilities,
        expected_rank=np.array([2.0, 2.0, 2.0]),
        draws=10,
        seed=0,
        mean=np.zeros(3),
        covariance=np.eye(3),
    )
    assert select(dist, 2) == ["z", "x"]
    assert select(dist, 3) == ["z", "x", "y"]
