"""Target policies: what an estimator needs to know about the policy it evaluates."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from offeval.errors import ColumnError


@runtime_checkable
class Policy(Protocol):
    """A target policy, queried on any table of (context, item, position) rows.

    ``probabilities(rows)`` returns, for each row, the probability that the
    policy shows ``item`` at ``position`` to ``context``. The rows may be the
    log's rows or the rows of its candidate table.
    """

    name: str

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """Probability of each row's (item, position) under the policy."""
        ...


class ColumnPolicy:
    """A policy whose probabilities are stored in a column of the rows queried.

    This is how a user hands target policies to ``offeval evaluate``: one
    column per policy, in the log (and in the candidate table, if any).
    """

    def __init__(self, column: str, name: str | None = None):
        self.column = column
        self.name = name or column

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """The column's values, checked to lie in [0, 1]."""
        if self.column not in rows:
            raise ColumnError(self.column, f"policy {self.name!r} reads this column; it is absent")
        p = rows[self.column].to_numpy(dtype=float)
        bad = ~((p >= 0) & (p <= 1))
        if bad.any():
            raise ColumnError(
                self.column, "target probabilities must lie in [0, 1]", np.flatnonzero(bad)
            )
        return p

    def __repr__(self) -> str:
        return f"ColumnPolicy({self.column!r}, name={self.name!r})"


class LoggingPolicy:
    """The logging policy itself, read from the ``propensity`` column."""

    name = "logging"

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """The logged propensities."""
        return ColumnPolicy("propensity").probabilities(rows)

    def __repr__(self) -> str:
        return "LoggingPolicy()"
