"""Balanced IPS: obp 0.5.7's B-IPW on obp's own estimated weights (pinned, see obp_reference/),
offeval's cross-fitted weights beside obp's, a brute-force computation, consistency where the
classifier is well specified, and the kit with given weights."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from oracles import delta_se, synthetic_log, unit_sums

from offeval import ColumnPolicy, InteractionLog, PolicyView, evaluate, get_registry
from offeval.testing import check_estimator
from offeval_importance import SNIPS, BalancedIPS
from offeval_obp import from_obp

PINNED = json.loads((Path(__file__).parent / "obp_reference" / "pinned.json").read_text())
REFERENCE = PINNED["reference_obp"]
CALIBRATIONS = ("calibration_cv_1", "calibration_cv_2")


def _synthetic(with_candidates: bool = False):
    data = PINNED["synthetic"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "context")}
    dists = {name: np.asarray(p["action_dist"]) for name, p in data["policies"].items()}
    return from_obp(feedback, dists, with_candidates=with_candidates)


def _obd():
    data = PINNED["obd"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "position")}
    n = data["n_rounds"]
    dists = {
        name: np.broadcast_to(np.asarray(p["by_action_position"]), (n, 80, 3))
        for name, p in data["policies"].items()
    }
    return from_obp(feedback, dists)


def _with_obps_weights(log: InteractionLog, key: str, calibration: str) -> InteractionLog:
    """obp's estimated importance weights as columns w_<policy> (rounds are rows, in order)."""
    balanced = PINNED[key]["classifier_based"][REFERENCE]["balanced"][calibration]
    return log.with_columns(
        **{
            f"w_{policy}": np.asarray(entry["estimated_importance_weights"])
            for policy, entry in balanced.items()
        }
    )


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("key", ["synthetic", "obd"])
def test_equals_obps_b_ipw_given_obps_weights(key, calibration):
    log, policies = _synthetic() if key == "synthetic" else _obd()
    log = _with_obps_weights(log, key, calibration)
    registry = get_registry()
    plain = registry.create("estimator", "b-ipw", weights="w_{policy}")
    clipped = registry.create_from_spec("estimator", "bipw:lambda_=5,weights=w_{policy}")
    ev = evaluate(log, policies, [plain, clipped])
    for policy in policies:
        theirs = PINNED[key]["classifier_based"][REFERENCE]["balanced"][calibration][policy.name]
        value = ev.estimate(policy.name, plain.label).value
        assert value == pytest.approx(theirs["b_ipw"], abs=1e-12)
        value = ev.estimate(policy.name, clipped.label).value
        assert value == pytest.approx(theirs["b_ipw_clip_5"], abs=1e-12)


def test_obps_clipping_bites_on_its_weights():
    theirs = PINNED["synthetic"]["classifier_based"][REFERENCE]["balanced"]["calibration_cv_1"]
    assert theirs["eps_greedy"]["b_ipw"] != pytest.approx(theirs["eps_greedy"]["b_ipw_clip_5"])


def test_offevals_cross_fitted_weights_are_as_good_as_obps():
    """The same classifier (obp's pinned LogisticRegression) on the same features and 2 folds.

    They cannot be equal: obp draws the target's actions with a RandomState on each
    training split and folds rounds with KFold; offeval draws them from a hash of the
    trajectory and position, and folds by a hash of the trajectory. So the weights are
    compared: with each other, and with the true ones (pi/pscore, known on this bandit).
    """
    from sklearn.linear_model import LogisticRegression

    log, policies = _synthetic(with_candidates=True)
    balanced = PINNED["synthetic"]["classifier_based"][REFERENCE]["balanced"]["calibration_cv_1"]
    model = LogisticRegression(C=1.0, solver="newton-cg", tol=1e-10, max_iter=1000)
    estimator = BalancedIPS(features="x0+x1+x2", classifier=model, folds=2)
    for policy in policies:
        view = PolicyView(policy, log)
        true = np.log(view.probabilities() / log.column("propensity"))
        ours = np.log(estimator._fitted(view)[0])
        theirs = np.log(np.asarray(balanced[policy.name]["estimated_importance_weights"]))
        assert np.corrcoef(ours, theirs)[0, 1] > 0.9
        error, obp_error = np.abs(ours - true).mean(), np.abs(theirs - true).mean()
        assert error < 1.1 * obp_error, (policy.name, error, obp_error)


