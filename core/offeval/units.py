"""A ledger of the units (trajectories) folded so far, so none is counted twice.

Chunks may come from anywhere (an iterable of logs, Parquet batches, Dask
partitions). A trajectory whose rows arrive in two chunks would become two
units with wrong values and standard errors, so the ledger makes it an error
naming the trajectory. Integer ids are kept as they are, other ids as 64-bit
hashes, in sorted runs of geometrically decreasing length (a log-structured
merge): a chunk of m units is checked in O(m log n) time against the n seen
so far, with 8 bytes a unit; ids that arrive in order (a sorted file) are
checked at the cost of a comparison with the end of each run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval.errors import SplitUnitError


def unit_keys(ids: np.ndarray) -> tuple[str, np.ndarray]:
    """Integer ids as int64 (``"int"``), any others as 64-bit hashes (``"hash"``)."""
    ids = np.asarray(ids)
    if ids.dtype.kind in "iub":
        return "int", ids.astype(np.int64)
    if ids.dtype.kind == "f" and bool(np.all((ids == np.round(ids)) & (abs(ids) < 2**62))):
        return "int", ids.astype(np.int64)
    if ids.dtype.kind in "USV":
        ids = ids.astype(object)
    return "hash", pd.util.hash_array(ids, categorize=False)


class UnitLedger:
    """The trajectory ids seen so far; :meth:`add` rejects one seen before."""

    def __init__(self) -> None:
        self._runs: dict[str, list[np.ndarray]] = {"int": [], "hash": []}

    def __len__(self) -> int:
        return sum(run.size for runs in self._runs.values() for run in runs)

    def add(self, ids: np.ndarray, how: str = "") -> None:
        """Record a chunk's trajectory ids; a SplitUnitError names any seen before or twice."""
        kind, keys = unit_keys(ids)
        order = np.argsort(keys, kind="stable")
        run = keys[order]
        repeated = self._seen(kind, run) | np.r_[False, run[1:] == run[:-1]]
        if repeated.any():
            raise SplitUnitError(np.asarray(ids)[order[repeated]], int(repeated.sum()), how)
        self._push(kind, run)

    def merge(self, other: UnitLedger, how: str = "") -> UnitLedger:
        """The ledger of both; a unit in both is a SplitUnitError (hashed ids are only counted)."""
        out = UnitLedger()
        out._runs = {kind: list(runs) for kind, runs in self._runs.items()}
        for kind, runs in other._runs.items():
            for run in runs:
                common = out._seen(kind, run)
                if common.any():
                    named = run[common] if kind == "int" else []
                    raise SplitUnitError(named, int(common.sum()), how)
                out._push(kind, run)
        return out

    def _seen(self, kind: str, keys: np.ndarray) -> np.ndarray:
        """Which of the (sorted) keys are in a run already."""
        seen = np.zeros(keys.size, dtype=bool)
        for run in self._runs[kind]:
            inside = (keys >= run[0]) & (keys <= run[-1])
            if inside.any():
                at = np.searchsorted(run, keys[inside])
                seen[inside] |= run[np.minimum(at, run.size - 1)] == keys[inside]
        return seen

    def _push(self, kind: str, run: np.ndarray) -> None:
        if not run.size:
            return
        runs = self._runs[kind]
        while runs and runs[-1].size <= run.size:
            run = np.sort(np.concatenate([runs.pop(), run]), kind="stable")
        runs.append(run)
