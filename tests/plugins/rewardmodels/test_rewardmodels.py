"""Reward-model estimators: obp's formulas by hand, identities, the simulator, bad inputs."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from obp_inputs import one_line
from oracles import delta_se, unit_sums

from offeval import (
    ColumnError,
    ColumnPolicy,
    ConfigurationError,
    InteractionLog,
    OffevalError,
    evaluate,
)
from offeval.testing import check_estimator
from offeval_importance import IS, NCIS
from offeval_obp import from_obp, from_obp_rewards
from offeval_rewardmodels import DM, DR, DROS, SNDR, SwitchDR, fit_reward_model, item_position_means
from offeval_simulation import Environment

# -- a hand-made bandit: six trajectories, one slot each, three candidate items ------------
MU = np.array(
    [
        [0.5, 0.3, 0.2],
        [0.2, 0.5, 0.3],
        [0.6, 0.2, 0.2],
        [0.1, 0.1, 0.8],
        [0.3, 0.3, 0.4],
        [0.25, 0.25, 0.5],
    ]
)
PI = np.array(
    [
        [0.1, 0.3, 0.6],
        [0.7, 0.2, 0.1],
        [0.0, 0.5, 0.5],
        [0.4, 0.4, 0.2],
        [1.0, 0.0, 0.0],
        [0.2, 0.3, 0.5],
    ]
)
QHAT = np.array(
    [
        [0.2, 0.4, 0.6],
        [0.1, 0.5, 0.3],
        [0.3, 0.3, 0.9],
        [0.8, 0.2, 0.4],
        [0.5, 0.6, 0.7],
        [0.0, 1.0, 0.5],
    ]
)
ACTION = np.array([2, 0, 1, 0, 0, 2])
REWARD = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
TAU, LAMBDA = 3.0, 5.0


def hand_log() -> InteractionLog:
    n, k = PI.shape
    rows = np.arange(n)
    frame = pd.DataFrame(
        {
            "trajectory": rows,
            "item": ACTION,
            "position": 1,
            "reward": REWARD,
            "propensity": MU[rows, ACTION],
            "target": PI[rows, ACTION],
            "reward_model": QHAT[rows, ACTION],
        }
    )
    candidates = pd.DataFrame(
        {
            "trajectory": np.repeat(rows, k),
            "position": 1,
            "item": np.tile(np.arange(k), n),
            "propensity": MU.ravel(),
            "target": PI.ravel(),
            "reward_model": QHAT.ravel(),
        }
    )
    return InteractionLog.from_frame(frame, candidates=candidates)


def obp_round_values() -> dict[str, np.ndarray]:
    """Per-round terms of obp's definitions, written out (obp.ope.estimators, zr-obp 0.5)."""
    rows = np.arange(len(ACTION))
    w = PI[rows, ACTION] / MU[rows, ACTION]
    q_pi = (PI * QHAT).sum(axis=1)  # np.average(q_hat, weights=pi) with sum(pi) = 1
    residual = REWARD - QHAT[rows, ACTION]
    return {
        "dm": q_pi,
        "dr": q_pi + w * residual,
        "sndr": q_pi + w * residual / w.mean(),
        "switch_dr": q_pi + (w <= TAU) * w * residual,
        "dr_os": q_pi + LAMBDA * w / (w**2 + LAMBDA) * residual,
    }


HAND_ESTIMATORS = {
    "dm": DM(),
    "dr": DR(),
    "sndr": SNDR(),
    "switch_dr": SwitchDR(tau=TAU),
    "dr_os": DROS(lambda_=LAMBDA),
}


def test_the_hand_example_switches_some_rows_and_not_others():
    w = PI[np.arange(6), ACTION] / MU[np.arange(6), ACTION]
    assert 0 < (w > TAU).sum() < w.size  # Switch-DR differs from both DM and DR here


