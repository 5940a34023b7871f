"""A ranking policy that re-ranks each trajectory's logged items by a score column."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from offeval import ColumnError
from offeval.plugin import check_number, decimal_comma_hint
from offeval_ranking import ranking


def _grouped(run_ids: np.ndarray) -> bool:
    """Whether the ids of consecutive runs are all distinct (cheap when they increase)."""
    if run_ids.dtype.kind in "iuf" and np.all(run_ids[1:] > run_ids[:-1]):
        return True
    return np.unique(run_ids).size == run_ids.size


class RerankPolicy:
    """Re-ranks each trajectory's logged items by a score column (fixed candidate set).

    Deterministic (``temperature=None``: sort by score, ties by logged
    position) or Plackett-Luce over ``score / temperature``: the logged
    candidates are kept and only their order changes. ``scores(rows)`` gives
    the score column itself, for estimators that compare scores. Plackett-Luce
    marginals are exact when enumerable and Monte Carlo otherwise (``method``,
    ``samples``, ``seed``).
    """

    def __init__(
        self,
        column: str,
        *,
        temperature: float | None = None,
        name: str | None = None,
        method: str = "auto",
        samples: int = 2_000,
        seed: int = 0,
    ):
        self.column = column
        self.temperature = check_number(
            temperature, "temperature", low=0, low_open=True, finite=False, optional=True
        )
        self.name = name or column
        self.method = method
        self.samples = samples
        self.seed = seed

    def _layout(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Scores (checked finite) and the first row of each trajectory (checked grouped)."""
        for column in ("trajectory", self.column):
            if column not in rows:
                raise ColumnError(column, f"policy {self.name!r} needs this column")
        column = rows[self.column]
        if column.dtype.kind != "f":
            column = pd.to_numeric(column, errors="coerce")
        score = column.to_numpy(dtype=float)
        bad = None if np.isfinite(score.sum()) else ~np.isfinite(score)  # sum: one fast pass
        if bad is not None and bad.any():
            how = (
                ""
                if rows[self.column].dtype.kind in "iuf"
                else (decimal_comma_hint(rows[self.column][bad]))
            )
            raise ColumnError(
                self.column, f"scores must be finite numbers{how}", positions=np.flatnonzero(bad)
            )
        traj = rows["trajectory"].to_numpy()
        starts = np.flatnonzero(np.r_[True, traj[1:] != traj[:-1]]) if traj.size else traj[:0]
        if not _grouped(traj[starts]):
            raise ColumnError("trajectory", "rows must be grouped by trajectory")
        return score, starts

    def _padded(self, rows: pd.DataFrame, fill: float) -> tuple[np.ndarray, np.ndarray | None]:
        """Scores as a (trajectories, longest) matrix, and each cell's row (-1: padding).

        When every trajectory has the same length the matrix is a view of the
        scores and the cell-to-row map is None (cell j is row j).
        """
        score, starts = self._layout(rows)
        n, units = score.size, starts.size
        length = int(np.diff(np.r_[starts, n]).max(initial=1))
        if units * length == n and (units < 2 or starts[1] == length):
            if np.array_equal(starts, np.arange(0, n, length)):
                return score.reshape(units, length), None
        unit = np.repeat(np.arange(units), np.diff(np.r_[starts, n]))
        slot = np.arange(n) - starts[unit]
        padded = np.full((units, length), fill)
        padded[unit, slot] = score
        cells = np.full((units, length), -1)
        cells[unit, slot] = np.arange(n)
        return padded, cells

    def _by_rank(self, rows: pd.DataFrame, at: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``at(rank)`` for every row: deterministic ranks, ties by logged position."""
        padded, cells = self._padded(rows, -np.inf)
        units, length = padded.shape
        values = np.asarray(at(np.arange(1, length + 1)))
        order = np.argsort(-padded, axis=1, kind="stable")  # best first; padding last
        out = np.empty(units * length if cells is None else len(rows), dtype=values.dtype)
        at_rank = np.broadcast_to(values, (units, length))
        if cells is None:
            order += (np.arange(units) * length)[:, None]
            out[order.reshape(-1)] = at_rank.reshape(-1)
        else:
            row = np.take_along_axis(cells, order, axis=1)
            valid = row >= 0
            out[row[valid]] = at_rank[valid]
        return out

    def scores(self, rows: pd.DataFrame) -> np.ndarray:
        """The score of each row's item (checked finite)."""
        return self._layout(rows)[0]

    def ranks(self, rows: pd.DataFrame) -> np.ndarray:
        """Deterministic policies: each row's 1-based rank within its trajectory."""
        return self._by_rank(rows, lambda ranks: ranks)

    def marginals(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(rows, L) probability of each row's item at rank 1..L of its trajectory, and L."""
        padded, cells = self._padded(rows, -np.inf)
        length = max(padded.shape[1], 1)
        if self.temperature is None:
            table = ranking.deterministic(padded, length)
        else:
            table = ranking.plackett_luce(
                padded / self.temperature,
                length,
                method=self.method,
                samples=self.samples,
                seed=self.seed,
            )
        values = table.values.reshape(-1, length)
        return (values if cells is None else values[np.flatnonzero(cells >= 0)]), length

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """Probability that each row's item lands at the row's logged position."""
        table, length = self.marginals(rows)
        pos = rows["position"].to_numpy(dtype=np.int64)
        inside = pos <= length
        out = np.zeros(len(rows))
        out[inside] = table[np.flatnonzero(inside), pos[inside] - 1]
        return out

    def exposure(self, rows: pd.DataFrame, examination: Callable) -> np.ndarray:
        """sum_i e(i) P(row's item at rank i) within its trajectory."""
        if self.temperature is None:
            return self._by_rank(rows, lambda ranks: np.asarray(examination(ranks), dtype=float))
        table, length = self.marginals(rows)
        return table @ np.asarray(examination(np.arange(1, length + 1)), dtype=float)

    def __repr__(self) -> str:
        kind = "deterministic" if self.temperature is None else f"PL(T={self.temperature:g})"
        return f"RerankPolicy({self.column!r}, {kind}, name={self.name!r})"
