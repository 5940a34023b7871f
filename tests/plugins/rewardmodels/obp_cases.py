"""obp's logs as offeval logs, for the tests against obp 0.5.7's pinned numbers.

The inputs are those of ``tests/plugins/importance/obp_reference/pinned.json`` (obp's
synthetic bandit with obp's fitted model, 2,000 rows of the Open Bandit
Dataset sample), the OBD rows' reward model that of
``tests/plugins/rewardmodels/obp_reference/pinned.json``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

from offeval_obp import from_obp

HERE = Path(__file__).parent
INPUTS = HERE.parent / "importance" / "obp_reference" / "pinned.json"
PINNED = HERE / "obp_reference" / "pinned.json"


@cache
def inputs() -> dict:
    return json.loads(INPUTS.read_text())


@cache
def pinned() -> dict:
    return json.loads(PINNED.read_text())


def number(x) -> float:
    """A pinned number ("inf" is infinity)."""
    return float(x)


def synthetic():
    """obp's synthetic bandit: the log (with candidates and obp's model) and its two policies.

    obp's estimators do not read the logger's probabilities of the actions it
    did not take; the candidate table needs some, so they are spread evenly
    (they only enter the support diagnostics)."""
    from offeval_obp import from_obp_rewards

    data = inputs()["synthetic"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "context")}
    n, k = data["n_rounds"], data["n_actions"]
    rest = (1 - feedback["pscore"]) / (k - 1)
    pi_b = np.repeat(rest[:, None], k, axis=1)
    pi_b[np.arange(n), feedback["action"]] = feedback["pscore"]
    feedback["pi_b"] = pi_b
    dists = {name: np.asarray(p["action_dist"]) for name, p in data["policies"].items()}
    log, policies = from_obp(feedback, dists, with_candidates=True)
    q_hat = np.asarray(data["estimated_rewards_by_reg_model"])
    return from_obp_rewards(log, q_hat).attach(log), policies


def obd():
    """The Open Bandit Dataset rows (3 positions, 80 actions, no pi_b), their pinned model."""
    from offeval_obp import from_obp_rewards

    data = inputs()["obd"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "position")}
    feedback["n_actions"] = data["n_actions"]
    n, actions, slots = data["n_rounds"], data["n_actions"], data["len_list"]
    dists = {
        name: np.broadcast_to(np.asarray(p["by_action_position"]), (n, actions, slots))
        for name, p in data["policies"].items()
    }
    log, policies = from_obp(feedback, dists, with_candidates=True)
    q_hat = np.zeros((n, actions, slots))
    q_hat[np.arange(n), :, feedback["position"]] = np.asarray(pinned()["obd"]["q_micro"]) / 1e6
    return from_obp_rewards(log, q_hat).attach(log), policies
