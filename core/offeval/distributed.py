"""Evaluation on a Dask DataFrame: partitions are folded where they live, then merged.

Because moment accumulators merge exactly, the result equals the in-memory
evaluation of the same rows (up to floating-point rounding). Every trajectory
must lie within one partition (for instance, index the frame by trajectory);
a trajectory split across partitions is an error, not a silent miscount.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce

import numpy as np
import pandas as pd

from offeval.errors import OffevalError
from offeval.estimator import Estimator
from offeval.evaluation import Accumulator, Evaluation
from offeval.log import InteractionLog
from offeval.policy import Policy


def _fold(frame: pd.DataFrame, mapping, policies, estimators, chunk_rows: int):
    """Accumulate one partition; also return its trajectory ids."""
    if len(frame) == 0:
        return None
    log = InteractionLog.from_frame(frame, mapping)
    acc = Accumulator(policies, estimators)
    for chunk in log.chunks(chunk_rows):
        acc.add(chunk)
    return acc, pd.unique(log.frame["trajectory"])


def evaluate_dask(
    frame,
    policies: Sequence[Policy],
    estimators: Sequence[Estimator],
    *,
    mapping: Mapping[str, str] | None = None,
    level: float = 0.95,
    chunk_rows: int = 250_000,
) -> Evaluation:
    """Evaluate every policy with every estimator on a ``dask.dataframe.DataFrame``.

    Each partition is validated and folded into an accumulator on the Dask
    workers (whatever scheduler is active); the accumulators are merged here.
    """
    try:
        import dask
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise OffevalError("evaluate_dask needs dask: pip install 'offeval[dask]'") from None
    fold = dask.delayed(_fold)
    parts = [fold(p, mapping, policies, estimators, chunk_rows) for p in frame.to_delayed()]
    results = [r for r in dask.compute(*parts) if r is not None]
    if not results:
        raise OffevalError("the Dask DataFrame has no rows")
    ids = pd.Index(np.concatenate([r[1] for r in results]))
    if ids.has_duplicates:
        split = list(ids[ids.duplicated()].unique()[:10])
        raise OffevalError(
            f"trajectories {split} are split across partitions; repartition so that every "
            "trajectory lies in one partition (e.g. set the trajectory as the index)"
        )
    return reduce(Accumulator.merge, [r[0] for r in results]).result(level)
