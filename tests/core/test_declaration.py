"""What an estimator declares: read once, checked, defaults filled, seen alike by every reader."""

from __future__ import annotations

import re

import numpy as np
import pytest

from offeval.engine.declaration import WEIGHT_DIAGNOSTICS, Declaration, declaration_of
from offeval.engine.estimator import BaseEstimator, Contribution
from offeval.engine.evaluation import evaluate
from offeval.errors import ConfigurationError
from offeval.stats.inference import ratio_of_means
from offeval.testing import check_estimator, checks_for, known_failures, parametrize_with_checks


class Mean(BaseEstimator):
    """Mean reward of the logged rows.

    Nothing more.
    """

    name = "mean"

    def __init__(self, cap: float = 1.0):
        self.cap = cap

    def contribute(self, view):
        w = np.minimum(view.weights(), self.cap)
        return Contribution({"r": view.log.column("reward") * w, "rows": view.log.ones})

    def combine(self, stats):
        return ratio_of_means(stats, "r", "rows")


class Bare:
    """An estimator by the protocol alone: no BaseEstimator, no label."""

    name = "bare"

    def get_params(self):
        return {}

    def contribute(self, view):
        return Contribution({"r": view.log.column("reward"), "rows": view.log.ones})

    def combine(self, stats):
        return ratio_of_means(stats, "r", "rows")

    def diagnose(self, tally):
        return {}


def _prepare(log):
    return log


class Declared(Mean):
    """Declares everything."""

    name = "declared"
    higher_is_better = False
    estimand = "reward_per_trajectory"
    guarantee = "consistent"
    requires = ("propensity", "candidates")
    assumptions = {"user_model": "cascade"}
    tags = {"linear_in_reward": True, "ess_unit": "trajectories"}
    weight_diagnostics = ("ess",)
    expected_failed_checks = {"check_unbiased": "not unbiased"}
    prepare_kit_log = staticmethod(_prepare)

    def fitted(self, stats):
        return {"slope": 2.0}


def test_an_estimator_declaring_nothing_gets_every_default():
    declared = declaration_of(Bare())
    assert declared == Declaration(
        name="bare",
        label="bare",
        full_label="bare",
        description=("An estimator by the protocol alone: no BaseEstimator, no label."),
    )
    assert declared.higher_is_better is True
    assert declared.estimand is None and declared.guarantee is None
    assert declared.requires == () and declared.assumptions == {}
    assert declared.linear_in_reward is False and declared.ess_unit == "rows"
    assert declared.weight_diagnostics == WEIGHT_DIAGNOSTICS
    assert declared.expected_failed_checks == {}
    assert declared.prepare_kit_log is None and declared.fitted is None


def test_labels_show_the_parameters_changed_and_all_of_them():
    declared = declaration_of(Mean(cap=3))
    assert (declared.label, declared.full_label) == ("mean(cap=3)", "mean(cap=3)")
    declared = declaration_of(Mean())
    assert (declared.label, declared.full_label) == ("mean", "mean(cap=1)")
    assert declared.description == "Mean reward of the logged rows."


def test_each_declared_attribute_is_read():
    estimator = Declared()
    declared = declaration_of(estimator)
    assert declared.higher_is_better is False
    assert declared.estimand == "reward_per_trajectory"
    assert declared.guarantee == "consistent"
    assert declared.requires == ("propensity", "candidates")
    assert declared.assumptions == {"user_model": "cascade"}
    assert declared.linear_in_reward is True
    assert declared.ess_unit == "trajectories"
    assert declared.weight_diagnostics == ("ess",)
    assert declared.expected_failed_checks == {"check_unbiased": "not unbiased"}
    assert declared.prepare_kit_log is _prepare
    assert declared.fitted(None) == {"slope": 2.0}


def test_an_instance_may_change_its_declaration():
    estimator = Declared()
    estimator.guarantee = None
    assert declaration_of(estimator).guarantee is None


