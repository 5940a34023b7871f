"""Plackett-Luce prefix probabilities in log space against direct products."""

from __future__ import annotations

import numpy as np
import pytest

from offeval_ranking import ranking


def prefix_by_draws(weights: list[float], hidden: float) -> list[float]:
    """P(a_1..a_k) for each k: each displayed item drawn, in turn, from those left (and hidden)."""
    out, p = [], 1.0
    for k, w in enumerate(weights):
        p *= w / (sum(weights[k:]) + hidden)
        out.append(p)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_log_prefix_is_the_product_of_the_draws(seed):
    rng = np.random.default_rng(seed)
    weights = rng.uniform(0.05, 3.0, (6, 4))
    hidden = rng.uniform(0.0, 5.0, 6)
    hidden[0] = 0.0  # nothing left undisplayed
    with np.errstate(divide="ignore"):
        prefix, _ = ranking.log_prefix(np.log(weights), np.log(hidden))
    for row in range(6):
        expected = prefix_by_draws(list(weights[row]), hidden[row])
        assert np.exp(prefix[row]) == pytest.approx(expected, rel=1e-12)


def test_log_prefix_neither_underflows_nor_cancels_at_extreme_weights():
    weights = np.array([[1e-300, 1e-300, 1.0]])
    prefix, left = ranking.log_prefix(np.log(weights), np.array([np.log(1e300)]))
    # first draw: 1e-300 out of about 1e300 -> log 1e-600, far below a float's range
    assert prefix[0, 0] == pytest.approx(np.log(1e-300) - np.log(1e300), rel=1e-12)
    assert left[0, 2] == pytest.approx(np.log(1e300 + 1.0), rel=1e-12)


def test_an_item_the_policy_cannot_show_has_probability_zero_from_its_rank_on():
    logits = np.array([[0.0, -np.inf, 0.0]])
    prefix, _ = ranking.log_prefix(logits, np.array([-np.inf]))
    assert prefix[0, 0] == pytest.approx(np.log(1 / 2))
    assert np.isneginf(prefix[0, 1:]).all()


def test_uniform_log_prefix_is_one_over_the_ordered_choices():
    count = np.array([4.0, 2.0])
    got = np.exp(ranking.uniform_log_prefix(count, 3))
    assert got[0] == pytest.approx([1 / 4, 1 / 12, 1 / 24])
    assert got[1] == pytest.approx([1 / 2, 1 / 2, 0.0])  # a third item out of two: impossible


def test_log_sum_exp_and_shifted():
    values = np.array([[700.0, 699.0, -np.inf], [-np.inf, -np.inf, -np.inf]])
    got = ranking.log_sum_exp(values, axis=1)
    assert got[0] == pytest.approx(700 + np.log(1 + np.exp(-1.0)), rel=1e-15)
    assert np.isneginf(got[1])
    prefix = np.array([[-1.0, -2.0, -3.0]])
    assert ranking.shifted(prefix).tolist() == [[0.0, -1.0, -2.0]]
