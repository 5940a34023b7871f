"""Bad input at the reward-model plugin's ways in from obp's logs (issue 19): obp's
reward-model output (:func:`offeval_rewardmodels.from_obp_rewards`), the estimators'
candidate probabilities, fitting and attaching predictions; each mistake is one line naming
the argument, key or column and the rows (obp's 0-based rounds, or the user's labels)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from obp_inputs import ACTIONS, SLOTS, N, dist, feedback, message, one_line

from offeval import (
    ColumnError,
    ColumnPolicy,
    ConfigurationError,
    InteractionLog,
    OffevalError,
    RowError,
    evaluate,
)
from offeval_obp import from_obp, from_obp_rewards
from offeval_rewardmodels import (
    DM,
    DR,
    RewardPredictions,
    SwitchDR,
    fit_reward_model,
    item_position_means,
)


def test_obd_feedback_without_pi_b_reaches_dm_and_dr():
    """pi_b feeds only the support diagnostics: without it DM and DR still run, and give
    the same values as with it; the candidates' propensities are unknown (NaN)."""
    rng = np.random.default_rng(0)
    q = rng.random((N, ACTIONS, SLOTS))
    target = rng.dirichlet(np.ones(ACTIONS), size=(N, SLOTS)).transpose(0, 2, 1)
    values = {}
    for with_pi_b in (True, False):
        log, policies = from_obp(feedback(with_pi_b), target, with_candidates=True)
        log = from_obp_rewards(log, q).attach(log)
        ev = evaluate(log, policies, [DM(), DR()])
        values[with_pi_b] = [ev.estimate("evaluation", e).value for e in ("dm", "dr")]
        assert np.isnan(log.candidates["propensity"]).all() != with_pi_b
    rounds, pos = np.arange(N), feedback()["position"]
    dm = (target[rounds, :, pos] * q[rounds, :, pos]).sum(axis=1).mean()  # obp's DM by hand
    assert values[False] == pytest.approx(values[True], rel=1e-12)
    assert values[False][0] == pytest.approx(dm, rel=1e-12)


def test_without_pi_b_the_support_diagnostics_are_absent_not_zero():
    log, policies = from_obp(feedback(False), dist(), with_candidates=True)
    rng = np.random.default_rng(1)
    log = from_obp_rewards(log, rng.random((N, ACTIONS, SLOTS))).attach(log)
    diagnostics = evaluate(log, policies, [DR()]).estimate("evaluation", "dr").diagnostics
    assert "unsupported_mass_per_slot" not in diagnostics
    assert "support_violations" not in diagnostics
    with_pi_b, _ = from_obp(feedback(), dist(), with_candidates=True)
    with_pi_b = from_obp_rewards(with_pi_b, rng.random((N, ACTIONS, SLOTS))).attach(with_pi_b)
    diagnostics = evaluate(with_pi_b, policies, [DR()]).estimate("evaluation", "dr").diagnostics
    assert diagnostics["unsupported_mass_per_slot"] == 0.0


def test_obp_rewards_with_more_or_fewer_rounds_than_the_log_are_refused():
    log, _ = from_obp(feedback(), with_candidates=True)
    with pytest.raises(OffevalError, match=r"estimated_rewards_by_reg_model has 20 rounds.*12"):
        from_obp_rewards(log, np.zeros((20, ACTIONS, SLOTS)))
    with pytest.raises(OffevalError, match=r"has 8 rounds.*12"):
        from_obp_rewards(log, np.zeros((8, ACTIONS, SLOTS)))


def test_non_finite_obp_rewards_are_named_by_round():
    log, _ = from_obp(feedback(), with_candidates=True)
    q = np.zeros((N, ACTIONS, SLOTS))
    q[[3, 5], 1, 0] = np.nan
    with pytest.raises(RowError, match=r"estimated_rewards_by_reg_model.*finite.*rounds \[3, 5\]"):
        from_obp_rewards(log, q)


def test_obp_rewards_for_a_log_without_candidates_say_with_candidates():
    log, _ = from_obp(feedback())
    with pytest.raises(OffevalError, match=r"from_obp\(\.\.\., with_candidates=True\)"):
        from_obp_rewards(log, np.zeros((N, ACTIONS, SLOTS)))


