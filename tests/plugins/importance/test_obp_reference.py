"""obp's own numbers (pinned from obp 0.5.7, see tests/plugins/importance/obp_reference): offeval's
IPS family on a log and policies read with from_obp gives the same values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from offeval import evaluate
from offeval_importance import IPS, SNIPS, ClippedIPS
from offeval_obp import from_obp

PINNED = json.loads((Path(__file__).parent / "obp_reference" / "pinned.json").read_text())
REFERENCE = PINNED["reference_obp"]


def test_ipw_snipw_and_clipped_ipw_on_obps_synthetic_bandit():
    data = PINNED["synthetic"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "context")}
    dists = {name: np.asarray(p["action_dist"]) for name, p in data["policies"].items()}
    log, policies = from_obp(feedback, dists)
    ev = evaluate(log, policies, [IPS(), SNIPS(), ClippedIPS(cap=5.0)])
    ours = {"ipw": "ips", "snipw": "snips", "ipw_clip_5": "clipped_ips(cap=5)"}
    for name in dists:
        theirs = PINNED["synthetic"]["estimates"][REFERENCE][name]
        for obp_name, label in ours.items():
            value = ev.estimate(name, label).value
            assert value == pytest.approx(theirs[obp_name]["policy_value"], abs=1e-12), (
                name,
                obp_name,
            )


def test_ipw_and_snipw_with_positions_on_the_open_bandit_dataset_sample():
    data = PINNED["obd"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "position")}
    n = data["n_rounds"]
    dists = {
        name: np.broadcast_to(np.asarray(p["by_action_position"]), (n, 80, 3))
        for name, p in data["policies"].items()
    }
    log, policies = from_obp(feedback, dists)
    ev = evaluate(log, policies, [IPS(), SNIPS()])
    for name in dists:
        theirs = data["estimates"][REFERENCE][name]
        assert ev.estimate(name, "ips").value == pytest.approx(
            theirs["ipw"]["policy_value"], abs=1e-12
        )
        assert ev.estimate(name, "snips").value == pytest.approx(
            theirs["snipw"]["policy_value"], abs=1e-12
        )


def test_reward_model_estimators_equal_obps_on_its_synthetic_bandit():
    """DM, DR, SNDR, Switch-DR and DR-OS against obp 0.5.7, with obp's own fitted model.

    obp's estimators do not read the logger's probabilities of the actions it did not
    take; the candidate table needs some, so they are spread evenly (they only enter
    the support diagnostics)."""
    from offeval_obp import from_obp_rewards
    from offeval_rewardmodels import DM, DR, DROS, SNDR, SwitchDR

    data = PINNED["synthetic"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "context")}
    n, k = data["n_rounds"], data["n_actions"]
    rest = (1 - feedback["pscore"]) / (k - 1)
    pi_b = np.repeat(rest[:, None], k, axis=1)
    pi_b[np.arange(n), feedback["action"]] = feedback["pscore"]
    feedback["pi_b"] = pi_b
    dists = {name: np.asarray(p["action_dist"]) for name, p in data["policies"].items()}
    log, policies = from_obp(feedback, dists, with_candidates=True)
    log = from_obp_rewards(log, np.asarray(data["estimated_rewards_by_reg_model"])).attach(log)
    estimators = {
        "dm": DM(),
        "dr": DR(),
        "sndr": SNDR(),
        "switch_dr_5": SwitchDR(tau=5.0),
        "dros_5": DROS(lambda_=5.0),
    }
    ev = evaluate(log, policies, list(estimators.values()))
    for name in dists:
        theirs = data["estimates"][REFERENCE][name]
        for obp_name, estimator in estimators.items():
            value = ev.estimate(name, estimator.label).value
            assert value == pytest.approx(theirs[obp_name]["policy_value"], abs=1e-12), (
                name,
                obp_name,
            )
