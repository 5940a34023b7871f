"""The units the engine folds. A ledger of the units (trajectories) folded so far, so none is
counted twice (a trajectory split over two chunks is an error naming it). Ids compare as the log
compares them (4, 4.0 and numpy's 4 are one id, "4" another): integers kept, others hashed to 64
bits, in sorted runs of geometrically decreasing length (a log-structured merge) of intervals of
consecutive keys (ids 0, 1, 2, ... cost a few bytes). A chunk of m units is checked in O(m log n)
time. And :class:`UnitTable`: units measured without rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd

from offeval.errors import SplitUnitError

KINDS = ("int", "hash")
#: Most ids a split-unit error from a merge names (it counts them all).
NAMED = 20


def unit_keys(ids: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per kind, the keys of the ids of that kind and their positions in ``ids``: integers
    (and whole floats) are ``"int"`` keys, their value; others ``"hash"`` keys."""
    ids = np.asarray(ids)
    kind = None if ids.dtype.kind in "iubf" else pd.api.types.infer_dtype(ids, skipna=False)
    if ids.dtype.kind in "iub" or kind == "integer":
        return {"int": (ids.astype(np.int64), np.arange(ids.size))}
    if ids.dtype.kind == "f":
        whole = (ids == np.round(ids)) & (np.abs(ids) < 2**62)
    elif kind in ("string", "bytes"):
        whole = np.zeros(ids.size, dtype=bool)
    else:
        ids = ids.astype(object)
        whole = np.fromiter(map(_whole, ids), dtype=bool, count=ids.size)
    at_int, at_hash = np.flatnonzero(whole), np.flatnonzero(~whole)
    out = {"int": (ids[at_int].astype(np.int64), at_int)}
    if at_hash.size:
        out["hash"] = (hash_ids(ids[at_hash]), at_hash)
    return out


def _whole(value: object) -> bool:
    """Whether an id is an integer, or a float of whole value below 2**62."""
    if isinstance(value, (float, np.floating)):
        return float(value).is_integer() and abs(value) < 2**62
    return isinstance(value, (int, np.integer))