def _small_log() -> InteractionLog:
    frame = pd.DataFrame(
        {
            "trajectory": ["a", "a", "b", "c", "c", "c"],
            "item": [1, 2, 1, 3, 1, 2],
            "position": [1, 2, 1, 1, 2, 3],
            "reward": [1.0, 0.0, 1.0, 0.5, 1.0, 2.0],
            "pi": [0.9, 0.5, 0.6, 0.0, 0.7, 0.1],
            "w_pi": [1.5, 0.2, 4.0, 0.0, 0.8, 2.5],
        },
        index=[f"r{i}" for i in range(6)],
    )
    return InteractionLog.from_frame(frame)


@pytest.mark.parametrize("cap", [float("inf"), 2.0])
def test_brute_force_on_given_weights(cap):
    log = _small_log()
    w = np.minimum(log.frame["w_pi"].to_numpy(), cap)
    y = unit_sums(log, log.frame["reward"].to_numpy() * w)
    value, se = delta_se(lambda m: m[0] / m[1], np.column_stack([y, unit_sums(log, w)]))
    est = evaluate(log, [ColumnPolicy("pi")], [BalancedIPS(cap=cap, weights="w_{policy}")])
    est = est.estimate("pi")
    assert est.value == pytest.approx(value, rel=1e-12)
    assert est.se == pytest.approx(se, rel=1e-6)
    raw = log.frame["w_pi"].to_numpy()
    assert est.diagnostics["max_weight"] == pytest.approx(raw.max())
    assert est.diagnostics["ess"] == pytest.approx(raw.sum() ** 2 / (raw @ raw))
    assert est.diagnostics["clipped"] == np.count_nonzero(raw > cap)


def test_given_the_true_weights_it_is_snips():
    log, policy, _ = synthetic_log(2_000, seed=3)
    true = PolicyView(policy, log).weights()
    log = log.with_columns(w_target=true)
    ev = evaluate(log, [policy], [BalancedIPS(weights="w_{policy}"), SNIPS()])
    a, b = ev.estimate("target", "balanced_ips(weights=w_{policy})"), ev.estimate("target", "snips")
    assert a.value == pytest.approx(b.value, rel=1e-12)
    assert a.se == pytest.approx(b.se, rel=1e-9)


@pytest.mark.filterwarnings("ignore:the mean importance weight")
def test_given_weights_pass_the_kit():
    """With the kit's policies' true weights given, every check passes (chunking included)."""
    estimator = BalancedIPS(weights="w_{policy}")

    def prepare(log):
        from offeval.testing import kit_setup

        _, _, policies = kit_setup(BalancedIPS(), 10)  # the kit's two target policies
        return log.with_columns(**{f"w_{p.name}": PolicyView(p, log).weights() for p in policies})

    estimator.prepare_kit_log = prepare
    check_estimator(estimator)


def test_consistent_where_the_classifier_is_well_specified():
    """Logging and target depend on the position only: one-hot items per position is the
    right model, so the estimate lies within 4.5 standard errors of the truth (fixed seed)."""
    log, policy, truth = synthetic_log(5_000, seed=11)
    est = evaluate(log, [policy], [BalancedIPS()]).estimate("target")
    assert abs(est.value - truth) < 4.5 * est.se
    assert est.diagnostics["mean_weight"] == pytest.approx(1.0, abs=0.05)
    assert est.diagnostics["slots_without_target_mass"] == 0


def test_within_a_chunk_the_order_of_trajectories_does_not_matter():
    log, policy, _ = synthetic_log(1_000, seed=2)  # 2,000 rows: one chunk
    order = np.random.default_rng(0).permutation(log.n_units)
    frame = log.frame.set_index("trajectory").loc[order].reset_index()
    shuffled = InteractionLog.from_frame(frame, candidates=log.candidates.drop(columns="slot"))
    estimator = BalancedIPS(folds=3, seed=4)
    a = evaluate(log, [policy], [estimator]).estimate("target")
    b = evaluate(shuffled, [policy], [estimator]).estimate("target")
    assert a.value == pytest.approx(b.value, rel=1e-9)
    assert a.se == pytest.approx(b.se, rel=1e-9)
    c = evaluate(log, [policy], [BalancedIPS(folds=3, seed=5)]).estimate("target")
    assert c.value != pytest.approx(a.value, rel=1e-9)  # another seed: other draws and folds


def test_the_command_line_spec_builds_it():
    built = get_registry().create_from_spec(
        "estimator", "bipw:features=x0+x1,classifier=logistic,folds=3,lambda_=10"
    )
    assert isinstance(built, BalancedIPS)
    assert (built.features, built.folds, built.cap) == ("x0+x1", 3, 10)
    assert built.requires == ("candidates", "x0", "x1")
    assert BalancedIPS(weights="w").requires == ("w",)
    assert BalancedIPS(weights="w_{policy}").requires == ("w_*",)
