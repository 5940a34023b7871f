"""obp's inputs in small: a ``bandit_feedback`` of 12 rounds and an ``action_dist``, shared by
the bad-input tests of the ways in from obp (the core's adapter and the plugins' estimators)."""

from __future__ import annotations

import numpy as np
import pytest

from offeval import OffevalError

N, ACTIONS, SLOTS = 12, 4, 2


def feedback(with_pi_b: bool = True) -> dict:
    """obp's bandit_feedback for 12 rounds, 4 actions, 2 positions (obp's 0-based)."""
    rng = np.random.default_rng(5)
    pi_b = rng.dirichlet(np.ones(ACTIONS), size=(N, SLOTS)).transpose(0, 2, 1)
    position = np.arange(N) % SLOTS
    action = np.arange(N) % ACTIONS
    out = {
        "n_rounds": N,
        "n_actions": ACTIONS,
        "action": action,
        "position": position,
        "reward": (np.arange(N) % 3 == 0).astype(int),
        "pscore": pi_b[np.arange(N), action, position],
        "context": rng.normal(size=(N, 2)),
    }
    return {**out, "pi_b": pi_b} if with_pi_b else out


def dist(rounds: int = N) -> np.ndarray:
    """An action_dist of obp's shape (rounds, actions, positions), uniform."""
    return np.full((rounds, ACTIONS, SLOTS), 1 / ACTIONS)


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def message(call) -> str:
    """The one-line message of the offeval error that ``call()`` raises."""
    with pytest.raises(OffevalError) as exc:
        call()
    return one_line(exc)
