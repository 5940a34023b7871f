"""Matching the candidate table's rows to the logged rows of their trajectory.

(Plackett-Luce prefix probabilities in log space are the core's: ``ranking.log_prefix``.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval import InteractionLog


def first_shown(log: InteractionLog) -> np.ndarray:
    """For each log row, the rank where its trajectory first shows its item (<= its own)."""
    return log.memo(_first_shown, key="first_shown")


def _first_shown(log: InteractionLog) -> np.ndarray:
    keys = _keys(log, log.frame["item"].to_numpy(), log.unit_index)[0]
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    first = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    lead = order[np.flatnonzero(first)][np.cumsum(first) - 1]
    out = np.empty(log.n_rows, dtype=np.int64)
    out[order] = lead
    return out - log.unit_starts[log.unit_index]


def candidate_rows(log: InteractionLog) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each candidate row: its slot's trajectory, the slot's rank, and the rank at which
    its trajectory shows the candidate's item (-1 when it never does)."""
    return log.memo(_candidate_rows, key="candidate_rows")


def _candidate_rows(log: InteractionLog):
    cands = log.require_candidates()
    slot = cands["slot"].to_numpy()
    unit = log.unit_index[slot]
    rank = slot - log.unit_starts[unit]
    logged, cand = _keys(log, log.frame["item"].to_numpy(), log.unit_index, cands, unit)
    order = np.argsort(logged, kind="stable")
    at = np.searchsorted(logged[order], cand)
    at = np.minimum(at, len(order) - 1)
    row = order[at]
    found = logged[row] == cand
    shown = np.where(found, row - log.unit_starts[log.unit_index[row]], -1)
    return unit, rank, shown


def _keys(log, items, units, cands=None, cand_units=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Integer keys of (trajectory, item) pairs, for the log's rows (and candidate rows)."""
    if cands is None:
        codes, uniques = pd.factorize(items)
        return units.astype(np.int64) * max(len(uniques), 1) + codes, None
    other = cands["item"].to_numpy()
    if not (items.dtype.kind in "iu" and other.dtype.kind in "iu"):
        items, other = items.astype(object), other.astype(object)
    both = np.concatenate([items, other])
    codes, uniques = pd.factorize(both)
    width = max(len(uniques), 1)
    n = len(items)
    return (
        units.astype(np.int64) * width + codes[:n],
        cand_units.astype(np.int64) * width + codes[n:],
    )
