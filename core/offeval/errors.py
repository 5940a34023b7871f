"""The offeval exception hierarchy: every input problem is a ``ValueError``.

Errors about rows name them by the user's own input labels (the index of the
frame they passed, whatever its type), never by positions after sorting or
within a chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

#: How many offending rows an error message lists.
SHOWN = 10


class OffevalError(ValueError):
    """Base class of every error offeval raises about its input."""


class OffevalWarning(UserWarning):
    """Something in the data that makes a result doubtful, though not wrong to compute."""


def plain(label: Any) -> Any:
    """A label as a plain Python value (numpy scalars unwrapped, tuples kept)."""
    if isinstance(label, tuple):
        return tuple(plain(part) for part in label)
    if isinstance(label, (np.datetime64, np.timedelta64)):
        return str(pd.Timestamp(label) if isinstance(label, np.datetime64) else pd.Timedelta(label))
    if isinstance(label, np.generic):
        return label.item()
    return label


def labels_of(rows: Sequence[Any] | np.ndarray) -> list[Any]:
    """Row labels as a list of plain values (tuples of a MultiIndex stay tuples)."""
    items = rows.ravel() if isinstance(rows, np.ndarray) else rows
    return [plain(r) for r in items]


def describe_rows(rows: Sequence[Any] | np.ndarray) -> str:
    """``[3, 'b', ...]``: the first :data:`SHOWN` labels, and an ellipsis if there are more."""
    labels = labels_of(rows)
    shown = [repr(x) if isinstance(x, str) else str(x) for x in labels[:SHOWN]]
    return "[" + ", ".join(shown) + (", ...]" if len(labels) > SHOWN else "]")


class RowError(OffevalError):
    """Some input rows hold invalid values; the message names them by their input labels.

    ``subject`` says what is wrong (``"column 'reward'"``, ``"policy 'new'"``);
    ``rows`` are input labels; ``table`` names the table they belong to
    (``"rows"`` of the log, ``"candidate rows"`` of its candidate table).
    """

    def __init__(
        self, subject: str, problem: str, rows: Sequence[Any] | np.ndarray = (), table="rows"
    ):
        self.subject = subject
        self.problem = problem
        self.rows = labels_of(rows)
        self.table = table
        where = f" ({table} {describe_rows(self.rows)})" if self.rows else ""
        super().__init__(f"{subject}: {problem}{where}")


class ColumnError(RowError):
    """A column is missing, or some of its rows hold invalid values.

    Code that sees only a table handed to it (a policy queried on some rows)
    names the offending rows by ``positions`` in that table; offeval then
    re-raises the error with the user's labels (see :meth:`at_labels`).
    """

    def __init__(
        self,
        column: str,
        problem: str,
        rows: Sequence[Any] | np.ndarray = (),
        *,
        positions: Sequence[int] | np.ndarray | None = None,
        table: str = "rows",
    ):
        self.column = column
        self.positions = None if positions is None else np.asarray(positions, dtype=np.int64)
        if self.positions is not None:
            rows, table = self.positions, "positions in the rows given"
        super().__init__(f"column {column!r}", problem, rows, table)

    def at_labels(self, labels: np.ndarray, table: str = "rows") -> ColumnError:
        """The same error with its positions replaced by the input labels of those rows."""
        if self.positions is None:
            return self
        return ColumnError(
            self.column, self.problem, np.asarray(labels)[self.positions], table=table
        )


class SupportError(OffevalError):
    """The target policy puts mass where the logging policy never acts."""


class ConfigurationError(OffevalError):
    """A component was configured with invalid parameters."""


class RegistryError(OffevalError):
    """A component name is unknown or registered twice."""


class SplitUnitError(OffevalError):
    """A unit (trajectory) arrived in two chunks and would be counted twice."""

    def __init__(self, ids: Sequence[Any] | np.ndarray, count: int, how: str = ""):
        self.ids = labels_of(ids)
        self.count = count
        #: Hash keys of ids that could not be named (see :mod:`offeval.units`).
        self.keys = None
        named = f" (ids {describe_rows(self.ids)})" if self.ids else ""
        what = "trajectory appears" if count == 1 else f"{count} trajectories appear"
        super().__init__(
            f"{what} in more than one chunk{named} and would be counted twice: every "
            "trajectory's rows must come in one chunk (batch, partition, log)"
            + (f"; {how}" if how else "")
        )
