"""Comparing runs: the engine's paired grid, randomisation test, corrections."""

from __future__ import annotations

from itertools import combinations, product

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


# --- what ranx's comparison report has: win/tie/loss, Tukey's HSD ---------------------------


def _graded_systems(seed: int = 3, users: int = 60):
    """Per-user values on a coarse grid (many exact ties), one run clearly better, and
    users some run leaves out (NaN), so the comparison is on the users all average."""
    rng = np.random.default_rng(seed)
    base = np.round(rng.random(users) * 4) / 4
    values = {
        "a": base,
        "b": np.clip(base + np.round(rng.normal(0.15, 0.2, users) * 4) / 4, 0, 1),
        "c": np.where(rng.random(users) < 0.5, base, np.round(rng.random(users) * 4) / 4),
        "d": base[::-1].copy(),
    }
    values["c"][[3, 7]] = np.nan  # left out by c: not in the comparison
    return {name: result({"ndcg@10": v, "rr": v**2}) for name, v in values.items()}


def test_win_tie_loss_equals_a_brute_force_count():
    systems = _graded_systems()
    table = compare_systems(systems, resamples=100)
    common = [u for u in range(60) if u not in (3, 7)]
    assert (table["wins"] + table["ties"] + table["losses"] == len(common)).all()
    for row in table.itertuples(index=False):
        a = systems[row.a].per_user[row.measure]
        b = systems[row.b].per_user[row.measure]
        wins = ties = losses = 0
        for u in common:
            if a[u] > b[u]:
                wins += 1
            elif a[u] == b[u]:
                ties += 1
            else:
                losses += 1
        assert (row.wins, row.ties, row.losses) == (wins, ties, losses), row
    assert table["ties"].min() > 0 and table["wins"].max() > 0


def test_tukey_hsd_p_values_equal_scipy_and_statsmodels():
    """On the per-query values of the users every run averages: scipy's tukey_hsd (what
    ranx calls) and statsmodels' pairwise_tukeyhsd."""
    from statsmodels.stats import multicomp

    systems = _graded_systems()
    table = compare_systems(systems, test="tukey", resamples=100)
    names = list(systems)
    common = [u for u in range(60) if u not in (3, 7)]
    for measure in ("ndcg@10", "rr"):
        scores = [systems[n].per_user[measure].to_numpy()[common] for n in names]
        scipy_p = stats.tukey_hsd(*scores).pvalue
        groups = np.repeat(names, len(common))
        sm = multicomp.pairwise_tukeyhsd(np.concatenate(scores), groups)
        pairs = list(combinations(sm.groupsunique, 2))  # statsmodels' order of pairs
        sm_p = dict(zip(pairs, sm.pvalues, strict=True))
        rows = table[table.measure == measure]
        assert len(rows) == 6
        for row in rows.itertuples(index=False):
            i, j = names.index(row.a), names.index(row.b)
            assert row.p_tukey == pytest.approx(scipy_p[i, j], abs=1e-12)
            assert row.p_tukey == pytest.approx(sm_p[(row.a, row.b)], abs=1e-6)
            assert row.significant == (scipy_p[i, j] < 0.05)
    assert table["significant"].any() and not table["significant"].all()


def test_tukey_decides_significance_without_a_further_correction():
    systems = _graded_systems()
    holm = compare_systems(systems, test="tukey", correction="holm", resamples=100)
    none = compare_systems(systems, test="tukey", correction=None, resamples=100)
    pd.testing.assert_series_equal(holm["p_tukey"], none["p_tukey"])
    assert (holm["significant"] == (holm["p_tukey"] < 0.05)).all()


def test_tukey_hsd_degenerate_cases():
    from offeval_ir.comparison import tukey_hsd

    same = np.ones((3, 5))
    assert (tukey_hsd(same) == 1).all()  # no spread, equal means: nothing to find
    shifted = np.vstack([np.zeros(5), np.ones(5)])
    assert tukey_hsd(shifted)[0, 1] == 0  # no spread, different means
    assert np.isnan(tukey_hsd(np.ones((2, 1)))).all()  # one query: no error term


@pytest.mark.slow
def test_win_tie_loss_and_tukey_match_ranx_compare():
    """ranx's compare (Tukey's HSD, its win/tie/loss) on the same runs and qrels, on
    tie-free scores with every query judged and ranked (ranx's make_comparable)."""
    import ranx

    from offeval_ir import PRESETS, evaluate_runs

    rng = np.random.default_rng(7)
    qrels = {
        f"q{q}": {f"d{d}": int(rng.integers(1, 4)) for d in rng.choice(30, 6, replace=False)}
        for q in range(40)
    }
    runs = {}
    for name, boost in [("bm25", 0.0), ("dense", 0.8), ("rand", -0.5)]:
        run = {}
        for q, judged in qrels.items():
            scores = rng.random(30) + 1e-6 * np.arange(30)
            for d in range(30):
                scores[d] += boost * (judged.get(f"d{d}", 0) > 0)
            run[q] = {f"d{d}": float(s) for d, s in enumerate(scores)}
        runs[name] = run
    report = ranx.compare(
        ranx.Qrels(qrels),
        [ranx.Run(r, name=n) for n, r in runs.items()],
        ["ndcg@10", "mrr"],
        stat_test="tukey",
        max_p=0.05,
    )
    evaluation = evaluate_runs(runs, qrels, ["nDCG@10", "RR"], PRESETS["ranx"]())
    table = evaluation.compare(test="tukey", resamples=100)
    theirs = report.to_dict()
    for row in table.itertuples(index=False):
        metric = {"nDCG@10": "ndcg@10", "RR": "mrr"}[row.measure]
        assert row.p_tukey == pytest.approx(theirs[row.a]["comparisons"][row.b][metric], abs=1e-9)
        wtl = theirs[row.a]["win_tie_loss"][row.b][metric]
        assert (row.wins, row.ties, row.losses) == (wtl["W"], wtl["T"], wtl["L"])
        assert row.mean_a == pytest.approx(theirs[row.a]["scores"][metric], abs=1e-12)
    assert table["ties"].sum() > 0 and table["significant"].any()
