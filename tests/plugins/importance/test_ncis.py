"""The IS family: formulas against numpy, identities, and statistics on the simulator."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from oracles import delta_se, unit_sums

from offeval import ConfigurationError, InteractionLog, OffevalWarning, evaluate
from offeval_importance import (
    CIS,
    IPS,
    IS,
    NCIS,
    SNIPS,
    BetaIPS,
    ClippedIPS,
    PiecewiseNCIS,
    PointwiseNCIS,
)


def weights(log, policy):
    return policy.probabilities(log.frame) / log.column("propensity")


def test_is_cis_ncis_match_their_formulas(bandit):
    log, target, _ = bandit
    w, r = weights(log, target), log.column("reward")
    ev = evaluate(log, [target], [IS(), CIS(cap=2.5), NCIS(cap=2.5), NCIS(cap=float("inf"))])
    capped = np.minimum(w, 2.5)
    assert ev.estimate("target", "is").value == pytest.approx(np.mean(r * w), rel=1e-12)
    assert ev.estimate("target", "cis(cap=2.5)").value == pytest.approx(np.mean(r * capped))
    ncis = np.sum(r * capped) / np.sum(capped)
    assert ev.estimate("target", "ncis(cap=2.5)").value == pytest.approx(ncis, rel=1e-12)
    snips = np.sum(r * w) / np.sum(w)
    assert ev.estimate("target", "ncis(cap=inf)").value == pytest.approx(snips, rel=1e-12)


def test_is_se_is_the_cluster_robust_one(bandit):
    log, target, _ = bandit
    y = unit_sums(log, log.column("reward") * weights(log, target))
    est = evaluate(log, [target], [IS()]).estimate("target")
    # two rows per trajectory: value = mean(Y) / 2, se = sd(Y) / sqrt(n) / 2
    assert est.value == pytest.approx(y.mean() / 2, rel=1e-12)
    assert est.se == pytest.approx(y.std(ddof=1) / np.sqrt(y.size) / 2, rel=1e-9)


def test_capping_only_lowers_cis_for_nonnegative_rewards(bandit):
    log, target, _ = bandit
    caps = [0.5, 1, 2, 4, float("inf")]
    ev = evaluate(log, [target], [CIS(cap=c) for c in caps])
    values = [ev.estimate("target", e).value for e in ev.estimators]
    assert values == sorted(values)
    assert values[-1] == pytest.approx(ev.estimate("target", "cis(cap=inf)").value)


def test_weight_diagnostics(bandit):
    log, target, _ = bandit
    w = weights(log, target)
    diag = evaluate(log, [target], [NCIS(cap=2)]).estimate("target").diagnostics
    assert diag["ess"] == pytest.approx(w.sum() ** 2 / (w**2).sum())
    assert diag["max_weight"] == pytest.approx(w.max())
    assert diag["clipped_share"] == pytest.approx(np.mean(w > 2))
    assert diag["mean_weight"] == pytest.approx(w.mean())
    assert diag["support_violations"] == 0


def test_pointwise_without_cap_is_is_and_with_cap_matches_oracle(bandit):
    log, target, _ = bandit
    ev = evaluate(log, [target], [IS(), PointwiseNCIS(cap=float("inf")), PointwiseNCIS(cap=1.5)])
    is_value = ev.estimate("target", "is").value
    assert ev.estimate("target", "pointwise_ncis(cap=inf)").value == pytest.approx(is_value)
    cands = log.candidates
    mass = np.minimum(1.5 * cands["propensity"], cands["target"]).to_numpy()
    normaliser = np.bincount(cands["slot"], weights=mass)
    w, r = weights(log, target), log.column("reward")
    expected = np.mean(r * np.minimum(w, 1.5) / normaliser)
    assert ev.estimate("target", "pointwise_ncis(cap=1.5)").value == pytest.approx(expected)


def test_piecewise_matches_oracle_value_and_delta_se(bandit):
    log, target, _ = bandit
    capped = np.minimum(weights(log, target), 2.0)
    r, g = log.column("reward"), log.column("group")
    cols = []
    for group in (0, 1):
        m = g == group
        cols += [
            unit_sums(log, r * capped * m),
            unit_sums(log, capped * m),
            unit_sums(log, 1.0 * m),
        ]
    units = np.column_stack(cols)

    def value(m):
        n = m[2] + m[5]
        return m[2] / n * m[0] / m[1] + m[5] / n * m[3] / m[4]

    expected, expected_se = delta_se(value, units)
    est = evaluate(log, [target], [PiecewiseNCIS(cap=2.0)]).estimate("target")
    assert est.value == pytest.approx(expected, rel=1e-12)
    assert est.se == pytest.approx(expected_se, rel=1e-6)


def test_piecewise_with_one_group_is_ncis(bandit):
    log, target, _ = bandit
    one = log.with_columns(segment=np.zeros(log.n_rows))
    ev = evaluate(one, [target], [PiecewiseNCIS(cap=2.0, by="segment"), NCIS(cap=2.0)])
    a, b = (ev.estimate("target", e) for e in ev.estimators)
    assert a.value == pytest.approx(b.value, rel=1e-12) and a.se == pytest.approx(b.se, rel=1e-9)


def test_piecewise_group_limit(bandit):
    log, target, _ = bandit
    many = log.with_columns(segment=np.arange(log.n_rows) % 100)
    with pytest.raises(ConfigurationError, match="100 groups.*max_groups=64"):
        evaluate(many, [target], [PiecewiseNCIS(by="segment")])


def test_beta_ips_optimal_beta_value_and_se(bandit):
    log, target, _ = bandit
    w, r = weights(log, target), log.column("reward")
    y, c, n = unit_sums(log, r * w), unit_sums(log, w - 1), unit_sums(log, np.ones(log.n_rows))
    beta = np.cov(y, c)[0, 1] / np.var(c, ddof=1)
    expected = (np.mean(y) - beta * np.mean(c)) / np.mean(n)
    _, expected_se = delta_se(
        lambda m: (m[0] - beta * (m[1] - m[2])) / m[2],
        np.column_stack([y, unit_sums(log, w), n]),
    )
    ev = evaluate(log, [target], [BetaIPS(), BetaIPS(beta=0.0), IS()])
    est = ev.estimate("target", "beta_ips(beta=None)")
    assert est.value == pytest.approx(expected, rel=1e-9)
    assert est.se == pytest.approx(expected_se, rel=1e-6)
    assert est.diagnostics["fitted_beta"] == pytest.approx(beta, rel=1e-9)
    assert ev.estimate("target", "beta_ips(beta=0)").diagnostics["fitted_beta"] == 0.0
    assert ev.estimate("target", "beta_ips(beta=0)").value == pytest.approx(
        ev.estimate("target", "is").value, rel=1e-12
    )


def test_beta_ips_se_bounded_by_snips(env):
    """beta* minimises Var(Y - beta W), and SNIPS is the baseline beta = R scaled by 1/mean(W).

    Hence se(beta*-IPS) <= se(SNIPS) * mean(W) / mean(N), exactly, on any log.
    """
    log = env.simulate(env.logging_policy(), 20_000, seed=5)
    policies = env.candidate_policies(6)
    ev = evaluate(log, policies, [BetaIPS(), NCIS(cap=float("inf"))])
    for p in policies:
        beta = ev.estimate(p.name, "beta_ips(beta=None)")
        snips = ev.estimate(p.name, "ncis(cap=inf)")
        assert beta.se <= snips.se * snips.diagnostics["mean_weight"] * (1 + 1e-9)


def test_invalid_cap():
    with pytest.raises(ConfigurationError, match="cap must be a positive number"):
        NCIS(cap=0).contribute(None)


def replicate(env, policies, estimators, n, reps):
    truth = np.array([env.online_value(p) for p in policies])
    values = np.empty((reps, len(policies), len(estimators)))
    covered = np.empty_like(values, dtype=bool)
    logging = env.logging_policy()
    for rep in range(reps):
        ev = evaluate(env.simulate(logging, n, seed=1000 + rep), policies, estimators)
        for i, p in enumerate(policies):
            for j, label in enumerate(ev.estimators):
                est = ev.estimate(p.name, label)
                values[rep, i, j] = est.value
                covered[rep, i, j] = est.ci_low <= truth[i] <= est.ci_high
    return truth, values, covered


@pytest.fixture(scope="module")
def replications(env):
    """400 independent logs; IS and beta*-IPS of a stochastic and a deterministic target."""
    policies = [env.candidate_policies(12)[k] for k in (2, 9)]
    return replicate(env, policies, [IS(), BetaIPS(), CIS(cap=3)], n=10_000, reps=400)


def bias_z(replications, estimator: int) -> np.ndarray:
    """How many standard errors one estimator's mean over the logs lies above each truth."""
    truth, values, _ = replications
    reps = values[:, :, estimator]
    return (reps.mean(axis=0) - truth) / (reps.std(axis=0, ddof=1) / np.sqrt(len(reps)))


