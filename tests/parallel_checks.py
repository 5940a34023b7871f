"""The check the workers tests share (tests/core/test_parallel.py and
tests/plugins/test_parallel_builtins.py): forked workers give the one-process numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval import evaluate
from offeval.engine import evaluation as evaluation_module
from offeval.engine import parallel as parallel_module
from offeval.engine.parallel import fold_in_workers


def _frame(evaluation) -> pd.DataFrame:
    return evaluation.to_frame().set_index(["policy", "estimator"]).sort_index()


def workers_give_the_one_process_estimates(monkeypatch, log, policies, estimators, workers):
    """Estimates, covariances and p-values under ``workers`` are the one-process ones, and
    come from the workers (not from a re-run in one process)."""
    monkeypatch.setattr(parallel_module, "available_cores", lambda: 8)  # 3 shares on 2 cores
    merged = []

    def recorded(*args):
        merged.append(fold_in_workers(*args))
        return merged[-1]

    monkeypatch.setattr(evaluation_module, "fold_in_workers", recorded)
    one = evaluate(log, policies, estimators, chunk_rows=2_000)
    many = evaluate(log, policies, estimators, chunk_rows=2_000, workers=workers)
    assert len(merged) == 1 and merged[0] is not None  # the workers' result, not a re-run
    a, b = _frame(one), _frame(many)
    pd.testing.assert_index_equal(a.index, b.index)
    numbers = a.select_dtypes("number").columns
    np.testing.assert_allclose(b[numbers], a[numbers], rtol=1e-10, atol=1e-15)  # summing order
    for label in one.estimators:
        np.testing.assert_allclose(many.covariance(label), one.covariance(label), atol=1e-18)
        grid_one, grid_many = one.grid(label).table, many.grid(label).table
        np.testing.assert_allclose(grid_many["p_value"], grid_one["p_value"], atol=1e-12)
