"""Bootstrap intervals agree with delta-method ones on a large log."""

from __future__ import annotations

import numpy as np
import pytest
from reference_estimators import IS, SNIS

from offeval import LoggingPolicy, OffevalError, evaluate
from offeval.engine.bootstrap import bootstrap


def test_bootstrap_se_agrees_with_delta_method(bandit):
    log, target, _ = bandit
    ests = [IS(), SNIS()]
    delta = evaluate(log, [target], ests).to_frame()
    boot = bootstrap(log, [target], ests, replicates=800, seed=1)
    # the bootstrap se of 800 replicates has relative error about 1/sqrt(1600) = 2.5%
    np.testing.assert_allclose(boot["boot_se"], delta["se"], rtol=0.1)
    np.testing.assert_allclose(boot["value"], delta["value"], rtol=1e-12)
    assert (boot["ci_low"] < boot["value"]).all() and (boot["value"] < boot["ci_high"]).all()


def test_bootstrap_is_reproducible_and_relative_baseline_is_one(bandit):
    log, target, _ = bandit
    a = bootstrap(log, [target, LoggingPolicy()], [IS()], replicates=50, seed=3, baseline="logging")
    b = bootstrap(log, [target, LoggingPolicy()], [IS()], replicates=50, seed=3, baseline="logging")
    assert a.equals(b)
    base = a[a["policy"] == "logging"].iloc[0]
    assert base["value"] == 1 and base["boot_se"] == 0
    with pytest.raises(OffevalError, match="baseline 'nope'"):
        bootstrap(log, [target], [IS()], replicates=5, baseline="nope")
