"""Disagreement plugin: rank probabilities given the displayed set, PD and CD (seed 001)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from oracles import rank_probabilities_by_enumeration

from offeval import InteractionLog, RerankPolicy, evaluate
from offeval_disagreement import (
    CounterfactualDisagreement,
    PairwiseDisagreement,
    SampledCounterfactualDisagreement,
    SampledPairwiseDisagreement,
    forward_backward,
    monte_carlo,
    subset_dp,
)
from offeval_disagreement.given_set import rank_rows


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
    for b in range(len(logits)):
        exact = rank_probabilities_by_enumeration(logits[b], rest[b])
        np.testing.assert_allclose(fast[b], exact, rtol=0, atol=1e-12)
        np.testing.assert_allclose(reference[b], exact, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.sum(axis=1), 1.0, atol=1e-12)  # each product: some rank
    np.testing.assert_allclose(fast.sum(axis=2), 1.0, atol=1e-12)  # each rank: some product


def test_rank_probabilities_do_not_underflow_with_extreme_logits():
    logits = np.array([[900.0, -900.0, 0.0, 300.0, -300.0, 5.0, 1e-3, -1e-3, 700.0, -700.0]])
    q = forward_backward(logits, np.array([800.0]))
    assert np.isfinite(q).all()
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(q.sum(axis=2), 1.0, atol=1e-12)
    assert q[0, 0, 0] == pytest.approx(1.0)  # the dominant product is drawn first


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
    from offeval import ranking

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
        log, [RerankPolicy("model")], [CounterfactualDisagreement("all", "plackett_luce")]
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
        CounterfactualDisagreement(),
        SampledPairwiseDisagreement(draws=4, seed=1),
        SampledCounterfactualDisagreement(draws=4, seed=1),
    ]
    ev = evaluate(log, [RerankPolicy("model")], estimators, chunk_rows=1_000)
    for exact, sampled in (("pd", "pd_sampled"), ("cd", "cd_sampled")):
        a, b = ev.estimate("model", exact), ev.estimate("model", sampled)
        assert abs(a.value - b.value) < 4 * b.se, (exact, a.value, b.value, b.se)
    again = evaluate(log, [RerankPolicy("model")], estimators[2:], chunk_rows=333)
    assert again.estimate("model", "cd_sampled").value == ev.estimate("model", "cd_sampled").value


def test_figure3_on_the_simulator_cd_tracks_shuffled_pd_and_pd_does_not():
    from offeval_disagreement.analyses import BIASED, COUNTERFACTUAL, figure3

    result = figure3(n_banners=40_000, n_models=30, seed=1)
    r = result.correlations["pearson"]
    assert r[COUNTERFACTUAL] > 0.9 and r[BIASED] < 0.8 and r[COUNTERFACTUAL] > r[BIASED]
    low, high = result.variance_ratio[1:]
    assert 1.2 < result.variance_ratio[0] < 4 and low < result.variance_ratio[0] < high
    # CD on the non-shuffled banners is worth more shuffled banners than the log has
    assert result.shuffled_needed > result.banners["shuffled"]


def test_cd_runs_from_the_command_line_on_a_banner_file(tmp_path, capsys):
    from offeval.cli import main

    rng = np.random.default_rng(4)
    sizes = rng.integers(2, 7, 400)
    total = int(sizes.sum())
    log = banners(sizes, rng.integers(0, 4, 400), rng.normal(size=total), rng.normal(size=total))
    frame = log.frame.rename(columns={"trajectory": "banner", "logging_score": "logit"})
    frame = frame.assign(other=rng.normal(size=total)).drop(columns="context")
    path = tmp_path / "banners.csv"
    frame.to_csv(path, index=False)
    args = ["evaluate", str(path), "--map", "trajectory=banner", "--map", "logging_score=logit"]
    args += ["--rerank", "model=model", "--rerank", "other=other", "--estimator", "cd"]
    args += ["--estimator", "pd", "--quiet", "--out", str(tmp_path / "out")]
    assert main(args) == 0
    table = pd.read_csv(tmp_path / "out" / "estimates.csv")
    direct = evaluate(log, [RerankPolicy("model")], [CounterfactualDisagreement()])
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
