"""The slate estimators against obp 0.5.7's, on numbers pinned by obp_reference/generate.py.

The log is obp's SyntheticSlateBanditDataset with obp's logging propensities;
the targets are a Plackett-Luce ranker (obp computed its propensities) and a
two-stage ranker (propensities enumerated in plain Python by the generator,
as obp has no two-stage policies). offeval computes the targets' probabilities
itself from their logits, then each estimator; obp was given the pinned ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from offeval import InteractionLog, PolicyView, evaluate
from offeval_simulation import RankingPolicy
from offeval_slates import IIPS, RIPS, CascadeDR
from offeval_slates.prefixes import target_log_prefix

PINNED = json.loads(Path(__file__).with_name("obp_reference").joinpath("pinned.json").read_text())
N_ACTIONS, LEN_LIST = 5, 3
N_ROUNDS = len(PINNED["log"]["slate_id"]) // LEN_LIST


def policy(name: str) -> RankingPolicy:
    """The pinned target as the simulator's ranker: one context per round, actions 0..4."""
    candidates = np.tile(np.arange(N_ACTIONS), (N_ROUNDS, 1))
    spec = PINNED["policies"][name]
    if name == "plackett_luce":
        return RankingPolicy(name, np.array(spec["logits"]), candidates, LEN_LIST, 1.0)
    return RankingPolicy(
        name,
        np.array(spec["ranker_logits"]),
        candidates,
        LEN_LIST,
        1.0,
        generator_scores=np.array(spec["generator_logits"]),
        generator_size=spec["generator_size"],
    )


def obp_log(q_hat: np.ndarray | None = None) -> InteractionLog:
    """obp's slate log as an offeval log: positions 1-based, every action a candidate of
    every slot with the reward model. obp gives the logger's propensity of the logged action
    only; its Plackett-Luce logger shows every action at every slot with a positive
    probability, which the candidates' 0.2 stands for (read only by the support check)."""
    raw = PINNED["log"]
    q = np.array(PINNED["q_hat"]) if q_hat is None else q_hat
    q = q.reshape(N_ROUNDS, LEN_LIST, N_ACTIONS)
    slate, action = np.array(raw["slate_id"]), np.array(raw["action"])
    position = np.array(raw["position"])
    frame = pd.DataFrame(
        {
            "trajectory": slate,
            "context": slate,
            "item": action,
            "position": position + 1,
            "reward": np.array(raw["reward"], dtype=float),
            "propensity": raw["pscore_item_position"],
            "pscore_cascade": raw["pscore_cascade"],
            "reward_model": q[slate, position, action],
        }
    )
    cands = pd.DataFrame(
        {
            "trajectory": np.repeat(slate, N_ACTIONS),
            "position": np.repeat(position + 1, N_ACTIONS),
            "item": np.tile(np.arange(N_ACTIONS), slate.size),
            # the log's own propensity for the logged item, 0.2 for the others
            "propensity": np.where(
                np.tile(np.arange(N_ACTIONS), slate.size) == np.repeat(action, N_ACTIONS),
                np.repeat(raw["pscore_item_position"], N_ACTIONS),
                0.2,
            ),
            "reward_model": q.ravel(),
        }
    )
    return InteractionLog.from_frame(frame, candidates=cands)


TARGETS = ["plackett_luce", "two_stage"]
ESTIMATORS = {
    "iips": IIPS(per="trajectory"),
    "sniips": IIPS(per="trajectory", self_normalized=True),
    "rips": RIPS(per="trajectory", logging_prefix="pscore_cascade"),
    "snrips": RIPS(per="trajectory", self_normalized=True, logging_prefix="pscore_cascade"),
    "cascade_dr": CascadeDR(per="trajectory", logging_prefix="pscore_cascade"),
}


@pytest.mark.parametrize("name", TARGETS)
def test_target_probabilities_equal_the_pinned_ones(name):
    """Plackett-Luce: obp's own; two-stage: every draw and ordering enumerated."""
    log, target = obp_log(), policy(name)
    pinned = PINNED["pscores"][name]
    got = np.exp(target_log_prefix(PolicyView(target, log), "rips"))
    np.testing.assert_allclose(got, pinned["pscore_cascade"], rtol=1e-10)
    np.testing.assert_allclose(
        target.probabilities(log.frame), pinned["pscore_item_position"], rtol=1e-10
    )


@pytest.mark.parametrize("name", TARGETS)
def test_slate_estimators_equal_obp(name):
    target = policy(name)
    ev = evaluate(obp_log(), [target], list(ESTIMATORS.values()))
    for key, estimator in ESTIMATORS.items():
        got = ev.estimate(name, estimator.label).value
        assert got == pytest.approx(PINNED["estimates"][name][key], rel=1e-11), key


@pytest.mark.parametrize("name", TARGETS)
def test_self_normalised_cascade_dr_is_snrips_without_a_model(name):
    log = obp_log(np.zeros(N_ROUNDS * LEN_LIST * N_ACTIONS))
    estimator = CascadeDR(per="trajectory", self_normalized=True, logging_prefix="pscore_cascade")
    got = evaluate(log, [policy(name)], [estimator]).estimate(name).value
    assert got == pytest.approx(PINNED["estimates"][name]["snrips"], rel=1e-11)


@pytest.mark.parametrize("name", TARGETS)
def test_self_normalised_cascade_dr_on_one_slot_is_obps_sndr(name):
    log = obp_log()
    first = log.frame["position"].to_numpy() == 1
    cands = log.candidates
    one = InteractionLog.from_frame(
        log.frame[first].reset_index(drop=True),
        candidates=cands[cands["position"] == 1].drop(columns="slot").reset_index(drop=True),
    )
    estimator = CascadeDR(per="trajectory", self_normalized=True, logging_prefix="pscore_cascade")
    got = evaluate(one, [policy(name)], [estimator]).estimate(name).value
    assert got == pytest.approx(PINNED["estimates"][name]["sndr_first_slot"], rel=1e-11)
