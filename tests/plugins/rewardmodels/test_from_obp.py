"""obp's Open Bandit Dataset rows (no pi_b) into DM and DR in one call, with obp's estimator
names: the numbers of obp's formulas written out in numpy, and obp 0.5.7's own IPW."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from offeval import evaluate, get_registry
from offeval_obp import from_obp

PINNED = json.loads(
    (Path(__file__).parents[1] / "importance" / "obp_reference" / "pinned.json").read_text()
)
OBD = PINNED["obd"]
N, ACTIONS, SLOTS = OBD["n_rounds"], OBD["n_actions"], OBD["len_list"]


def _inputs():
    """The pinned rows as obp's bandit_feedback (no pi_b), its two policies, and a reward model
    that varies with round, action and position."""
    feedback = {k: np.asarray(OBD[k]) for k in ("action", "reward", "pscore", "position")}
    feedback["n_actions"] = ACTIONS
    dists = {
        name: np.broadcast_to(np.asarray(p["by_action_position"]), (N, ACTIONS, SLOTS))
        for name, p in OBD["policies"].items()
    }
    i, a, k = np.meshgrid(np.arange(N), np.arange(ACTIONS), np.arange(SLOTS), indexing="ij")
    q = 0.002 + 0.004 * ((7 * i + 3 * a + k) % 11) / 10
    return feedback, dists, q


def _obp(feedback, dist, q) -> dict[str, float]:
    """obp 0.5.7's DirectMethod and DoublyRobust (``_estimate_round_rewards``), in numpy."""
    rounds, action, position = np.arange(N), feedback["action"], feedback["position"]
    w = dist[rounds, action, position] / feedback["pscore"]
    at_position = q[rounds, :, position]
    dm = np.average(at_position, weights=dist[rounds, :, position], axis=1)
    dr = dm + w * (feedback["reward"] - q[rounds, action, position])
    return {"dm": float(dm.mean()), "dr": float(dr.mean())}


def test_dm_and_dr_on_the_open_bandit_dataset_without_pi_b_in_one_call():
    feedback, dists, q = _inputs()
    assert "pi_b" not in feedback
    log, policies = from_obp(feedback, dists, estimated_rewards_by_reg_model=q)
    registry = get_registry()
    names = ["dm", "dr", "ipw", "snipw", "switch-dr", "dr-os:lambda_=inf"]
    estimators = [registry.create_from_spec("estimator", n) for n in names]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = evaluate(log, policies, estimators, progress=False)
    for policy in policies:
        obp = _obp(feedback, dists[policy.name], q)
        theirs = OBD["estimates"]["0.5.7"][policy.name]
        value = {e.label: ev.estimate(policy.name, e.label).value for e in estimators}
        assert value["dm"] == pytest.approx(obp["dm"], abs=1e-14)
        assert value["dr"] == pytest.approx(obp["dr"], abs=1e-14)
        assert value["switch-dr"] == pytest.approx(obp["dr"], abs=1e-14)  # obp's default: DR
        assert value["dr-os(lambda_=inf)"] == pytest.approx(obp["dr"], abs=1e-14)
        assert value["ipw"] == pytest.approx(theirs["ipw"]["policy_value"], abs=1e-14)
        assert value["snipw"] == pytest.approx(theirs["snipw"]["policy_value"], abs=1e-14)
        diagnostics = ev.estimate(policy.name, "dr").diagnostics
        assert diagnostics["target_mass_per_slot"] == pytest.approx(1.0)


def test_sessions_change_the_standard_errors_not_the_values():
    """The OBD rows in sessions of three consecutive rounds (whatever their positions: a
    session holds at most one round per position, so the first rounds of each position are
    paired up): values as per round, standard errors as the brute-force clustered ones."""
    feedback, dists, q = _inputs()
    position = feedback["position"]
    sessions = np.empty(N, dtype=np.int64)
    for k in range(SLOTS):  # the j-th round at each position joins session j
        at = np.flatnonzero(position == k)
        sessions[at] = np.arange(at.size)
    dr = get_registry().create("estimator", "dr")
    per_round = evaluate(*from_obp(feedback, dists, estimated_rewards_by_reg_model=q), [dr])
    log, policies = from_obp(feedback, dists, estimated_rewards_by_reg_model=q, sessions=sessions)
    per_session = evaluate(log, policies, [dr])
    for policy in policies:
        a, b = per_round.estimate(policy.name, "dr"), per_session.estimate(policy.name, "dr")
        assert a.value == pytest.approx(b.value, abs=1e-14)
        rounds = np.arange(N)
        w = dists[policy.name][rounds, feedback["action"], position] / feedback["pscore"]
        dm = np.average(
            q[rounds, :, position], weights=dists[policy.name][rounds, :, position], axis=1
        )
        terms = dm + w * (feedback["reward"] - q[rounds, feedback["action"], position])
        sums = np.bincount(sessions, weights=terms - terms.mean())
        size = np.bincount(sessions).mean()
        se = np.std(sums, ddof=1) / np.sqrt(sums.size) / size
        assert b.se == pytest.approx(se, rel=1e-9)
        assert b.n_units == sums.size and a.n_units == N
