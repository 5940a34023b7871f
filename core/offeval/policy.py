"""Target policies: what an estimator needs to know about the policy it evaluates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from offeval import ranking
from offeval.errors import ColumnError, ConfigurationError


@runtime_checkable
class Policy(Protocol):
    """A target policy, queried on any table of (context, item, position) rows.

    ``probabilities(rows)`` returns, for each row, the probability that the
    policy shows ``item`` at ``position`` to ``context``. The rows may be the
    log's rows or the rows of its candidate table.
    """

    name: str

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """Probability of each row's (item, position) under the policy."""
        ...


class ColumnPolicy:
    """A policy whose probabilities are stored in a column of the rows queried.

    This is how a user hands target policies to ``offeval evaluate``: one
    column per policy, in the log (and in the candidate table, if any).
    """

    def __init__(self, column: str, name: str | None = None):
        self.column = column
        self.name = name or column

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """The column's values, checked to be numbers in [0, 1]."""
        if self.column not in rows:
            raise ColumnError(self.column, f"policy {self.name!r} reads this column; it is absent")
        values = rows[self.column]
        if values.dtype.kind in "iuf":
            p = values.to_numpy(dtype=float)
        else:
            p = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
        bad = ~((p >= 0) & (p <= 1))
        if bad.any():
            raise ColumnError(
                self.column,
                f"target probabilities of policy {self.name!r} must be numbers in [0, 1]",
                positions=np.flatnonzero(bad),
            )
        return p

    def __repr__(self) -> str:
        return f"ColumnPolicy({self.column!r}, name={self.name!r})"


class LoggingPolicy:
    """The logging policy itself, read from the ``propensity`` column."""

    name = "logging"

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """The logged propensities."""
        return ColumnPolicy("propensity").probabilities(rows)

    def __repr__(self) -> str:
        return "LoggingPolicy()"


@runtime_checkable
class ExposurePolicy(Protocol):
    """A ranking policy that also gives expected exposures (used by exposure-based estimators).

    ``exposure(rows, examination)`` returns, for each row's (context, item),
    sum_i e(i) P(item at rank i | context) where ``examination`` maps 1-based
    ranks to e(i).
    """

    name: str

    def exposure(self, rows: pd.DataFrame, examination: Callable) -> np.ndarray:
        """Expected examination of each row's item."""
        ...


@runtime_checkable
class ScoringPolicy(Protocol):
    """A test model that scores items (used by estimators that compare scores).

    ``scores(rows)`` returns, for each row's (context, item), the model's score.
    """

    name: str

    def scores(self, rows: pd.DataFrame) -> np.ndarray:
        """The score of each row's item."""
        ...


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
        if temperature is not None and not temperature > 0:
            raise ConfigurationError(f"temperature must be positive or None, got {temperature}")
        self.column = column
        self.temperature = temperature
        self.name = name or column
        self.method = method
        self.samples = samples
        self.seed = seed

    def _layout(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Scores, each row's trajectory index and its slot within the trajectory."""
        for column in ("trajectory", self.column):
            if column not in rows:
                raise ColumnError(column, f"policy {self.name!r} needs this column")
        score = pd.to_numeric(rows[self.column], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(score)
        if bad.any():
            raise ColumnError(
                self.column, "scores must be finite numbers", positions=np.flatnonzero(bad)
            )
        traj = rows["trajectory"].to_numpy()
        starts = np.flatnonzero(np.r_[True, traj[1:] != traj[:-1]])
        if np.unique(traj[starts]).size != starts.size:
            raise ColumnError("trajectory", "rows must be grouped by trajectory")
        unit = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, traj.size]))
        return score, unit, np.arange(traj.size) - starts[unit]

    def scores(self, rows: pd.DataFrame) -> np.ndarray:
        """The score of each row's item (checked finite)."""
        return self._layout(rows)[0]

    def ranks(self, rows: pd.DataFrame) -> np.ndarray:
        """Deterministic policies: each row's 1-based rank within its trajectory."""
        score, unit, slot = self._layout(rows)
        if not score.size:
            return np.zeros(0, dtype=np.int64)
        length = int(slot.max()) + 1
        padded = np.full((int(unit.max()) + 1, length), np.inf)
        padded[unit, slot] = -score  # ascending sort = best first; padding last
        order = np.argsort(padded, axis=1, kind="stable")
        ranks = np.empty(padded.shape, dtype=np.int64)
        np.put_along_axis(ranks, order, np.arange(1, length + 1)[None, :], axis=1)
        return ranks[unit, slot]

    def marginals(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(rows, L) probability of each row's item at rank 1..L of its trajectory, and L."""
        score, unit, slot = self._layout(rows)
        length = int(slot.max()) + 1 if slot.size else 1
        padded = np.full((int(unit.max()) + 1 if unit.size else 0, length), -np.inf)
        padded[unit, slot] = score if self.temperature is None else score / self.temperature
        if self.temperature is None:
            table = ranking.deterministic(padded, length)
        else:
            table = ranking.plackett_luce(
                padded, length, method=self.method, samples=self.samples, seed=self.seed
            )
        return table.values[unit, slot], length

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
            rank = self.ranks(rows)
            top = int(rank.max()) if rank.size else 1
            return np.asarray(examination(np.arange(1, top + 1)), dtype=float)[rank - 1]
        table, length = self.marginals(rows)
        return table @ np.asarray(examination(np.arange(1, length + 1)), dtype=float)

    def __repr__(self) -> str:
        kind = "deterministic" if self.temperature is None else f"PL(T={self.temperature:g})"
        return f"RerankPolicy({self.column!r}, {kind}, name={self.name!r})"
