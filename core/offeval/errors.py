"""The offeval exception hierarchy (every input problem is a ``ValueError``) and the hints
of its messages, which name rows by the user's own labels. numpy and pandas are imported
where they are used: the command line imports this module."""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

#: How many offending rows an error message lists.
SHOWN = 10
#: Who reads the messages: "python" (a caller of the library) or "command line".
_SURFACE: ContextVar[str] = ContextVar("message_surface", default="python")


@contextmanager
def command_line() -> Iterator[None]:
    """Within the block, hints name command-line options instead of Python calls."""
    token = _SURFACE.set("command line")
    try:
        yield
    finally:
        _SURFACE.reset(token)


def hint(python: str, command_line: str) -> str:
    """The hint for whoever reads the message: a Python call, or a command-line option."""
    return command_line if _SURFACE.get() == "command line" else python


#: A number written with a decimal comma (``0,5``, ``-12,25``, ``3,2e-05``).
DECIMAL_COMMA = r"\s*[-+]?\d*,\d+(?:[eE][-+]?\d+)?\s*"


def decimal_comma_hint(values: pd.Series) -> str:
    """``": its numbers have decimal commas (0,5); use --decimal ,"`` when every one of
    ``values`` (those that are not numbers) is a number with a decimal comma; else ``""``."""
    text = values.dropna().astype(str)
    if not len(text) or not text.str.fullmatch(DECIMAL_COMMA).all():
        return ""
    how = hint("read the file with decimal=','", "use --decimal ,")
    return f": its numbers have decimal commas ({text.iloc[0].strip()}); {how}"


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``" (did you mean snips?)"`` for the closest names among ``known``, or ``""``.

    Case and surrounding spaces are ignored; a word of one letter gets no suggestion.
    """
    folded: dict[str, list[str]] = {}
    for name in map(str, known):
        folded.setdefault(name.strip().casefold(), []).append(name)
    typed = str(word).strip().casefold()
    if typed in folded:
        close = folded[typed]
    elif len(typed) < 2:
        close = []
    else:
        matches = difflib.get_close_matches(typed, list(folded), n=3, cutoff=0.6)
        close = [name for match in matches for name in folded[match]][:3]
    return f" (did you mean {' or '.join(close)}?)" if close else ""


class OffevalError(ValueError):
    """Base class of every error offeval raises about its input."""


class OffevalWarning(UserWarning):
    """Something in the data that makes a result doubtful, though not wrong to compute."""


def plain(label: Any) -> Any:
    """A label as a plain Python value (numpy scalars unwrapped, tuples kept)."""
    if isinstance(label, tuple):
        return tuple(plain(part) for part in label)
    np = sys.modules.get("numpy")
    if np is None:  # not imported: the label is no numpy value
        return label
    if isinstance(label, (np.datetime64, np.timedelta64)):
        import pandas as pd

        return str(pd.Timestamp(label) if isinstance(label, np.datetime64) else pd.Timedelta(label))
    if isinstance(label, np.generic):
        return label.item()
    return label


def labels_of(rows: Sequence[Any] | np.ndarray) -> list[Any]:
    """Row labels as a list of plain values (tuples of a MultiIndex stay tuples)."""
    np = sys.modules.get("numpy")
    items = rows.ravel() if np is not None and isinstance(rows, np.ndarray) else rows
    return [plain(r) for r in items]


def describe_rows(rows: Sequence[Any] | np.ndarray) -> str:
    """``[3, 'b', ...]``: the first :data:`SHOWN` labels, and an ellipsis if there are more."""
    labels = labels_of(rows)
    shown = [repr(x) if isinstance(x, str) else str(x) for x in labels[:SHOWN]]
    return "[" + ", ".join(shown) + (", ...]" if len(labels) > SHOWN else "]")


class RowError(OffevalError):
    """Some input rows hold invalid values; the message names them by their input labels.

    ``subject`` says what is wrong (``"column 'reward'"``); ``table`` names the table
    ``rows`` belong to (``"rows"`` of the log, ``"candidate rows"``).
    """

    def __init__(
        self, subject: str, problem: str, rows: Sequence[Any] | np.ndarray = (), table="rows"
    ):
        self.subject = subject
        self.problem = problem
        self.rows = labels_of(rows)
        self.table = table
        super().__init__(self._message())

    def _message(self) -> str:
        where = f" ({self.table} {describe_rows(self.rows)})" if self.rows else ""
        return f"{self.subject}: {self.problem}{where}"

    def in_table(self, table: str, rows: Sequence[Any] | None = None) -> RowError:
        """This error with its log rows called ``table`` (``"log.csv, lines"``), and
        relabelled ``rows`` if given (one per row); returns it."""
        if self.table == "rows" and self.rows:
            self.table = table
            self.rows = self.rows if rows is None else labels_of(rows)
            self.args = (self._message(),)
        return self


class ColumnError(RowError):
    """A column is missing, or some of its rows hold invalid values.

    Code that sees only a table handed to it names rows by ``positions`` in it;
    offeval re-raises the error with the user's labels (:meth:`at_labels`).
    """

    def __init__(
        self,
        column: str,
        problem: str,
        rows: Sequence[Any] | np.ndarray = (),
        *,
        positions: Sequence[int] | np.ndarray | None = None,
        table: str = "rows",
        role: str | None = None,
    ):
        import numpy as np

        self.column = column
        self.role = role
        self.positions = None if positions is None else np.asarray(positions, dtype=np.int64)
        if self.positions is not None:
            rows, table = self.positions, "positions in the rows given"
        subject = f"column {plain(column)!r}" + (f" (role {role})" if role else "")
        super().__init__(subject, problem, rows, table)

    def at_labels(self, labels: np.ndarray, table: str = "rows") -> ColumnError:
        """The same error with its positions replaced by the input labels of those rows."""
        if self.positions is None:
            return self
        import numpy as np

        return self._rebuilt(rows=np.asarray(labels)[self.positions], positions=None, table=table)

    def named(self, columns: Mapping[str, Any]) -> ColumnError:
        """The same error naming the user's column where ``columns`` (the log's role ->
        column name) maps its role to one: ``column 'logging_prob' (role propensity)``."""
        given = columns.get(self.column) if self.role is None else None
        if not isinstance(given, (str, int)) or given == self.column:
            return self
        return self._rebuilt(column=given, role=self.column)

    def _rebuilt(self, **changes: Any) -> ColumnError:
        """This error built again, with some of its arguments changed."""
        names = ("column", "problem", "rows", "positions", "table", "role")
        return ColumnError(**{name: getattr(self, name) for name in names} | changes)


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
        #: Hash keys of ids that could not be named (see :mod:`offeval.data.units`).
        self.keys = None
        named = f" (ids {describe_rows(self.ids)})" if self.ids else ""
        what = "trajectory appears" if count == 1 else f"{count} trajectories appear"
        super().__init__(
            f"{what} in more than one chunk{named} and would be counted twice: every "
            "trajectory's rows must come in one chunk (batch, partition, log)"
            + (f"; {how}" if how else "")
        )
