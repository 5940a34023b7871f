"""Per-trajectory columns (a banner was shuffled, a logging ranker's hidden mass): one value
per trajectory, checked on every one of its rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval.data.log import InteractionLog, booleans
from offeval.errors import ColumnError, describe_rows


def per_trajectory(
    log: InteractionLog, column: str, values: np.ndarray, units: np.ndarray | None = None
) -> np.ndarray:
    """Each trajectory's value of a per-trajectory column: its first row's, checked on the others.

    ``values``: one per row (NaN equals NaN); ``units``: one true/false per trajectory, true
    where it is checked. A trajectory whose rows differ is a ColumnError naming it and them.
    """
    sizes = np.diff(np.r_[log.unit_starts, log.n_rows])
    first = values[log.unit_starts]
    spread = np.repeat(first, sizes)
    differ = (values != spread) & ~(_missing(values) & _missing(spread))
    if units is not None:
        differ &= np.repeat(np.asarray(units, dtype=bool), sizes)
    if differ.any():
        ids = log.unit_ids[np.unique(log.unit_index[differ])]
        raise ColumnError(
            column,
            f"one value per trajectory (banner, slate), the same on all its rows: trajectories "
            f"{describe_rows(ids)} hold several (these rows differ from their first row)",
            log.source_rows[differ],
        )
    return first


def trajectory_flags(log: InteractionLog, column: str) -> np.ndarray:
    """Each trajectory's value of a true/false column, the same on every one of its rows."""
    return log.memo(_flags, column)


def _flags(log: InteractionLog, column: str) -> np.ndarray:
    values = booleans(pd.Series(log.column(column)), column, log.source_rows)
    return per_trajectory(log, column, values)


def _missing(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind in "fcO":
        return np.asarray(pd.isna(values), dtype=bool)
    return np.zeros(values.shape, dtype=bool)
