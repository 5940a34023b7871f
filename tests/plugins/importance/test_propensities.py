"""Estimated logging propensities: obp 0.5.7's PropensityScoreEstimator (pinned, see
obp_reference/) with the same classifier and folds, IPW/SNIPW on obp's estimates, and the
item frequencies a featureless classifier must learn."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from offeval import ColumnPolicy, InteractionLog, OffevalWarning, evaluate
from offeval_importance import IPS, SNIPS, estimate_propensities
from offeval_obp import from_obp

PINNED = json.loads((Path(__file__).parent / "obp_reference" / "pinned.json").read_text())
REFERENCE = PINNED["reference_obp"]


def _obps_classifier():
    """The classifier the pinned numbers used (obp_reference/generate.py's)."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1.0, solver="newton-cg", tol=1e-10, max_iter=1000)


def _synthetic():
    data = PINNED["synthetic"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "context")}
    dists = {name: np.asarray(p["action_dist"]) for name, p in data["policies"].items()}
    return from_obp(feedback, dists)


@pytest.mark.parametrize(
    ("calibration_cv", "tolerance"),
    # Calibration fits a sigmoid by another optimizer in newer scikit-learn (L-BFGS-B, not
    # 1.1.3's fmin_bfgs), which stops ~2e-7 from 1.1.3's answer; the classifier alone,
    # fitted by Newton steps to 1e-10, agrees to ~1e-10 across versions.
    [(1, 1e-9), (2, 1e-6)],
)
def test_cross_fitted_like_obps_with_its_folds(calibration_cv, tolerance):
    log, _ = _synthetic()
    based = PINNED["synthetic"]["classifier_based"][REFERENCE]
    estimated = estimate_propensities(
        log,
        _obps_classifier(),
        "x0+x1+x2",
        folds=np.asarray(based["kfold"]),  # obp's KFold(2, shuffle, 12345) over rounds
        calibration_cv=calibration_cv,
    )
    theirs = based["propensities"][f"calibration_cv_{calibration_cv}"]
    assert theirs["n_folds"] == 2
    np.testing.assert_allclose(
        estimated.column("propensity"), theirs["estimated_pscore"], rtol=0, atol=tolerance
    )
    # not the logged propensities: the classifier is a rough model of the logger
    assert np.abs(estimated.column("propensity") - log.column("propensity")).max() > 0.05


@pytest.mark.parametrize("key", ["synthetic", "obd"])
def test_ipw_and_snipw_on_obps_estimated_propensities_equal_obps(key):
    data = PINNED[key]
    based = data["classifier_based"][REFERENCE]["propensities"]
    for calibration in ("calibration_cv_1", "calibration_cv_2"):
        feedback = {k: np.asarray(data[k]) for k in ("action", "reward")}
        feedback["pscore"] = np.asarray(based[calibration]["estimated_pscore"])
        n = data["n_rounds"]
        if key == "obd":
            feedback["position"] = np.asarray(data["position"])
            dists = {
                name: np.broadcast_to(np.asarray(p["by_action_position"]), (n, 80, 3))
                for name, p in data["policies"].items()
            }
        else:
            dists = {name: np.asarray(p["action_dist"]) for name, p in data["policies"].items()}
        log, policies = from_obp(feedback, dists)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", OffevalWarning)
            ev = evaluate(log, policies, [IPS(), SNIPS()])
        # fitted in sample on 80 actions, obp's propensities are too high on OBD: offeval says so
        warned = any("mean importance weight" in str(w.message) for w in seen)
        assert warned == (key == "obd")
        for policy in policies:
            theirs = based[calibration][policy.name]
            assert ev.estimate(policy.name, "ips").value == pytest.approx(theirs["ipw"], abs=1e-12)
            value = ev.estimate(policy.name, "snips").value
            assert value == pytest.approx(theirs["snipw"], abs=1e-12)


def test_obp_cannot_cross_fit_the_open_bandit_rows():
    """An action missing from a training split crashes obp's PropensityScoreEstimator, so
    its OBD propensities are pinned fitted in sample (n_folds=1), which offeval does not do."""
    based = PINNED["obd"]["classifier_based"][REFERENCE]
    assert based["every_action_trained"] is False
    assert based["propensities"]["calibration_cv_1"]["n_folds"] == 1