def test_obp_rewards_need_a_log():
    with pytest.raises(OffevalError, match="InteractionLog"):
        from_obp_rewards(feedback(), np.zeros((N, ACTIONS, SLOTS)))


def test_a_reward_model_estimator_without_candidates_names_from_obp():
    log, policies = from_obp(feedback(), dist())
    log = log.with_columns(reward_model=np.zeros(log.n_rows))
    with pytest.raises(OffevalError, match=r"from_obp\(\.\.\., with_candidates=True\)"):
        evaluate(log, policies, [DM()])


def slot_log(target_per_candidate: np.ndarray) -> InteractionLog:
    """Three single-slot trajectories labelled 'a', 'b', 'c', three candidates each."""
    frame = pd.DataFrame(
        {
            "trajectory": [0, 1, 2],
            "item": [0, 1, 2],
            "position": 1,
            "reward": [1.0, 0.0, 1.0],
            "propensity": 1 / 3,
            "target": target_per_candidate.reshape(3, 3)[[0, 1, 2], [0, 1, 2]],
            "reward_model": 0.5,
        },
        index=["a", "b", "c"],
    )
    candidates = pd.DataFrame(
        {
            "trajectory": np.repeat([0, 1, 2], 3),
            "position": 1,
            "item": np.tile([0, 1, 2], 3),
            "propensity": 1 / 3,
            "target": target_per_candidate,
            "reward_model": 0.5,
        }
    )
    return InteractionLog.from_frame(frame, candidates=candidates)


@pytest.mark.parametrize("estimator", [DM(), DR()])
def test_target_probabilities_summing_above_1_per_slot_are_refused(estimator):
    target = np.full(9, 1 / 3)
    target[3:6] = [0.9, 0.4, 0.4]  # slot 'b' sums to 1.7
    with pytest.raises(RowError) as exc:
        evaluate(slot_log(target), [ColumnPolicy("target")], [estimator])
    line = one_line(exc)
    assert "'target'" in line and "1.7" in line and "rows ['b']" in line


def test_target_probabilities_summing_to_1_or_less_pass():
    target = np.full(9, 1 / 3)
    target[6:] = [0.2, 0.2, 0.2]  # less than 1: reported by target_mass_per_slot
    ev = evaluate(slot_log(target), [ColumnPolicy("target")], [DM()])
    assert ev.estimate("target", "dm").value == pytest.approx((0.5 + 0.5 + 0.3) / 3)


def fitted_log() -> InteractionLog:
    return slot_log(np.full(9, 1 / 3))


@pytest.mark.parametrize("seed", ["x", -1, 1.5, True])
def test_a_bad_seed_is_named(seed):
    from sklearn.linear_model import LinearRegression

    with pytest.raises(ConfigurationError, match="seed"):
        fit_reward_model(fitted_log(), LinearRegression(), ["target"], folds=2, seed=seed)
    with pytest.raises(ConfigurationError, match="seed"):
        item_position_means(fitted_log(), seed=seed)


def test_a_missing_trajectory_in_a_frame_is_named_not_given_another_fold():
    from sklearn.linear_model import LinearRegression

    frame = pd.DataFrame(
        {
            "trajectory": [0, 0, 1, 1, np.nan, 2, 2, 3],
            "reward": [1.0, 0, 1, 0, 1, 0, 1, 1],
            "f": np.arange(8.0),
        },
        index=list("abcdefgh"),
    )
    with pytest.raises(ColumnError, match=r"'trajectory'.*missing.*rows \['e'\]"):
        fit_reward_model(frame, LinearRegression(), ["f"], folds=2)


def test_attach_checks_the_log_and_the_predictions_shape():
    log = fitted_log()
    with pytest.raises(OffevalError, match=r"rows.*one prediction per row.*\(3, 2\)"):
        RewardPredictions(np.zeros((3, 2)), np.zeros(9)).attach(log)
    with pytest.raises(OffevalError, match=r"candidates.*one prediction per.*\(9, 1\)"):
        RewardPredictions(np.zeros(3), np.zeros((9, 1))).attach(log)
    with pytest.raises(OffevalError, match="InteractionLog"):
        RewardPredictions(np.zeros(3), None).attach(log.frame)
    with pytest.raises(OffevalError, match="item_position_means needs an InteractionLog"):
        item_position_means(log.frame)


