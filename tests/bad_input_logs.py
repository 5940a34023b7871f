"""The small logs and the check the bad-input tests share (tests/core/test_bad_inputs_*.py and
tests/plugins/<name>/test_bad_inputs_<name>.py): a frame of two trajectories labelled by
strings, a long one whose bad row comes in a later chunk, ``fails`` and ``cases``.

Each bad input is an offeval error naming the column or parameter and the user's own row
labels, never a crash from pandas, numpy, pyarrow or the OS, and never a silent wrong number.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from offeval import InteractionLog, OffevalError

LABELS = ["s1", "s2", "s3", "s4", "s5", "s6"]


def frame(index=None, **overrides) -> pd.DataFrame:
    """Two trajectories of three rows, labelled by strings unless told otherwise."""
    data = {
        "session": [10, 10, 10, 20, 20, 20],
        "item": ["a", "b", "c", "a", "c", "d"],
        "rank": [1, 2, 3, 3, 2, 1],
        "click": [1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        "mu": [0.5, 0.25, 0.25, 0.2, 0.3, 0.5],
        "pi": [0.6, 0.2, 0.2, 0.1, 0.5, 0.4],
        "score": [3.0, 2.0, 1.0, 0.5, 1.5, 2.5],
    }
    data.update(overrides)
    return pd.DataFrame(data, index=LABELS if index is None else index)


MAP = {"trajectory": "session", "position": "rank", "reward": "click", "propensity": "mu"}


def build(data=None, mapping=MAP, **kw):
    return InteractionLog.from_frame(frame() if data is None else data, mapping, **kw)


def fails(call, error, *patterns):
    """``call()`` raises ``error`` whose message contains every pattern (regexes)."""
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for pattern in patterns:
        assert re.search(pattern, message), f"{pattern!r} not in {message!r}"
    assert issubclass(error, OffevalError) and isinstance(info.value, ValueError)
    return info.value


def cases(table: dict, error: type[OffevalError] | None = None):
    """Runs a test once per entry of ``table``, named by its key: ``case`` is the entry,
    ``(call, error, *patterns)`` for ``fails``; ``error``, if given, is every entry's error
    (the entries then leave it out)."""
    entries = table.values() if error is None else [(c, error, *p) for c, *p in table.values()]
    return pytest.mark.parametrize("case", entries, ids=list(table))


def candidates(**overrides) -> pd.DataFrame:
    data = {
        "trajectory": [10, 10, 10, 20, 20, 20],
        "position": [1, 2, 3, 3, 2, 1],
        "item": ["a", "b", "c", "a", "c", "d"],
        "propensity": [0.5, 0.25, 0.25, 0.2, 0.3, 0.5],
    }
    data.update(overrides)
    return pd.DataFrame(data, index=[f"c{i}" for i in range(1, 7)])


# -- policies, found in a later chunk -----------------------------------------------------
def long_frame(n=400, index=None) -> pd.DataFrame:
    """n trajectories of two rows, with labels r0, r1, ... unless told otherwise."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame(
        {
            "session": np.repeat(np.arange(n), 2),
            "item": np.tile([1, 2], n),
            "rank": np.tile([1, 2], n),
            "click": rng.integers(0, 2, 2 * n).astype(float),
            "mu": 0.5,
            "pi": 0.5,
            "score": rng.random(2 * n),
        }
    )
    data.index = [f"r{i}" for i in range(2 * n)] if index is None else index
    return data


def late(column: str, value) -> InteractionLog:
    data = long_frame()
    data[column] = data[column].astype(object)
    data.loc["r701", column] = value
    return build(data)
