"""The fold's mergeable state (:class:`FoldState`, of a constant size in a normal-interval
pass) and the chunk sizes it is folded in; its one driver is
:func:`offeval.engine.accumulator.fold`."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from offeval.data.units import UnitLedger
from offeval.stats.moments import Moments, Tally

#: Largest block of unit sums (units x columns) one chunk may fill: 32 MB of floats.
BLOCK_CELLS = 1 << 22
#: Rows of the first chunk of a log, which tells how many columns the estimators emit.
FIRST_CHUNK_ROWS = 20_000

#: How to fix input whose trajectories arrive in several chunks.
SPLIT_ADVICE = (
    "sort the input by trajectory first (a Parquet file: "
    "pq.write_table(pq.read_table(path).sort_by(trajectory_column), sorted_path)), "
    "or read it whole with InteractionLog.from_file, which sorts it"
)


@dataclass
class FoldState:
    """What a pass has folded so far, without policies or estimators: picklable, mergeable with
    the state of a pass over other trajectories. ``keys``: the global column keys in the
    moments' order, ``(p, e, key)`` owned by estimator ``e`` on policy ``p``, ``(p, Shared)``
    shared per policy, ``(None, Shared)`` by all; ``local[p, e]``: its own keys to global ones.
    """

    keys: list[tuple] = field(default_factory=list)
    where: dict[tuple, int] = field(default_factory=dict)
    local: dict[tuple[int, int], dict[Hashable, tuple]] = field(default_factory=dict)
    moments: Moments | None = None
    tallies: dict[tuple[int, int], Tally] = field(default_factory=dict)
    excluded: dict[tuple[int, int], dict[str, int]] = field(default_factory=dict)
    ledger: UnitLedger = field(default_factory=UnitLedger)
    intervals: dict[str, Any] = field(default_factory=dict)

    def new_column(self, where: tuple) -> None:
        """A column first seen now: it was zero for the units folded before."""
        self.where[where] = len(self.keys)
        self.keys.append(where)
        if self.moments is not None:
            self.moments = self.moments.extended(1)

    def record(self, pe: tuple[int, int], tally: Tally, excluded: dict[str, int]) -> None:
        """Add one contribution's tally and exclusions (by reason) to those of ``pe``."""
        self.tallies[pe] = self.tallies.get(pe, Tally()).merge(tally)
        counts = self.excluded.setdefault(pe, {})
        for reason, count in excluded.items():
            counts[reason] = counts.get(reason, 0) + int(count)

    def merge(self, other: FoldState) -> FoldState:
        """The state of both passes (over different trajectories: a shared one is an error)."""
        if other.moments is None:
            return self
        if self.moments is None:
            return other
        out = FoldState(ledger=self.ledger.merge(other.ledger, SPLIT_ADVICE))
        for where in [*self.keys, *other.keys]:
            if where not in out.where:
                out.new_column(where)
        for pe in set(self.local) | set(other.local):
            out.local[pe] = {**other.local.get(pe, {}), **self.local.get(pe, {})}
        out.moments = _aligned(self.moments, self.keys, out.keys).merge(
            _aligned(other.moments, other.keys, out.keys)
        )
        for pe in set(self.tallies) | set(other.tallies):
            for state in (self, other):
                out.record(pe, state.tallies.get(pe, Tally()), state.excluded.get(pe, {}))
        for name in {*self.intervals, *other.intervals}:
            mine, theirs = self.intervals.get(name), other.intervals.get(name)
            out.intervals[name] = (
                theirs if mine is None else mine if theirs is None else (mine.merge(theirs))
            )
        return out


def _aligned(moments: Moments, keys: list, target: list) -> Moments:
    """Moments re-indexed onto ``target`` keys (absent columns are all zero)."""
    where = {key: i for i, key in enumerate(target)}
    idx = np.array([where[key] for key in keys], dtype=np.int64)
    mean = np.zeros(len(target))
    comoment = np.zeros((len(target), len(target)))
    mean[idx] = moments.mean
    comoment[np.ix_(idx, idx)] = moments.comoment
    return Moments(moments.n, mean, comoment)