def test_values_are_obps_definitions_to_1e12():
    ev = evaluate(hand_log(), [ColumnPolicy("target")], list(HAND_ESTIMATORS.values()))
    for name, terms in obp_round_values().items():
        est = ev.estimate("target", HAND_ESTIMATORS[name].label)
        assert abs(est.value - terms.mean()) < 1e-12, name


def test_standard_errors_are_those_of_the_row_terms():
    ev = evaluate(hand_log(), [ColumnPolicy("target")], list(HAND_ESTIMATORS.values()))
    terms = obp_round_values()
    for name in ("dm", "dr", "switch_dr", "dr_os"):  # means of per-round terms
        se = terms[name].std(ddof=1) / np.sqrt(terms[name].size)
        assert ev.estimate("target", HAND_ESTIMATORS[name].label).se == pytest.approx(se, rel=1e-9)
    # SNDR is a function of three means: its delta-method se, by numerical differentiation
    rows = np.arange(6)
    w = PI[rows, ACTION] / MU[rows, ACTION]
    cols = np.c_[(PI * QHAT).sum(axis=1), w * (REWARD - QHAT[rows, ACTION]), w]
    value, se = delta_se(lambda m: m[0] + m[1] / m[2], cols)
    est = ev.estimate("target", "sndr")
    assert est.value == pytest.approx(value, rel=1e-12)
    assert est.se == pytest.approx(se, rel=1e-6)


def test_obp_itself_agrees_when_installed():
    ope = pytest.importorskip("obp.ope")
    n, k = PI.shape
    kwargs = {
        "reward": REWARD,
        "action": ACTION,
        "position": np.zeros(n, dtype=int),
        "pscore": MU[np.arange(n), ACTION],
        "action_dist": PI[:, :, None],
        "estimated_rewards_by_reg_model": QHAT[:, :, None],
    }
    peers = {
        "dm": ope.DirectMethod(),
        "dr": ope.DoublyRobust(),
        "sndr": ope.SelfNormalizedDoublyRobust(),
        "switch_dr": ope.SwitchDoublyRobust(lambda_=TAU),
        "dr_os": ope.DoublyRobustWithShrinkage(lambda_=LAMBDA),
    }
    ev = evaluate(hand_log(), [ColumnPolicy("target")], list(HAND_ESTIMATORS.values()))
    for name, peer in peers.items():
        theirs = peer.estimate_policy_value(**kwargs)
        assert ev.estimate("target", HAND_ESTIMATORS[name].label).value == pytest.approx(
            theirs, abs=1e-12
        )


def test_obp_shaped_inputs_give_obps_values():
    n = len(ACTION)
    feedback = {"action": ACTION, "reward": REWARD, "pscore": MU[np.arange(n), ACTION], "pi_b": MU}
    log, (policy,) = from_obp(feedback, PI[:, :, None], with_candidates=True)
    log = from_obp_rewards(log, QHAT[:, :, None]).attach(log)
    ev = evaluate(log, [policy], list(HAND_ESTIMATORS.values()))
    for name, terms in obp_round_values().items():
        assert (
            abs(ev.estimate("evaluation", HAND_ESTIMATORS[name].label).value - terms.mean()) < 1e-12
        )


def with_model(log: InteractionLog, table: np.ndarray, name: str = "reward_model"):
    """The log with q̂ = table[position - 1, item] in its rows and candidate table."""
    frame = log.frame.assign(**{name: table[log.frame["position"] - 1, log.frame["item"]]})
    cands = log.candidates
    cands = cands.assign(**{name: table[cands["position"] - 1, cands["item"]]})
    return InteractionLog(frame, log.source_rows, log.unit_starts, cands, log.candidate_source_rows)


