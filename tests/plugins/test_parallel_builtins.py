"""The built-in estimators shared among forked workers give their one-process numbers.

The ranking (DCG) and candidate-table (piecewise and pointwise NCIS)
estimators, folded in workers on the simulator's log; the engine's own
behaviour under workers is tested in tests/core/test_parallel.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from offeval import evaluate
from offeval.engine import evaluation as evaluation_module
from offeval.engine import parallel as parallel_module
from offeval.engine.parallel import fold_in_workers, fork_available
from offeval_dcg import DCG
from offeval_ncis import IS, NCIS, BetaIPS, PiecewiseNCIS, PointwiseNCIS

pytestmark = pytest.mark.skipif(not fork_available(), reason="workers are forked processes")


@pytest.fixture(scope="module")
def setup(env):
    log = env.simulate(env.logging_policy(), 6_000, seed=4, with_candidates=True)
    estimators = [
        IS(),
        NCIS(cap=2),
        BetaIPS(),
        PiecewiseNCIS(cap=3),
        PointwiseNCIS(cap=3),
        DCG(per="impression"),
    ]
    return log, env.candidate_policies(4), estimators


def frame(evaluation) -> pd.DataFrame:
    return evaluation.to_frame().set_index(["policy", "estimator"]).sort_index()


@pytest.mark.parametrize("workers", [2, 3])
def test_workers_give_the_one_process_estimates(setup, workers, monkeypatch):
    log, policies, estimators = setup
    monkeypatch.setattr(parallel_module, "available_cores", lambda: 8)  # 3 shares on 2 cores
    merged = []

    def recorded(*args):
        merged.append(fold_in_workers(*args))
        return merged[-1]

    monkeypatch.setattr(evaluation_module, "fold_in_workers", recorded)
    one = evaluate(log, policies, estimators, chunk_rows=2_000)
    many = evaluate(log, policies, estimators, chunk_rows=2_000, workers=workers)
    assert len(merged) == 1 and merged[0] is not None  # the workers' result, not a re-run
    a, b = frame(one), frame(many)
    pd.testing.assert_index_equal(a.index, b.index)
    numbers = a.select_dtypes("number").columns
    np.testing.assert_allclose(b[numbers], a[numbers], rtol=1e-10, atol=1e-15)  # summing order
    for label in one.estimators:
        np.testing.assert_allclose(many.covariance(label), one.covariance(label), atol=1e-18)
        grid_one, grid_many = one.grid(label).table, many.grid(label).table
        np.testing.assert_allclose(grid_many["p_value"], grid_one["p_value"], atol=1e-12)
