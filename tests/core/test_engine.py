"""The evaluation engine: delta-method values, paired comparisons, chunking."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import unit_sums
from reference_estimators import IS, SNIS

from offeval import (
    Accumulator,
    BaseEstimator,
    Contribution,
    LoggingPolicy,
    OffevalError,
    Shared,
    evaluate,
)
from offeval.stats import Tally, pairwise_grid, ratio_of_means


@pytest.fixture(scope="module")
def two_policies(bandit):
    log, target, _ = bandit
    return log, [target, LoggingPolicy()]


def influence_snis(log, policy_p):
    """Per-unit influence values of SNIS: (Y - R D) / mean(D)."""
    w = policy_p / log.column("propensity")
    y = unit_sums(log, log.column("reward") * w)
    d = unit_sums(log, w)
    ratio = y.sum() / d.sum()
    return ratio, (y - ratio * d) / d.mean()


def test_ratio_se_matches_influence_function(two_policies):
    log, (target, _) = two_policies
    ratio, psi = influence_snis(log, target.probabilities(log.frame))
    est = evaluate(log, [target], [SNIS()]).estimate("target")
    assert est.value == pytest.approx(ratio, rel=1e-12)
    assert est.se == pytest.approx(psi.std(ddof=1) / np.sqrt(len(psi)), rel=1e-9)


def test_paired_difference_uses_the_cross_covariance(two_policies):
    log, (target, logging) = two_policies
    r1, psi1 = influence_snis(log, target.probabilities(log.frame))
    r2, psi2 = influence_snis(log, logging.probabilities(log.frame))
    ev = evaluate(log, [target, logging], [SNIS()])
    diff = ev.difference("target", "logging")
    assert diff.value == pytest.approx(r1 - r2, rel=1e-12)
    expected = (psi1 - psi2).std(ddof=1) / np.sqrt(len(psi1))
    assert diff.se == pytest.approx(expected, rel=1e-9)
    # unpaired standard errors would be far larger: the pairing is what matters
    a, b = ev.estimate("target"), ev.estimate("logging")
    assert diff.se < 0.9 * np.hypot(a.se, b.se)


def test_relative_to_baseline(two_policies):
    log, policies = two_policies
    ev = evaluate(log, policies, [IS()])
    rel = {e.policy: e for e in ev.relative("logging")}
    assert rel["logging"].value == 1.0 and rel["logging"].se == pytest.approx(0, abs=1e-15)
    ratio = ev.estimate("target").value / ev.estimate("logging").value
    assert rel["target"].value == pytest.approx(ratio)
    cov = ev.covariance(baseline="logging")
    assert cov[1, 1] == pytest.approx(0, abs=1e-18)
    assert np.sqrt(cov[0, 0]) == pytest.approx(rel["target"].se)


def test_grid_p_values_are_paired_z_tests(two_policies):
    log, policies = two_policies
    ev = evaluate(log, policies, [IS()])
    grid = ev.grid()
    diff = ev.difference("target", "logging")
    row = grid.table.iloc[0]
    assert row["difference"] == pytest.approx(diff.value)
    assert row["se"] == pytest.approx(diff.se)
    from scipy import stats

    assert row["p_value"] == pytest.approx(2 * stats.norm.sf(abs(diff.value / diff.se)))


def test_grid_corrections_are_monotone():
    names = list("abcde")
    values = np.array([0.0, 0.1, 0.2, 0.25, 0.5])
    cov = np.diag([0.01, 0.01, 0.01, 0.01, 0.01])
    raw = pairwise_grid(names, values, cov)
    holm = pairwise_grid(names, values, cov, correction="holm")
    bh = pairwise_grid(names, values, cov, correction="fdr_bh")
    assert (holm.table["p_adjusted"] >= raw.table["p_value"] - 1e-15).all()
    assert (holm.table["p_adjusted"] >= bh.table["p_adjusted"] - 1e-15).all()
    assert holm.n_significant() <= raw.n_significant()
    m = holm.matrix()
    assert (m.to_numpy() == m.to_numpy().T).all() and not np.diag(m.to_numpy()).any()
    with pytest.raises(OffevalError, match="correction must be one of"):
        pairwise_grid(names, values, cov, correction="magic")


@settings(max_examples=25, deadline=None)
@given(st.integers(200, 20_000))
def test_any_chunking_gives_the_same_numbers(bandit, chunk_rows):
    log, target, _ = bandit
    policies = [target, LoggingPolicy()]
    whole = evaluate(log, policies, [IS(), SNIS()], chunk_rows=log.n_rows).to_frame()
    chunked = evaluate(log, policies, [IS(), SNIS()], chunk_rows=chunk_rows).to_frame()
    for col in ("value", "se", "ci_low", "ci_high"):
        np.testing.assert_allclose(chunked[col], whole[col], rtol=1e-9)


def test_accumulators_merge_like_one_pass(bandit):
    log, target, _ = bandit
    chunks = list(log.chunks(7_000))
    parts = [Accumulator([target], [IS(), SNIS()]).add(c) for c in chunks]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    for label in ("is", "snis"):
        one = evaluate(log, [target], [IS(), SNIS()]).estimate("target", label)
        est = merged.result().estimate("target", label)
        assert est.value == pytest.approx(one.value, rel=1e-12)
        assert est.se == pytest.approx(one.se, rel=1e-9)
        assert est.diagnostics == pytest.approx(one.diagnostics)
    assert est.diagnostics == {} and one.diagnostics == {}  # snis tallies nothing
    assert merged.result().estimate("target", "is").diagnostics == {"rows": log.n_rows}


def test_duplicate_names_and_unknown_estimator(bandit):
    log, target, _ = bandit
    with pytest.raises(OffevalError, match="policy names must be unique"):
        evaluate(log, [target, target], [IS()])
    with pytest.raises(OffevalError, match="estimators must differ"):
        evaluate(log, [target], [IS(), IS()])
    ev = evaluate(log, [target], [IS(), SNIS()])
    with pytest.raises(OffevalError, match="name an estimator"):
        ev.estimate("target")
    with pytest.raises(OffevalError, match="unknown estimator"):
        ev.estimate("target", "snips")


def test_estimate_repr_and_frame(bandit):
    log, target, _ = bandit
    est = evaluate(log, [target], [RewardedShare(scale=2)]).estimate("target")
    text = repr(est)
    assert "rewarded_share(scale=2) of 'target'" in text and "95% CI" in text
    assert "rewarded_rows" in text
    frame = est.to_frame()
    share = (log.column("reward") > 0).mean()
    assert frame.loc[0, "n_units"] == log.n_units and 0 < share < 1
    assert frame.loc[0, "diag_rewarded_rows"] == pytest.approx(share)


def test_unpaired_difference_is_welchs_test():
    from scipy import stats

    from offeval.stats import unpaired_difference

    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 2.0, 400), rng.normal(0.7, 1.0, 150)
    se_a, se_b = a.std(ddof=1) / np.sqrt(a.size), b.std(ddof=1) / np.sqrt(b.size)
    diff = unpaired_difference(a.mean(), se_a, b.mean(), se_b, n_a=a.size, n_b=b.size)
    welch = stats.ttest_ind(a, b, equal_var=False)
    assert diff.p_value == pytest.approx(welch.pvalue, rel=1e-9)
    assert diff.df == pytest.approx(welch.df, rel=1e-9)
    ci = welch.confidence_interval(0.95)
    assert (diff.ci_low, diff.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_kendall_tau_b_and_pearson_match_brute_force_on_ties():
    from itertools import combinations

    from offeval.stats import correlation, kendall_tau

    x = [1, 2, 2, 3, 4, 4, 5, 6]
    y = [2.0, 1.0, 1.0, 4.0, 3.0, 6.0, 6.0, 5.0]
    concordant = discordant = ties_x = ties_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif dx == dy:
            concordant += 1
        else:
            discordant += 1
    tau_b = (concordant - discordant) / np.sqrt(
        (concordant + discordant + ties_x) * (concordant + discordant + ties_y)
    )
    assert kendall_tau(x, y).statistic == pytest.approx(tau_b, rel=1e-12)
    xc, yc = np.asarray(x) - np.mean(x), np.asarray(y) - np.mean(y)
    r = (xc @ yc) / np.sqrt((xc @ xc) * (yc @ yc))
    assert correlation(x, y).statistic == pytest.approx(r, rel=1e-12)
    with pytest.raises(OffevalError, match="method must be"):
        correlation(x, y, "distance")
    with pytest.raises(OffevalError, match="same length"):
        kendall_tau([1, 2], [1, 2, 3])


class EmitsX(BaseEstimator):
    """Per-row column under the local key "x": the reward times ``scale``."""

    name = "emits_x"

    def __init__(self, scale: float = 1.0):
        self.scale = scale

    def contribute(self, view):
        return Contribution({"x": self.scale * view.log.column("reward"), "n": view.log.ones})

    def combine(self, stats):
        return ratio_of_means(stats, "x", "n")


class RewardedShare(EmitsX):
    """EmitsX with a diagnostic: the share of rows with a reward."""

    name = "rewarded_share"

    def contribute(self, view):
        tally = Tally()
        tally.add("rewarded", float((view.log.column("reward") > 0).sum()))
        tally.add("rows", view.log.n_rows)
        return Contribution(
            {"x": self.scale * view.log.column("reward"), "n": view.log.ones}, tally=tally
        )

    def diagnose(self, tally):
        return {"rewarded_rows": tally.sums["rewarded"] / tally.sums["rows"]}


def test_two_estimators_with_the_same_column_key_get_their_own_values(bandit):
    log, target, _ = bandit
    ev = evaluate(log, [target], [EmitsX(1.0), EmitsX(5.0)])
    mean_reward = log.column("reward").mean()
    assert ev.estimate("target", "emits_x(scale=1.0)").value == pytest.approx(mean_reward)
    assert ev.estimate("target", "emits_x(scale=5.0)").value == pytest.approx(5 * mean_reward)


def test_shared_columns_are_computed_once_and_stored_once(bandit):
    log, target, _ = bandit
    calls = []

    def doubled(view):
        calls.append(1)
        return 2 * view.log.column("reward")

    class UsesShared(EmitsX):
        name = "uses_shared"

        def contribute(self, view):
            return Contribution({"x": Shared(doubled), "n": Shared(_ones, policy_free=True)})

    acc = Accumulator([target, LoggingPolicy()], [UsesShared(1.0), UsesShared(2.0)])
    acc.add(log)
    assert len(calls) == 2  # once per policy, not once per estimator
    assert len(acc.keys) == 3  # doubled per policy, ones once for all
    est = acc.result().estimate("target", "uses_shared(scale=2.0)")
    assert est.value == pytest.approx(2 * log.column("reward").mean())


def _ones(log):
    return log.ones


def test_unit_columns_are_taken_per_trajectory(bandit):
    log, target, _ = bandit

    class FirstRowReward(EmitsX):
        name = "first_row_reward"

        def contribute(self, view):
            first = view.log.column("reward")[view.log.unit_starts]
            units = {"x": first, "n": np.ones(view.log.n_units)}
            return Contribution(unit_columns=units)

    value = evaluate(log, [target], [FirstRowReward()], chunk_rows=999).estimate("target").value
    assert value == pytest.approx(log.column("reward")[log.unit_starts].mean(), rel=1e-12)


def test_units_used_and_excluded_are_reported_apart(bandit):
    log, target, _ = bandit

    class DropsOdd(EmitsX):
        name = "drops_odd"

        def contribute(self, view):
            odd = (view.log.unit_ids % 2 == 1).astype(float)
            keep = 1.0 - odd
            reward = np.add.reduceat(view.log.column("reward"), view.log.unit_starts)
            tally = Tally()
            tally.count("odd_seen", int(odd.sum()))
            units = {"x": keep * reward, "n": keep}
            return Contribution(unit_columns=units, tally=tally, excluded={"odd": int(odd.sum())})

        def diagnose(self, tally):
            return {}

    ev = evaluate(log, [target, LoggingPolicy()], [DropsOdd()], chunk_rows=777)
    est = ev.estimate("target")
    odd = int((log.unit_ids % 2 == 1).sum())
    diff = ev.difference("target", "logging")
    assert (diff.n_units, diff.excluded) == (log.n_units - odd, {"odd": odd})
    assert {e.n_units for e in ev.relative("logging")} == {log.n_units - odd}
    assert (est.n_units, est.n_excluded, est.excluded) == (log.n_units - odd, odd, {"odd": odd})
    assert est.diagnostics == {"odd_seen": odd}  # a tallied count is reported even if
    # diagnose() leaves it out
    assert est.to_dict()["excluded_odd"] == odd


@pytest.mark.parametrize("method", ["holm", "bonferroni", "fdr_bh"])
def test_corrections_equal_statsmodels(method):
    from statsmodels.stats.multitest import multipletests

    from offeval.stats.compare import adjusted_p_values

    p = np.random.default_rng(3).random(40) ** 3
    p[5] = p[9]  # a tie
    np.testing.assert_allclose(
        adjusted_p_values(p, 0.05, method), multipletests(p, method=method)[1]
    )


class SometimesAliased(EmitsX):
    """Emits the reward under "a" and "b": the same array in some chunks, a copy in others."""

    name = "sometimes_aliased"

    def contribute(self, view):
        r = view.log.column("reward")
        b = r if view.log.n_units % 2 else r.copy()
        return Contribution({"a": r, "b": b, "n": view.log.ones}, {"u": r[view.log.unit_starts]})


@pytest.mark.parametrize("chunk_rows", [None, 999, 1_000])
def test_columns_given_as_one_array_are_folded_once_with_the_same_moments(bandit, chunk_rows):
    log, target, _ = bandit
    acc = Accumulator([target], [SometimesAliased()])
    for chunk in log.chunks(chunk_rows or log.n_rows):
        acc.add(chunk, new_units=True)
    r = log.column("reward")
    first = r[log.frame.groupby("trajectory", sort=False).cumcount().to_numpy() == 0]
    oracle = np.column_stack(
        [unit_sums(log, r), unit_sums(log, r), unit_sums(log, np.ones(log.n_rows)), first]
    )
    order = [acc.keys.index((0, 0, key)) for key in ("a", "b", "n", "u")]
    np.testing.assert_allclose(acc.moments.mean[order], oracle.mean(axis=0), rtol=1e-12)
    cov = acc.moments.covariance()[np.ix_(order, order)]
    np.testing.assert_allclose(cov, np.cov(oracle, rowvar=False), rtol=1e-10, atol=1e-15)


def test_covariances_within_estimators_give_the_same_estimates_and_grids(bandit):
    """Keeping only each estimator's cross-products changes no estimate, interval or grid."""
    log, target, _ = bandit
    policies = [target, LoggingPolicy()]
    estimators = [IS(), SNIS(), EmitsX(2.0)]
    full = evaluate(log, policies, estimators, chunk_rows=3_000, covariances="all")
    kept = evaluate(log, policies, estimators, chunk_rows=3_000)
    cols = ["value", "se", "ci_low", "ci_high"]
    np.testing.assert_allclose(kept.to_frame()[cols], full.to_frame()[cols], rtol=1e-12)
    for label in full.estimators:
        np.testing.assert_allclose(kept.covariance(label), full.covariance(label), rtol=1e-12)
        a, b = full.grid(label).table, kept.grid(label).table
        np.testing.assert_allclose(b["p_value"], a["p_value"], rtol=1e-9)
    across = full.linearisation("target", "is").minus(full.linearisation("target", "snis"))
    r = log.column("reward")
    w = target.probabilities(log.frame) / log.column("propensity")
    columns = (w * r, np.ones(log.n_rows), w * r, w)
    per_unit = np.column_stack([unit_sums(log, x) for x in columns])
    y, n, ys, ws = per_unit.mean(axis=0)
    grad = np.array([1 / n, -y / n**2, -1 / ws, ys / ws**2])  # IS - SNIS (both ratios of means)
    oracle = np.sqrt(grad @ np.cov(per_unit, rowvar=False) @ grad / len(per_unit))
    assert full.standard_error(across) == pytest.approx(oracle, rel=1e-6)
    with pytest.raises(OffevalError, match="covariances='all'"):
        kept.standard_error(
            kept.linearisation("target", "is").minus(kept.linearisation("target", "snis"))
        )
    with pytest.raises(OffevalError, match="covariances must be one of"):
        evaluate(log, policies, estimators, covariances="some")