@pytest.mark.parametrize(
    ("attribute", "value", "message"),
    [
        ("name", "", "name must be a non-empty string"),
        ("label", 3, "label must be a non-empty string, got 3"),
        ("higher_is_better", "no", "higher_is_better must be True or False, got 'no'"),
        ("estimand", "reward", "estimand must be one of"),
        ("guarantee", "exact", "guarantee must be one of ('unbiased', 'consistent', None)"),
        ("requires", ["propensity"], "requires must be a tuple of strings"),
        ("requires", ("propensity", 1), "requires must be a tuple of strings"),
        ("assumptions", [("user_model", "cascade")], "assumptions must be a dict"),
        ("tags", {"linear_in_rewards": True}, "tags ['linear_in_rewards'] are unknown"),
        ("tags", {"linear_in_reward": 1}, "tags['linear_in_reward'] must be True or False"),
        ("tags", {"ess_unit": ""}, "tags['ess_unit'] must be a non-empty string"),
        ("weight_diagnostics", "ess", "weight_diagnostics must be a tuple of strings"),
        ("expected_failed_checks", {"check_unbiased": None}, "must be a reason, got None"),
        ("prepare_kit_log", "yes", "prepare_kit_log must be a method"),
        ("fitted", {"slope": 1}, "fitted must be a method"),
    ],
)
def test_a_wrong_declaration_is_refused_naming_the_estimator_and_attribute(
    attribute, value, message
):
    broken = type("Broken", (Declared,), {attribute: value})()
    with pytest.raises(ConfigurationError, match=re.escape(message)) as caught:
        declaration_of(broken)
    assert "Broken" in str(caught.value)


def test_a_guarantee_needs_an_estimand():
    estimator = Declared()
    estimator.estimand = None
    with pytest.raises(ConfigurationError, match="estimator 'declared' .*needs an estimand"):
        declaration_of(estimator)


def test_the_engine_refuses_a_wrong_declaration_before_reading_the_log(bandit):
    estimator = Mean()
    estimator.guarantee = "always"
    log, policy, _ = bandit
    with pytest.raises(ConfigurationError, match="guarantee must be one of"):
        evaluate(log, [policy], [estimator], progress=False)


def test_the_evaluation_the_tables_and_the_kit_see_the_same_declaration(bandit):
    log, policy, _ = bandit
    evaluation = evaluate(log, [policy], [Declared(cap=2), Bare()], progress=False)
    first = declaration_of(evaluation.components[0])
    assert evaluation.declarations == [first, declaration_of(evaluation.components[1])]
    assert evaluation.estimators == ["declared(cap=2)", "bare"]
    assert evaluation.ess_units == {"declared(cap=2)": "trajectories", "bare": "rows"}
    assert evaluation.estimate(policy.name, "declared(cap=2)").diagnostics["fitted_slope"] == 2.0
    assert evaluation.summary("declared(cap=2)").higher_is_better is False
    names = [check.__name__ for check in checks_for(Declared())]
    assert "check_tracks_the_truth" in names and "check_linear_in_reward" in names
    assert "check_unbiased" not in names  # consistent, not unbiased
    assert known_failures(Mean()) == {}


def test_the_base_class_defaults_are_the_declarations():
    """BaseEstimator keeps class defaults (subclasses extend them: ``super().requires``);
    they must be the declaration's own, so an estimator reads the same either way."""
    import dataclasses

    from offeval import BaseEstimator, Declaration

    defaults = {f.name: f for f in dataclasses.fields(Declaration)}
    for name in ("estimand", "guarantee", "requires", "higher_is_better", "expected_failed_checks"):
        field = defaults[name]
        default = (
            field.default if field.default is not dataclasses.MISSING else field.default_factory()  # type: ignore[misc]
        )
        assert getattr(BaseEstimator, name) == default, name


def test_the_kit_reports_a_wrong_declaration_as_its_protocol_check_failing():
    """As any failing check: an AssertionError from check_estimator, one failing case (not a
    collection error) from parametrize_with_checks."""
    estimator = Mean()
    estimator.estimand = "reward"
    with pytest.raises(AssertionError, match="check_protocol failed .*estimand must be one of"):
        check_estimator(estimator)
    (cases,) = parametrize_with_checks([estimator]).args[1:2]
    assert [case.id for case in cases] == ["mean-check_protocol"]
    with pytest.raises(AssertionError, match="estimand must be one of"):
        cases[0].values[1](estimator)
