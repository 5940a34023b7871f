"""A ledger of the units (trajectories) folded so far, so none is counted twice.

Chunks may come from anywhere (an iterable of logs, Parquet batches, Dask
partitions). A trajectory whose rows arrive in two chunks would become two
units with wrong values and standard errors, so the ledger makes it an error
naming the trajectory. Ids are compared as the log compares them (4, 4.0 and
numpy's 4 are one id, "4" another), whatever the dtype of the chunk that
carries them: integer ids are kept as they are, any other id as a 64-bit hash
of its value, in sorted runs of geometrically decreasing length (a
log-structured merge). A chunk of m units is checked in O(m log n) time
against the n seen so far, with 8 bytes a unit; ids that arrive in order (a
sorted file) cost a comparison with the end of each run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval.errors import SplitUnitError

KINDS = ("int", "hash")


def unit_keys(ids: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per kind, the keys of the ids of that kind and their positions in ``ids``.

    Integers (and whole floats) are ``"int"`` keys, their own value; anything
    else is a ``"hash"`` key, a hash of the value as a Python object.
    """
    ids = np.asarray(ids)
    if ids.dtype.kind in "iub":
        return {"int": (ids.astype(np.int64), np.arange(ids.size))}
    kind = pd.api.types.infer_dtype(ids, skipna=False)
    if ids.dtype.kind == "f":
        whole = (ids == np.round(ids)) & (np.abs(ids) < 2**62)
    elif kind == "integer":
        return {"int": (ids.astype(np.int64), np.arange(ids.size))}
    elif kind in ("string", "bytes"):
        whole = np.zeros(ids.size, dtype=bool)
    else:
        values = ids.astype(object)
        whole = np.fromiter(
            (
                isinstance(v, (int, np.integer))
                or (
                    isinstance(v, (float, np.floating)) and float(v).is_integer() and abs(v) < 2**62
                )
                for v in values
            ),
            dtype=bool,
            count=values.size,
        )
        ids = values
    at_int, at_hash = np.flatnonzero(whole), np.flatnonzero(~whole)
    out = {"int": (ids[at_int].astype(np.int64), at_int)}
    if at_hash.size:
        out["hash"] = (pd.util.hash_array(ids[at_hash].astype(object), categorize=False), at_hash)
    return out


class UnitLedger:
    """The trajectory ids seen so far; :meth:`add` rejects one seen before."""

    def __init__(self) -> None:
        self._runs: dict[str, list[np.ndarray]] = {kind: [] for kind in KINDS}

    def add(self, ids: np.ndarray, how: str = "") -> None:
        """Record a chunk's trajectory ids; a SplitUnitError names any seen before or twice."""
        ids = np.asarray(ids)
        sorted_runs, repeated = {}, []
        for kind, (keys, at) in unit_keys(ids).items():
            order = np.argsort(keys, kind="stable")
            run = keys[order]
            again = self._seen(kind, run) | np.r_[False, run[1:] == run[:-1]]
            repeated.extend(at[order[again]])
            sorted_runs[kind] = run
        if repeated:
            raise SplitUnitError(ids[np.sort(repeated)], len(repeated), how)
        for kind, run in sorted_runs.items():
            self._push(kind, run)

    def merge(self, other: UnitLedger, how: str = "") -> UnitLedger:
        """The ledger of both; a unit in both is a SplitUnitError.

        Integer ids are named; other ids are only counted, their hashes kept in
        the error's ``keys`` so that the caller can look the ids up.
        """
        out = UnitLedger()
        out._runs = {kind: list(runs) for kind, runs in self._runs.items()}
        for kind, runs in other._runs.items():
            for run in runs:
                common = out._seen(kind, run)
                if common.any():
                    named = run[common] if kind == "int" else []
                    error = SplitUnitError(named, int(common.sum()), how)
                    error.keys = run[common] if kind == "hash" else None
                    raise error
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


def hash_ids(ids: np.ndarray) -> np.ndarray:
    """The ledger's hash keys of non-integer ids (to look up ids a merge could not name)."""
    return pd.util.hash_array(np.asarray(ids).astype(object), categorize=False)
