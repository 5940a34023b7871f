"""Sub-Gaussian IPS: obp 0.5.7's SubGaussianInverseProbabilityWeighting (pinned, see
obp_reference/), a brute-force computation on a small log, and what it promises."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from obp_inputs import message
from oracles import delta_se, unit_sums

from offeval import (
    ColumnPolicy,
    ConfigurationError,
    InteractionLog,
    OffevalError,
    evaluate,
    get_registry,
)
from offeval_importance import IS, SubGaussianIPS
from offeval_obp import from_obp

PINNED = json.loads((Path(__file__).parent / "obp_reference" / "pinned.json").read_text())
REFERENCE = PINNED["reference_obp"]
LAMBDAS = (0.0, 0.1, 0.5, 1.0)
pytestmark = pytest.mark.filterwarnings("ignore:the mean importance weight")  # small logs


def _obp_logs():
    """(name, log, policies) for obp's synthetic bandit and the Open Bandit Dataset rows."""
    data = PINNED["synthetic"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "context")}
    dists = {name: np.asarray(p["action_dist"]) for name, p in data["policies"].items()}
    yield ("synthetic", *from_obp(feedback, dists))
    data = PINNED["obd"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "position")}
    n = data["n_rounds"]
    dists = {
        name: np.broadcast_to(np.asarray(p["by_action_position"]), (n, 80, 3))
        for name, p in data["policies"].items()
    }
    yield ("obd", *from_obp(feedback, dists))


@pytest.mark.parametrize(("key", "log", "policies"), list(_obp_logs()), ids=["synthetic", "obd"])
def test_equals_obps_sg_ipw_for_several_lambdas(key, log, policies):
    estimators = [SubGaussianIPS(lambda_=lam) for lam in LAMBDAS]
    ev = evaluate(log, policies, estimators)
    for policy in policies:
        theirs = PINNED[key]["estimates"][REFERENCE][policy.name]
        for lam, estimator in zip(LAMBDAS, estimators, strict=True):
            value = ev.estimate(policy.name, estimator.label).value
            expected = theirs[f"sg_ipw_{lam:g}"]["policy_value"]
            assert value == pytest.approx(expected, abs=1e-12), (key, policy.name, lam)
    # the shrinkage bites: lambda_ = 0.5 is not obp's IPW on these logs
    ipw = PINNED[key]["estimates"][REFERENCE][policies[0].name]["ipw"]["policy_value"]
    assert abs(ev.estimate(policies[0].name, estimators[2].label).value - ipw) > 1e-4


def test_obps_names_and_parameter_build_the_same_estimator():
    registry = get_registry()
    for spec in ("sg-ipw:lambda_=0.5", "sg_ipw:lambda_=0.5", "sg_ips:lambda_=0.5"):
        built = registry.create_from_spec("estimator", spec)
        assert isinstance(built, SubGaussianIPS) and built.lambda_ == 0.5
    assert registry.create("estimator", "sg-ipw").lambda_ == 0.0  # obp's default


def _small_log() -> InteractionLog:
    """Three trajectories of 1-3 rows, with a zero target probability at w = 0."""
    frame = pd.DataFrame(
        {
            "trajectory": ["a", "a", "b", "c", "c", "c"],
            "item": [1, 2, 1, 3, 1, 2],
            "position": [1, 2, 1, 1, 2, 3],
            "reward": [1.0, 0.0, 1.0, 0.5, 1.0, 2.0],
            "propensity": [0.5, 0.25, 0.1, 0.8, 0.2, 0.4],
            "pi": [0.9, 0.5, 0.6, 0.0, 0.7, 0.1],
        },
        index=[f"r{i}" for i in range(6)],
    )
    return InteractionLog.from_frame(frame)


