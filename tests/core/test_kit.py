"""The conformance kit in the core alone: its own world's exact truth, no plugin loaded."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from oracles import Constant
from reference_estimators import IS, SNIS

from offeval.kitworld import KitWorld
from offeval.registry.manager import active_registry
from offeval.testing import check_estimator, checks_for, kit_setup


def halving(ranks):
    """An examination model: each rank examined half as often as the one above."""
    return 0.5 ** (np.asarray(ranks) - 1.0)


def _names(estimator) -> set[str]:
    return {check.__name__ for check in checks_for(estimator)}


@pytest.mark.parametrize("estimator", [IS(), SNIS()], ids=lambda e: e.name)
def test_a_core_estimator_passes_the_kit_with_no_plugin_loaded(estimator):
    assert "check_tracks_the_truth" in _names(estimator)
    assert ("check_unbiased" in _names(estimator)) == (estimator.guarantee == "unbiased")
    check_estimator(estimator)
    assert active_registry().names("environment") == []
    assert not [m for m in sys.modules if m.startswith("offeval_")]


@pytest.mark.filterwarnings("ignore:constant's intervals should not be read")
def test_a_constant_estimator_fails_the_kit():
    with pytest.raises(AssertionError, match="check_depends_on_data failed"):
        check_estimator(Constant())


@pytest.mark.filterwarnings("ignore:constant's intervals should not be read")
def test_a_constant_estimator_declared_data_blind_still_fails_on_the_truth():
    constant = Constant()
    constant.expected_failed_checks = {"check_depends_on_data": "a constant, on purpose"}
    with pytest.raises(AssertionError, match="check_tracks_the_truth failed"):
        check_estimator(constant)


@pytest.mark.parametrize("estimand", ["reward_per_impression", "reward_per_trajectory"])
def test_the_worlds_truth_is_what_its_policies_earn_online(estimand):
    """Each target policy's own logs (200,000 trajectories, fixed seed) average to the exact
    value within 4.5 standard errors; a trajectory earns its three ranks' rewards."""
    world = KitWorld(seed=5)
    for policy in world.candidate_policies(4):
        reward = world.simulate(policy, 200_000, seed=3).column("reward").reshape(-1, 3)
        earned = reward.sum(axis=1) if estimand == "reward_per_trajectory" else reward.ravel()
        z = (earned.mean() - world.true_value(policy, estimand)) / (
            earned.std(ddof=1) / np.sqrt(len(earned))
        )
        assert abs(z) < 4.5, (policy.name, z)


def test_the_worlds_policies_are_distributions_over_slates():
    world = KitWorld(seed=5)
    for policy in [world.logging_policy(), *world.candidate_policies(4)]:
        np.testing.assert_allclose(policy.slates.sum(axis=1), 1, rtol=1e-9)
        np.testing.assert_allclose(policy.marginals.sum(axis=1), 1, rtol=1e-9)  # per rank
    values = [world.true_value(p, "reward_per_impression") for p in world.candidate_policies(4)]
    assert values[-1] > values[0]  # the kit compares the first and the last


def test_an_assumed_examination_sets_the_worlds_users():
    class Assumes(IS):
        assumptions = {"examination": halving}

    env, log, _ = kit_setup(Assumes(), 500)
    assert env.examination(np.array([1, 2, 3])).tolist() == [1.0, 0.5, 0.25]
    check_estimator(Assumes())


def test_an_assumption_the_world_cannot_meet_asks_for_a_kit_environment():
    class Cascade(IS):
        assumptions = {"user_model": "cascade"}

    with pytest.raises(AssertionError, match="cannot meet the assumptions.*kit_environment"):
        check_estimator(Cascade())


def test_a_named_environment_that_is_not_loaded_is_said():
    class Elsewhere(IS):
        kit_environment = "default"

    with pytest.raises(AssertionError, match="environment 'default'.*no loaded plugin"):
        check_estimator(Elsewhere())
