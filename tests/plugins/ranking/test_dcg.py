"""Plugin ranking, DCG: Table 1, exposures, unbiasedness on the simulator, learnt PBM, analyses."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from offeval import ConfigurationError, InteractionLog, SupportError, evaluate, get_registry
from offeval_ranking import DCG, NDCG, PNDCG, RerankPolicy, fit_em, fit_shuffled, ranking
from offeval_ranking.analyses import consistency, correlation, held_out_study, sensitivity
from offeval_simulation import Environment


def table1_log() -> InteractionLog:
    """The seed's Table 1: two contexts, two items, qualities known for both."""
    frame = pd.DataFrame(
        {
            "trajectory": [1, 1, 2, 2],
            "item": ["a1", "a2", "a1", "a2"],
            "position": [1, 2, 1, 2],
            "reward": [1.0, 0.0, 1.0, 2.5],
            "r": [1, 0, 1, 0],
            "r_prime": [0, 1, 0, 1],
        }
    )
    return InteractionLog.from_frame(frame)


def test_table1_reproduced_exactly():
    """Top-1 models; the ideal ranks both items with no discount (1.0 for x1, 3.5 for x2)."""
    top1 = {"examination": "table(values=[1.0, 1.0])", "cutoff": 1}
    ests = [DCG(**top1), NDCG(**top1, ideal_cutoff=None), PNDCG(**top1, ideal_cutoff=None)]
    policies = [RerankPolicy("r", name="R"), RerankPolicy("r_prime", name="R'")]
    ev = evaluate(table1_log(), policies, ests)
    value = {(p, e.name): ev.estimate(p, e.label).value for p in ("R", "R'") for e in ests}
    assert value["R", "dcg"] == pytest.approx(1.00) and value["R'", "dcg"] == pytest.approx(1.25)
    assert value["R", "ndcg"] == pytest.approx((1.0 + 1.0 / 3.5) / 2)  # 0.64
    assert value["R'", "ndcg"] == pytest.approx((0.0 + 2.5 / 3.5) / 2)  # 0.36
    assert round(value["R", "ndcg"], 2) == 0.64 and round(value["R'", "ndcg"], 2) == 0.36
    assert value["R", "pndcg"] == pytest.approx(1.00 / 2.25)
    assert value["R'", "pndcg"] == pytest.approx(1.25 / 2.25)


# -- rank marginals ------------------------------------------------------------
def brute_force_pl(logits: np.ndarray, length: int) -> np.ndarray:
    """P(item k at rank i) by summing every full ordering's Plackett-Luce probability."""
    n, k = logits.shape
    w = np.exp(logits)
    out = np.zeros((n, k, length))
    for order in permutations(range(k)):
        prob, left = np.ones(n), w.sum(axis=1)
        for item in order:
            prob = prob * w[:, item] / left
            left = left - w[:, item]
        for rank, item in enumerate(order[:length]):
            out[:, item, rank] += prob
    return out


@pytest.mark.parametrize(("k", "length"), [(3, 3), (5, 2), (6, 4), (6, 6)])
def test_plackett_luce_marginals_equal_brute_force(k, length):
    logits = np.random.default_rng(k * 10 + length).normal(size=(20, k)) * 1.5
    exact = ranking.plackett_luce(logits, length, method="exact")
    assert exact.method == "exact"
    np.testing.assert_allclose(exact.values, brute_force_pl(logits, length), atol=1e-13)


def test_padding_slots_are_never_ranked():
    logits = np.random.default_rng(0).normal(size=(10, 5))
    logits[:, 3:] = -np.inf
    out = ranking.plackett_luce(logits, 3).values
    assert out[:, 3:].max() == 0
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    np.testing.assert_allclose(out[:, :3], brute_force_pl(logits[:, :3], 3), atol=1e-13)


def test_monte_carlo_exposure_within_its_stated_error():
    logits = np.random.default_rng(1).normal(size=(300, 7))
    e = 1 / np.log2(np.arange(2, 6))
    exact = ranking.plackett_luce(logits, 4).exposure(e)
    mc = ranking.plackett_luce(logits, 4, method="monte_carlo", samples=4_000, seed=5)
    assert mc.method == "monte_carlo" and mc.samples == 4_000
    z = (mc.exposure(e) - exact) / mc.exposure_se(e)
    assert np.abs(z).max() < 4.5
    assert 0.9 < np.mean(np.abs(z) < 1.96) < 0.99