def test_an_action_dist_obp_accepts_is_accepted_by_from_obp_and_dm():
    """obp checks np.allclose(action_dist.sum(axis=1), 1): 1e-5 (+1e-8). A sum 5e-6 off
    (probabilities rounded, or half precision) passes obp, so it passes from_obp and the
    reward-model estimators; 3e-5 off fails both."""
    rng = np.random.default_rng(2)
    q = rng.random((N, ACTIONS, SLOTS))
    for excess, accepted in ((5e-6, True), (3e-5, False)):
        target = dist()
        target[:, 0, :] += excess
        assert np.allclose(target.sum(axis=1), 1) == accepted  # obp's own check
        if not accepted:
            with pytest.raises(ConfigurationError, match=r"sum to 1\.00003, not 1"):
                from_obp(feedback(), target)
            continue
        log, policies = from_obp(feedback(), target, with_candidates=True)  # formerly refused
        log = from_obp_rewards(log, q).attach(log)
        dm = evaluate(log, policies, [DM()]).estimate("evaluation", "dm").value
        rounds, pos = np.arange(N), feedback()["position"]
        assert dm == pytest.approx((target[rounds, :, pos] * q[rounds, :, pos]).sum(1).mean())


@pytest.mark.parametrize("estimator", ["dm", "dr", "sndr"])
def test_the_command_line_names_its_candidates_option(tmp_path, capsys, estimator):
    """Without --candidates, the reward-model estimators' need of a candidate table is said
    in the command line's words (its option), not as a Python call to make."""
    from cli_checks import one_line_error

    path = tmp_path / "log.csv"
    pd.DataFrame(
        {
            "user": np.arange(30),
            "item": np.arange(30) % 3,
            "reward": np.arange(30) % 2,
            "propensity": 1 / 3,
            "pi": 0.5,
            "reward_model": 0.3,
        }
    ).to_csv(path, index=False)
    argv = ["evaluate", path, "--map", "trajectory=user", "--rerank", "m=pi"]
    err = one_line_error(capsys, [*argv, "--estimator", estimator])
    assert "--candidates FILE" in err, err
    assert "from_frame" not in err and "=table" not in err and "Python" not in err


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        (lambda: item_position_means(fitted_log(), seed=np.float64(1.5)), "got 1.5"),
        (lambda: item_position_means(fitted_log(), prior=np.float64(-1.0)), "got -1.0"),
        (lambda: SwitchDR(tau=np.float64(-1.0)), "got -1.0"),
        (lambda: item_position_means(fitted_log(), folds=np.int64(1)), "got 1"),
    ],
)
def test_messages_show_numbers_as_plain_values(call, shown):
    line = message(call)
    assert "np." not in line and shown in line


# -- issue 28: --fit-reward-model on rewards logistic cannot fit, and bad parameters -------
def click_log(tmp_path, reward) -> str:
    """A CSV log of 20 one-row trajectories (labelled 'u0'... in Python) with ``reward``
    in the user's column ``click`` and a numeric feature ``x``."""
    n = len(reward)
    frame = pd.DataFrame(
        {
            "user": np.arange(n),
            "item": np.arange(n) % 3,
            "click": reward,
            "propensity": 1 / 3,
            "pi": 0.5,
            "x": np.linspace(0, 1, n),
        }
    )
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    return path


def fit_argv(path, spec: str) -> list:
    maps = ["--map", "trajectory=user", "--map", "reward=click"]
    return ["evaluate", path, *maps, "--policy", "t=pi", "--estimator", "ips", "--quiet"] + [
        "--fit-reward-model",
        spec,
    ]


#: Rewards 0, 0.5 and 1 (rows 2, 7 and 12 are 0.5), none clicked, one click in row 5.
HALVES = np.array([0.0, 1, 0.5, 0, 1, 0, 1, 0.5, 0, 1, 0, 1, 0.5, 0, 1, 0, 1, 0, 0, 1])
NONE = np.zeros(20)
ONE = np.eye(20)[5]


