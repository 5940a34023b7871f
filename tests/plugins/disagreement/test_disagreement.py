"""Disagreement plugin: rank probabilities given the displayed set, PD and CD (seed 001)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from oracles import rank_probabilities_by_enumeration

from offeval import ColumnError, ConfigurationError, InteractionLog, OffevalWarning, evaluate
from offeval_disagreement import (
    MAX_EXACT,
    CounterfactualDisagreement,
    PairwiseDisagreement,
    SampledCounterfactualDisagreement,
    SampledPairwiseDisagreement,
    forward_backward,
    given_set,
    monte_carlo,
    rank_probabilities,
    rank_rows,
    subset_dp,
)
from offeval_ranking import RerankPolicy


def random_logits(n: int, banners: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Logits of weights spanning 1e-6 to 1e6, and log rest masses (some none)."""
    rng = np.random.default_rng(seed)
    logits = rng.uniform(np.log(1e-6), np.log(1e6), (banners, n))
    rest = rng.uniform(np.log(1e-6), np.log(1e6), banners)
    rest[::3] = -np.inf
    return logits, rest


@pytest.mark.parametrize("n", range(1, 8))
def test_rank_probabilities_equal_brute_force(n):
    logits, rest = random_logits(n, 6, seed=n)
    fast, reference = forward_backward(logits, rest), subset_dp(logits, rest)
    ranks = np.random.default_rng(n).integers(1, n + 1, len(logits))
    rows = rank_rows(logits, rest, ranks)
    for b in range(len(logits)):
        exact = rank_probabilities_by_enumeration(logits[b], rest[b])
        np.testing.assert_allclose(fast[b], exact, rtol=0, atol=1e-12)
        np.testing.assert_allclose(reference[b], exact, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows[b], exact[ranks[b] - 1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.sum(axis=1), 1.0, atol=1e-12)  # each product: some rank
    np.testing.assert_allclose(fast.sum(axis=2), 1.0, atol=1e-12)  # each rank: some product


def test_rank_probabilities_do_not_underflow_with_extreme_logits():
    logits = np.array([[900.0, -900.0, 0.0, 300.0, -300.0, 5.0, 1e-3, -1e-3, 700.0, -700.0]])
    q = forward_backward(logits, np.array([800.0]))
    assert np.isfinite(q).all()
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(q.sum(axis=2), 1.0, atol=1e-12)
    assert q[0, 0, 0] == pytest.approx(1.0)  # the dominant product is drawn first


@pytest.mark.parametrize("rest", [-np.inf, 800.0, -950.0])
def test_logits_1800_apart_equal_brute_force(rest):
    """Weights from exp(-900) to exp(900): the log-space path, every entry against enumeration."""
    logits = np.array([[900.0, -900.0, 0.0, 300.0, -300.0, 5.0, 1e-3, 700.0]])
    exact = rank_probabilities_by_enumeration(logits[0], rest)
    np.testing.assert_allclose(forward_backward(logits, rest)[0], exact, rtol=0, atol=1e-12)
    for rank in range(1, 9):
        row = rank_rows(logits, np.array([rest]), np.array([rank]))[0]
        np.testing.assert_allclose(row, exact[rank - 1], rtol=0, atol=1e-12)


def test_the_fast_and_the_seed_algorithm_agree_at_larger_n():
    logits, rest = random_logits(9, 3, seed=11)
    np.testing.assert_allclose(forward_backward(logits, rest), subset_dp(logits, rest), atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 11])
def test_one_row_in_one_pass_equals_the_full_computation(n):
    logits, rest = random_logits(n, 40, seed=20 + n)
    logits[:3] *= 60  # wide banners take the log-space path
    ranks = np.random.default_rng(n).integers(1, n + 1, 40)
    full = forward_backward(logits, rest)
    rows = rank_rows(logits, rest, ranks)
    np.testing.assert_allclose(rows, full[np.arange(40), ranks - 1], rtol=0, atol=1e-12)


def test_without_a_rest_mass_it_is_plackett_luce_over_the_displayed_set():
    from offeval_ranking import ranking

    logits, _ = random_logits(6, 4, seed=3)
    marginals = ranking.plackett_luce(logits, 6, method="exact").values  # [b, product, rank]
    np.testing.assert_allclose(forward_backward(logits), marginals.transpose(0, 2, 1), atol=1e-12)


