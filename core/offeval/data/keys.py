"""Keys made of several columns: a trajectory or a context given as two or more columns
(a session and a day, say) is keyed by one 64-bit hash of their values, the same in the
log, in its candidate table and in every chunk; and the refusal of a column's bad rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval.errors import ColumnError

#: Roles that may be keyed by several columns.
COMPOSITE_ROLES = ("trajectory", "context")


def refuse(
    bad: np.ndarray, column: str, problem: str, labels: np.ndarray, table: str = "rows"
) -> None:
    """A ColumnError naming the rows (by ``labels``) where ``bad`` holds, if any."""
    if bad.any():
        raise ColumnError(column, problem, labels[bad], table=table)


def composite_key(columns: pd.DataFrame) -> np.ndarray:
    """One 64-bit key per row from several columns (equal rows, equal keys, in any chunk): a
    hash, so two of n distinct ones share a key with probability about n^2 / 2^65 (3e-8 for a
    million trajectories)."""
    return pd.util.hash_pandas_object(columns, index=False).to_numpy().view(np.int64)


def composite_column(
    frame: pd.DataFrame, role: str, parts: list, labels: np.ndarray, where: str, table: str
) -> np.ndarray:
    """The composite key of ``role`` from the columns ``parts`` of ``frame`` (the data or the
    candidate table, as ``where`` says); a ColumnError if one is absent or a value missing."""
    for column in parts:
        if column not in frame:
            raise ColumnError(column, f"part of the {role} key but not in {where}")
    missing = frame[parts].isna().any(axis=1).to_numpy()
    refuse(missing, f"{role} key {parts}", "must not be missing", labels, table)
    return composite_key(frame[parts])
