"""Trajectories as rankings: each row's place in its trajectory, and padded matrices.

A log's rows are sorted by trajectory, then position. Prefix-based estimators
read a trajectory as the ranking a_1, a_2, ... from the top, so its positions
must be 1, 2, ..., L with no gap: :func:`layout` checks that once per chunk.
Per-trajectory work is done on (trajectories, longest) matrices: one row per
trajectory, one column per position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from offeval import ColumnError, InteractionLog
from offeval_ranking import ranking


@dataclass(frozen=True)
class Layout:
    """Where each log row sits in a (trajectories, longest) matrix."""

    unit: np.ndarray  # trajectory index of each row
    rank: np.ndarray  # 0-based place of each row in its trajectory (position - 1)
    starts: np.ndarray  # first row of each trajectory
    longest: int

    @property
    def n_units(self) -> int:
        """Number of trajectories."""
        return self.starts.size

    @property
    def flat(self) -> np.ndarray:
        """Each row's cell in the flattened matrix."""
        return self.unit * self.longest + self.rank

    def padded(self, values: np.ndarray, fill, dtype=float) -> np.ndarray:
        """Row values as a (trajectories, longest) matrix, ``fill`` beyond each trajectory."""
        out = np.full(self.n_units * self.longest, fill, dtype=dtype)
        out[self.flat] = values
        return out.reshape(self.n_units, self.longest)

    @property
    def valid(self) -> np.ndarray:
        """(trajectories, longest): True where a trajectory has a row."""
        return self.padded(np.ones(self.unit.size, dtype=bool), False, bool)

    def rows(self, matrix: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`padded`: one value per row."""
        return matrix.reshape(-1)[self.flat]


def layout(log: InteractionLog) -> Layout:
    """The rows' places in their trajectories, once per chunk; gaps in positions are errors."""
    return log.memo(_layout)


def _layout(log: InteractionLog) -> Layout:
    unit = log.unit_index
    rank = np.arange(log.n_rows) - log.unit_starts[unit]
    gap = log.column("position") != rank + 1
    if gap.any():
        raise ColumnError(
            "position",
            "a ranking estimator reads each trajectory from the top: its positions must be "
            "1, 2, ..., L without gaps",
            log.source_rows[gap],
        )
    lengths = np.diff(np.r_[log.unit_starts, log.n_rows])
    return Layout(unit, rank, log.unit_starts, int(lengths.max(initial=1)))


def unit_sum(log: InteractionLog, values: np.ndarray) -> np.ndarray:
    """Sum of row values per trajectory."""
    return np.bincount(log.unit_index, weights=values, minlength=log.n_units)


def context_index(log: InteractionLog, n_contexts: int, whose: str) -> np.ndarray:
    """Each row's context as a row index of a per-context table (0..n_contexts-1)."""
    ctx = pd.to_numeric(pd.Series(log.column("context")), errors="coerce").to_numpy(dtype=float)
    bad = ~((ctx >= 0) & (ctx < n_contexts) & (ctx == np.floor(ctx)))
    if bad.any():
        raise ColumnError("context", f"unknown context for {whose}", log.source_rows[bad])
    return ctx.astype(np.int64)


def candidate_index(ranker, ctx: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Index of each item among its context's candidates (``ranker.candidates[ctx]``), -1 if none.

    Through the (context, item id) table :func:`offeval.data.ranking.candidate_lookup`
    shares among rankers of the same candidates, when item ids are small whole
    numbers; otherwise by comparing with every candidate.
    """
    cands = np.asarray(ranker.candidates)
    table = ranking.candidate_lookup(ranker.candidates)
    if table is not None and items.dtype.kind in "iu":
        inside = (items >= 0) & (items < table.shape[1])
        out = np.full(items.shape, -1, dtype=np.int64)
        out[inside] = table[ctx[inside], items[inside]]
        return out
    match = cands[ctx] == items[:, None]
    return np.where(match.any(axis=1), match.argmax(axis=1), -1)
