"""The small log the interval tests share (tests/core/test_intervals.py and
tests/plugins/betting/test_betting.py): one row per trajectory with given rewards."""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval import ColumnPolicy, InteractionLog


def clicks_and_propensities(clicks: list[int], propensity: float = 0.5):
    """A one-row-per-trajectory log with these rewards, and a target equal to the logger."""
    n = len(clicks)
    frame = pd.DataFrame(
        {
            "trajectory": np.arange(n),
            "item": np.zeros(n, dtype=int),
            "reward": np.asarray(clicks, dtype=float),
            "propensity": np.full(n, propensity),
            "target": np.full(n, propensity),
        }
    )
    return InteractionLog.from_frame(frame), ColumnPolicy("target", name="target")
