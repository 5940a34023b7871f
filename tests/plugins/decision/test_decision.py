"""Decision plugin: rank probabilities, sweeps, components, selection, A/B planning (seed 004)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

import offeval_decision.ranks as ranks_module
from offeval import ColumnPolicy, LoggingPolicy, OffevalError, evaluate, get_registry
from offeval.data.output import MARKER
from offeval.engine.summary import EstimatorSummary, load_summaries, save_summaries
from offeval_decision import (
    ab_sample_size,
    component_probabilities,
    plan_ab_test,
    rank_distribution,
    select,
    sweep,
)


def within(estimate, exact, dist, width=4.5):
    """Every estimated probability within ``width`` Monte Carlo standard errors (floor 1e-9)."""
    se = np.maximum(dist.se(np.clip(exact, 1e-12, 1 - 1e-12)), 1e-9)
    return np.all(np.abs(np.asarray(estimate) - np.asarray(exact)) <= width * se)


def summary_of(label, names, values, covariance, n=100, **options) -> EstimatorSummary:
    """A saved summary whose name is its estimator's label, of the policies ``names``."""
    return EstimatorSummary(label, label, names, np.array(values), covariance, n, **options)


def test_two_systems_match_the_normal_cdf_of_their_difference():
    mean = np.array([0.100, 0.104])
    cov = np.array([[4e-6, 2.5e-6], [2.5e-6, 6e-6]])
    dist = rank_distribution(mean, names=["a", "b"], covariance=cov, draws=200_000, seed=3)
    exact = norm.cdf((mean[1] - mean[0]) / np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]))
    assert within(dist.best["b"], exact, dist)
    assert dist.best.sum() == pytest.approx(1.0)
    assert dist.expected_rank == pytest.approx([1 + exact, 2 - exact])


def test_equal_means_and_a_diagonal_covariance_make_every_rank_equally_likely():
    k = 5
    dist = rank_distribution(np.zeros(k), names=list("abcde"), covariance=np.eye(k), draws=100_000)
    assert dist.depth == k
    assert within(dist.probabilities, np.full((k, k), 1 / k), dist)
    np.testing.assert_allclose(dist.probabilities.sum(axis=0), 1.0)
    np.testing.assert_allclose(dist.probabilities.sum(axis=1), 1.0)
    np.testing.assert_allclose(dist.expected_rank, 3.0)


def test_ignoring_the_covariance_changes_the_answer():
    """Paired estimates: two systems close in value but strongly correlated are told apart."""
    mean = np.array([0.100, 0.101])
    paired = np.array([[1e-4, 0.9999e-4], [0.9999e-4, 1e-4]])
    a = rank_distribution(mean, names=["a", "b"], covariance=paired, draws=50_000)
    b = rank_distribution(mean, names=["a", "b"], covariance=np.diag(np.diag(paired)), draws=50_000)
    assert a.best["b"] > 0.99 and b.best["b"] < 0.6


def test_a_baseline_fixed_at_one_and_certain_answers(bandit):
    log, target, _ = bandit
    twice = ColumnPolicy("target", name="again")
    ev = evaluate(log, [target, LoggingPolicy(), twice], [get_registry().create("estimator", "is")])
    summary = ev.summary("is", baseline="logging")
    assert summary.values[1] == 1.0 and np.allclose(summary.covariance[1], 0.0)
    far = EstimatorSummary(
        "is",
        "is",
        ["low", "baseline", "high"],
        np.array([0.5, 1.0, 2.0]),
        summary.covariance,
        summary.n_units,
    )
    dist = rank_distribution(far, draws=10_000)
    assert dist.best.to_dict() == {"low": 0.0, "baseline": 0.0, "high": 1.0}
    assert dist.p_rank(3)["low"] == 1.0 and np.all(dist.se(dist.probabilities) == 0)


def test_reproducible_whatever_the_batch(monkeypatch):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(30, 30))
    cov, mean = a @ a.T / 30, rng.normal(size=30)
    names = [f"s{i}" for i in range(30)]
    first = rank_distribution(mean, names=names, covariance=cov, draws=7_777, seed=5)
    monkeypatch.setattr(ranks_module, "BATCH_CELLS", 300)
    second = rank_distribution(mean, names=names, covariance=cov, draws=7_777, seed=5)
    np.testing.assert_array_equal(first.probabilities, second.probabilities)
    assert first.depth == 3  # more than 20 systems: the top three ranks only


def test_the_exact_expected_rank_is_the_mean_of_the_simulated_ranks():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(6, 6))
    cov, mean = a @ a.T * 0.01, rng.normal(size=6) * 0.1
    dist = rank_distribution(mean, names=list("abcdef"), covariance=cov, draws=200_000, depth=6)
    simulated = dist.probabilities @ np.arange(1, 7)
    np.testing.assert_allclose(simulated, dist.expected_rank, atol=0.02)


def test_lower_is_better_metrics_are_ranked_by_their_negation():
    summary = summary_of(
        "pd", ["good", "bad"], [0.2, 0.4], np.eye(2) * 1e-6, higher_is_better=False
    )
    assert rank_distribution(summary, draws=1_000).best["good"] == 1.0