def test_trajectories_of_two_rows_are_units(bandit):
    """Row terms summed per trajectory: value and cluster-robust se from unit sums."""
    log, target, _ = bandit
    table = np.array([[0.15, 0.1, 0.35, 0.4], [0.0, 0.2, 0.1, 0.3]])
    log = with_model(log, table)
    cands = log.candidates
    pi_c = target.probabilities(cands)
    q_pi = np.bincount(cands["slot"], pi_c * cands["reward_model"], minlength=log.n_rows)
    w = target.probabilities(log.frame) / log.column("propensity")
    resid = log.column("reward") - log.column("reward_model")
    units = np.c_[
        unit_sums(log, q_pi), unit_sums(log, w * resid), unit_sums(log, w), unit_sums(log, log.ones)
    ]
    ev = evaluate(log, [target], [DR(), SNDR()])
    for label, func in (
        ("dr", lambda m: (m[0] + m[1]) / m[3]),
        ("sndr", lambda m: m[0] / m[3] + m[1] / m[2]),
    ):
        value, se = delta_se(func, units)
        est = ev.estimate("target", label)
        assert est.value == pytest.approx(value, rel=1e-12)
        assert est.se == pytest.approx(se, rel=1e-6)


def test_limits_are_dr_and_dm(bandit):
    log, target, _ = bandit
    log = with_model(log, np.array([[0.15, 0.1, 0.35, 0.4], [0.0, 0.2, 0.1, 0.3]]))
    inf = float("inf")
    estimators = [
        DM(),
        DR(),
        SwitchDR(tau=inf),
        SwitchDR(tau=0),
        DROS(lambda_=inf),
        DROS(lambda_=0),
    ]
    ev = evaluate(log, [target], estimators)
    get = {e.label: ev.estimate("target", e.label) for e in estimators}
    for same, as_ in (
        ("switch_dr(tau=inf)", "dr"),
        ("dr_os(lambda_=inf)", "dr"),
        ("switch_dr(tau=0)", "dm"),
        ("dr_os(lambda_=0)", "dm"),
    ):
        assert get[same].value == pytest.approx(get[as_].value, rel=1e-12, abs=1e-15), same
        assert get[same].se == pytest.approx(get[as_].se, rel=1e-9), same
    assert DR().guarantee == SwitchDR(tau=inf).guarantee == DROS(lambda_=inf).guarantee
    assert SwitchDR().guarantee is None and DROS().guarantee is None and DM().guarantee is None
    assert SNDR().guarantee == "consistent"


class CountingPolicy(ColumnPolicy):
    """Counts the tables it is asked about."""

    def __init__(self, column):
        super().__init__(column)
        self.calls = 0

    def probabilities(self, rows):
        self.calls += 1
        return super().probabilities(rows)


def test_the_model_side_is_computed_once_per_chunk_for_every_estimator():
    policy = CountingPolicy("target")
    estimators = [DM(), DR(), SNDR(), SwitchDR(), DROS()]
    ev = evaluate(hand_log(), [policy], estimators)
    assert policy.calls == 2  # the log's rows once, the candidate table once
    assert len(ev.estimators) == 5


# -- the simulator: propensities exact, reward models right or wrong ------------------------
REPLICATES, SIZE = 150, 1_000


def true_rewards(env, table: pd.DataFrame, context: np.ndarray) -> np.ndarray:
    """E[reward | context, item, position] = e(position) Q(context, item)."""
    quality = np.zeros((env.n_contexts, env.candidates.max() + 1))
    quality[np.arange(env.n_contexts)[:, None], env.candidates] = env.quality
    e = env.examination(np.arange(1, env.n_positions + 1))
    return e[table["position"].to_numpy() - 1] * quality[context, table["item"].to_numpy()]


def with_true_models(env, log: InteractionLog) -> InteractionLog:
    """Columns ``good`` (the true expected reward) and ``wrong`` (e(pos) (1 - Q): reversed)."""
    ctx_c = log.frame["context"].to_numpy()[log.candidates["slot"]]
    good = true_rewards(env, log.frame, log.frame["context"].to_numpy())
    good_c = true_rewards(env, log.candidates, ctx_c)
    e = env.examination(np.arange(1, env.n_positions + 1))
    e_row, e_c = e[log.frame["position"] - 1], e[log.candidates["position"] - 1]
    frame = log.frame.assign(good=good, wrong=e_row - good)
    cands = log.candidates.assign(good=good_c, wrong=e_c - good_c)
    return InteractionLog(frame, log.source_rows, log.unit_starts, cands, log.candidate_source_rows)


