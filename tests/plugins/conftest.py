"""Fixtures of the plugin tests: a small simulated environment and a user's CSV log from it."""

from __future__ import annotations

import pytest
from cli_checks import USER_NAMES, write_csv

from offeval_simulation import Environment


@pytest.fixture(scope="session")
def env() -> Environment:
    """A small position-based environment: 300 users, 5 candidates, 3 positions."""
    return Environment(seed=11, n_contexts=300, n_items=60, n_candidates=5, n_positions=3)


@pytest.fixture()
def user_log(tmp_path, env):
    """A CSV log as a user has one: session, stream, mu and pi_p01..pi_p03 columns."""
    log = env.simulate(env.logging_policy(), 4_000, seed=2)
    frame = log.frame.rename(columns=USER_NAMES)
    for p in env.candidate_policies(3):
        frame[f"pi_{p.name}"] = p.probabilities(log.frame)
    return write_csv(frame, tmp_path / "log.csv")
