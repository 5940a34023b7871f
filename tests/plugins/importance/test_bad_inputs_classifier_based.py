"""Bad input to balanced IPS and estimate_propensities: one-line offeval errors naming the
parameter or column and the user's own rows, in Python and on the command line."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from cli_checks import one_line_error, write_csv
from obp_inputs import message

from offeval import (
    ColumnError,
    ColumnPolicy,
    ConfigurationError,
    InteractionLog,
    OffevalError,
    RowError,
    evaluate,
)
from offeval_importance import BalancedIPS, estimate_propensities


def _frame() -> pd.DataFrame:
    """Twelve one-row trajectories at one position, three items, labelled r0..r11."""
    n = 12
    return pd.DataFrame(
        {
            "trajectory": np.arange(n),
            "item": np.arange(n) % 3,
            "position": 1,
            "reward": (np.arange(n) % 2).astype(float),
            "propensity": 1 / 3,
            "pi": np.where(np.arange(n) % 3 == 0, 0.6, 0.2),
            "x0": np.linspace(0, 1, n),
            "w_pi": np.linspace(0.5, 2, n),
        },
        index=[f"r{i}" for i in range(n)],
    )


def _candidates(frame: pd.DataFrame) -> pd.DataFrame:
    n = len(frame)
    return pd.DataFrame(
        {
            "trajectory": np.repeat(frame["trajectory"].to_numpy(), 3),
            "position": np.repeat(frame["position"].to_numpy(), 3),
            "item": np.tile([0, 1, 2], n),
            "propensity": 1 / 3,
            "pi": np.tile([0.6, 0.2, 0.2], n),
        },
        index=[f"c{i}" for i in range(3 * n)],
    )


def _log(frame: pd.DataFrame | None = None, candidates: bool = True) -> InteractionLog:
    frame = _frame() if frame is None else frame
    return InteractionLog.from_frame(frame, candidates=_candidates(frame) if candidates else None)


def _run(estimator, log=None):
    return evaluate(_log() if log is None else log, [ColumnPolicy("pi")], [estimator])


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"features": "x0+"}, r"^features must name columns.*got 'x0\+'"),
        ({"features": ["x0", 1]}, r"^features must name columns"),
        ({"classifier": "forest"}, r"^classifier must be one of \('logistic',\), got 'forest'"),
        ({"classifier": object()}, r"^classifier must be one of .* predict_proba"),
        ({"folds": 1}, r"^folds must be a whole number >= 2, got 1"),
        ({"seed": -1}, r"^seed must be"),
        ({"cap": 0}, r"^cap must be"),
        ({"calibration_cv": -1}, r"^calibration_cv must be"),
        ({"weights": ""}, r"^weights must name a column"),
    ],
)
def test_bad_parameters_fail_at_construction(kwargs, pattern):
    with pytest.raises(ConfigurationError, match=pattern):
        BalancedIPS(**kwargs)
    assert "\n" not in message(lambda: BalancedIPS(**kwargs))


def test_a_missing_feature_column_is_named():
    with pytest.raises(ColumnError, match=r"column 'x9'.*feature"):
        _run(BalancedIPS(features="x0+x9", folds=2))


def test_non_finite_features_name_the_users_rows():
    frame = _frame()
    frame.loc["r7", "x0"] = np.nan
    with pytest.raises(ColumnError, match=r"column 'x0'.*finite.*\['r7'\]"):
        _run(BalancedIPS(features="x0", folds=2), _log(frame))


def test_without_candidates_it_says_where_to_get_them():
    with pytest.raises(ConfigurationError, match="candidate"):
        _run(BalancedIPS(folds=2), _log(candidates=False))


def test_bad_given_weights_name_the_column_and_rows():
    frame = _frame()
    frame.loc["r4", "w_pi"] = -1.0
    with pytest.raises(ColumnError, match=r"column 'w_pi'.*>= 0.*\['r4'\]"):
        _run(BalancedIPS(weights="w_{policy}"), _log(frame))
    with pytest.raises(ColumnError, match=r"column 'w_other'"):
        _run(BalancedIPS(weights="w_other"))


def test_a_position_in_one_fold_only_names_its_rows():
    frame = _frame()
    frame["position"] = np.where(frame.index == "r5", 2, 1)  # position 2: one trajectory
    with pytest.raises(RowError, match=r"position 2 has rows in one fold only.*\['r5'\]"):
        _run(BalancedIPS(folds=2), _log(frame))


class _Certain:
    """A classifier sure that every row comes from the target."""

    classes_ = np.array([0.0, 1.0])

    def fit(self, x, y):
        return self

    def predict_proba(self, x):
        return np.tile([0.0, 1.0], (len(x), 1))


def test_infinite_weights_without_a_cap_name_the_rows_and_the_cure():
    with pytest.raises(RowError, match=r"infinite weight.*give a cap.*\['r0', 'r1'"):
        _run(BalancedIPS(classifier=_Certain(), folds=2))
    capped = _run(BalancedIPS(classifier=_Certain(), folds=2, cap=5.0)).estimate("pi")
    assert capped.value == pytest.approx(_frame()["reward"].mean())  # every weight capped at 5


def test_without_scikit_learn_it_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.base", None)
    line = message(lambda: _run(BalancedIPS(folds=2)))
    assert "pip install offeval[sklearn]" in line
    line = message(lambda: estimate_propensities(_log(), folds=2))
    assert "pip install offeval[sklearn]" in line
    _run(BalancedIPS(weights="w_{policy}"))  # given weights need no scikit-learn


# -- estimate_propensities ------------------------------------------------------------------
def test_propensities_need_a_log():
    with pytest.raises(OffevalError, match="needs an InteractionLog"):
        estimate_propensities(_frame())


def test_given_folds_must_keep_trajectories_whole_naming_their_rows():
    frame = _frame()
    frame["trajectory"] = np.arange(12) // 2  # two rows per trajectory
    frame["position"] = np.arange(12) % 2 + 1
    log = InteractionLog.from_frame(frame)
    folds = np.arange(12) % 2  # splits every trajectory
    with pytest.raises(RowError, match=r"folds.*one trajectory must share a fold.*\['r0'"):
        estimate_propensities(log, folds=folds)
    with pytest.raises(ConfigurationError, match=r"one whole number per log row \(12\)"):
        estimate_propensities(log, folds=np.zeros(5, dtype=int))
    with pytest.raises(ConfigurationError, match="at least two folds"):
        estimate_propensities(log, folds=np.zeros(12, dtype=int))


def test_an_item_unseen_in_the_other_folds_names_its_row():
    frame = _frame()
    frame.loc["r9", "item"] = 7  # logged once: its own fold never trains on it
    log = InteractionLog.from_frame(frame)
    with pytest.raises(RowError, match=r"propensity.*probability 0.*fewer folds.*\['r9'\]"):
        estimate_propensities(log, folds=2)


def test_propensity_parameters_are_checked():
    log = _log()
    for call, pattern in [
        (lambda: estimate_propensities(log, "forest"), r"^classifier must be one of"),
        (lambda: estimate_propensities(log, features="x0+"), r"^features must name"),
        (lambda: estimate_propensities(log, folds=1), r"^folds must be a whole number >= 2"),
        (lambda: estimate_propensities(log, seed=-2), r"^seed must be"),
        (lambda: estimate_propensities(log, calibration_cv=-1), r"^calibration_cv must be"),
    ]:
        with pytest.raises(ConfigurationError, match=pattern):
            call()


# -- the command line -----------------------------------------------------------------------
@pytest.fixture
def files(tmp_path):
    frame = _frame()
    log = write_csv(frame, tmp_path / "log.csv")
    cands = write_csv(_candidates(frame), tmp_path / "cands.csv")
    return log, cands


def test_the_command_line_runs_balanced_ips_under_obps_name(files, capsys):
    from offeval.cli.shell import main

    log, cands = files
    argv = ["evaluate", log, "--candidates", cands, "--policy", "t=pi"]
    spec = "bipw:features=x0,folds=2,lambda_=3"
    assert main([str(a) for a in [*argv, "--estimator", spec, "--quiet"]]) == 0
    assert "bipw(features=x0, folds=2, lambda_=3)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "patterns"),
    [
        (["--estimator", "bipw:features=x0+x9"], [r"column 'x9'", "feature"]),
        (["--estimator", "bipw:folds=1"], [r"folds must be a whole number >= 2, got 1"]),
        (["--estimator", "bipw:classifier=forest"], [r"classifier must be one of"]),
        (["--estimator", "balanced_ips:lambda_=3"], [r"balanced_ips calls it cap"]),
        (["--estimator", "sg-ipw:lambda_=2"], [r"lambda_ must be"]),
    ],
)
def test_command_line_mistakes_are_one_line(files, capsys, extra, patterns):
    log, cands = files
    argv = ["evaluate", log, "--candidates", cands, "--policy", "t=pi", "--quiet", *extra]
    one_line_error(capsys, argv, *patterns)


def test_the_command_line_without_candidates_says_how_to_give_them(files, capsys):
    log, _ = files
    argv = ["evaluate", log, "--policy", "t=pi", "--quiet", "--estimator", "bipw:features=x0"]
    one_line_error(capsys, argv, r"--candidates FILE")
