"""The offeval exception hierarchy: every input problem is a ``ValueError``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class OffevalError(ValueError):
    """Base class of every error offeval raises about its input."""


class ColumnError(OffevalError):
    """A column is missing, or some of its rows hold invalid values."""

    def __init__(self, column: str, problem: str, rows: Sequence[int] | np.ndarray = ()):
        rows = [int(r) for r in np.asarray(rows).ravel()[:10]]
        self.column = column
        self.rows = rows
        where = f" (rows {rows}{', ...' if len(rows) == 10 else ''})" if rows else ""
        super().__init__(f"column {column!r}: {problem}{where}")


class SupportError(OffevalError):
    """The target policy puts mass where the logging policy never acts."""


class ConfigurationError(OffevalError):
    """A component was configured with invalid parameters."""


class RegistryError(OffevalError):
    """A component name is unknown or registered twice."""