def test_auto_switches_to_monte_carlo_when_too_many_sets():
    logits = np.zeros((2, 30))
    assert ranking.plackett_luce(logits, 10, samples=50).method == "monte_carlo"
    with pytest.raises(ConfigurationError, match="monte_carlo"):
        ranking.plackett_luce(logits, 10, method="exact")


def brute_force_two_stage(g, r, size, length, temperature):
    n, pool = g.shape
    w = np.exp(g)
    out = np.zeros((n, pool, length))
    for drawn in permutations(range(pool), size):
        prob, left = np.ones(n), w.sum(axis=1)
        for item in drawn:
            prob = prob * w[:, item] / left
            left = left - w[:, item]
        cols = list(drawn)
        if temperature is None:
            inner = ranking.deterministic(r[:, cols], length).values
        else:
            inner = brute_force_pl(r[:, cols] / temperature, length)
        out[:, cols] += prob[:, None, None] * inner
    return out


@pytest.mark.parametrize("temperature", [None, 0.7])
def test_two_stage_marginals_equal_brute_force(temperature):
    rng = np.random.default_rng(2)
    g, r = rng.normal(size=(8, 6)), rng.normal(size=(8, 6))
    exact = ranking.two_stage(g, 4, r, 3, ranker_temperature=temperature)
    np.testing.assert_allclose(
        exact.values, brute_force_two_stage(g, r, 4, 3, temperature), atol=1e-13
    )
    mc = ranking.two_stage(
        g, 4, r, 3, ranker_temperature=temperature, method="monte_carlo", samples=20_000
    )
    se = np.sqrt(exact.values * (1 - exact.values) / 20_000)
    assert np.all(np.abs(mc.values - exact.values) <= 5 * se + 1e-12)


# -- the simulator ---------------------------------------------------------------
@pytest.fixture(scope="module")
def world():
    env = Environment(seed=3, n_contexts=400)
    targets = [
        env.policy("deterministic", skill=1.2, noise=0.5, temperature=None, seed=1),
        env.policy("plackett_luce", skill=1.2, noise=0.5, temperature=0.5, seed=2),
        env.policy("two_stage", skill=1.2, noise=0.5, temperature=None, seed=3, generator_size=6),
    ]
    estimators = [DCG(examination=env.examination), DCG(examination=env.examination, cap=2.0)]
    logging = env.logging_policy()
    runs = []
    for rep in range(150):
        ev = evaluate(env.simulate(logging, 3_000, seed=rep), targets, estimators)
        for p in targets:
            for est in estimators:
                e = ev.estimate(p.name, est.label)
                runs.append((p.name, est.cap, e.value, e.se, e.ci_low, e.ci_high))
    frame = pd.DataFrame(runs, columns=["policy", "cap", "value", "se", "low", "high"])
    return env, targets, logging, frame


@pytest.mark.slow
def test_unbiased_dcg_matches_the_exact_online_value(world):
    """Per target: mean over 150 replications within 3 standard errors of the truth."""
    env, targets, _, runs = world
    for p in targets:
        truth = env.online_value(p) * env.n_positions  # expected clicks per trajectory
        values = runs.query("policy == @p.name and cap == inf")["value"]
        se_of_mean = values.std(ddof=1) / np.sqrt(len(values))
        assert abs(values.mean() - truth) < 3 * se_of_mean, (p.name, values.mean(), truth)


@pytest.mark.slow
def test_unbiased_dcg_intervals_cover(world):
    env, targets, _, runs = world
    unbiased = runs[np.isinf(runs["cap"])]
    truth = unbiased["policy"].map({p.name: env.online_value(p) * env.n_positions for p in targets})
    coverage = np.mean((unbiased["low"] <= truth) & (truth <= unbiased["high"]))
    assert 0.92 <= coverage <= 0.98, coverage


@pytest.mark.slow
def test_clipping_bias_has_the_predicted_sign_and_size(world):
    """E[clipped] = mean_x sum_a Q eps0 eps min(m, 1/eps0): below the truth, and matched."""
    env, targets, logging, runs = world
    e = env.examination(np.arange(1, env.n_positions + 1))
    eps0 = logging.marginals @ e
    for p in targets:
        eps = p.marginals @ e
        expected = (env.quality * eps0 * eps * np.minimum(2.0, 1 / eps0)).sum(axis=1).mean()
        truth = env.online_value(p) * env.n_positions
        values = runs.query("policy == @p.name and cap == 2.0")["value"]
        assert expected < truth
        assert abs(values.mean() - expected) < 3 * values.std(ddof=1) / np.sqrt(len(values))