def test_monte_carlo_is_within_its_stated_error_and_the_error_shrinks():
    logits, rest = random_logits(6, 4, seed=5)
    logits /= 4  # moderate weights: every entry has mass to estimate
    rest = np.where(np.isfinite(rest), rest / 4, rest)
    exact = forward_backward(logits, rest)
    small, small_se = monte_carlo(logits, rest, samples=4_000, seed=1)
    large, large_se = monte_carlo(logits, rest, samples=64_000, seed=2)
    for estimate, se in ((small, small_se), (large, large_se)):
        z = np.abs(estimate - exact) / np.maximum(se, 1e-12)
        assert np.mean(z < 2) > 0.9 and z.max() < 5
    ratio = np.median(small_se[small_se > 0] / large_se[small_se > 0])
    assert ratio == pytest.approx(4.0, rel=0.15)  # 16 times the samples, a quarter of the error


def test_monte_carlo_draws_depend_only_on_the_seed_and_the_banner():
    rng = np.random.default_rng(6)
    logits = rng.normal(size=(12, 6))
    rest = np.where(np.arange(12) % 3 == 0, -np.inf, rng.normal(size=12))  # both samplers
    probs, ses = monte_carlo(logits, rest, samples=500, seed=3)
    for subset in ([5], [7, 0, 11], [9, 9, 2]):  # alone, reordered, repeated
        alone, alone_se = monte_carlo(logits[subset], rest[subset], samples=500, seed=3)
        np.testing.assert_array_equal(alone, probs[subset])
        np.testing.assert_array_equal(alone_se, ses[subset])
    keys = np.arange(12, dtype=np.uint64) + 40
    keyed = monte_carlo(logits, rest, samples=500, seed=3, keys=keys)[0]
    np.testing.assert_array_equal(
        monte_carlo(logits[4:6], rest[4:6], samples=500, seed=3, keys=keys[4:6])[0], keyed[4:6]
    )
    assert not np.array_equal(keyed, probs)  # the key names the stream
    assert not np.array_equal(monte_carlo(logits, rest, samples=500, seed=4)[0], probs)
    with pytest.raises(ConfigurationError, match="keys"):
        monte_carlo(logits, rest, keys=keys[:3])


def test_exact_methods_past_the_limit_are_an_error_and_auto_samples():
    n = MAX_EXACT + 1
    logits = np.random.default_rng(7).normal(size=(2, n))
    for call in (
        lambda: rank_probabilities(logits, method="exact"),
        lambda: forward_backward(logits),
    ):
        with pytest.raises(ConfigurationError, match=f"at most {MAX_EXACT} products.*got {n}"):
            call()
    probs, se = rank_probabilities(logits, method="auto", samples=200)
    assert se is not None and np.allclose(probs.sum(axis=2), 1)
    log = banners([n] * 6, [1, 2, 3, 4, 5, 6], np.arange(6.0 * n), np.zeros(6 * n))
    model = [RerankPolicy("model")]
    with pytest.raises(ConfigurationError, match=f"method='exact'.*at most {MAX_EXACT}.*got {n}"):
        evaluate(
            log,
            model,
            [CounterfactualDisagreement(method="exact", samples=100, score_scale="logit")],
        )
    auto = evaluate(
        log, model, [CounterfactualDisagreement(samples=100, score_scale="logit")]
    ).estimate("model")
    assert auto.diagnostics["monte_carlo_banners"] == 6 and auto.n_units == 6


@pytest.mark.slow
def test_exact_blocks_bound_memory():
    """A block's arrays hold at most 2^21 cells (16 MB) or one banner; the passes keep ~5."""
    import tracemalloc

    def arrays(nested):
        if isinstance(nested, np.ndarray):
            return [nested]
        return [a for item in nested for a in arrays(item)]

    for n, count in ((12, 64), (16, 32), (18, 20), (20, 20)):
        widths = {block.stop - block.start for block in given_set._blocks(count, n)}
        assert max(widths) << n <= max(1 << 21, 1 << n), (n, widths)
    for n, count in ((12, 64), (16, 32), (18, 4)):
        cells = max(block.stop - block.start for block in given_set._blocks(count, n)) << n
        rng = np.random.default_rng(n)
        for scale in (1.0, 60.0):  # linear and log space
            logits, rest = rng.normal(0, scale, (count, n)), rng.normal(size=count)
            forward_backward(logits[:1], rest[:1])  # the lattice, cached
            tracemalloc.start()
            forward_backward(logits, rest)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert peak < 6 * 8 * cells, (n, scale, peak / 2**20)
        held = sum(a.nbytes for a in arrays(given_set._lattice(n)))
        assert held <= 18 * n << (n - 1)  # 8 + 5 + 5 bytes per (subset, item lacking)