def _log(n: int = 3_000, seed: int = 0) -> InteractionLog:
    """Two positions, three items whose logging probabilities depend on the position only."""
    rng = np.random.default_rng(seed)
    mu = np.array([[0.6, 0.3, 0.1], [0.2, 0.3, 0.5]])
    position = np.tile([1, 2], n)
    item = (rng.random(2 * n)[:, None] > np.cumsum(mu, axis=1)[position - 1]).sum(axis=1)
    frame = pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(n), 2),
            "position": position,
            "item": np.array(["a", "b", "c"])[item],
            "reward": rng.random(2 * n),
            "propensity": mu[position - 1, item],
        }
    )
    cands = pd.DataFrame(
        {
            "trajectory": np.repeat(frame["trajectory"], 3),
            "position": np.repeat(position, 3),
            "item": np.tile(["a", "b", "c"], 2 * n),
            "propensity": mu[np.repeat(position, 3) - 1, np.tile([0, 1, 2], 2 * n)],
        }
    )
    return InteractionLog.from_frame(frame, candidates=cands)


def test_without_features_each_fold_learns_the_other_folds_item_frequencies():
    log = _log()
    folds = (log.frame["trajectory"].to_numpy() % 3).astype(int)
    estimated = estimate_propensities(log, folds=folds)  # "logistic", no features
    frame = log.frame.assign(fold=folds)
    expected = np.empty(log.n_rows)
    for (position, fold), rows in frame.groupby(["position", "fold"]).groups.items():
        train = frame[(frame["position"] == position) & (frame["fold"] != fold)]
        share = train["item"].value_counts(normalize=True)
        expected[frame.index.get_indexer(rows)] = share[frame.loc[rows, "item"]].to_numpy()
    np.testing.assert_allclose(estimated.column("propensity"), expected, atol=1e-4)
    # the candidate table gets every item's estimate, the logged item's equal to its row's
    cands = estimated.candidates
    slot_sums = cands.groupby("slot")["propensity"].sum().to_numpy()
    np.testing.assert_allclose(slot_sums, 1.0, atol=1e-9)
    logged = cands["item"].to_numpy() == estimated.frame["item"].to_numpy()[cands["slot"]]
    np.testing.assert_allclose(
        cands["propensity"].to_numpy()[logged],
        estimated.column("propensity")[cands["slot"].to_numpy()[logged]],
        rtol=1e-12,
    )


def test_hashed_folds_do_not_depend_on_the_order_of_trajectories():
    log = _log(500, seed=1)
    order = np.random.default_rng(0).permutation(log.n_units)
    frame = log.frame.set_index("trajectory").loc[order].reset_index()
    shuffled = InteractionLog.from_frame(frame)
    a = estimate_propensities(log, folds=4, seed=2)
    b = estimate_propensities(shuffled, folds=4, seed=2)
    ours = pd.Series(a.column("propensity"), index=[a.frame["trajectory"], a.frame["position"]])
    theirs = pd.Series(b.column("propensity"), index=[b.frame["trajectory"], b.frame["position"]])
    np.testing.assert_allclose(ours.sort_index(), theirs.sort_index(), rtol=1e-6)


def test_ips_on_estimated_propensities_stays_near_the_truth():
    """Where the classifier is well specified, IPS with cross-fitted propensities is within
    4.5 (propensity-blind) standard errors of the true value (fixed seed)."""
    log = _log(20_000, seed=5)
    pi = {1: {"a": 0.1, "b": 0.1, "c": 0.8}, 2: {"a": 0.5, "b": 0.25, "c": 0.25}}
    target = [pi[p][i] for p, i in zip(log.frame["position"], log.frame["item"], strict=True)]
    log = log.with_columns(target=np.asarray(target))
    estimated = estimate_propensities(log, folds=5)
    est = evaluate(estimated, [ColumnPolicy("target")], [IPS()]).estimate("target")
    assert abs(est.value - 0.5) < 4.5 * est.se  # rewards are uniform on [0, 1]