class UnitLedger:
    """The trajectory ids seen so far; :meth:`add` rejects one seen before."""

    def __init__(self) -> None:
        self._runs: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {kind: [] for kind in KINDS}

    def add(self, ids: np.ndarray, how: str = "") -> None:
        """Record a chunk's trajectory ids; a SplitUnitError names any seen before or twice."""
        ids = np.asarray(ids)
        sorted_runs, repeated = {}, []
        for kind, (keys, at) in unit_keys(ids).items():
            order = np.argsort(keys, kind="stable")
            run = keys[order]
            again = self._overlapping(kind, (run, run)) | np.r_[False, run[1:] == run[:-1]]
            repeated.extend(at[order[again]])
            sorted_runs[kind] = run
        if repeated:
            raise SplitUnitError(ids[np.sort(repeated)], len(repeated), how)
        for kind, run in sorted_runs.items():
            self._push(kind, run)

    def merge(self, other: UnitLedger, how: str = "") -> UnitLedger:
        """The ledger of both; a unit in both is a SplitUnitError naming integer ids (others
        counted, their hashes in the error's ``keys`` for the caller to look up)."""
        out = UnitLedger()
        out._runs = {kind: list(runs) for kind, runs in self._runs.items()}
        for kind, runs in other._runs.items():
            for run in runs:
                clash = out._overlapping(kind, run)
                if clash.any():
                    count, common = out._common(kind, run[0][clash], run[1][clash])
                    error = SplitUnitError(common if kind == "int" else [], count, how)
                    error.keys = common if kind == "hash" else None
                    raise error
                out._push_run(kind, run)
        return out

    def _overlapping(self, kind: str, run: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """Which intervals of ``run`` share a key with an interval already recorded."""
        starts, ends = run
        seen = np.zeros(starts.size, dtype=bool)
        for low, high in self._runs[kind]:
            inside = (ends >= low[0]) & (starts <= high[-1])
            if inside.any():
                # the last recorded interval starting at or before each end: any overlap is there
                at = np.searchsorted(low, ends[inside], side="right") - 1
                seen[inside] |= (at >= 0) & (high[np.maximum(at, 0)] >= starts[inside])
        return seen

    def _common(self, kind: str, starts: np.ndarray, ends: np.ndarray) -> tuple[int, np.ndarray]:
        """How many keys of the intervals are recorded already, and the first NAMED of them
        (from the overlaps: memory in the ids named, not in the intervals' length)."""
        count, pieces = 0, []
        for low, high in self._runs[kind]:
            first = np.searchsorted(high, starts, side="left")  # recorded intervals ending >= start
            last = np.searchsorted(low, ends, side="right")  # ... and starting <= end
            per = np.maximum(last - first, 0)
            query = np.repeat(np.arange(starts.size), per)
            recorded = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
            recorded += np.repeat(first, per)
            lo = np.maximum(starts[query], low[recorded])
            hi = np.minimum(ends[query], high[recorded])
            keep = hi >= lo
            lo, hi = lo[keep], hi[keep]
            count += int((hi - lo).astype(np.int64).sum()) + lo.size
            pieces += [
                a + np.arange(min(b - a, NAMED - 1) + 1, dtype=lo.dtype)  # never past b
                for a, b in zip(lo[:NAMED], hi[:NAMED], strict=True)
            ]
        if not pieces:
            return count, np.zeros(0, dtype=starts.dtype)
        return count, np.sort(np.concatenate(pieces))[:NAMED]

    def _push(self, kind: str, keys: np.ndarray) -> None:
        if keys.size:
            self._push_run(kind, _coalesced(keys, keys))

    def _push_run(self, kind: str, run: tuple[np.ndarray, np.ndarray]) -> None:
        runs = self._runs[kind]
        while runs and runs[-1][0].size <= run[0].size:
            low, high = runs.pop()
            starts, ends = np.concatenate([low, run[0]]), np.concatenate([high, run[1]])
            order = np.argsort(starts, kind="stable")
            run = _coalesced(starts[order], ends[order])
        runs.append(run)


def _coalesced(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted intervals with adjacent ones joined (ends is starts when all are points)."""
    join = starts[1:] == ends[:-1] + 1
    if join.any():
        starts, ends = starts[np.r_[True, ~join]], ends[np.r_[~join, True]]
    return (starts, starts) if np.array_equal(starts, ends) else (starts, ends)


def hash_ids(ids: np.ndarray) -> np.ndarray:
    """The ledger's hash keys of non-integer ids (to look up ids a merge could not name)."""
    return pd.util.hash_array(np.asarray(ids).astype(object), categorize=False)


class UnitTable:
    """Units measured without rows (users' measure values, say), which :func:`offeval.evaluate`
    folds as a log's trajectories, each unit one row: estimators read their system's values at
    ``view.log.positions``, the units' places in the whole table."""

    def __init__(self, n_units: int | np.ndarray):
        #: The units' places in the whole table (a chunk holds a run of them).
        self.positions = np.arange(n_units) if np.ndim(n_units) == 0 else np.asarray(n_units)
        self.unit_ids = self.positions
        self.unit_starts = np.arange(self.positions.size)
        self.n_units = self.n_rows = self.positions.size

    def chunks(
        self, max_rows: int | Callable[[], int], rows: tuple[int, int] | None = None
    ) -> Iterator[UnitTable]:
        """Consecutive tables of about ``max_rows`` units (asked before each chunk when
        callable), within the units ``rows`` = (lo, hi)."""
        lo, stop = rows or (0, self.n_units)
        while lo < stop:
            hi = min(lo + (max_rows() if callable(max_rows) else max_rows), stop)
            yield UnitTable(self.positions[lo:hi])
            lo = hi