# -- PD and CD -------------------------------------------------------------------------------
def banners(sizes, click_ranks, scores, logits=None, shuffled=None) -> InteractionLog:
    """A log of banners: banner b has sizes[b] products, a click at click_ranks[b] (0: none)."""
    rows = []
    k = 0
    for b, (n, r) in enumerate(zip(sizes, click_ranks, strict=True)):
        for rank in range(1, n + 1):
            rows.append(
                {
                    "trajectory": b,
                    "item": k,
                    "position": rank,
                    "reward": float(rank == r),
                    "model": scores[k],
                    "logging_score": 0.0 if logits is None else logits[k],
                    "shuffled": bool(shuffled[b]) if shuffled is not None else False,
                }
            )
            k += 1
    return InteractionLog.from_frame(pd.DataFrame(rows))


def test_cd_equals_pd_under_uniform_shuffling_and_differs_with_mixed_sizes():
    rng = np.random.default_rng(0)
    sizes = [4] * 300
    log = banners(sizes, rng.integers(0, 5, 300), rng.normal(size=1200))
    model = [RerankPolicy("model")]
    both = evaluate(
        log, model, [PairwiseDisagreement(), CounterfactualDisagreement("all", "uniform")]
    )
    pd_est, cd_est = both.estimate("model", "pd"), both.estimate("model", "cd")
    assert cd_est.value == pytest.approx(pd_est.value, rel=1e-12)
    # SPEC: one banner of n = 2 and one of n = 4 can give PD 1/2 and CD 2/5
    mixed = banners([2, 4], [1, 1], [0.0, 1.0, 0.0, -1.0, -2.0, -3.0])
    values = evaluate(
        mixed, model, [PairwiseDisagreement(), CounterfactualDisagreement("all", "uniform")]
    )
    assert values.estimate("model", "pd").value == pytest.approx(1 / 2)
    assert values.estimate("model", "cd").value == pytest.approx(2 / 5)


def brute_force_cd(log, scores, q_of) -> float:
    """Algorithm 2's expectation, looping over banners and products (no plugin code)."""
    num = den = 0.0
    frame = log.frame
    for _, banner in frame.groupby("trajectory", sort=False):
        click = banner["reward"].to_numpy() > 0
        if not click.any() or click.all():
            continue
        s = scores[banner.index.to_numpy()]
        q = q_of(banner)
        for i in np.flatnonzero(click):
            for p in range(len(banner)):
                if click[p] or s[p] == s[i]:
                    continue
                num += q[i, p] * (s[p] > s[i]) / click.sum()
                den += q[i, p] / click.sum()
    return num / den


def test_cd_matches_a_brute_force_loop_with_plackett_luce_logging():
    rng = np.random.default_rng(1)
    sizes = rng.integers(2, 7, 150)
    total = int(sizes.sum())
    log = banners(
        sizes, rng.integers(0, 4, 150), np.round(rng.normal(size=total), 1), rng.normal(size=total)
    )
    scores = log.frame["model"].to_numpy()

    def q_of(banner):
        return rank_probabilities_by_enumeration(banner["logging_score"].to_numpy())

    cd = evaluate(
        log,
        [RerankPolicy("model")],
        [CounterfactualDisagreement("all", "plackett_luce", score_scale="logit")],
    )
    assert cd.estimate("model").value == pytest.approx(brute_force_cd(log, scores, q_of), rel=1e-12)