def test_sweeping_caps_in_one_pass_gives_the_numbers_of_separate_evaluations(env):
    log = env.simulate(env.logging_policy(), 4_000, seed=1)
    policies = env.candidate_policies(3)
    caps = (1.0, 10.0, float("inf"))
    table = sweep(log, policies, caps=caps, draws=2_000, seed=2)
    assert len(table) == 2 * len(caps) * 3
    registry = get_registry()
    for family, template in (
        ("without normalisation", "cis:cap={cap}"),
        ("with normalisation", "ncis:cap={cap}"),
    ):
        for cap in caps:
            alone = evaluate(
                log, policies, [registry.create_from_spec("estimator", template.format(cap=cap))]
            )
            dist = rank_distribution(alone.summary(), draws=2_000, seed=2, depth=3)
            rows = table[(table["family"] == family) & (table["cap"] == cap)].set_index("policy")
            np.testing.assert_allclose(rows["value"], alone.summary().values, rtol=1e-12)
            np.testing.assert_array_equal(rows["p_rank_1"], dist.best)


def test_component_probabilities_sum_to_one_per_attribute():
    rng = np.random.default_rng(2)
    names = [f"e{i}" for i in range(1, 13)]
    dist = rank_distribution(
        rng.normal(size=12) * 0.01, names=names, covariance=np.eye(12) * 1e-4, draws=20_000, depth=3
    )
    attributes = pd.DataFrame(
        {
            "features": ["f1", "f1", "f2", "f1", "f2", "f2", "f2", "f2", "f2", "f2", "f1", "f1"],
            "training": [
                "biased",
                "ncis",
                "shuffled",
                "ncis",
                "ncis",
                "ncis",
                "shuffled",
                "shuffled",
                "ncis",
                "shuffled",
                "biased",
                "ncis",
            ],
        },
        index=names,
    )
    table = component_probabilities(dist, attributes)
    sums = table["p_best"].groupby(level="attribute").sum()
    np.testing.assert_allclose(sums, 1.0)
    members = attributes.index[attributes["training"] == "ncis"]
    assert table.loc[("training", "ncis"), "p_best"] == pytest.approx(dist.best[members].sum())
    with pytest.raises(OffevalError, match="no row for systems"):
        component_probabilities(dist, attributes.iloc[:5])


def test_selection_takes_the_top_m_or_samples_in_proportion():
    names = list("abcdef")
    mean = np.array([0.0, 0.1, 0.2, 0.3, 0.31, -5.0])
    dist = rank_distribution(mean, names=names, covariance=np.eye(6) * 0.01, draws=20_000, depth=3)
    assert select(dist, 2) == list(dist.top(2).sort_values(ascending=False).index[:2])
    sampled = [tuple(select(dist, 3, method="sample", seed=s)) for s in range(200)]
    assert all(len(set(s)) == 3 for s in sampled)
    assert select(dist, 3, method="sample", seed=7) == select(dist, 3, method="sample", seed=7)
    first = pd.Series([s[0] for s in sampled]).value_counts(normalize=True)
    assert (
        first.get("e", 0) > first.get("c", 0) and "f" not in first
    )  # never best: never drawn first
    assert "f" == select(dist, 6, method="sample", seed=1)[-1]


def test_ab_sample_size_is_the_two_sample_power_calculation():
    from statsmodels.stats.power import NormalIndPower

    n = ab_sample_size(0.002, 0.05, alpha=0.05, power=0.8)
    expected = NormalIndPower().solve_power(effect_size=0.002 / 0.05, alpha=0.05, power=0.8)
    # statsmodels also counts the (negligible) chance of rejecting in the wrong direction
    assert n == pytest.approx(expected, rel=1e-5)
    assert ab_sample_size(0.0, 0.05) == float("inf")
    with pytest.raises(OffevalError, match="power"):
        ab_sample_size(0.01, 0.1, power=1.2)


def test_plan_uses_the_paired_interval_of_the_lift():
    cov = np.array([[1e-6, 0.5e-6], [0.5e-6, 2e-6]])
    summary = summary_of("is", ["base", "new"], [0.10, 0.11], cov, 1_000)
    plan = plan_ab_test(summary, ["new"], "base", sd=0.3)
    row = plan.loc["new"]
    assert row["lift"] == pytest.approx(0.01) and row["lift_se"] == pytest.approx(np.sqrt(2e-6))
    assert row["n_per_cell"] == pytest.approx(ab_sample_size(0.01, 0.3))
    assert row["n_per_cell_cautious"] > row["n_per_cell"]


def test_summaries_survive_a_round_trip(tmp_path, bandit):
    log, target, _ = bandit
    ev = evaluate(
        log,
        [target, LoggingPolicy()],
        [get_registry().create("estimator", "ncis", cap=float("inf"))],
    )
    summary = ev.summary()
    path = save_summaries(tmp_path / "summaries.json", [summary])
    loaded = load_summaries(tmp_path)[summary.estimator]
    np.testing.assert_array_equal(loaded.values, summary.values)
    np.testing.assert_array_equal(loaded.covariance, summary.covariance)
    assert loaded.params == {"cap": float("inf")} and path.exists()
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(OffevalError, match="not an offeval summaries file"):
        load_summaries(tmp_path / "bad.json")


