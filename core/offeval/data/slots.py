"""Sums over each slot's candidates, by reshape when the candidate table is regular.

A log's candidate table is sorted by slot (the log row each candidate belongs to). When
every slot has the same number k of candidates (:attr:`InteractionLog.regular_slots`),
a column of the table is an (n_rows, k) matrix: per-slot sums are row sums, no scatter.
"""

from __future__ import annotations

import numpy as np

from offeval.data.log import InteractionLog


def slot_sums(log: InteractionLog, values: np.ndarray) -> np.ndarray:
    """Per log row (slot), the sum of ``values`` (one per candidate row) over its candidates."""
    k = log.regular_slots
    if k is not None:
        return np.einsum("ij->i", values.reshape(log.n_rows, k))  # faster than sum(axis=1)
    slot = log.require_candidates()["slot"].to_numpy()
    return np.bincount(slot, weights=values, minlength=log.n_rows)
