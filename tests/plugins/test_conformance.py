"""Every registered estimator passes the public conformance kit, and the kit has teeth."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from oracles import Constant

from offeval import BaseEstimator, Contribution, get_registry
from offeval.engine.declaration import declaration_of
from offeval.stats import Linearisation, ratio_of_means
from offeval.testing import check_estimator, checks_for, kit_setup, parametrize_with_checks
from offeval_importance import IS, NCIS

REGISTERED = [get_registry().create("estimator", n) for n in get_registry().names("estimator")]


@parametrize_with_checks(REGISTERED)
def test_registered_estimators_conform(estimator, check):
    check(estimator)


def test_every_declared_guarantee_is_checked_against_the_truth():
    checked = {e.name for e in REGISTERED if "check_tracks_the_truth" in map(_name, checks_for(e))}
    assert {"is", "ips", "snips", "beta_ips", "dcg"} <= checked
    unbiased = {e.name for e in REGISTERED if "check_unbiased" in map(_name, checks_for(e))}
    assert {"is", "ips", "dcg"} <= unbiased
    # without a cap the capped family makes promises too, and keeps them
    for estimator in (
        NCIS(cap=float("inf")),
        get_registry().create("estimator", "cis", cap=np.inf),
    ):
        check_estimator(estimator)


def test_an_estimator_checked_in_another_world_requires_the_plugin_that_brings_it():
    """Its kit_environment is registered by a plugin its own plugin declares in REQUIRES;
    every other estimator takes the kit in the kit's own world."""
    registry, named = get_registry(), {}
    for estimator in REGISTERED:
        environment = declaration_of(estimator).kit_environment
        if environment is None:
            continue
        package = sys.modules[type(estimator).__module__.split(".")[0]]
        provider = registry.get("environment", environment).plugin
        assert provider in getattr(package, "REQUIRES", ()), (estimator.name, provider)
        named[estimator.name] = environment
    assert named == {"cascade_dr": "default", "pi": "default", "rips": "default"}


def _name(check) -> str:
    return check.__name__


class IgnoresRewards(BaseEstimator):
    """Mean target probability: reads the policy, ignores the rewards."""

    name = "ignores_rewards"

    def contribute(self, view):
        return Contribution({"p": view.probabilities(), "rows": view.log.ones})

    def combine(self, stats):
        return ratio_of_means(stats, "p", "rows")


class IgnoresPolicy(BaseEstimator):
    """Mean logged reward: reads the rewards, ignores the policy."""

    name = "ignores_policy"

    def contribute(self, view):
        return Contribution({"r": view.log.column("reward"), "rows": view.log.ones})

    def combine(self, stats):
        return ratio_of_means(stats, "r", "rows")


class ChunkDependent(IS):
    """Normalises by the chunk's own mean weight: depends on the chunking."""

    name = "chunk_dependent"

    def contribute(self, view):
        w = view.weights()
        return Contribution({"rw": view.log.column("reward") * w / w.mean(), "rows": view.log.ones})


class RaisesKeyError(IS):
    """Reads a column without going through the log's checked accessor."""

    name = "raises_key_error"

    def contribute(self, view):
        r = view.log.frame["reward"].to_numpy()
        return Contribution(
            {"rw": r / view.log.frame["propensity"].to_numpy(), "rows": view.log.ones}
        )


class UndeclaredNeed(IS):
    """Needs propensities but does not say so."""

    name = "undeclared_need"
    requires = ()


class OverdeclaredNeed(IgnoresPolicy):
    """Says it needs candidate sets but never reads them."""

    name = "overdeclared_need"
    requires = ("candidates",)


class InflatedIS(IS):
    """Claims unbiasedness but inflates the estimate by 10%."""

    name = "inflated"

    def combine(self, stats):
        lin = super().combine(stats)
        return Linearisation(1.1 * lin.value, lin.columns, 1.1 * lin.gradient)


class OverconfidentIS(IS):
    """The IS value with a third of its standard error."""

    name = "overconfident"

    def combine(self, stats):
        lin = super().combine(stats)
        return Linearisation(lin.value, lin.columns, lin.gradient / 3)


@pytest.mark.parametrize(
    ("broken", "failing_check"),
    [
        (Constant(), "check_depends_on_data"),
        (IgnoresRewards(), "check_depends_on_data"),
        (IgnoresPolicy(), "check_depends_on_data"),
        (ChunkDependent(), "check_chunking_invariance"),
        (RaisesKeyError(), "check_requirements"),
        (UndeclaredNeed(), "check_requirements"),
        (OverdeclaredNeed(), "check_requirements"),
        (InflatedIS(), "check_tracks_the_truth"),
        (OverconfidentIS(), "check_unbiased"),
    ],
    ids=lambda x: x if isinstance(x, str) else x.name,
)
def test_the_kit_catches_broken_estimators(broken, failing_check):
    with pytest.raises(AssertionError, match=failing_check):
        check_estimator(broken)


def test_each_role_check_fails_on_its_own_case():
    """The failing check is the one meant, not an earlier one: the others pass."""
    known = {"check_depends_on_data": "returns a constant on purpose"}
    constant = Constant()
    constant.guarantee = None
    constant.expected_failed_checks = known
    check_estimator(constant)  # every other role check passes, the known failure is skipped


def test_known_failures_become_strict_expected_failures():
    estimator = Constant()
    estimator.expected_failed_checks = {"check_depends_on_data": "a constant, on purpose"}
    (mark,) = parametrize_with_checks([estimator]).args[1:2]
    cases = {case.id: case for case in mark}
    case = cases["constant-check_depends_on_data"]
    (xfail,) = case.marks
    assert xfail.name == "xfail" and xfail.kwargs == {
        "reason": "a constant, on purpose",
        "strict": True,
    }
    assert not cases["constant-check_protocol"].marks


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"check_nonexistent": "typo"}, "not a check of this estimator"),
        ({"check_depends_on_data": " "}, "needs a reason"),
    ],
)
def test_known_failure_declarations_are_checked(declared, message):
    estimator = IgnoresPolicy()
    estimator.expected_failed_checks = declared
    with pytest.raises(AssertionError, match=message):
        check_estimator(estimator)
    with pytest.raises(AssertionError, match=message):
        parametrize_with_checks([estimator])


def test_a_policy_ignoring_estimator_is_told_so():
    with pytest.raises(AssertionError, match="it ignores the policy"):
        check_estimator(IgnoresPolicy())


def test_the_kit_prepares_its_log_as_declared():
    seen = []
    estimator = IS()
    estimator.prepare_kit_log = lambda log: seen.append(log.n_units) or log
    kit_setup(estimator, 500)
    assert seen == [500]
