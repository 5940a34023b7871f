"""The Poisson bootstrap: it agrees with delta-method intervals on a large log, is
reproducible, and refuses bad calls (numpy numbers taken and shown as plain values)."""

from __future__ import annotations

import numpy as np
import pytest
from bad_input_logs import build, cases, fails

from offeval import ColumnPolicy, LoggingPolicy, OffevalError, evaluate
from offeval_importance import IS, SNIPS, bootstrap


def test_bootstrap_se_agrees_with_delta_method(bandit):
    log, target, _ = bandit
    ests = [IS(), SNIPS()]
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


BAD_CALLS = {
    "bootstrap with one replicate": (
        lambda: bootstrap(build(), [ColumnPolicy("pi")], [IS()], replicates=1),
        OffevalError,
        "replicates",
    ),
    "bootstrap with an unknown baseline": (
        lambda: bootstrap(build(), [ColumnPolicy("pi")], [IS()], baseline="x"),
        OffevalError,
        "baseline 'x'",
    ),
    # the message of the hand-written check that check_whole replaced
    "bootstrap replicates": (
        lambda: bootstrap(build(), [ColumnPolicy("pi")], [IS()], replicates=np.int32(1)),
        OffevalError,
        r"^replicates must be a whole number >= 2, got 1$",
    ),
}


@cases(BAD_CALLS)
def test_bad_bootstrap_calls(case):
    fails(*case)


def test_numpy_numbers_are_taken_and_shown_as_plain_values():
    log = build()
    one = np.int64(1)
    policy = [ColumnPolicy("pi")]
    fails(lambda: bootstrap(log, policy, [IS()], replicates=one), OffevalError, "got 1$")
    boot = bootstrap(log, [ColumnPolicy("pi")], [IS()], replicates=np.int64(20), seed=0)
    assert len(boot) == 1  # a numpy whole number is a whole number
