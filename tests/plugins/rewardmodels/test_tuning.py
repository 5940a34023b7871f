"""Clipped DR, sub-Gaussian DR and the tuning estimators by brute force: plain numpy on a small
log of multi-row trajectories (cluster-robust standard errors), obp's SLOPE loop written out,
obp's estimated MSE scores from offeval's own candidate estimates, and bad inputs in one line."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from cli_checks import one_line_error
from hypothesis import given, settings
from hypothesis import strategies as st
from obp_cases import number, pinned, synthetic
from obp_inputs import message
from scipy import stats as scipy_stats

from offeval import ColumnPolicy, InteractionLog, evaluate, get_registry
from offeval.cli.shell import main
from offeval_importance import tuning_rules as tuning
from offeval_rewardmodels.estimators import DR, SubGaussianDR
from offeval_rewardmodels.tuning import DROSTuning, DRTuning, SubGaussianDRTuning, SwitchDRTuning

K = 3  # candidates per slot


def small_log(seed: int = 3, n: int = 40) -> tuple[InteractionLog, dict[str, np.ndarray]]:
    """n trajectories of 1-3 slots, K candidates each; the log and its per-row quantities."""
    rng = np.random.default_rng(seed)
    slots = rng.integers(1, 4, size=n)
    traj = np.repeat(np.arange(n), slots)
    position = np.concatenate([np.arange(1, s + 1) for s in slots])
    m = traj.size
    mu = rng.dirichlet(np.ones(K), size=m)
    pi = rng.dirichlet(np.full(K, 0.3), size=m)
    q = rng.uniform(size=(m, K))
    action = np.array([rng.choice(K, p=p) for p in mu])
    reward = rng.binomial(1, 0.2 + 0.6 * q[np.arange(m), action]).astype(float)
    rows = np.arange(m)
    frame = pd.DataFrame(
        {
            "trajectory": traj,
            "position": position,
            "item": action,
            "reward": reward,
            "propensity": mu[rows, action],
            "target": pi[rows, action],
            "reward_model": q[rows, action],
        }
    )
    candidates = pd.DataFrame(
        {
            "trajectory": np.repeat(traj, K),
            "position": np.repeat(position, K),
            "item": np.tile(np.arange(K), m),
            "propensity": mu.ravel(),
            "target": pi.ravel(),
            "reward_model": q.ravel(),
        }
    )
    log = InteractionLog.from_frame(frame, candidates=candidates)
    quantities = {
        "traj": traj,
        "w": pi[rows, action] / mu[rows, action],
        "q_pi": (pi * q).sum(axis=1),
        "residual": reward - q[rows, action],
    }
    return log, quantities


def cluster_estimate(values: np.ndarray, traj: np.ndarray) -> tuple[float, float]:
    """Per-row mean of ``values`` and its cluster-robust (by trajectory) delta-method se."""
    y = np.bincount(traj, weights=values)
    r = np.bincount(traj).astype(float)
    value = y.sum() / r.sum()
    n = y.size
    u = (y - value * r) / r.mean()  # the ratio's influence per trajectory
    return value, float(np.sqrt(u.var(ddof=1) / n))


def rows_of(quantities: dict, weight: np.ndarray) -> np.ndarray:
    return quantities["q_pi"] + weight * quantities["residual"]


CLIP_GRID = [0.5, 1.0, 2.0, 4.0, math.inf]


def test_the_small_log_clips_some_rows_and_not_others():
    _, q = small_log()
    assert 0 < (q["w"] > 1.0).mean() < 1
    assert len(set(np.bincount(q["traj"]))) == 3  # trajectories of 1, 2 and 3 rows


def test_clipped_and_subgaussian_dr_by_brute_force():
    log, q = small_log()
    w = q["w"]
    estimators = {
        **{("clip", lam): DR(lambda_=lam) for lam in CLIP_GRID},
        **{("sg", lam): SubGaussianDR(lambda_=lam) for lam in (0.0, 0.3, 1.0)},
    }
    ev = evaluate(log, [ColumnPolicy("target")], list(estimators.values()))
    for (kind, lam), estimator in estimators.items():
        weight = np.minimum(w, lam) if kind == "clip" else w / (1 - lam + lam * w)
        value, se = cluster_estimate(rows_of(q, weight), q["traj"])
        est = ev.estimate("target", estimator.label)
        assert est.value == pytest.approx(value, rel=1e-12), estimator.label
        assert est.se == pytest.approx(se, rel=1e-9), estimator.label
    clipped = ev.estimate("target", "dr(lambda_=1)").diagnostics["clipped_share"]
    assert clipped == pytest.approx((w > 1).mean())


def obp_slope(values: list[float], widths: list[float]) -> int:
    """obp 0.5.7's BaseOffPolicyEstimatorTuning._tune_hyperparam_with_slope, written out on
    its per-candidate estimates and widths (numpy's argsort of <= 16 floats is stable)."""
    c = math.sqrt(6) - 1
    order = sorted(range(len(widths)), key=lambda i: widths[i])[::-1]
    kept_values, kept_widths = [], []
    for i, idx in enumerate(order):
        if kept_values and not all(
            abs(v - values[idx]) <= widths[idx] + c * w
            for v, w in zip(kept_values, kept_widths, strict=True)
        ):
            return order[i - 1]
        kept_values.append(values[idx])
        kept_widths.append(widths[idx])
    return order[-1]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.1, 0.2, 0.25, 0.5, 1.0]),  # few values: ties happen
            st.sampled_from([0.01, 0.05, 0.1, 0.2]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_slope_is_obps_loop(pairs):
    values, widths = [p[0] for p in pairs], [p[1] for p in pairs]
    assert tuning.slope(values, widths) == obp_slope(values, widths)


def test_tuned_choice_by_brute_force_on_multirow_trajectories():
    """The chosen clip is the one obp's rules choose from numpy's per-candidate estimates and
    cluster-robust ses (t quantile from scipy.stats, bias from the rows)."""
    log, q = small_log()
    w, traj = q["w"], q["traj"]
    n_units, n_rows = np.unique(traj).size, w.size
    grid = sorted(CLIP_GRID, reverse=True)  # obp's order for clips
    values, ses, biases = [], [], []
    for lam in grid:
        value, se = cluster_estimate(rows_of(q, np.minimum(w, lam)), traj)
        values.append(value)
        ses.append(se)
        biases.append(np.mean((w - np.minimum(w, lam)) * q["residual"]))
    widths = [scipy_stats.t(n_units - 1).ppf(1 - 0.1) * se for se in ses]
    log2 = math.log(2 / 0.1)
    slack = math.sqrt(2 * np.mean(w**2) * log2 / n_rows) + 2 * w.max() * log2 / (3 * n_rows)
    mse = {
        bound: [
            se**2 * (n_units - 1) / n_units + (abs(b) + (slack if bound else 0)) ** 2
            for se, b in zip(ses, biases, strict=True)
        ]
        for bound in (False, True)
    }
    expected = {
        ("slope", True): grid[obp_slope(values, widths)],
        ("mse", False): grid[int(np.argmin(mse[False]))],
    }
    estimators = {
        (m, b): DRTuning(lambdas=CLIP_GRID, tuning_method=m, use_bias_upper_bound=b)
        for m, b in expected
    }
    ev = evaluate(log, [ColumnPolicy("target")], list(estimators.values()))
    for key, estimator in estimators.items():
        est = ev.estimate("target", estimator.label)
        chosen = est.diagnostics["fitted_lambda_"]
        assert chosen == expected[key], key
        value, se = cluster_estimate(rows_of(q, np.minimum(w, chosen)), traj)
        assert est.value == pytest.approx(value, rel=1e-12)
        assert est.se == pytest.approx(se, rel=1e-9)  # the chosen candidate's own se
    # the scores of the bound's rule, with the log's true largest weight, are numpy's
    bound = tuning.WeightBound(float(np.mean(w**2)), float(w.max()), float(n_rows))
    scores = tuning.estimated_mse(np.array(ses), n_units, np.array(biases), bound, 0.1)
    np.testing.assert_allclose(scores, mse[True], rtol=1e-10)


def test_estimated_mse_scores_are_obps():
    """obp's estimated MSE of every clip, from offeval's candidate estimates and ses (the bias
    of clip lambda is dr - dr(lambda_)), with the log's largest weight: obp's numbers to 1e-10."""
    log, policies = synthetic()
    data = pinned()["synthetic"]["estimates"]
    for policy in policies:
        entries = [
            e
            for e in data[policy.name]["tuning"]
            if e["key"] == "dr_tuning" and e["tuning_method"] == "mse"
        ]
        grid = sorted({number(v) for e in entries for v in e["lambdas"]})
        ev = evaluate(log, [policy], [DR(lambda_=lam) for lam in grid])
        est = {lam: ev.estimate(policy.name, DR(lambda_=lam).label) for lam in grid}
        w = policy.probabilities(log.frame) / log.frame["propensity"].to_numpy()
        n = w.size
        bound = tuning.WeightBound(float(np.mean(w**2)), float(w.max()), float(n))
        for entry in entries:
            lams = [number(v) for v in entry["lambdas"]]
            ses = np.array([est[lam].se for lam in lams])
            biases = np.array([est[math.inf].value - est[lam].value for lam in lams])
            use = bound if entry["use_bias_upper_bound"] else None
            scores = tuning.estimated_mse(ses, n, biases, use, entry["delta"])
            scored = {number(k): v for k, v in entry["estimated_mse"].items()}
            theirs = [scored[lam] for lam in lams]
            np.testing.assert_allclose(scores, theirs, rtol=1e-10)


def test_default_grids_and_labels():
    assert DRTuning().lambdas == (10, 50, 100, 500, 1000, 5000, 10000, math.inf)
    assert SubGaussianDRTuning().lambdas == (0.005, 0.01, 0.05, 0.1, 0.5)
    assert DRTuning().label == "dr_tuning"
    assert DRTuning(lambdas=[5, 1, math.inf]).label == "dr_tuning(lambdas=[5, 1, inf])"
    assert DRTuning(lambdas=[5, 1, math.inf]).grid == (math.inf, 5, 1)  # obp sorts clips down
    assert DROSTuning(lambdas=[5, 1, math.inf]).grid == (1, 5, math.inf)  # and shrinkage up
    spec = "switch_dr_tuning:lambdas=[1, 5, inf],tuning_method=mse"
    built = get_registry().create_from_spec("estimator", spec)
    assert isinstance(built, SwitchDRTuning)
    assert built.lambdas == (1, 5, math.inf)


@pytest.mark.parametrize(
    "build, words",
    [
        (lambda: DR(lambda_=-1), "lambda_ must be"),
        (lambda: DR(lambda_=float("nan")), "lambda_ must be"),
        (lambda: SubGaussianDR(lambda_=1.5), "lambda_ must be a number in [0, 1]"),
        (lambda: DRTuning(lambdas=[]), "lambdas must be a non-empty list"),
        (lambda: DRTuning(lambdas=[1, -2]), "each of lambdas must be"),
        (lambda: DRTuning(lambdas=[1, 1]), "must not repeat a value, got 1 twice"),
        (lambda: DRTuning(lambdas="[1, x]"), "each of lambdas must be a number"),
        (lambda: SubGaussianDRTuning(lambdas=[0.1, 2]), "each of lambdas must be"),
        (lambda: DRTuning(tuning_method="slop"), "tuning_method must be one of"),
        (lambda: DRTuning(delta=0), "delta must be a number in (0, 1)"),
        (lambda: DRTuning(delta=1.5), "delta must be a number in (0, 1)"),
        (lambda: DRTuning(use_bias_upper_bound="yes"), "use_bias_upper_bound must be True"),
    ],
)
def test_bad_parameters_are_one_line_naming_them(build, words):
    assert words in message(build)


def test_the_command_line_runs_tuning_and_answers_a_bad_grid_in_one_line(tmp_path, capsys):
    log = pd.DataFrame(
        {
            "trajectory": [1, 2, 3, 4],
            "item": ["a", "b", "a", "c"],
            "position": 1,
            "reward": [1, 0, 1, 0],
            "propensity": [0.5, 0.25, 0.5, 0.25],
            "target": [0.2, 0.7, 0.2, 0.1],
        }
    )
    path = tmp_path / "log.csv"
    log.to_csv(path, index=False)
    base = ["evaluate", path, "--quiet", "--policy", "t=target"]
    out = tmp_path / "out"
    spec = "ips_tuning:lambdas=[0.5, 1, inf]"
    assert main([str(a) for a in [*base, "--estimator", spec, "--out", out]]) == 0
    row = pd.read_csv(out / "estimates.csv").iloc[0]
    assert row["estimator"] == "ips_tuning(lambdas=[0.5, 1, inf])"
    assert row["diag_fitted_lambda_"] in (0.5, 1.0, math.inf)  # the chosen clip, reported
    one_line_error(
        capsys,
        [*base, "--estimator", "ips_tuning:lambdas=[1, x]"],
        r"each of lambdas must be a number >= 0 or inf, got 'x'",
    )
    one_line_error(
        capsys,
        [*base, "--estimator", "dr_tuning:tuning_method=slop"],
        r"tuning_method must be one of .*did you mean slope",
    )
