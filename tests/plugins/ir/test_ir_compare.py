"""Comparing runs: the engine's paired grid, randomisation test, corrections."""

from __future__ import annotations

from itertools import product

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from offeval_ir import MetricResult, compare_systems
from offeval_ir.conventions import Conventions


def result(values: dict[str, np.ndarray]) -> MetricResult:
    return MetricResult(pd.DataFrame(values), Conventions())


@pytest.fixture(scope="module")
def systems():
    rng = np.random.default_rng(0)
    base = rng.random(200)
    return {
        "a": result({"ndcg@10": base, "ap@10": base**2}),
        "b": result({"ndcg@10": base + 0.05 + rng.normal(0, 0.02, 200), "ap@10": base**2}),
        "c": result({"ndcg@10": base + rng.normal(0, 0.2, 200), "ap@10": base**2 + 0.001}),
    }


def test_t_test_is_the_paired_one(systems):
    table = compare_systems(systems, resamples=500)
    row = table[(table.a == "a") & (table.b == "c") & (table.measure == "ndcg@10")].iloc[0]
    a, c = systems["a"].per_user["ndcg@10"], systems["c"].per_user["ndcg@10"]
    d = (a - c).to_numpy()
    se = d.std(ddof=1) / np.sqrt(d.size)  # paired: on the per-user differences
    assert row.se == pytest.approx(se, rel=1e-12)
    assert row.p_value == pytest.approx(2 * stats.t.sf(abs(d.mean() / se), d.size - 1), rel=1e-9)
    assert row.difference == pytest.approx(d.mean(), rel=1e-12)
    q = stats.t.ppf(0.975, d.size - 1)
    assert (row.ci_low, row.ci_high) == pytest.approx((d.mean() - q * se, d.mean() + q * se))


def test_clear_difference_is_significant_after_correction(systems):
    table = compare_systems(systems, resamples=2000, correction="holm")
    row = table[(table.a == "a") & (table.b == "b") & (table.measure == "ndcg@10")].iloc[0]
    assert row.significant and row.p_randomization == pytest.approx(1 / 2001)
    same = table[(table.a == "a") & (table.b == "b") & (table.measure == "ap@10")].iloc[0]
    assert same.difference == 0 and same.p_randomization == 1.0 and not same.significant
    assert (table.p_adjusted >= table.p_value - 1e-15).all()
    bh = compare_systems(systems, resamples=2000, correction="fdr_bh")
    assert (table.p_randomization_adjusted >= bh.p_randomization_adjusted - 1e-15).all()
    by_randomization = compare_systems(systems, resamples=2000, test="randomization")
    assert (
        by_randomization.significant == (by_randomization.p_randomization_adjusted < 0.05)
    ).all()


def test_randomisation_p_value_matches_exact_enumeration():
    diff = np.array([0.3, -0.1, 0.25, 0.2, -0.05, 0.15, 0.1, -0.2, 0.3, 0.05])
    signs = np.array(list(product([-1, 1], repeat=diff.size)))
    exact = np.mean(np.abs(signs @ diff) >= abs(diff.sum()) - 1e-12)
    systems = {"x": result({"m": diff}), "y": result({"m": np.zeros(diff.size)})}
    resamples = 20_000
    p = compare_systems(systems, resamples=resamples, correction=None).p_randomization.iloc[0]
    assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / resamples)


def test_systems_are_compared_on_the_users_both_average():
    """Users 1 and 2 are averaged by one system each: both are left out of both means
    (not_in_every_run), so the difference is of means over the same users 0, 3, 4, and
    its test is the paired t-test on those three users' differences (scipy's ttest_rel,
    as ranx's compare runs it), not a delta-method standard error over all five users."""
    va = np.array([0.1, 0.5, np.nan, 0.9, 0.3])
    vb = np.array([0.2, np.nan, 0.4, 0.7, 0.6])
    row = compare_systems({"a": result({"m": va}), "b": result({"m": vb})}, resamples=100).iloc[0]
    common = ~np.isnan(va) & ~np.isnan(vb)
    ma, mb = va[common].mean(), vb[common].mean()
    assert (row.mean_a, row.mean_b) == pytest.approx((ma, mb), rel=1e-12)
    assert row.difference == pytest.approx(ma - mb, rel=1e-12)
    d = (va - vb)[common]
    assert row.se == pytest.approx(d.std(ddof=1) / np.sqrt(d.size), rel=1e-12)
    assert row.p_value == pytest.approx(stats.ttest_rel(va[common], vb[common]).pvalue, rel=1e-9)
    assert row.users == 3 and row.left_out == 2


def test_paired_test_ignores_queries_outside_the_comparison():
    """Queries some run lacks or the qrels do not judge (here 4 of 10 and 30 more) change
    nothing: the t-test is scipy's ttest_rel on the 6 queries both runs average."""
    rng = np.random.default_rng(3)
    va, vb = rng.random(40), rng.random(40)
    va[6:10] = np.nan  # a lacks 4 queries
    vb[10:] = np.nan  # and the last 30 are averaged by a only
    row = compare_systems({"a": result({"m": va}), "b": result({"m": vb})}, resamples=100).iloc[0]
    expected = stats.ttest_rel(va[:6], vb[:6])
    assert row.users == 6 and row.left_out == 34
    assert row.z == pytest.approx(expected.statistic, rel=1e-9)
    assert row.p_value == pytest.approx(expected.pvalue, rel=1e-9)
