"""Keys made of several columns: a trajectory or a context given as two or more columns
(a session and a day, say) is keyed by one 64-bit hash of their values, the same in the
log, in its candidate table and in every chunk."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Roles that may be keyed by several columns.
COMPOSITE_ROLES = ("trajectory", "context")


def composite_key(columns: pd.DataFrame) -> np.ndarray:
    """One 64-bit key per row from several columns (equal rows, equal keys, in any chunk).

    A hash of the values: two of n distinct combinations share a key with
    probability about n^2 / 2^65 (3e-8 for a million trajectories).
    """
    return pd.util.hash_pandas_object(columns, index=False).to_numpy().view(np.int64)
