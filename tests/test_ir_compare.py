"""Comparing recommenders: paired t-test, randomisation test, bootstrap, corrections."""

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
    row = table[(table.a == "a") & (table.b == "c") & (table.metric == "ndcg@10")].iloc[0]
    a, c = systems["a"].per_user["ndcg@10"], systems["c"].per_user["ndcg@10"]
    d = (a - c).to_numpy()
    t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))  # paired: on the per-user differences
    assert row.p_t == pytest.approx(2 * stats.t.sf(abs(t), d.size - 1), rel=1e-9)
    assert row.difference == pytest.approx((a - c).mean())
    assert row.ci_low < row.difference < row.ci_high


def test_clear_difference_is_significant_after_correction(systems):
    table = compare_systems(systems, resamples=2000, correction="holm")
    row = table[(table.a == "a") & (table.b == "b") & (table.metric == "ndcg@10")].iloc[0]
    assert row.significant and row.p_randomization == pytest.approx(1 / 2001)
    same = table[(table.a == "a") & (table.b == "b") & (table.metric == "ap@10")].iloc[0]
    assert same.difference == 0 and same.p_randomization == 1.0 and not same.significant
    assert (table.p_t_adjusted >= table.p_t - 1e-15).all()
    bh = compare_systems(systems, resamples=2000, correction="fdr_bh")
    assert (table.p_randomization_adjusted >= bh.p_randomization_adjusted - 1e-15).all()


def test_randomisation_p_value_matches_exact_enumeration():
    diff = np.array([0.3, -0.1, 0.25, 0.2, -0.05, 0.15, 0.1, -0.2, 0.3, 0.05])
    signs = np.array(list(product([-1, 1], repeat=diff.size)))
    exact = np.mean(np.abs(signs @ diff) >= abs(diff.sum()) - 1e-12)
    systems = {"x": result({"m": diff}), "y": result({"m": np.zeros(diff.size)})}
    resamples = 20_000
    p = compare_systems(systems, resamples=resamples, correction=None).p_randomization.iloc[0]
    assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / resamples)


def test_users_missing_under_one_system_are_not_paired():
    a = result({"m": [0.1, 0.5, np.nan, 0.9]})
    b = result({"m": [0.2, np.nan, 0.4, 0.7]})
    row = compare_systems({"a": a, "b": b}, resamples=100).iloc[0]
    assert row.users == 2 and row.difference == pytest.approx(((0.1 - 0.2) + (0.9 - 0.7)) / 2)
