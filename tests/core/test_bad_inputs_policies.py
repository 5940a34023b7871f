"""Bad policies: probabilities out of [0, 1], NaN or text (also in a later chunk), absent
columns, policies that answer in the wrong shape or are no policy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bad_input_logs import build, cases, fails, late
from reference_estimators import IS

from offeval import (
    ColumnError,
    ColumnPolicy,
    ConfigurationError,
    OffevalError,
    RowError,
    TablePolicy,
    evaluate,
)


class Custom:
    """A user's policy whose answers can be made wrong."""

    def __init__(self, answer):
        self.name = "custom"
        self.answer = answer

    def probabilities(self, rows):
        return self.answer(rows)


POLICY_CASES = {
    "probability above one in a later chunk": (
        lambda: evaluate(late("pi", 1.5), [ColumnPolicy("pi")], [IS()], chunk_rows=100),
        ColumnError,
        "'pi'",
        r"\[0, 1\]",
        r"rows \['r701'\]",
    ),
    "NaN probability in a later chunk": (
        lambda: evaluate(late("pi", np.nan), [ColumnPolicy("pi")], [IS()], chunk_rows=100),
        ColumnError,
        r"rows \['r701'\]",
    ),
    "text probability": (
        lambda: evaluate(late("pi", "high"), [ColumnPolicy("pi")], [IS()], chunk_rows=100),
        ColumnError,
        r"rows \['r701'\]",
    ),
    "policy column absent": (
        lambda: evaluate(build(), [ColumnPolicy("nope")], [IS()]),
        ColumnError,
        "'nope'",
        "absent",
    ),
    "wrong shape from a policy": (
        lambda: evaluate(build(), [Custom(lambda rows: np.ones(2))], [IS()]),
        OffevalError,
        "policy 'custom'",
        r"shape \(2,\) for 6 rows",
    ),
    "NaN from a policy": (
        lambda: evaluate(
            build(), [Custom(lambda rows: np.where(rows["item"] == "d", np.nan, 0.5))], [IS()]
        ),
        RowError,
        "policy 'custom'",
        r"rows \['s6'\]",
    ),
    "probabilities outside [0, 1] from a policy": (
        lambda: evaluate(build(), [Custom(lambda rows: rows["position"] * 0.4)], [IS()]),
        RowError,
        "policy 'custom'",
        r"\[0, 1\]",
        r"rows \['s3', 's4'\]",
    ),
    "text from a policy": (
        lambda: evaluate(build(), [Custom(lambda rows: ["x"] * len(rows))], [IS()]),
        OffevalError,
        "did not return numbers",
    ),
    "not a policy": (lambda: evaluate(build(), [object()], [IS()]), OffevalError, "not a policy"),
    "policy without probabilities": (
        lambda: evaluate(build(), [type("P", (), {"name": "p"})()], [IS()]),
        ConfigurationError,
        "policy 'p'",
        r"no probabilities\(\)",
    ),
}


@cases(POLICY_CASES)
def test_bad_policies(case):
    fails(*case)


def test_a_table_summing_above_one_names_its_slot_and_table_rows():
    """Every other TablePolicy error names the table's rows; this one named only the slot."""
    table = pd.DataFrame(
        {"item": [1, 2, 3, 1], "position": [1, 1, 2, 2], "probability": [0.6, 0.6, 0.5, 0.3]},
        index=["a", "b", "c", "d"],
    )
    with pytest.raises(
        ConfigurationError,
        match=r"sum to more than 1 at position \[1\] \(up to 1\.2; table rows \['a', 'b'\]\)",
    ):
        TablePolicy(table, name="t")
