"""The Dask path gives the in-memory numbers, and refuses split trajectories."""

from __future__ import annotations

import numpy as np
import pytest
from reference_estimators import IS, SNIS

from offeval import LoggingPolicy, OffevalError, evaluate
from offeval.engine.distributed import evaluate_dask

dd = pytest.importorskip("dask.dataframe")


def test_dask_partitions_give_the_in_memory_numbers(bandit):
    log, target, _ = bandit
    frame = log.frame.drop(columns="context").set_index("trajectory", drop=False)
    frame.index.name = None
    ddf = dd.from_pandas(frame, npartitions=7, sort=True)
    assert ddf.npartitions == 7
    estimators = [IS(), SNIS()]
    policies = [target, LoggingPolicy()]
    local = evaluate(log, policies, estimators).to_frame()
    distributed = evaluate_dask(ddf, policies, estimators, chunk_rows=1_000).to_frame()
    for column in ("value", "se", "ci_low", "ci_high"):
        np.testing.assert_allclose(distributed[column], local[column], rtol=1e-9)


def test_a_trajectory_split_across_partitions_is_an_error(bandit):
    log, target, _ = bandit
    ddf = dd.from_pandas(log.frame.iloc[:999].drop(columns="context"), npartitions=3, sort=True)
    assert ddf.divisions[1] % 2 == 1  # two rows per trajectory: an odd cut splits one
    with pytest.raises(OffevalError, match="split across partitions"):
        evaluate_dask(ddf, [target], [IS()])
