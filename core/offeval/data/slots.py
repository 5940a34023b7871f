"""Sums over each slot's candidates: row sums of an (n_rows, k) matrix when every slot has k
candidates (:attr:`InteractionLog.regular_slots`), else a scatter."""

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