def test_the_sampling_algorithms_converge_to_the_exact_values():
    rng = np.random.default_rng(2)
    n = 3000
    sizes = rng.integers(2, 6, n)
    total = int(sizes.sum())
    log = banners(sizes, rng.integers(0, 4, n), rng.normal(size=total), rng.normal(size=total))
    estimators = [
        PairwiseDisagreement(),
        CounterfactualDisagreement(score_scale="logit"),
        SampledPairwiseDisagreement(draws=4, seed=1),
        SampledCounterfactualDisagreement(draws=4, seed=1, score_scale="logit"),
    ]
    ev = evaluate(log, [RerankPolicy("model")], estimators, chunk_rows=1_000)
    for exact, sampled in (("pd", "pd_sampled"), ("cd", "cd_sampled")):
        a, b = ev.estimate("model", exact), ev.estimate("model", sampled)
        assert abs(a.value - b.value) < 4 * b.se, (exact, a.value, b.value, b.se)
    again = evaluate(log, [RerankPolicy("model")], estimators[2:], chunk_rows=333)
    # the same draws whatever the chunking (one draw more or less moves the value by ~1e-4);
    # the engine's sums over chunks differ only by rounding
    for name in ("pd_sampled", "cd_sampled"):
        value = ev.estimate("model", name).value
        assert again.estimate("model", name).value == pytest.approx(value, rel=1e-12, abs=0)


@pytest.mark.slow
def test_figure3_on_the_simulator_cd_tracks_shuffled_pd_and_pd_does_not():
    from offeval_disagreement.analyses import (
        BIASED,
        COUNTERFACTUAL,
        REFERENCE,
        close_models,
        figure3,
        world,
    )
    from offeval_simulation import RankingPolicy

    result = figure3(n_banners=40_000, n_models=30, seed=1)
    r = result.correlations["pearson"]
    assert r[COUNTERFACTUAL] > 0.9 and r[BIASED] < 0.8 and r[COUNTERFACTUAL] > r[BIASED]
    low, high = result.variance_ratio[1:]
    assert 1.2 < result.variance_ratio[0] < 4 and low < result.variance_ratio[0] < high
    # shuffled_needed counts shuffled banners as banners["shuffled"] does: a log of that many
    # shuffled banners gives PD CD's standard error (each se is itself estimated within ~3%
    # from the ~500+ banners with a click, so the median ratio lies well within 15% of 1)
    env, logging = world(seed=1)
    shuffled_only = RankingPolicy(
        "shuffled", logging.score_matrix, env.candidates, env.n_positions, mix_uniform=1.0
    )
    log = env.simulate(shuffled_only, round(result.shuffled_needed), seed=7)
    models = close_models(env, logging, 30, seed=1)
    se = evaluate(log, models, [PairwiseDisagreement("shuffled")]).to_frame()
    ratio = se.set_index("policy")["se"] / result.table["se"][COUNTERFACTUAL]
    assert 0.85 < ratio.median() < 1.15, ratio.median()
    assert result.shuffled_needed > result.banners["shuffled"]  # CD is worth more than the log has
    assert (result.table["banners"][REFERENCE] < result.banners["shuffled"]).all()  # clicked only


def test_figure3_without_the_simulator_names_the_plugin_to_load():
    """The world is the simulation plugin's environment, asked of the registry, not imported."""
    from offeval import Registry
    from offeval_disagreement.analyses import world

    with Registry(entry_points=False).activated():
        with pytest.raises(ConfigurationError, match="add simulation to OFFEVAL_PLUGINS"):
            world()


def test_cd_runs_from_the_command_line_on_a_banner_file(tmp_path, capsys):
    from offeval.cli.shell import main

    rng = np.random.default_rng(4)
    sizes = rng.integers(2, 7, 400)
    total = int(sizes.sum())
    log = banners(sizes, rng.integers(0, 4, 400), rng.normal(size=total), rng.normal(size=total))
    frame = log.frame.rename(columns={"trajectory": "banner", "logging_score": "logit"})
    frame = frame.assign(other=rng.normal(size=total)).drop(columns="context")
    path = tmp_path / "banners.csv"
    frame.to_csv(path, index=False)
    args = ["evaluate", str(path), "--map", "trajectory=banner", "--map", "logging_score=logit"]
    args += ["--rerank", "model=model", "--rerank", "other=other"]
    args += ["--estimator", "cd:score_scale=logit"]
    args += ["--estimator", "pd", "--quiet", "--out", str(tmp_path / "out")]
    assert main(args) == 0
    table = pd.read_csv(tmp_path / "out" / "estimates.csv")
    direct = evaluate(
        log, [RerankPolicy("model")], [CounterfactualDisagreement(score_scale="logit")]
    )
    row = table[(table.policy == "model") & (table.estimator == "cd")].iloc[0]
    assert row.value == pytest.approx(direct.estimate("model").value, rel=1e-12)
    assert (tmp_path / "out" / "pairs_cd.csv").exists()