@pytest.mark.slow
def test_is_is_unbiased_on_the_simulator(replications):
    z = bias_z(replications, 0)
    assert (abs(z) < 3).all(), z


@pytest.mark.slow
def test_95_percent_intervals_cover_the_truth(replications):
    _, _, covered = replications
    coverage = covered[:, :, :2].mean(axis=0)
    assert ((coverage >= 0.92) & (coverage <= 0.98)).all(), coverage


@pytest.mark.slow
def test_capping_biases_cis_downwards(replications):
    z = bias_z(replications, 2)
    assert (z < -3).all(), z


def test_obp_names_are_the_same_estimators(bandit):
    log, target, _ = bandit
    ev = evaluate(
        log, [target], [IS(), IPS(), CIS(cap=2.5), ClippedIPS(cap=2.5), NCIS(cap=np.inf), SNIPS()]
    )
    pairs = [("is", "ips"), ("cis(cap=2.5)", "clipped_ips(cap=2.5)"), ("ncis(cap=inf)", "snips")]
    for ours, obp in pairs:
        a, b = ev.estimate("target", ours), ev.estimate("target", obp)
        assert (a.value, a.se) == (b.value, b.se)


def test_mean_weight_far_from_one_warns_and_is_reported(bandit):
    """Halved propensities double every weight: the mean weight is 2, far beyond 3 SE."""
    log, target, _ = bandit
    w = weights(log, target)
    y, n = unit_sums(log, w), unit_sums(log, np.ones(log.n_rows))
    mean = y.sum() / n.sum()
    se = np.sqrt(((y - mean * n) ** 2).sum()) / n.sum()  # clustered by trajectory
    with warnings.catch_warnings():
        warnings.simplefilter("error", OffevalWarning)
        est = evaluate(log, [target], [IS()]).estimate("target")
    assert est.diagnostics["mean_weight"] == pytest.approx(mean, rel=1e-12)
    assert est.diagnostics["mean_weight_se"] == pytest.approx(se, rel=1e-9)
    assert abs(est.diagnostics["mean_weight_z"]) < 3
    frame = log.frame.assign(propensity=log.frame["propensity"] / 2)
    wrong = InteractionLog.from_frame(frame)
    with pytest.warns(OffevalWarning, match="mean importance weight is .*propensities"):
        doubled = evaluate(wrong, [target], [IS()]).estimate("target")
    assert doubled.diagnostics["mean_weight"] == pytest.approx(2 * mean, rel=1e-12)