@pytest.mark.parametrize("lam", [0.0, 0.2, 0.7, 1.0])
def test_brute_force_value_standard_error_and_diagnostics(lam):
    log = _small_log()
    frame = log.frame
    w = frame["pi"].to_numpy() / frame["propensity"].to_numpy()
    shrunk = np.array([wi / (1 - lam + lam * wi) if wi > 0 else 0.0 for wi in w])
    y = unit_sums(log, frame["reward"].to_numpy() * shrunk)
    n = unit_sums(log, np.ones(len(frame)))
    value, se = delta_se(lambda m: m[0] / m[1], np.column_stack([y, n]))
    est = evaluate(log, [ColumnPolicy("pi")], [SubGaussianIPS(lambda_=lam)]).estimate("pi")
    assert est.value == pytest.approx(value, rel=1e-12)
    assert est.se == pytest.approx(se, rel=1e-6)
    assert est.diagnostics["ess_shrunk"] == pytest.approx(shrunk.sum() ** 2 / (shrunk @ shrunk))
    assert est.diagnostics["max_shrunk_weight"] == pytest.approx(shrunk.max())
    assert est.diagnostics["max_weight"] == pytest.approx(w.max())  # the raw weights'
    assert est.diagnostics["ess"] == pytest.approx(w.sum() ** 2 / (w @ w))
    assert est.n_units == 3 and est.n_excluded == 0


def test_a_zero_weight_contributes_zero_at_lambda_one_where_obp_divides_zero_by_zero():
    est = evaluate(_small_log(), [ColumnPolicy("pi")], [SubGaussianIPS(lambda_=1.0)])
    value = est.estimate("pi").value
    rewards = np.array([1.0, 0.0, 1.0, 0.5, 1.0, 2.0])
    assert value == pytest.approx(np.mean(rewards * [1, 1, 1, 0, 1, 1]), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    lam=st.floats(0.01, 1.0),
    w=st.lists(st.floats(1e-3, 1e3), min_size=3, max_size=12),
)
def test_shrunk_weights_lie_between_the_weight_and_one_and_below_one_over_lambda(lam, w):
    """w / (1 - lam + lam w) moves each weight towards 1, never past it, and stays <= 1/lam."""
    w = np.asarray(w)
    n = w.size
    frame = pd.DataFrame(
        {
            "trajectory": np.arange(n),
            "item": 0,
            "reward": 1.0,
            "propensity": 1 / (1 + w),
            "pi": w / (1 + w),
        }
    )
    log = InteractionLog.from_frame(frame)
    est = evaluate(log, [ColumnPolicy("pi")], [SubGaussianIPS(lambda_=lam)]).estimate("pi")
    exact_w = frame["pi"].to_numpy() / frame["propensity"].to_numpy()
    shrunk = exact_w / (1 - lam + lam * exact_w)
    assert np.all(np.minimum(exact_w, 1) - 1e-12 <= shrunk)
    assert np.all(shrunk <= np.maximum(exact_w, 1) + 1e-12)
    assert np.all(shrunk <= 1 / lam + 1e-9)
    assert est.value == pytest.approx(shrunk.mean(), rel=1e-9)  # rewards are 1


def test_lambda_zero_is_ips_with_its_standard_error():
    log = _small_log()
    ev = evaluate(log, [ColumnPolicy("pi")], [SubGaussianIPS(), IS()])
    a, b = ev.estimate("pi", "sg_ips"), ev.estimate("pi", "is")
    assert a.value == pytest.approx(b.value, rel=1e-12)
    assert a.se == pytest.approx(b.se, rel=1e-12)
    assert SubGaussianIPS().guarantee == "unbiased"
    assert SubGaussianIPS(lambda_=0.1).guarantee is None


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1.5, "got 1.5"), (-0.1, "got -0.1"), (float("nan"), "got nan"), ("a", "got 'a'")],
)
def test_a_bad_lambda_is_one_line_naming_it(value, shown):
    line = message(lambda: SubGaussianIPS(lambda_=value))
    assert line.startswith("lambda_ must be") and "[0, 1]" in line and shown in line


def test_a_bad_lambda_from_a_spec_is_one_line():
    with pytest.raises(ConfigurationError) as exc:
        get_registry().create_from_spec("estimator", "sg-ipw:lambda_=2")
    assert "lambda_" in str(exc.value) and "\n" not in str(exc.value)


def test_without_propensities_it_names_the_column():
    frame = _small_log().frame.drop(columns="propensity")
    log = InteractionLog.from_frame(frame)
    with pytest.raises(OffevalError, match="propensity"):
        evaluate(log, [ColumnPolicy("pi")], [SubGaussianIPS(lambda_=0.5)])
