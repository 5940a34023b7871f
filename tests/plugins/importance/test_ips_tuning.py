"""The IPS *Tuning estimators against obp 0.5.7's own numbers (pinned by
tests/plugins/rewardmodels/obp_reference/generate.py on the inputs of obp_reference/ here): the
same values to 1e-10, and the same chosen parameter."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from offeval import evaluate
from offeval_importance.tuning import IPSTuning, SubGaussianIPSTuning
from offeval_obp import from_obp

HERE = Path(__file__).parent
INPUTS = json.loads((HERE / "obp_reference" / "pinned.json").read_text())
PINNED = json.loads((HERE.parent / "rewardmodels" / "obp_reference" / "pinned.json").read_text())
TUNED = {"ips_tuning": IPSTuning, "sg_ips_tuning": SubGaussianIPSTuning}


def synthetic():
    data = INPUTS["synthetic"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "context")}
    dists = {name: np.asarray(p["action_dist"]) for name, p in data["policies"].items()}
    return from_obp(feedback, dists)


def obd():
    data = INPUTS["obd"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "position")}
    n, actions, slots = data["n_rounds"], data["n_actions"], data["len_list"]
    dists = {
        name: np.broadcast_to(np.asarray(p["by_action_position"]), (n, actions, slots))
        for name, p in data["policies"].items()
    }
    return from_obp(feedback, dists)


@pytest.mark.parametrize("name, build", [("synthetic", synthetic), ("obd", obd)])
def test_ips_tuning_chooses_obps_parameter_and_gives_its_value(name, build):
    log, policies = build()
    theirs = PINNED[name]["estimates"]
    mine = {p.name: [e for e in theirs[p.name]["tuning"] if e["key"] in TUNED] for p in policies}
    estimators = [
        TUNED[e["key"]](
            lambdas=[float(v) for v in e["lambdas"]],
            tuning_method=e["tuning_method"],
            use_bias_upper_bound=e["use_bias_upper_bound"],
            delta=e["delta"],
        )
        for e in mine[policies[0].name]
    ]
    ev = evaluate(log, policies, estimators)
    for policy in policies:
        for entry, estimator in zip(mine[policy.name], estimators, strict=True):
            est = ev.estimate(policy.name, estimator.label)
            where = (policy.name, estimator.label)
            assert est.diagnostics["fitted_lambda_"] == float(entry["best_hyperparam"]), where
            assert est.value == pytest.approx(entry["policy_value"], rel=1e-10, abs=1e-15), where
