"""The built-in estimators shared among forked workers give their one-process numbers.

The ranking (DCG) and candidate-table (piecewise and pointwise NCIS)
estimators, folded in workers on the simulator's log; the engine's own
behaviour under workers is tested in tests/core/test_parallel.py.
"""

from __future__ import annotations

import pytest
from parallel_checks import workers_give_the_one_process_estimates

from offeval.engine.parallel import fork_available
from offeval_importance import IS, NCIS, BetaIPS, PiecewiseNCIS, PointwiseNCIS
from offeval_ranking import DCG

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


@pytest.mark.parametrize("workers", [2, 3])
def test_workers_give_the_one_process_estimates(setup, workers, monkeypatch):
    workers_give_the_one_process_estimates(monkeypatch, *setup, workers)
