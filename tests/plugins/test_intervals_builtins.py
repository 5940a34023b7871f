"""Betting intervals on the built-in importance-weighted estimators: RIPS declares them (its
prefix weights are heavy-tailed), so on the simulator its intervals cover where normal ones do
not and the kit passes with no expected failure; IS and IIPS offer them on request."""

from __future__ import annotations

import math

import numpy as np
import pytest

from offeval import OffevalError, evaluate, get_registry
from offeval.testing import check_chunking_invariance, check_unbiased, kit_setup, known_failures
from offeval_importance import IS, SNIPS
from offeval_slates import IIPS, RIPS


def test_betting_intervals_cover_the_truth_where_normal_ones_do_not():
    """100 independent logs of 500 trajectories of cascade users: RIPS's own (betting)
    intervals cover at least 95% of the time less three binomial standard errors (they are
    conservative); normal ones cover about 55% (the prefix weights' effective sample size is
    below 1% of the rows), far below."""
    estimator = RIPS()
    env, log, (policy, _) = kit_setup(estimator, 50_000, seed=11)
    truth = env.true_value(policy, "reward_per_impression")
    bounds = np.r_[log.unit_starts, log.n_rows]
    logs = 100
    betting, normal = [], []
    for r in range(logs):
        part = log.slice_rows(int(bounds[r * 500]), int(bounds[(r + 1) * 500]))
        for method, covered in ((None, betting), ("normal", normal)):
            est = evaluate(part, [policy], [estimator], interval=method, progress=False)
            e = est.estimate(policy.name)
            assert e.interval_method == (method or "betting")
            covered.append(e.ci_low <= truth <= e.ci_high)
    se = math.sqrt(0.95 * 0.05 / logs)
    assert np.mean(betting) >= 0.95 - 3 * se
    assert np.mean(normal) <= 0.80


def test_rips_passes_the_kits_coverage_check_without_expected_failures():
    """The check RIPS declared a known failure with normal intervals (the other checks do
    not read intervals, but for invariance to chunking, run here too)."""
    per_row, per_trajectory = RIPS(), RIPS(per="trajectory")
    assert known_failures(per_row) == known_failures(per_trajectory) == {}
    for estimator in (per_row, per_trajectory):
        check_unbiased(estimator)
        check_chunking_invariance(estimator)


@pytest.mark.parametrize(
    "estimator",
    [IS(), get_registry().create("estimator", "ipw"), IIPS(), IIPS(per="trajectory")],
    ids=repr,
)
def test_is_and_iips_give_betting_intervals_on_request(estimator):
    """Normal by default; with interval='betting' the value and standard error are the same and
    the interval holds the value, within the rewards' range (obp's ipw too: cis at no cap)."""
    _, log, (policy, _) = kit_setup(estimator, 2_000, seed=5)
    normal = evaluate(log, [policy], [estimator], progress=False).estimate(policy.name)
    betting = evaluate(
        log, [policy], [estimator], interval="betting", reward_range=(0, 1), progress=False
    )
    e = betting.estimate(policy.name)
    assert normal.interval_method == "normal" and e.interval_method == "betting"
    assert e.value == pytest.approx(normal.value, rel=1e-12) and e.se == pytest.approx(normal.se)
    assert 0 <= e.ci_low <= e.value <= e.ci_high and (e.ci_low, e.ci_high) != (
        normal.ci_low,
        normal.ci_high,
    )


def test_self_normalised_forms_refuse_betting_intervals_in_one_line():
    _, log, (policy, _) = kit_setup(SNIPS(), 500, seed=5)
    capped = get_registry().create_from_spec("estimator", "ipw:lambda_=5")
    for estimator in (SNIPS(), RIPS(self_normalized=True), capped):
        assert RIPS(self_normalized=True).interval == "normal"
        with pytest.raises(OffevalError, match="declares its betting_columns") as caught:
            evaluate(log, [policy], [estimator], interval="betting", progress=False)
        assert "\n" not in str(caught.value)


def test_a_normal_interval_on_a_tiny_effective_sample_is_flagged():
    """50 impressions, one of them weighted 1,000 (Kish's ESS (sum w)^2 / sum w^2 about 1):
    IS's normal interval should not be read, and the warning and diagnostic say why."""
    import pandas as pd

    from offeval import ColumnPolicy, InteractionLog, OffevalWarning

    n = 50
    mu = np.full(n, 0.5)
    mu[0] = 0.001
    target = np.full(n, 0.01)
    target[0] = 1.0
    frame = pd.DataFrame(
        {
            "trajectory": np.arange(n),
            "item": 0,
            "reward": np.r_[1.0, np.zeros(n - 1)],
            "propensity": mu,
            "target": target,
        }
    )
    log, policy = InteractionLog.from_frame(frame), ColumnPolicy("target", name="t")
    w = target / mu
    assert w.sum() ** 2 / (w @ w) < 2
    with pytest.warns(OffevalWarning, match=r"is's intervals .* \(t: effective sample size 1"):
        est = evaluate(log, [policy], [IS()], progress=False).estimate("t")
    assert est.diagnostics["interval_unreadable"] == 1