def test_raw_labels_are_clipping_at_one(env_log):
    env, log, target = env_log
    a = DCG(examination=env.examination, labels="raw")
    b = DCG(examination=env.examination, cap=1.0)
    ev = evaluate(log, [target], [a, b])
    assert ev.estimate(target.name, a.label).value == pytest.approx(
        ev.estimate(target.name, b.label).value
    )


@pytest.fixture(scope="module")
def env_log():
    env = Environment(seed=5, n_contexts=300)
    log = env.simulate(env.logging_policy(), 20_000, seed=1, with_candidates=True)
    return env, log, env.policy("target", skill=1.3, noise=0.3, temperature=0.5, seed=4)


def test_logging_exposure_sources_agree(env_log):
    env, log, target = env_log
    e = env.examination(np.arange(1, env.n_positions + 1))
    cols = [f"rank_probability_{i}" for i in range(1, env.n_positions + 1)]
    logged = log.with_columns(exposure=log.frame[cols].to_numpy() @ e)
    by_rank_probs = DCG(examination=env.examination, logging="rank_probabilities")
    by_policy = DCG(examination=env.examination, logging=env.logging_policy())
    by_column = DCG(examination=env.examination, logging="exposure")
    v1 = evaluate(log, [target], [by_rank_probs]).estimate(target.name).value
    v2 = evaluate(log, [target], [by_policy]).estimate(target.name).value
    v3 = evaluate(logged, [target], [by_column]).estimate(target.name).value
    assert v1 == pytest.approx(v2, rel=1e-12) and v1 == pytest.approx(v3, rel=1e-12)


def test_eq11_for_a_deterministic_logger():
    """With a deterministic logging ranker, e(logged rank) is the logging exposure."""
    env = Environment(seed=6, n_contexts=200, n_candidates=4)
    logger = env.policy("logger", temperature=None, seed=9)
    log = env.simulate(logger, 5_000, seed=2)
    target = RerankPolicy("logging_score", temperature=0.3, name="rerank")
    eq11 = DCG(examination=env.examination, logging="rank")
    general = DCG(examination=env.examination, logging="rank_probabilities")
    ev = evaluate(log, [target], [eq11, general])
    assert ev.estimate("rerank", eq11.label).value == pytest.approx(
        ev.estimate("rerank", general.label).value, rel=1e-12
    )


def test_support_violations_fail_drop_or_warn():
    """A deterministic top-4 logger never exposes candidates 5-8; a PL target does."""
    env = Environment(seed=7, n_contexts=200)
    log = env.simulate(
        env.policy("logger", temperature=None, seed=9), 2_000, seed=3, with_candidates=True
    )
    target = env.policy("target", temperature=0.5, seed=4)
    with pytest.raises(SupportError, match="full support violated"):
        evaluate(log, [target], [DCG(examination=env.examination, logging="rank_probabilities")])
    dropped = DCG(examination=env.examination, logging="rank_probabilities", support="drop")
    est = evaluate(log, [target], [dropped]).estimate(target.name)
    assert est.excluded["support"] > 0 and est.diagnostics["support_violations"] > 0
    warned = DCG(examination=env.examination, logging="rank_probabilities", support="warn")
    with pytest.warns(UserWarning, match="full support"):
        evaluate(log, [target], [warned])


def test_ndcg_counts_zero_ideal_trajectories(env_log):
    env, log, target = env_log
    per_traj = np.add.reduceat(log.column("reward"), log.unit_starts)
    excluded = NDCG(examination=env.examination)
    zeros = NDCG(examination=env.examination, zero_ideal="zero")
    ev = evaluate(log, [target], [excluded, zeros])
    a, b = ev.estimate(target.name, excluded.label), ev.estimate(target.name, zeros.label)
    assert a.excluded["zero_ideal"] == np.sum(per_traj == 0)
    assert b.value == pytest.approx(a.value * np.mean(per_traj > 0))
    assert 0 < a.value <= 1


