"""Sums over each slot's candidates, by reshape when the candidate table is regular.

A log's candidate table is sorted by slot (the log row each candidate
belongs to). When every slot has the same number k of candidates, candidate
row j belongs to slot j // k and a column of the table is an (n_rows, k)
matrix: per-slot sums are row sums, with no scatter (:func:`slot_sums`).
"""

from __future__ import annotations

import numpy as np

from offeval.data.log import InteractionLog


def regular_slots(log: InteractionLog) -> int | None:
    """k when every slot has exactly k candidate rows (candidate row j is slot j // k), else None.

    Once per chunk. The table is sorted by slot, so the first and the last
    row of every block of k tell.
    """
    return log.memo(_regular_slots)


def _regular_slots(log: InteractionLog) -> int | None:
    slot = log.require_candidates()["slot"].to_numpy()
    n = log.n_rows
    if not n or not slot.size or slot.size % n:
        return None
    k = slot.size // n
    every = np.arange(n)
    regular = np.array_equal(slot[::k], every) and np.array_equal(slot[k - 1 :: k], every)
    return k if regular else None


def slot_sums(log: InteractionLog, values: np.ndarray) -> np.ndarray:
    """Per log row (slot), the sum of ``values`` (one per candidate row) over its candidates."""
    k = regular_slots(log)
    if k is not None:
        return np.einsum("ij->i", values.reshape(log.n_rows, k))  # faster than sum(axis=1)
    slot = log.require_candidates()["slot"].to_numpy()
    return np.bincount(slot, weights=values, minlength=log.n_rows)
