"""obp's own numbers (pinned from obp 0.5.7, see tests/obp_reference): offeval's IPS family
on a log and policies read with from_obp gives the same values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from offeval import evaluate, from_obp
from offeval_ncis import IPS, SNIPS, ClippedIPS

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