def test_evaluate_writes_summaries_that_decide_reads(tmp_path, env, capsys):
    from offeval.cli.shell import main

    log = env.simulate(env.logging_policy(), 3_000, seed=2)
    frame = log.frame.copy()
    for p in env.candidate_policies(4):
        frame[f"pi_{p.name}"] = p.probabilities(log.frame)
    frame.to_csv(tmp_path / "log.csv", index=False)
    policies = [
        arg for p in env.candidate_policies(4) for arg in ("--policy", f"{p.name}=pi_{p.name}")
    ]
    args = ["evaluate", str(tmp_path / "log.csv"), *policies, "--estimator", "ncis:cap=100"]
    args += ["--estimator", "ncis:cap=10"]
    assert main([*args, "--quiet", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "Which policies deserve an online test: selection" in out
    assert (tmp_path / "out" / "summaries.json").exists()
    assert main(["decide", str(tmp_path / "out"), "--select", "2", "--draws", "5000"]) == 0
    decided = capsys.readouterr().out
    assert "selection (top, 2):" in decided and "expected_rank" in decided
    assert main(["decide", str(tmp_path / "out"), "--estimator", "nope"]) == 2
    assert "unknown estimator 'nope'" in capsys.readouterr().err
    for spelling in ("ncis", "ncis(cap=100)", "ncis:cap=100"):  # the label omits the default
        assert main(["decide", str(tmp_path / "out"), "--estimator", spelling]) == 0
        assert capsys.readouterr().out.startswith("ncis: 100,000 draws (seed 0)")  # not cap=10
    assert main(["decide", str(tmp_path / "out"), "--estimator", "ncis:cap=10"]) == 0


@pytest.mark.slow
def test_on_simulated_worlds_good_estimators_choose_well_and_are_calibrated():
    from offeval_decision.studies import decision_study, reliability

    selections, predictions = decision_study(
        n_worlds=30, estimators=("is", "cis:cap=10"), draws=5_000, seed=100
    )
    quality = selections.groupby(["estimator", "method"])["contains_best"].mean()
    assert quality[("is", "top by P(top m)")] > 0.7
    assert quality[("cis(cap=10)", "top by P(top m)")] < 0.5  # biased: misses the best
    table = reliability(predictions)
    unbiased = table.loc["is"]
    filled = unbiased[unbiased["count"] >= 30]
    assert ((filled["observed"] - filled["predicted"]).abs() < 4 * filled["se"] + 0.02).all()
    confident = table.loc["cis(cap=10)"]
    assert (confident.loc[confident["predicted"] > 0.5, "observed"] < 0.15).all()


def test_selecting_more_systems_than_the_depth_ranks_by_p_top_m():
    """21 systems, depth 3: select(m=4) needs P(top 4), which decides between s03 and s04."""
    k = 21
    mean, sd = np.full(k, 0.5), np.full(k, 0.01)
    mean[:3], (mean[3], sd[3]), (mean[4], sd[4]) = 1.0, (0.9, 0.001), (0.8, 0.3)
    names = [f"s{i:02d}" for i in range(k)]
    dist = rank_distribution(mean, names=names, covariance=np.diag(sd**2), draws=50_000, seed=0)
    assert dist.depth == 3
    # s00-s02 are 10 sds above s03 and the rest 40 sds below: s04 is 4th or better iff above s03
    p04 = norm.sf((0.9 - 0.8) / np.hypot(0.3, 0.001))
    assert select(dist, 4) == ["s00", "s01", "s02", "s03"]
    top4 = dist.top(4)
    assert within(top4[["s03", "s04"]], [1 - p04, p04], dist)
    deeper = dist.deeper(4)
    np.testing.assert_array_equal(deeper.probabilities[:, :3], dist.probabilities)  # same draws
    np.testing.assert_array_equal(deeper.top(4), top4)
    assert dist.p_rank(4)["s04"] == deeper.p_rank(4)["s04"]


def test_twins_share_their_ranks_equally():
    """A system and its exact copy: against orthant probabilities of the three distinct systems."""
    from scipy.stats import multivariate_normal

    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    base = a @ a.T * 1e-4
    mean3 = np.array([0.5, 0.49, 0.48])
    cov = np.zeros((4, 4))
    cov[:3, :3], cov[3, :3], cov[:3, 3], cov[3, 3] = base, base[0], base[0], base[0, 0]
    mean = np.r_[mean3, mean3[0]]
    dist = rank_distribution(mean, names=["a", "b", "c", "twin"], covariance=cov, draws=100_000)
    np.testing.assert_array_equal(dist.probabilities[0], dist.probabilities[3])
    np.testing.assert_allclose(dist.probabilities.sum(axis=0), 1.0)
    np.testing.assert_allclose(dist.probabilities.sum(axis=1), 1.0)

    def extreme(i, sign=1):
        """P(system i above (sign 1) or below (sign -1) both others): a bivariate normal orthant."""
        diff = sign * (np.eye(3)[i] - np.eye(3)[[j for j in range(3) if j != i]])
        return multivariate_normal(-diff @ mean3, diff @ base @ diff.T).cdf(np.zeros(2))

    p1, p3 = extreme(0), extreme(0, -1)
    p2 = 1 - p1 - p3  # the pair of twins holds ranks (1, 2), (2, 3) or (3, 4)
    assert within(dist.probabilities[0], [p1 / 2, (p1 + p2) / 2, (p2 + p3) / 2, p3 / 2], dist)
    assert within(dist.best[["b", "c"]], [extreme(1), extreme(2)], dist)
    simulated = dist.probabilities @ np.arange(1, 5)
    np.testing.assert_allclose(simulated, dist.expected_rank, atol=0.02)


def test_classes_of_twins_against_a_full_sort_of_independent_draws():
    """Classes of 3, 2 and 1 systems, depth 3 below the number of classes: a brute-force oracle."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(5, 5))
    base, centre = a @ a.T * 1e-4, rng.normal(size=5) * 0.01
    label = np.array([0, 1, 0, 2, 1, 3, 0, 4])  # class of each system, members interleaved
    size = np.bincount(label)
    dist = rank_distribution(
        centre[label], names=list("abcdefgh"), covariance=base[np.ix_(label, label)], depth=3
    )
    draws = rng.multivariate_normal(centre, base, size=100_000)
    order = np.argsort(-draws, axis=1)  # classes, best first
    start = np.cumsum(size[order], axis=1) - size[order]  # the first rank (from 0) of each
    first = np.empty_like(start)
    np.put_along_axis(first, order, start, axis=1)
    ranks = np.arange(3)[None, None, :]
    held = (first[:, :, None] <= ranks) & (ranks < first[:, :, None] + size[None, :, None])
    oracle = (held.mean(axis=0) / size[:, None])[label]
    assert within(dist.probabilities, oracle, dist, width=4.5 * np.sqrt(2))
    np.testing.assert_allclose(dist.probabilities.sum(axis=0), 1.0)
    for members in ([0, 2, 6], [1, 4]):
        assert (dist.probabilities[members] == dist.probabilities[members[0]]).all()


def test_identical_systems_get_equal_ranks_exactly():
    same = rank_distribution(np.full(3, 0.2), names=list("xyz"), covariance=np.full((3, 3), 1e-4))
    np.testing.assert_allclose(same.probabilities, 1 / 3)
    np.testing.assert_allclose(same.expected_rank, 2.0)
    fixed = rank_distribution(  # two baselines fixed at 1 and a system around 1.1
        np.array([1.0, 1.1, 1.0]), names=list("pqr"), covariance=np.diag([0, 0.1**2, 0]), seed=1
    )
    above = norm.sf(-1.0)  # P(q above 1)
    assert fixed.best["p"] == fixed.best["r"] and within(fixed.best["p"], (1 - above) / 2, fixed)
    np.testing.assert_array_equal(fixed.probabilities[0], fixed.probabilities[2])
    assert within(fixed.probabilities[0], [(1 - above) / 2, 0.5, above / 2], fixed)
    s, eps = 0.01, 1e-12  # nearly identical, but not twins: one sd of their difference apart
    near = np.array([[1, 1 - eps], [1 - eps, 1]]) * s**2
    close = rank_distribution(
        np.array([0.5, 0.5 + s * np.sqrt(2 * eps)]),
        names=["a", "b"],
        covariance=near,
        draws=200_000,
    )
    assert within(close.best["b"], norm.cdf(1.0), close)


@pytest.mark.parametrize(
    ("values", "names", "covariance", "match"),
    [
        ([0.1, 0.2], ["a", "b"], [[1, 0], [0, "x"]], "covariance must be a matrix of numbers"),
        ([0.1, 0.2], ["a", "b"], [[1, 0], [0]], "covariance must be a matrix of numbers"),
        (["0.1", "high"], ["a", "b"], np.eye(2), "values must be a vector of numbers"),
        ([0.1, 0.2], ["a", "b"], [1.0, 1.0], "covariance must be a matrix"),
        ([0.1, 0.2], ["a", "b"], [[1, 0.5], [-0.5, 1]], "covariance must be symmetric"),
        ([0.1, 0.2, 0.3], ["a", "b", "a"], np.eye(3), r"names must be unique: \['a'\]"),
        ([0.1, 0.2], "ab", np.eye(2), "not one string"),
    ],
    ids=["text", "ragged", "text values", "vector", "asymmetric", "repeated names", "one string"],
)
def test_bad_inputs_raise_offeval_errors_naming_the_parameter(values, names, covariance, match):
    with pytest.raises(OffevalError, match=match):
        rank_distribution(values, names=names, covariance=covariance, draws=10)


def test_arguments_that_would_be_ignored_are_refused():
    summary = EstimatorSummary("is", "is", ["a", "b"], np.array([0.1, 0.2]), np.eye(2), 10)
    with pytest.raises(OffevalError, match="estimator= and baseline= apply to an Evaluation"):
        rank_distribution([0.1, 0.2], "is", names=["a", "b"], covariance=np.eye(2))
    with pytest.raises(OffevalError, match="names= and covariance= apply to a vector"):
        rank_distribution(summary, names=["x", "y"])


def test_a_sweep_of_two_policies_draws_both_ranks(env):
    log = env.simulate(env.logging_policy(), 3_000, seed=1)
    policies = env.candidate_policies(2)
    table = sweep(log, policies, caps=(10.0,), families={"capped": "cis:cap={cap}"}, draws=20_000)
    alone = evaluate(log, policies, [get_registry().create_from_spec("estimator", "cis:cap=10")])
    summary = alone.summary()
    cov = summary.covariance
    second = norm.cdf(np.diff(summary.values)[0] / np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]))
    rows = table.set_index("policy")
    assert within(rows["p_rank_1"], [1 - second, second], rank_distribution(summary, draws=20_000))
    np.testing.assert_allclose(rows["p_rank_1"] + rows["p_rank_2"], 1.0)
    with pytest.raises(OffevalError, match="depth must be a whole number in 1..2, got 3"):
        sweep(log, policies, caps=(10.0,), draws=100, depth=3)


def test_decide_reads_policy_names_as_text_and_skips_summaries_that_are_not_finite(
    tmp_path, capsys
):
    from offeval.cli.shell import main

    names, values, cov = ["007", "12", "3"], np.array([0.10, 0.20, 0.15]), np.eye(3) * 1e-6
    broken = cov.copy()
    broken[2, 2] = np.nan
    save_summaries(
        tmp_path / "summaries.json",
        [
            EstimatorSummary("x", "x", names, np.array([0.1, np.nan, 0.15]), cov, 100),
            EstimatorSummary("is", "is", names, values, cov, 100),
            EstimatorSummary("y", "y", names, values, broken, 100),
        ],
    )
    attributes = tmp_path / "attributes.csv"
    attributes.write_text("policy,seed group\n007,a\n12,b\n3,a\n")
    decide = ["decide", str(tmp_path), "--draws", "2000", "--select", "1"]
    assert main([*decide, "--attributes", str(attributes)]) == 0
    out = capsys.readouterr().out
    assert "x: skipped, values or covariances not finite for policies ['12']" in out
    assert "y: skipped, values or covariances not finite for policies ['3']" in out
    # "12" leads the others by 0.05 and 0.1, 35 and 70 sds of the differences: best in every draw
    assert "selection (top, 1): 12" in out and re.search(r"^\s+b\s+1\.0\s", out, re.M)
    attributes.write_text("policy;seed group\n007;a\n12;b\n3;a\n")  # a semicolon CSV
    assert main([*decide, "--attributes", str(attributes)]) == 0
    assert re.search(r"^\s+b\s+1\.0\s", capsys.readouterr().out, re.M)
    attributes.write_text("policy,seed group\n7,a\n12,b\n3,a\n")  # 007 is not 7
    assert main([*decide, "--attributes", str(attributes)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # checked before any table is printed
    assert captured.err == (
        f"offeval: error: {attributes}: no row for systems '007'; rows for unknown systems: ['7']\n"
    )
    assert main([*decide, "--estimator", "x"]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("x: skipped")
    assert captured.err.count("\n") == 1 and "no summary with finite values" in captured.err


@pytest.mark.parametrize(
    "mistake",
    [["--select", "0"], ["--select", "4"], ["--draws", "0"], ["--seed", "-1"], ["--out", "file"]],
    ids=["select 0", "select too many", "no draws", "negative seed", "out is a file"],
)
def test_decide_reports_user_mistakes_in_one_line(tmp_path, capsys, mistake):
    from offeval.cli.shell import main

    summary = EstimatorSummary("is", "is", list("abc"), np.array([0.1, 0.2, 0.3]), np.eye(3), 10)
    save_summaries(tmp_path / "summaries.json", [summary])
    (tmp_path / "file").write_text("")
    mistake = [str(tmp_path / m) if m == "file" else m for m in mistake]
    assert main(["decide", str(tmp_path), "--draws", "100", *mistake]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("offeval: error: ")
    assert captured.err.count("\n") == 1


def test_a_relative_summary_plans_the_same_test_in_fractions_of_the_baseline(env):
    log = env.simulate(env.logging_policy(), 4_000, seed=3)
    policies = [*env.candidate_policies(3), env.logging_policy()]
    names = [p.name for p in policies]
    ev = evaluate(log, policies, [get_registry().create("estimator", "is")])
    absolute, relative = ev.summary(), ev.summary(baseline=names[-1])
    value = absolute.values[-1]  # the value every relative value is divided by
    sd, candidates = 0.3, names[:3]
    for baseline in (names[-1], names[2]):
        plain = plan_ab_test(absolute, candidates, baseline, sd)
        scaled = plan_ab_test(relative, candidates, baseline, sd, baseline_value=value)
        lift = absolute.values[:3] - absolute.values[names.index(baseline)]
        expected = [ab_sample_size(x, sd) if x > 0 else np.inf for x in lift]
        np.testing.assert_allclose(plain["lift"], lift)
        np.testing.assert_allclose(scaled["lift"], lift / value)
        np.testing.assert_allclose(plain["n_per_cell"], expected)
        np.testing.assert_allclose(scaled["n_per_cell"], expected)
        assert np.isfinite(expected).sum() >= 1
    with pytest.raises(
        OffevalError, match=f"relative to '{names[-1]}': baseline_value must be the value of"
    ):
        plan_ab_test(relative, candidates, names[-1], sd)
    with pytest.raises(OffevalError, match="baseline_value applies to a relative summary"):
        plan_ab_test(absolute, candidates, names[-1], sd, baseline_value=value)


def test_the_study_takes_the_lowest_point_estimates_of_a_lower_is_better_estimator():
    """IS negated (lower is better) must choose exactly as IS does, in every world and way."""
    from offeval.registry.manager import Registry
    from offeval.stats import Linearisation
    from offeval_decision.studies import decision_study
    from offeval_importance import IS

    class NegatedIS(IS):
        """Minus the IS estimate: the same ranking, lower is better."""

        name = "negated_is"
        higher_is_better = False

        def combine(self, stats) -> Linearisation:
            lin = super().combine(stats)
            return Linearisation(-lin.value, lin.columns, -lin.gradient)

    registry = Registry()
    registry.register("estimator", "negated_is", NegatedIS)
    with registry.activated():
        selections, _ = decision_study(
            n_worlds=3, n_trajectories=4_000, estimators=("is", "negated_is"), draws=2_000
        )
    by = selections.set_index(["world", "method", "estimator"])[["contains_best", "regret"]]
    pd.testing.assert_frame_equal(by.xs("is", level=2), by.xs("negated_is", level=2))


def test_the_report_section_skips_summaries_that_are_not_finite_and_says_so():
    from offeval.registry.sections import ReportContext
    from offeval_decision import decision_section

    names, values = ["a", "b"], np.array([0.1, 0.2])
    broken = np.array([[1e-6, 0.0], [0.0, np.nan]])
    context = ReportContext(
        {
            "is": EstimatorSummary("is", "is", names, values, np.eye(2) * 1e-6, 100),
            "x": EstimatorSummary("x", "x", names, values, broken, 100),
        }
    )
    section = decision_section(context, draws=1_000)
    assert list(section.tables["p_best"].columns) == ["is"]
    assert section.tables["p_best"]["is"].to_dict() == {"a": 0.0, "b": 1.0}  # 70 sds apart
    assert "x: skipped, values or covariances not finite for policies 'b'." in section.text


@pytest.mark.parametrize("scale", [1e300, 1e-300], ids=["variances near 1e300", "near 1e-300"])
def test_two_independent_systems_at_extreme_scales_match_the_normal_cdf(scale):
    """Beyond single precision (1e38, 1e-38): P(b best) = Phi(diff / sqrt(var_a + var_b))."""
    var = np.array([1.0, 1.5]) * scale
    mean = np.array([0.0, 0.3 * np.sqrt(var.sum())])
    dist = rank_distribution(mean, names=["a", "b"], covariance=np.diag(var), draws=100_000)
    assert within(dist.best["b"], norm.cdf(0.3), dist)
    assert dist.expected_rank == pytest.approx([1 + norm.cdf(0.3), 2 - norm.cdf(0.3)])


@pytest.mark.parametrize("seed", [1, 2])
def test_a_difference_far_narrower_than_the_systems_is_drawn_precisely(seed):
    """Variances 1 and a difference of variance 2e-12 (1e-12 of theirs, just above the twins'
    tolerance), half a standard deviation of it apart: P(b best) = Phi(0.5)."""
    c = 1 - 1e-12
    cov = np.array([[1.0, c], [c, 1.0]])
    sd = np.sqrt(2 * (1 - c))
    dist = rank_distribution(
        np.array([0.3, 0.3 + 0.5 * sd]), names=["a", "b"], covariance=cov, draws=200_000, seed=seed
    )
    assert within(dist.best["b"], norm.cdf(0.5), dist)


@pytest.mark.parametrize(
    ("rho", "single"), [(0.999, True), (1 - 1e-9, False)], ids=["single", "double"]
)
def test_correlated_systems_far_above_the_values_scale_match_the_normal_cdf(rho, single):
    """Three systems around 1e6 with correlation rho, the best by 0.3 sd of its difference:
    P(best) = P(both differences > 0), a bivariate normal probability, on both precisions."""
    from scipy.stats import multivariate_normal

    from offeval_decision.ranks import single_precision_suffices

    scale = 1e3
    cov = scale**2 * np.array([[1.0, rho, rho], [rho, 1.0, rho], [rho, rho, 1.0]])
    assert single_precision_suffices(cov) is single  # the path this case is about
    sd = scale * np.sqrt(2 * (1 - rho))
    mean = 1e6 + np.array([0.3 * sd, 0.0, -0.2 * sd])
    dist = rank_distribution(mean, names=["a", "b", "c"], covariance=cov, draws=200_000, seed=3)
    # D = (X_a - X_b, X_a - X_c): mean (0.3, 0.5) sd, covariance sd^2 [[1, 1/2], [1/2, 1]]
    d = multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]])
    assert within(dist.best["a"], d.cdf([0.3, 0.5]), dist)


def test_decide_out_writes_every_table_it_prints_with_formulas_quoted(tmp_path, capsys):
    """Policies 0.1 apart with standard errors of 1e-4 (700 sds of a difference): ranks are
    certain, so every table is known; names that a spreadsheet would run get a leading quote."""
    from offeval.cli.shell import main

    names = ["=cmd()", "+1", "-x", "@sum", "plain"]
    values = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    save_summaries(
        tmp_path / "summaries.json",
        [EstimatorSummary("is", "is", names, values, np.eye(5) * 1e-8, 100)],
    )
    attributes = tmp_path / "attributes.csv"
    attributes.write_text(
        "policy,group,cap\n=cmd(),-g,-1\n+1,-g,-1\n-x,-g,10\n@sum,-g,10\nplain,=HYPERLINK(1),10\n"
    )
    out = tmp_path / "out"
    decide = ["decide", str(tmp_path), "--draws", "2000", "--select", "2", "--out", str(out)]
    assert main([*decide, "--attributes", str(attributes)]) == 0
    printed = capsys.readouterr().out
    files = ["ranks_is.csv", "selection_is.csv", "components_is.csv"]
    assert printed.rstrip().endswith(f"wrote {', '.join(files)} to {out}")
    assert sorted(p.name for p in out.iterdir() if p.name != MARKER) == sorted(files)
    quoted = ["'=cmd()", "'+1", "'-x", "'@sum", "plain"]
    ranks = pd.read_csv(out / "ranks_is.csv", index_col="policy")
    assert list(ranks.index) == quoted
    np.testing.assert_array_equal(ranks["expected_rank"], [5.0, 4.0, 3.0, 2.0, 1.0])
    np.testing.assert_array_equal(ranks.filter(like="p_rank_").to_numpy(), np.eye(5)[::-1, :3])
    # ties in P(top 2) keep the summary's order; the terminal shows names as they are
    assert "selection (top, 2): @sum, plain" in printed
    selection = pd.read_csv(out / "selection_is.csv", index_col="policy")
    assert list(selection.index) == ["'@sum", "plain"]
    assert selection.to_dict("list") == {"p_top_2": [1.0, 1.0], "p_best": [0.0, 1.0]}
    components = pd.read_csv(out / "components_is.csv", dtype={"value": str})
    best = components.set_index(["attribute", "value"])["p_best"]
    assert best.to_dict() == {
        ("group", "'-g"): 0.0,
        ("group", "'=HYPERLINK(1)"): 1.0,
        ("cap", "-1"): 0.0,
        ("cap", "10"): 1.0,
    }
    text = (out / "components_is.csv").read_text()
    assert "\ncap,-1," in text and "'-1" not in text  # numbers stay numbers
    assert pd.api.types.is_float_dtype(ranks["p_rank_1"])


def test_decide_depth_sets_the_ranks_tabulated_and_not_the_selection(tmp_path, capsys):
    from offeval.cli.shell import main

    names, values = ["a", "b", "c"], np.array([0.1, 0.3, 0.2])  # certain order: b, c, a
    save_summaries(
        tmp_path / "summaries.json",
        [EstimatorSummary("is", "is", names, values, np.eye(3) * 1e-8, 100)],
    )
    decide = ["decide", str(tmp_path), "--draws", "1000", "--out", str(tmp_path / "out")]
    assert main([*decide, "--depth", "1", "--select", "2"]) == 0
    printed = capsys.readouterr().out
    ranks = pd.read_csv(tmp_path / "out" / "ranks_is.csv", index_col="policy")
    assert list(ranks.columns) == ["p_rank_1", "se_rank_1", "expected_rank"]
    assert "p_rank_2" not in printed and "selection (top, 2): b, c" in printed
    assert main([*decide, "--depth", "3"]) == 0  # every rank: rows and columns sum to one
    printed = capsys.readouterr().out
    ranks = pd.read_csv(tmp_path / "out" / "ranks_is.csv", index_col="policy")
    p = ranks[["p_rank_1", "p_rank_2", "p_rank_3"]]
    np.testing.assert_array_equal(p.loc[["b", "c", "a"]].to_numpy(), np.eye(3))
    assert "selection (top, 3): a, b, c" in printed  # --select defaults to 3 policies


def test_decide_with_two_policies_selects_both_and_skips_a_single_one(tmp_path, capsys):
    from offeval.cli.shell import main

    save_summaries(
        tmp_path / "summaries.json",
        [
            EstimatorSummary("one", "is", ["a"], np.array([0.1]), np.eye(1) * 1e-8, 100),
            EstimatorSummary("is", "is", ["a", "b"], np.array([0.1, 0.2]), np.eye(2) * 1e-8, 100),
        ],
    )
    assert main(["decide", str(tmp_path), "--draws", "1000"]) == 0
    printed = capsys.readouterr().out
    assert "one: skipped, a decision needs two or more policies (only ['a'])" in printed
    assert "selection (top, 2): a, b" in printed
    assert main(["decide", str(tmp_path), "--estimator", "one"]) == 2
    assert "two or more policies" in capsys.readouterr().err


def test_the_report_section_of_a_single_policy_says_a_decision_needs_two():
    from offeval.registry.sections import ReportContext
    from offeval_decision import decision_section

    context = ReportContext(
        {"is": EstimatorSummary("is", "is", ["only"], np.array([0.1]), np.eye(1) * 1e-6, 100)}
    )
    section = decision_section(context, draws=1_000)
    assert section.tables == {} and section.figures == {} and section.columns is None
    assert section.text == (
        "A decision needs two or more policies; this evaluation has one ('only')."
    )


def test_decide_says_when_lower_is_better_and_what_values_are_relative_to(tmp_path, capsys):
    from offeval.cli.shell import main

    save_summaries(
        tmp_path / "summaries.json",
        [
            summary_of("pd", ["a", "b"], [0.2, 0.4], np.eye(2) * 1e-8, 10, higher_is_better=False),
            summary_of("is", ["a", "b"], [1.0, 1.1], np.diag([0, 1e-8]), 10, baseline="a"),
        ],
    )
    assert main(["decide", str(tmp_path), "--draws", "100", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "pd: 100 draws (seed 4); lower is better: ranked from the lowest value" in lines
    assert "is: 100 draws (seed 4); values relative to 'a'" in lines
    pd_table = out.split("\nis: ")[0]
    assert re.search(r"^a\s+1\.0\s", pd_table, re.M)  # 0.2 below 0.4 by 1,400 sds: always first


def test_the_report_section_escapes_user_text_in_its_markdown():
    """Labels and policy names are the user's: '*' and '<' stay literal in the report."""
    from offeval.registry.sections import ReportContext
    from offeval_decision import decision_section

    broken = np.array([[1e-6, 0.0], [0.0, np.nan]])
    names, values = ["<b>", "*x*"], np.array([0.1, 0.2])
    context = ReportContext(
        {
            "is": EstimatorSummary("is", "is", names, values, np.eye(2) * 1e-6, 100),
            "x|y": EstimatorSummary("x|y", "x", names, values, broken, 100),
        }
    )
    text = decision_section(context, draws=1_000).text
    assert text.endswith(r"x\|y: skipped, values or covariances not finite for policies '\*x\*'.")
    single = EstimatorSummary("is", "is", ["<b>"], values[:1], np.eye(1), 1)
    alone = ReportContext({"is": single})
    assert decision_section(alone).text.endswith(r"has one ('\<b\>').")


def test_decide_out_replaces_an_earlier_runs_files(tmp_path, capsys):
    from offeval.cli.shell import main

    cov = np.eye(2) * 1e-8
    save_summaries(
        tmp_path / "summaries.json",
        [
            EstimatorSummary("is", "is", ["a", "b"], np.array([0.1, 0.2]), cov, 100),
            EstimatorSummary("ncis", "ncis", ["a", "b"], np.array([0.1, 0.2]), cov, 100),
        ],
    )
    decide = ["decide", str(tmp_path), "--draws", "100", "--out", str(tmp_path / "out")]
    assert main(decide) == 0
    assert main([*decide, "--estimator", "ncis"]) == 0
    captured = capsys.readouterr()
    names = sorted(p.name for p in (tmp_path / "out").iterdir() if p.name != MARKER)
    assert names == ["ranks_ncis.csv", "selection_ncis.csv"]  # no ranks_is.csv left behind
    assert "replaced the earlier files" in captured.err


def test_decide_out_names_the_estimator_of_a_file_numbered_for_a_label_read_alike(tmp_path, capsys):
    """``q.hat`` and ``q_hat`` read the same in a file name: the second label's files are
    numbered (as evaluate's pairs files), and the line that lists them says whose they are."""
    from offeval.cli.shell import main

    labels = ["dm(reward_model=q.hat)", "dm(reward_model=q_hat)"]
    save_summaries(
        tmp_path / "summaries.json",
        [
            EstimatorSummary(label, "dm", ["a", "b"], np.array([0.1, 0.2]), np.eye(2), 10)
            for label in labels
        ],
    )
    out = tmp_path / "out"
    assert main(["decide", str(tmp_path), "--draws", "100", "--out", str(out)]) == 0
    stem = "dm_reward_model_q_hat_"
    files = [f"ranks_{stem}.csv", f"selection_{stem}.csv"]
    numbered = [f"ranks_{stem}_2.csv ({labels[1]})", f"selection_{stem}_2.csv ({labels[1]})"]
    assert (
        capsys.readouterr().out.rstrip().endswith(f"wrote {', '.join(files + numbered)} to {out}")
    )
    assert len(list(out.glob("*.csv"))) == 4
