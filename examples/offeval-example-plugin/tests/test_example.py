"""The example estimator: the conformance kit, and values worked out by hand."""

import numpy as np
import pandas as pd
import pytest

from offeval import ConfigurationError, InteractionLog, evaluate, get_registry
from offeval.testing import parametrize_with_checks
from offeval_example import Example


@parametrize_with_checks([Example(), Example(cap=10)])
def test_conformance(estimator, check):
    check(estimator)


class Half:
    """A target policy that shows every logged row with probability 1/2."""

    name = "half"

    def probabilities(self, rows):
        return np.full(len(rows), 0.5)


def three_rows() -> InteractionLog:
    """Two trajectories, three rows; against Half, the weights pi/mu are 2, 1 and 4."""
    frame = pd.DataFrame(
        {
            "trajectory": [0, 0, 1],
            "context": [0, 0, 1],
            "item": [3, 5, 3],
            "position": [1, 2, 1],
            "reward": [1.0, 0.0, 1.0],
            "propensity": [0.25, 0.5, 0.125],
        }
    )
    return InteractionLog.from_frame(frame)


@pytest.mark.parametrize(
    ("cap", "value", "capped"),
    [(float("inf"), (1 * 2 + 0 * 1 + 1 * 4) / 3, 0), (3, (1 * 2 + 0 * 1 + 1 * 3) / 3, 1)],
)
def test_value_worked_out_by_hand(cap, value, capped):
    estimate = evaluate(three_rows(), [Half()], [Example(cap=cap)], progress=False).estimate("half")
    assert estimate.value == pytest.approx(value, rel=1e-12)
    assert estimate.n_units == 2
    assert estimate.diagnostics["capped"] == capped


def test_a_cap_must_be_positive():
    with pytest.raises(ConfigurationError, match="cap must be a positive number"):
        Example(cap=0)


def test_registered_through_its_entry_point():
    assert get_registry().get("estimator", "example").plugin == "example"
