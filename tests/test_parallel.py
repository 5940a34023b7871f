"""Evaluations shared among forked workers: the one-process numbers, the one-process errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from offeval import ColumnError, Contribution, OffevalError, OffevalWarning, evaluate
from offeval import evaluation as evaluation_module
from offeval.estimator import BaseEstimator, Shared
from offeval.parallel import fold_in_workers, fork_available, shares
from offeval.stats import ratio_of_means
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


def test_shares_cut_at_trajectory_boundaries_and_cover_every_row(setup):
    log = setup[0]
    parts = shares(log, 3)
    assert parts[0][0] == 0 and parts[-1][1] == log.n_rows
    assert all(a[1] == b[0] for a, b in zip(parts[:-1], parts[1:], strict=True))
    assert all(lo in set(log.unit_starts) for lo, _ in parts)
    assert max(hi - lo for lo, hi in parts) < 0.4 * log.n_rows


class FailsLate(BaseEstimator):
    """Raises a ColumnError naming a row of the log's second half."""

    name = "fails_late"

    def contribute(self, view):
        reward = view.log.column("reward")
        late = view.log.source_rows >= 10_000
        if late.any():
            raise ColumnError("reward", "refused here", positions=np.flatnonzero(late)[:1])
        return Contribution({"x": reward, "n": view.log.ones})

    def combine(self, stats):
        return ratio_of_means(stats, "x", "n")


def test_a_failing_worker_gives_the_one_process_error(setup):
    log, policies, _ = setup
    with pytest.raises(ColumnError) as one:
        evaluate(log, policies, [FailsLate()])
    with pytest.raises(ColumnError) as many:
        evaluate(log, policies, [FailsLate()], workers=2)
    assert str(many.value) == str(one.value)


def test_a_result_that_cannot_travel_back_is_computed_here(setup):
    log, policies, _ = setup

    def local_column(view):  # a local function: its Shared key cannot be pickled
        return view.log.column("reward")

    class UsesLocal(BaseEstimator):
        name = "uses_local"

        def contribute(self, view):
            return Contribution({"x": Shared(local_column), "n": view.log.ones})

        def combine(self, stats):
            return ratio_of_means(stats, "x", "n")

    value = evaluate(log, policies, [UsesLocal()], workers=2).estimate(policies[0].name).value
    assert value == pytest.approx(log.column("reward").mean(), rel=1e-12)


@pytest.mark.parametrize("workers", [0, 1.5, True, "2"])
def test_workers_must_be_a_positive_whole_number(setup, workers):
    log, policies, _ = setup
    with pytest.raises(OffevalError, match="workers must be a whole number >= 1"):
        evaluate(log, policies, [IS()], workers=workers)


@pytest.mark.filterwarnings("ignore::offeval.OffevalWarning")  # 3 trajectories: wild weights
def test_more_workers_than_trajectories_still_evaluates(setup):
    log, policies, _ = setup
    tiny = log.slice_rows(0, int(log.unit_starts[3]))
    one = evaluate(tiny, policies, [IS()]).to_frame()
    many = evaluate(tiny, policies, [IS()], workers=8).to_frame()
    np.testing.assert_allclose(many["value"], one["value"], rtol=1e-12)


def test_a_stream_cannot_be_shared_among_workers(setup):
    log, policies, _ = setup
    cut = int(log.unit_starts[100])
    parts = [log.slice_rows(0, cut), log.slice_rows(cut, log.n_rows)]
    with pytest.raises(OffevalError, match="an iterable of logs .* give workers=1"):
        evaluate(parts, policies, [IS()], workers=2)


def test_without_fork_one_process_evaluates_and_says_so(setup, monkeypatch):
    log, policies, _ = setup
    monkeypatch.setattr(evaluation_module, "fork_available", lambda: False)
    with pytest.warns(OffevalWarning, match="evaluating in one process"):
        many = evaluate(log, policies, [IS()], workers=2).to_frame()
    np.testing.assert_allclose(many["value"], evaluate(log, policies, [IS()]).to_frame()["value"])
