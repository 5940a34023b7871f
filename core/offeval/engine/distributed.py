"""Evaluation on a Dask DataFrame: partitions are folded where they live, then merged.

Each partition's :class:`~offeval.engine.fold.FoldState` travels back without policies or
estimators and merges exactly (the in-memory estimates, up to rounding). Every trajectory
must lie within one partition: a split one is an error, not a silent miscount.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce

import numpy as np
import pandas as pd

from offeval.data.log import InteractionLog
from offeval.data.policy import Policy
from offeval.data.units import hash_ids
from offeval.engine.accumulator import Accumulator, fold
from offeval.engine.estimator import Estimator
from offeval.engine.fold import FoldState
from offeval.engine.result import Evaluation
from offeval.errors import OffevalError, SplitUnitError
from offeval.validation import check_level, check_whole

#: How to fix a Dask DataFrame whose trajectories span partitions.
REPARTITION = (
    "the trajectories are split across partitions: repartition so that every trajectory "
    "lies in one partition (e.g. set the trajectory as the index)"
)


def _fold(frame: pd.DataFrame, mapping, policies, estimators, chunk_rows: int):
    """The fold state of one partition (its trajectory ids recorded in the state's ledger)."""
    if len(frame) == 0:
        return None
    acc = Accumulator(policies, estimators)
    return fold(acc, InteractionLog.from_frame(frame, mapping).chunks(chunk_rows)).state


def evaluate_dask(
    frame,
    policies: Sequence[Policy],
    estimators: Sequence[Estimator],
    *,
    mapping: Mapping[str, str] | None = None,
    level: float = 0.95,
    chunk_rows: int = 250_000,
) -> Evaluation:
    """Evaluate every policy with every estimator on a ``dask.dataframe.DataFrame``: each
    partition is folded on the Dask workers (whatever scheduler is active), merged here."""
    try:
        import dask
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise OffevalError("evaluate_dask needs dask: pip install 'offeval[dask]'") from None
    check_level(level)
    rows = "a whole number of rows >= 1"
    chunk_rows = check_whole(chunk_rows, "chunk size", low=1, rule=rows, error=OffevalError)
    acc = Accumulator(policies, estimators)  # checks the setup before any work is sent out
    if not hasattr(frame, "to_delayed"):
        raise OffevalError(f"expected a dask DataFrame, got {type(frame).__name__}")
    fold = dask.delayed(_fold)
    parts = [fold(p, mapping, policies, estimators, chunk_rows) for p in frame.to_delayed()]
    results = [r for r in dask.compute(*parts) if r is not None]
    if not results:
        raise OffevalError("the Dask DataFrame has no rows")
    try:
        merged = reduce(FoldState.merge, results)
    except SplitUnitError as err:
        ids = err.ids
        if err.keys is not None:  # the ledger's hashes: the ids are found again
            column = (mapping or {}).get("trajectory", "trajectory")
            found = pd.unique(frame[column].compute())
            ids = list(found[np.isin(hash_ids(found), err.keys)])
        raise SplitUnitError(ids, err.count, REPARTITION) from None
    return acc.with_state(merged).result(level)