# -- learnt examination --------------------------------------------------------------
def test_pbm_from_shuffled_traffic_recovers_the_truth():
    env = Environment(seed=8, n_contexts=500)
    log = env.simulate(env.logging_policy(shuffled_share=1.0), 60_000, seed=4)
    model = fit_shuffled(log)
    truth = env.examination(np.arange(1, 5))
    z = (np.asarray(model.values) - truth)[1:] / np.asarray(model.se)[1:]
    assert np.all(np.abs(z) < 4), z
    assert model.table().shape == (4, 5)


@pytest.mark.slow
def test_pbm_by_em_recovers_the_truth():
    env = Environment(seed=9, n_contexts=300, click_scale=2.0)
    log = env.simulate(env.logging_policy(), 40_000, seed=5)
    model = fit_em(log, bootstrap=20)
    truth = env.examination(np.arange(1, 5))
    error = np.asarray(model.values)[1:] - truth[1:]
    assert np.all(np.abs(error) < 4 * np.asarray(model.se)[1:] + 0.02), (model, truth)


def test_learnt_model_is_a_registered_examination_model():
    reg = get_registry()
    model = reg.create_from_spec("examination", "pbm(values=[1.0, 0.5, 0.2])")
    np.testing.assert_allclose(model(np.array([1, 2, 3, 4])), [1.0, 0.5, 0.2, 0.0])
    cut = reg.create_from_spec("examination", "cutoff(n=2,model=exponential(gamma=0.5))")
    np.testing.assert_allclose(cut(np.array([1, 2, 3])), [1.0, 0.5, 0.0])
    assert reg.create_from_spec("examination", cut.spec).spec == cut.spec


# -- analyses -------------------------------------------------------------------------
def test_equal_held_out_counts_never_invert_and_varying_counts_do():
    same = held_out_study(held_out=5, n_users=500, n_models=20)
    c = consistency(same["dcg"], same["ndcg"])
    assert c.inversion_share == 0 and c.kendall == pytest.approx(1.0)
    varying = held_out_study(held_out=(1, 30), n_users=500, n_models=20)
    assert consistency(varying["dcg"], varying["ndcg"]).inversion_share > 0


def test_consistency_counts_inversions_by_brute_force():
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.4, 0.3, 0.5, 0.6])
    c = consistency(a, b)
    assert c.inversion_share == pytest.approx(1 / 6) and c.pairs == 6


def test_correlation_is_pearsons_test():
    rng = np.random.default_rng(0)
    online = pd.Series(rng.normal(size=7), index=pd.RangeIndex(7, name="day"))
    offline = pd.DataFrame(
        {"day": np.arange(7), "variant": "x", "value": online + rng.normal(size=7)}
    )
    out = correlation(offline, online)
    ref = stats.pearsonr(offline["value"], online)
    assert out.loc[0, "r"] == pytest.approx(ref.statistic) and out.loc[
        0, "p_value"
    ] == pytest.approx(ref.pvalue)


def test_sensitivity_uses_the_99_percent_interval():
    frame = pd.DataFrame(
        {
            "metric": "dcg",
            "m": 1.0,
            "difference": [3.0, 2.0, -1.0],
            "se": [1.0, 1.0, 1.0],
            "online_difference": [1.0, 1.0, 1.0],
        }
    )
    row = sensitivity(frame).iloc[0]
    assert row["tpr"] == pytest.approx(1 / 3)  # only 3.0 clears 2.576 standard errors
    assert row["sign_agreement"] == pytest.approx(2 / 3)
    assert row["mean_p_value"] == pytest.approx(np.mean(stats.norm.sf([3.0, 2.0, -1.0])))


def test_cli_evaluates_dcg_with_rerank_policies(tmp_path, capsys):
    from offeval.cli.shell import main

    env = Environment(seed=2, n_contexts=100)
    log = env.simulate(env.logging_policy(), 500, seed=1)
    path = tmp_path / "log.csv"
    log.frame.assign(flipped=-log.frame["logging_score"]).to_csv(path, index=False)
    spec = "dcg:examination=exponential(gamma=0.7),cap=200"
    assert (
        main(["evaluate", str(path), "--rerank", "flip=flipped", "--estimator", spec, "--quiet"])
        == 0
    )
    assert "dcg(examination=exponential(gamma=0.7), cap=200)" in capsys.readouterr().out