def test_resampling_the_whole_banner_matches_a_brute_force_loop():
    from offeval_disagreement import ResampledBannerDisagreement
    from offeval_simulation import Environment

    env = Environment(seed=2, n_contexts=50, n_items=40, n_candidates=5, n_positions=3)
    log = env.simulate(env.logging_policy(), 400, seed=3, with_candidates=True)
    model = env.candidate_policies(2)[1]
    value = evaluate(log, [model], [ResampledBannerDisagreement()]).estimate(model.name).value
    cands = log.candidates.assign(context=lambda d: log.frame["context"].to_numpy()[d["slot"]])
    cand_score = model.scores(cands)
    row_score = model.scores(log.frame)
    num = den = 0.0
    for _, banner in log.frame.groupby("trajectory"):
        click = banner["reward"].to_numpy() > 0
        if not click.any() or click.all():
            continue
        clicked_items = set(banner["item"].to_numpy()[click])
        for row in banner.index[click]:
            at = np.flatnonzero(cands["slot"].to_numpy() == row)
            for j in at:
                if cands["item"].iloc[j] in clicked_items or cand_score[j] == row_score[row]:
                    continue
                num += cands["propensity"].iloc[j] * (cand_score[j] > row_score[row]) / click.sum()
                den += cands["propensity"].iloc[j] / click.sum()
    assert value == pytest.approx(num / den, rel=1e-12)


# -- what CD computes and for which banners ------------------------------------------------
@pytest.mark.parametrize("two_stage", [False, True])
def test_cd_excludes_every_banner_a_deterministic_ranker_ordered(two_stage):
    """A deterministic logging ranker: every re-drawn ordering is the one displayed."""
    from offeval_simulation import Environment

    env = Environment(seed=0, n_contexts=500, n_items=100, n_candidates=8, n_positions=4)
    stage = {"generator_size": 6} if two_stage else {}
    model = env.candidate_policies(2)[1]
    frames = {}
    for share in (0.0, 0.2):
        logger = env.policy(
            "logging", noise=1.0, temperature=None, mix_uniform=share, seed=10_000, **stage
        )
        frames[share] = env.simulate(logger, 4_000, seed=1).frame
    # no shuffled share: CD has nothing to go on, and says why
    log = InteractionLog.from_frame(frames[0.0])
    clicks = log.frame.groupby("trajectory")["reward"].sum()
    usable = int(((clicks > 0) & (clicks < env.n_positions)).sum())
    for cd in (
        CounterfactualDisagreement(score_scale="logit"),
        CounterfactualDisagreement(logging="plackett_luce", score_scale="logit"),
        SampledCounterfactualDisagreement(score_scale="logit"),
    ):
        est = evaluate(log, [model], [cd]).estimate(model.name)
        assert est.n_units == 0 and np.isnan(est.value), cd.label
        assert est.excluded["deterministic_logging"] == usable > 1_000
    # a shuffled share: CD uses the shuffled banners only, and equals CD on them
    log = InteractionLog.from_frame(frames[0.2])
    per_banner = log.frame.groupby("trajectory").agg(
        clicks=("reward", "sum"), s=("shuffled", "first")
    )
    usable = (per_banner["clicks"] > 0) & (per_banner["clicks"] < env.n_positions)
    both = evaluate(
        log,
        [model],
        [CounterfactualDisagreement(score_scale="logit"), CounterfactualDisagreement("shuffled")],
    )
    everything, shuffled = (
        both.estimate(model.name, "cd"),
        both.estimate(model.name, "cd(banners=shuffled)"),
    )
    assert everything.excluded["deterministic_logging"] == int((usable & ~per_banner["s"]).sum())
    assert everything.n_units == shuffled.n_units == int((usable & per_banner["s"]).sum())
    assert everything.value == pytest.approx(shuffled.value, rel=1e-12)


