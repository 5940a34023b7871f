"""obp's own numbers from files: the Open Bandit Dataset rows and obp 0.5.7's cross-fitted
reward model (pinned in tests/plugins/cli_obp_reference by its generator, never computed
here) written as a user's log and candidate files; `offeval evaluate LOG --candidates CANDS`
gives obp's DM, DR, SNDR, Switch-DR and DR-OS, read whole or streamed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from offeval.cli.shell import main

HERE = Path(__file__).parent
MODEL = json.loads((HERE / "cli_obp_reference" / "pinned.json").read_text())
OBD = json.loads((HERE / "importance" / "obp_reference" / "pinned.json").read_text())["obd"]
#: obp's estimator names, and the offeval specs of the same estimators.
SPECS = {
    "dm": "dm",
    "dr": "dr",
    "sndr": "sndr",
    "switch_dr_5": "switch_dr:tau=5",
    "dros_5": "dr_os:lambda_=5",
}
#: The labels offeval gives them in its tables (the model's column is not the default one).
LABELS = {
    "dm": "dm(reward_model=q_hat)",
    "dr": "dr(reward_model=q_hat)",
    "sndr": "sndr(reward_model=q_hat)",
    "switch_dr_5": "switch_dr(tau=5, reward_model=q_hat)",
    "dros_5": "dr_os(lambda_=5, reward_model=q_hat)",
}


def q_hat() -> np.ndarray:
    """obp's predictions, (rounds, actions) at each round's position, from its fitted models."""
    context = np.array([[int(c) for c in row] for row in MODEL["context"]], dtype=float)
    items = np.asarray(MODEL["action_context"])
    coef = np.asarray(MODEL["coefficients"])  # (fold, position, features)
    intercept = np.asarray(MODEL["intercepts"])  # (fold, position)
    fold, position = np.asarray(MODEL["fold"]), np.asarray(OBD["position"])
    w = coef[fold, position]  # each round's model
    d = context.shape[1]
    by_context = np.einsum("nd,nd->n", context, w[:, :d]) + intercept[fold, position]
    return expit(by_context[:, None] + w[:, d:] @ items.T)


def test_the_pinned_model_gives_obps_predictions():
    q = q_hat()
    rounds = MODEL["checked_rounds"]
    np.testing.assert_allclose(q[rounds], MODEL["q_hat_checked"], rtol=1e-12, atol=0)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    """The rows as a user's files: a log (round, pos, action, click, pscore, each policy's
    probability, q_hat) and its candidates (every action at each round's position)."""
    folder = tmp_path_factory.mktemp("obd")
    n, k = OBD["n_rounds"], OBD["n_actions"]
    action, position = np.asarray(OBD["action"]), np.asarray(OBD["position"])
    q = q_hat()
    log = pd.DataFrame(
        {
            "round": np.arange(n),
            "pos": position + 1,
            "action": action,
            "click": OBD["reward"],
            "pscore": OBD["pscore"],
            "q_hat": q[np.arange(n), action],
        }
    )
    cands = pd.DataFrame(
        {
            "round": np.repeat(np.arange(n), k),
            "pos": np.repeat(position + 1, k),
            "action": np.tile(np.arange(k), n),
            "pscore": 1 / k,  # the random logger's: each action alike at each position
            "q_hat": q.ravel(),
        }
    )
    for name, policy in OBD["policies"].items():
        table = np.asarray(policy["by_action_position"])  # (action, position)
        log[f"pi_{name}"] = table[action, position]
        cands[f"pi_{name}"] = table[cands["action"], cands["pos"] - 1]
    paths = {}
    for suffix in ("csv", "parquet"):
        paths[suffix] = (folder / f"log.{suffix}", folder / f"cands.{suffix}")
        for frame, path in zip((log, cands), paths[suffix], strict=True):
            frame.to_csv(path, index=False) if suffix == "csv" else frame.to_parquet(path)
    return paths


ROLES = ["trajectory=round", "position=pos", "item=action", "propensity=pscore"]


def evaluate_files(log, cands, out, *extra) -> pd.DataFrame:
    argv = ["evaluate", str(log), "--candidates", str(cands), "--quiet", "--out", str(out)]
    argv += [a for role in [*ROLES, "reward=click"] for a in ("--map", role)]
    argv += [a for role in ROLES for a in ("--candidates-map", role)]
    argv += [a for name in OBD["policies"] for a in ("--policy", f"{name}=pi_{name}")]
    argv += [a for spec in SPECS.values() for a in ("--estimator", spec)]
    assert main([*argv, "--reward-model", "q_hat", *extra]) == 0
    return pd.read_csv(out / "estimates.csv").set_index(["policy", "estimator"])["value"]


def test_evaluate_from_files_gives_obps_reward_model_estimates(files, tmp_path):
    values = evaluate_files(*files["csv"], tmp_path / "out")
    for policy, theirs in MODEL["estimates"].items():
        for obp_name, value in theirs.items():
            ours = values[(policy, LABELS[obp_name])]
            assert ours == pytest.approx(value, abs=1e-10, rel=0), (policy, obp_name)


def test_streamed_files_give_the_values_read_whole(files, tmp_path):
    whole = evaluate_files(*files["parquet"], tmp_path / "whole")
    streamed = evaluate_files(
        *files["parquet"], tmp_path / "stream", "--stream", "--chunk-rows", "97"
    )
    pd.testing.assert_series_equal(streamed, whole, rtol=1e-12, atol=1e-15)
    assert len(whole) == len(OBD["policies"]) * len(SPECS)