@pytest.fixture(scope="module")
def world():
    """The small test world with clicks on about half the examined items: there a reward
    model has the most of IS's variance to remove (binary rewards at rate q leave q(1 - q)
    of q to a perfect model's residuals)."""
    return Environment(
        seed=11, n_contexts=300, n_items=60, n_candidates=5, n_positions=3, click_offset=0.0
    )


@pytest.fixture(scope="module")
def replications(world):
    """REPLICATES independent logs of SIZE trajectories (slices of one simulated log)."""
    env = world
    log = env.simulate(env.logging_policy(), REPLICATES * SIZE, seed=21, with_candidates=True)
    log = with_true_models(env, log)
    policy = env.candidate_policies(4)[-1]
    estimators = [
        IS(),
        NCIS(cap=float("inf")),
        DM(reward_model="wrong"),
        DR(reward_model="wrong"),
        DM(reward_model="good"),
        DR(reward_model="good"),
        SNDR(reward_model="good"),
    ]
    bounds = np.r_[log.unit_starts, log.n_rows]
    values = np.empty((REPLICATES, len(estimators)))
    for r in range(REPLICATES):
        part = log.slice_rows(int(bounds[r * SIZE]), int(bounds[(r + 1) * SIZE]))
        ev = evaluate(part, [policy], estimators)
        values[r] = [ev.estimate(policy.name, e.label).value for e in estimators]
    frame = pd.DataFrame(values, columns=[e.label for e in estimators])
    return env.true_value(policy, "reward_per_impression"), frame


def z_of_mean(values: pd.Series, truth: float) -> float:
    return (values.mean() - truth) / (values.std(ddof=1) / np.sqrt(values.size))


@pytest.mark.slow
def test_dr_is_unbiased_with_a_wrong_model_and_dm_is_not(replications):
    truth, values = replications
    assert abs(z_of_mean(values["dr(reward_model=wrong)"], truth)) < 4
    assert abs(z_of_mean(values["is"], truth)) < 4
    dm = values["dm(reward_model=wrong)"]
    assert abs(z_of_mean(dm, truth)) > 10  # reversed qualities: the model's value is not the truth
    # with the true expected rewards DM is unbiased too (contexts are drawn uniformly)
    assert abs(z_of_mean(values["dm(reward_model=good)"], truth)) < 4


def variance_ratio(a: pd.Series, b: pd.Series) -> tuple[float, float]:
    """Var(a) / Var(b) over paired replicates, and its delta-method standard error."""
    da, db = (a - a.mean()) ** 2, (b - b.mean()) ** 2
    return delta_se(lambda m: m[0] / m[1], np.c_[da, db])


@pytest.mark.slow
def test_dr_with_a_good_model_has_less_variance_than_is(replications):
    _, values = replications
    ratio, se = variance_ratio(values["dr(reward_model=good)"], values["is"])
    assert ratio + 4 * se < 1, (ratio, se)


# -- the kit: promises at the limits, a column of another name --------------------------
@pytest.mark.parametrize(
    "estimator",
    [DROS(lambda_=float("inf"), reward_model="q_hat"), DROS(lambda_=0)],
    ids=lambda e: e.label,
)
def test_the_kit_passes_at_the_limits(estimator):
    check_estimator(estimator)


