"""Shared fixtures: a small simulated environment and a two-slot bandit log."""

from __future__ import annotations

import pytest
from oracles import synthetic_log

from offeval_simulation import Environment


@pytest.fixture(scope="session")
def env() -> Environment:
    """A small position-based environment: 300 users, 5 candidates, 3 positions."""
    return Environment(seed=11, n_contexts=300, n_items=60, n_candidates=5, n_positions=3)


@pytest.fixture(scope="session")
def bandit():
    """A two-slot bandit log with candidates, its target policy and true value."""
    return synthetic_log(20_000, seed=3)