def test_the_deterministic_flag_is_per_banner_and_checked():
    frame = banners([3, 3, 2], [1, 2, 1], [0.3, 0.2, 0.1, 0.0, 0.4, 0.5, 1.0, 0.0]).frame
    model = [RerankPolicy("model")]
    flagged = frame.assign(logging_deterministic=[True] * 3 + [False] * 5)
    cd = CounterfactualDisagreement(score_scale="logit")
    est = evaluate(InteractionLog.from_frame(flagged), model, [cd])
    one = est.estimate("model")
    assert one.excluded == {"deterministic_logging": 1} and one.n_units == 2
    rest = evaluate(InteractionLog.from_frame(frame[frame.trajectory > 0]), model, [cd])
    assert one.value == pytest.approx(rest.estimate("model").value, rel=1e-12)
    uniform = evaluate(
        InteractionLog.from_frame(flagged), model, [CounterfactualDisagreement(logging="uniform")]
    )
    assert uniform.estimate("model").n_units == 3  # stated orderings do not read the flag
    mixed = frame.assign(logging_deterministic=[True, False] + [False] * 6)
    with pytest.raises(ColumnError, match="logging_deterministic"):
        evaluate(InteractionLog.from_frame(mixed), model, [cd])


@pytest.mark.parametrize("generator_size", [None, 5])
def test_the_logged_logits_and_pool_give_the_ordering_the_simulator_draws(generator_size):
    """Calibration: P(the displayed top logit is at rank 1) predicted by q vs observed.

    Given the displayed set (and, for two stages, the generator's draw), the
    logged logits and pool must give the distribution the simulator sampled
    the order from; z from the per-banner differences, within 4.
    """
    from offeval_simulation import Environment

    env = Environment(seed=5, n_contexts=300, n_items=60, n_candidates=8, n_positions=4)
    policy = env.policy(
        "logging", noise=1.0, temperature=0.7, seed=3, generator_size=generator_size
    )
    frame = env.simulate(policy, 20_000, seed=4).frame
    logits = frame["logging_score"].to_numpy().reshape(-1, 4)
    rest = frame["logging_pool"].to_numpy().reshape(-1, 4)[:, 0]
    top = logits.argmax(axis=1)
    q = forward_backward(logits, rest)
    gap = (top == 0) - q[np.arange(len(q)), 0, top]
    assert abs(gap.mean()) < 4 * gap.std(ddof=1) / np.sqrt(len(gap))


def test_cd_on_a_subset_computes_only_for_its_banners():
    rng = np.random.default_rng(8)
    count = 400
    shuffled = np.arange(count) % 4 == 0
    log = banners(
        [4] * count,
        rng.integers(0, 5, count),
        rng.normal(size=4 * count),
        rng.normal(size=4 * count),
        shuffled,
    )
    frame = log.frame
    # a pool that breaks the rules on every non-shuffled banner: only they would read it
    broken = frame.assign(logging_pool=np.where(frame["shuffled"], 0.0, rng.normal(size=4 * count)))
    model = [RerankPolicy("model")]
    on_shuffled = [
        CounterfactualDisagreement("shuffled"),
        CounterfactualDisagreement("shuffled", "uniform"),
    ]
    ev = evaluate(InteractionLog.from_frame(broken), model, on_shuffled)
    auto, uniform = (ev.estimate("model", cd.label) for cd in on_shuffled)
    assert auto.value == uniform.value and auto.diagnostics == uniform.diagnostics
    with pytest.raises(ColumnError, match="logging_pool"):
        evaluate(
            InteractionLog.from_frame(broken),
            model,
            [CounterfactualDisagreement("non_shuffled", score_scale="logit")],
        )
    # no pool column: the assumption is counted on the banners computed with it, and only those
    subsets = ("shuffled", "non_shuffled", "all")
    with pytest.warns(OffevalWarning, match="no column 'logging_pool'"):
        ev = evaluate(
            log, model, [CounterfactualDisagreement(b, score_scale="logit") for b in subsets]
        )
    assert "pool_assumed" not in ev.estimate("model", "cd(banners=shuffled)").diagnostics
    placed = ev.estimate("model", "cd(banners=non_shuffled)")
    assert placed.diagnostics["pool_assumed"] == placed.n_units > 0
    assert ev.estimate("model", "cd").diagnostics["pool_assumed"] == placed.n_units