def test_the_kit_model_is_out_of_fold(env):
    log = env.simulate(env.logging_policy(), 2_000, seed=3, with_candidates=True)
    pred = item_position_means(log)
    r, first = log.column("reward"), pred.folds == 0
    flipped = item_position_means(log.with_columns(reward=np.where(first, 1 - r, r)))
    assert np.array_equal(flipped.rows[first], pred.rows[first])  # own rewards never seen
    assert not np.allclose(flipped.rows[~first], pred.rows[~first])
    halves = item_position_means(log.with_columns(reward=np.where(first, r, 0.5)))
    slot_fold = pred.folds[log.candidates["slot"]]
    assert np.allclose(halves.rows[first], 0.5)
    assert np.allclose(halves.candidates[slot_fold == 0], 0.5)


# -- fit_reward_model ------------------------------------------------------------------
class Memoriser:
    """Predicts 1 for trajectories it was trained on (feature 0), else 0 (not scikit-learn's)."""

    def fit(self, x, y):
        self.seen_ = np.unique(x[:, 0])
        return self

    def predict(self, x):
        return np.isin(x[:, 0], self.seen_).astype(float)


def test_cross_fitting_never_predicts_a_trajectory_with_its_own_model(env):
    log = env.simulate(env.logging_policy(), 500, seed=4, with_candidates=True)
    pred = fit_reward_model(log, Memoriser(), ["trajectory"], folds=4, seed=1)
    assert (pred.rows == 0).all() and (pred.candidates == 0).all()
    folds = pd.Series(pred.folds).groupby(log.frame["trajectory"].to_numpy()).nunique()
    assert (folds == 1).all()  # no trajectory straddles two folds
    assert np.bincount(pred.folds).tolist() == [375] * 4  # 125 trajectories x 3 rows each


def test_predictions_are_each_folds_own_fit():
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(40), 3),
            "x": rng.normal(size=120),
            "reward": rng.random(120),
        },
        index=[f"r{i}" for i in range(120)],
    )
    cands = pd.DataFrame({"trajectory": [0, 5, 39], "x": [0.1, -0.3, 2.0]})
    pred = fit_reward_model(frame, LinearRegression(), ["x"], candidates=cands, folds=3, seed=2)
    x, y = frame[["x"]].to_numpy(), frame["reward"].to_numpy()
    cand_fold = pred.folds[[0, 15, 117]]
    for k in range(3):
        model = LinearRegression().fit(x[pred.folds != k], y[pred.folds != k])
        np.testing.assert_allclose(pred.rows[pred.folds == k], model.predict(x[pred.folds == k]))
        mine = cand_fold == k
        np.testing.assert_allclose(
            pred.candidates[mine], model.predict(cands[["x"]].to_numpy()[mine])
        )


def test_a_classifier_predicts_its_expected_reward(env):
    from sklearn.linear_model import LogisticRegression

    log = env.simulate(env.logging_policy(), 1_000, seed=5, with_candidates=True)

    def features(rows):
        return np.c_[rows["position"], true_rewards(env, rows, rows["context"].to_numpy())]

    pred = fit_reward_model(log, LogisticRegression(), features, folds=2)
    k = pred.folds == 0
    model = LogisticRegression().fit(features(log.frame)[~k], log.column("reward")[~k])
    np.testing.assert_allclose(pred.rows[k], model.predict_proba(features(log.frame)[k])[:, 1])
    dr = evaluate(pred.attach(log), env.candidate_policies(2), [DR()])  # logged == candidate
    assert np.isfinite(dr.estimate("p01").value)


# -- bad inputs ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: SwitchDR(tau=-1), "tau"),
        (lambda: SwitchDR(tau="10"), "tau"),
        (lambda: SwitchDR(tau=True), "tau"),
        (lambda: DROS(lambda_=float("nan")), "lambda_"),
        (lambda: DROS(lambda_=-0.5), "lambda_"),
        (lambda: DR(reward_model=""), "reward_model"),
        (lambda: DR(reward_model=3), "reward_model"),
        (lambda: DM(reward_model="reward"), "reward_model='reward'"),
        (lambda: SNDR(reward_model="propensity"), "reward_model='propensity'"),
    ],
)
def test_bad_parameters_fail_at_construction(build, message):
    with pytest.raises(ConfigurationError, match=message):
        build()