def test_logistic_on_rewards_other_than_0_and_1_is_one_line_naming_the_rows(tmp_path, capsys):
    from cli_checks import one_line_error

    one_line_error(
        capsys,
        fit_argv(click_log(tmp_path, HALVES), "logistic:features=[x]"),
        r"^offeval: error: column 'click' \(role reward\): logistic needs rewards of 0 or 1 "
        r"\(a classifier of clicks\); for other rewards use --fit-reward-model ridge:\.\.\. "
        r"\(log\.csv, lines \[4, 9, 14\]\)$",
    )


def test_logistic_on_a_log_without_a_click_is_one_line(tmp_path, capsys):
    from cli_checks import one_line_error

    one_line_error(
        capsys,
        fit_argv(click_log(tmp_path, NONE), "logistic:features=[x]"),
        r"^offeval: error: column 'click' \(role reward\): logistic needs both rewards, 0 and 1, "
        r"to learn from, but every reward is 0; .*--fit-reward-model ridge",
    )


def test_a_fold_whose_training_rows_hold_one_class_is_one_line(tmp_path, capsys):
    # the one click is in one fold: the model of that fold would learn from zeros only
    from cli_checks import one_line_error

    one_line_error(
        capsys,
        fit_argv(click_log(tmp_path, ONE), "logistic:features=[x],folds=4"),
        r"^offeval: error: column 'click' \(role reward\): a classifier needs two reward values "
        r"to learn from, but with folds=4 the training rows of one fold \(the trajectories "
        r"outside it\) hold 0 only: use fewer folds, or a regressor \(log\.csv, lines \[7\]\)$",
    )


def test_the_python_fitters_name_the_users_rows():
    from sklearn.linear_model import LogisticRegression

    from offeval_rewardmodels.fitters import Logistic

    labels = [f"u{i}" for i in range(20)]
    frame = pd.DataFrame(
        {"trajectory": np.arange(20), "item": 0, "x": np.linspace(0, 1, 20)}, index=labels
    )
    log = InteractionLog.from_frame(frame.assign(reward=HALVES))
    with pytest.raises(ColumnError, match=r"'reward'.*0 or 1.*rows \['u2', 'u7', 'u12'\]"):
        Logistic(features=["x"]).fit(log)
    with pytest.raises(ColumnError, match=r"'reward'.*every reward is 0"):
        Logistic(features=["x"]).fit(InteractionLog.from_frame(frame.assign(reward=NONE)))
    log = InteractionLog.from_frame(frame.assign(reward=ONE))
    with pytest.raises(ColumnError, match=r"'reward'.*folds=4.*one fold.*rows \['u5'\]"):
        fit_reward_model(log, LogisticRegression(), ["x"], folds=4)


FITTER_PARAMETERS = {
    "ridge:features=[x],alpha=-1": r"alpha must be a finite number >= 0, got -1$",
    "ridge:features=[x],alpha=inf": r"alpha must be a finite number >= 0, got inf$",
    "logistic:features=[x],C=0": r"C must be a finite positive number, got 0$",
    "logistic:features=[x],C=x": r"C must be a finite positive number, got 'x'$",
}


@pytest.mark.parametrize("spec", FITTER_PARAMETERS)
def test_fitter_parameters_are_checked_before_any_file_is_read(tmp_path, capsys, spec):
    from cli_checks import one_line_error

    absent = tmp_path / "absent.csv"  # never read: the spec is refused first
    pattern = rf"^offeval: error: --fit-reward-model {re.escape(spec)}: {FITTER_PARAMETERS[spec]}"
    one_line_error(capsys, fit_argv(absent, spec), pattern)


def test_fitter_parameters_are_checked_when_built_in_python():
    from offeval_rewardmodels.fitters import Logistic, Ridge

    with pytest.raises(ConfigurationError, match="alpha must be a finite number >= 0, got -1"):
        Ridge(features=["x"], alpha=-1)
    with pytest.raises(ConfigurationError, match="C must be a finite positive number, got 0"):
        Logistic(features=["x"], C=0)
    assert Ridge(features=["x"], alpha=0).alpha == 0  # least squares: allowed