def test_a_missing_log_column_is_named():
    log = hand_log()
    bare = InteractionLog(
        log.frame.drop(columns="reward_model"),
        log.source_rows,
        log.unit_starts,
        log.candidates,
        log.candidate_source_rows,
    )
    with pytest.raises(ColumnError) as exc:
        evaluate(bare, [ColumnPolicy("target")], [DR()])
    assert "'reward_model'" in one_line(exc) and "log" in one_line(exc)
    with pytest.raises(ColumnError, match="'q_hat'"):
        evaluate(log, [ColumnPolicy("target")], [SNDR(reward_model="q_hat")])


def test_a_missing_candidate_column_or_table_is_named():
    log = hand_log()
    no_column = InteractionLog(
        log.frame,
        log.source_rows,
        log.unit_starts,
        log.candidates.drop(columns="reward_model"),
        log.candidate_source_rows,
    )
    with pytest.raises(ColumnError) as exc:
        evaluate(no_column, [ColumnPolicy("target")], [DM()])
    assert "'reward_model'" in one_line(exc) and "candidate table" in one_line(exc)
    no_table = InteractionLog(log.frame, log.source_rows, log.unit_starts)
    with pytest.raises(OffevalError) as exc:
        evaluate(no_table, [ColumnPolicy("target")], [DR()])
    assert "candidate table" in one_line(exc) and "'reward_model'" in one_line(exc)


def test_bad_predictions_are_named_by_row():
    log = hand_log()
    frame = log.frame.assign(reward_model=log.frame["reward_model"].where(log.frame.index != 4))
    nan = InteractionLog(
        frame, log.source_rows, log.unit_starts, log.candidates, log.candidate_source_rows
    )
    with pytest.raises(ColumnError, match=r"'reward_model'.*finite.*rows \[4\]"):
        evaluate(nan, [ColumnPolicy("target")], [DR()])
    cands = log.candidates.assign(reward_model=log.candidates["reward_model"] + 0.01)
    other = InteractionLog(
        log.frame, log.source_rows, log.unit_starts, cands, log.candidate_source_rows
    )
    # the logged items' candidate rows: 2, 3, 7, 9, 12, 17
    with pytest.raises(ColumnError, match=r"differs.*candidate rows \[2, 3, 7, 9, 12, 17\]"):
        evaluate(other, [ColumnPolicy("target")], [DR()])


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"folds": 1}, ConfigurationError, "folds"),
        ({"folds": 7}, ConfigurationError, "folds=7 is more than the 6 trajectories"),
        ({"features": ["nope"]}, ColumnError, "'nope'"),
        ({"features": "target"}, ConfigurationError, "features"),
        ({"regressor": object()}, ConfigurationError, "regressor"),
    ],
)
def test_fit_reward_model_checks_its_inputs(kwargs, error, message):
    from sklearn.linear_model import LinearRegression

    args = {"regressor": LinearRegression(), "features": ["target"], **kwargs}
    regressor, features = args.pop("regressor"), args.pop("features")
    with pytest.raises(error, match=message):
        fit_reward_model(hand_log(), regressor, features, **args)


def test_fit_reward_model_without_scikit_learn_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.base", None)
    with pytest.raises(OffevalError, match=r"pip install offeval\[sklearn\]"):
        fit_reward_model(hand_log(), object(), ["target"])


def test_obp_rewards_of_the_wrong_shape_are_refused():
    log = hand_log()
    with pytest.raises(OffevalError, match=r"shape \(6, 2, 1\)"):
        from_obp_rewards(log, QHAT[:, :2])
    with pytest.raises(ConfigurationError, match="n_rounds, n_actions, len_list"):
        from_obp_rewards(log, QHAT.ravel())
