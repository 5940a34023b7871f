"""obp 0.5.7's slate estimators on a synthetic slate log, pinned for the slates tests.

obp is too heavy for the test suite (it needs torch and old pins). Run this
outside it, in the obp 0.5.7 environment described in
``tests/plugins/importance/obp_reference/generate.py``:

    /tmp/obp57-env/bin/python tests/plugins/slates/obp_reference/generate.py

It rewrites ``pinned.json`` next to it with:

- the log: obp's ``SyntheticSlateBanditDataset`` (5 unique actions, slates of
  3, cascade-additive binary rewards, its linear behavior policy), 300 slates,
  with obp's logging propensities (``pscore_cascade``, ``pscore_item_position``);
- two evaluation policies given by logits per round: a Plackett-Luce ranker
  (its propensities and per-slot action distribution from obp's own
  ``obtain_pscore_given_evaluation_policy_logit`` and
  ``calc_evaluation_policy_action_dist``) and a two-stage ranker (a
  Plackett-Luce generator draws 3 of the 5 actions, a Plackett-Luce ranker
  orders them), whose propensities obp cannot compute: they are enumerated
  here in plain Python, every draw of the generator and every ordering;
- a reward model ``q_hat`` for every slot and action (drawn uniformly: obp's
  Cascade-DR only reads it);
- obp's estimates for each policy: SlateIndependentIPS, SlateRewardInteractionIPS,
  their SelfNormalized forms and SlateCascadeDoublyRobust (obp 0.5.7 has no
  self-normalised Cascade-DR; SelfNormalizedDoublyRobust on the first slot
  alone checks offeval's at one position).

Values are rounded to 12 significant digits where they are inputs, so that
both sides read exactly what is pinned.
"""

from __future__ import annotations

import json
import platform
import warnings
from importlib.metadata import version
from itertools import permutations
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore")

PATH = Path(__file__).with_name("pinned.json")
N_ROUNDS = 300
N_ACTIONS = 5
LEN_LIST = 3
GENERATOR_SIZE = 3
SEED = 12345


def rounded(values: np.ndarray) -> np.ndarray:
    return np.array([float(f"{v:.12g}") for v in np.ravel(values)]).reshape(np.shape(values))


def two_stage_slates(generator: np.ndarray, ranker: np.ndarray) -> dict[tuple, float]:
    """{top-3 slate: probability} of one round's two-stage policy, every draw and ordering."""
    out: dict[tuple, float] = {}
    w_g, w_r = np.exp(generator), np.exp(ranker)
    for draw in permutations(range(N_ACTIONS), GENERATOR_SIZE):
        p_draw, left = 1.0, w_g.sum()
        for a in draw:
            p_draw, left = p_draw * w_g[a] / left, left - w_g[a]
        for order in permutations(draw):
            p, left = p_draw, sum(w_r[a] for a in draw)
            for a in order:
                p, left = p * w_r[a] / left, left - w_r[a]
            slate = order[:LEN_LIST]
            out[slate] = out.get(slate, 0.0) + p
    return out


def two_stage_pscores(action: np.ndarray, generator: np.ndarray, ranker: np.ndarray) -> dict:
    """The two-stage policy's item-position, cascade and per-slot action probabilities."""
    slates = action.reshape(N_ROUNDS, LEN_LIST)
    item_position = np.empty(slates.shape)
    cascade = np.empty(slates.shape)
    action_dist = np.zeros((N_ROUNDS, LEN_LIST, N_ACTIONS))
    for i, logged in enumerate(slates):
        probs = two_stage_slates(generator[i], ranker[i])
        for k in range(LEN_LIST):
            item_position[i, k] = sum(p for s, p in probs.items() if s[k] == logged[k])
            prefix = tuple(logged[: k + 1])
            cascade[i, k] = sum(p for s, p in probs.items() if s[: k + 1] == prefix)
            above = sum(p for s, p in probs.items() if s[:k] == prefix[:k])
            for c in range(N_ACTIONS):
                reach = sum(p for s, p in probs.items() if s[: k + 1] == (*prefix[:k], c))
                action_dist[i, k, c] = reach / above if above > 0 else 0.0
    return {
        "pscore_item_position": item_position.ravel(),
        "pscore_cascade": cascade.ravel(),
        "action_dist": action_dist.ravel(),
    }


def estimates(bf: dict, target: dict, q_hat: np.ndarray) -> dict:
    from obp.ope import (
        SelfNormalizedDoublyRobust,
        SelfNormalizedSlateIndependentIPS,
        SelfNormalizedSlateRewardInteractionIPS,
        SlateCascadeDoublyRobust,
        SlateIndependentIPS,
        SlateRewardInteractionIPS,
    )

    common = {"slate_id": bf["slate_id"], "reward": bf["reward"], "position": bf["position"]}
    item = {
        "pscore_item_position": bf["pscore_item_position"],
        "evaluation_policy_pscore_item_position": target["pscore_item_position"],
    }
    cascade = {
        "pscore_cascade": bf["pscore_cascade"],
        "evaluation_policy_pscore_cascade": target["pscore_cascade"],
    }
    out = {
        "iips": SlateIndependentIPS(len_list=LEN_LIST).estimate_policy_value(**common, **item),
        "sniips": SelfNormalizedSlateIndependentIPS(len_list=LEN_LIST).estimate_policy_value(
            **common, **item
        ),
        "rips": SlateRewardInteractionIPS(len_list=LEN_LIST).estimate_policy_value(
            **common, **cascade
        ),
        "snrips": SelfNormalizedSlateRewardInteractionIPS(len_list=LEN_LIST).estimate_policy_value(
            **common, **cascade
        ),
        "cascade_dr": SlateCascadeDoublyRobust(
            len_list=LEN_LIST, n_unique_action=N_ACTIONS
        ).estimate_policy_value(
            **common,
            **cascade,
            action=bf["action"],
            q_hat=q_hat,
            evaluation_policy_action_dist=target["action_dist"],
        ),
    }
    first = bf["position"] == 0
    dist = target["action_dist"].reshape(N_ROUNDS, LEN_LIST, N_ACTIONS)[:, 0, :, None]
    out["sndr_first_slot"] = SelfNormalizedDoublyRobust().estimate_policy_value(
        reward=bf["reward"][first],
        action=bf["action"][first],
        position=None,
        pscore=bf["pscore_cascade"][first],
        action_dist=dist,
        estimated_rewards_by_reg_model=q_hat.reshape(N_ROUNDS, LEN_LIST, N_ACTIONS)[:, 0, :, None],
    )
    return {k: float(v) for k, v in out.items()}


def main() -> None:
    from obp.dataset import SyntheticSlateBanditDataset, linear_behavior_policy_logit

    dataset = SyntheticSlateBanditDataset(
        n_unique_action=N_ACTIONS,
        len_list=LEN_LIST,
        dim_context=2,
        reward_type="binary",
        reward_structure="cascade_additive",
        behavior_policy_function=linear_behavior_policy_logit,
        random_state=SEED,
    )
    bf = dataset.obtain_batch_bandit_feedback(n_rounds=N_ROUNDS)
    bf["pscore_cascade"] = rounded(bf["pscore_cascade"])
    bf["pscore_item_position"] = rounded(bf["pscore_item_position"])
    rng = np.random.default_rng(SEED)
    pl_logits = rounded(rng.normal(0, 1, (N_ROUNDS, N_ACTIONS)))
    generator = rounded(rng.normal(0, 1, (N_ROUNDS, N_ACTIONS)))
    ranker = rounded(rng.normal(0, 1, (N_ROUNDS, N_ACTIONS)))
    q_hat = rounded(rng.uniform(0.05, 0.6, N_ROUNDS * LEN_LIST * N_ACTIONS))
    _, pl_item_position, pl_cascade = dataset.obtain_pscore_given_evaluation_policy_logit(
        bf["action"], pl_logits
    )
    targets = {
        "plackett_luce": {
            "pscore_item_position": rounded(pl_item_position),
            "pscore_cascade": rounded(pl_cascade),
            "action_dist": rounded(
                dataset.calc_evaluation_policy_action_dist(bf["action"], pl_logits)
            ),
        },
        "two_stage": {
            k: rounded(v) for k, v in two_stage_pscores(bf["action"], generator, ranker).items()
        },
    }
    result = {
        "environment": {
            "python": platform.python_version(),
            **{p: version(p) for p in ("obp", "numpy", "scikit-learn", "pandas", "scipy")},
        },
        "description": (
            "obp.dataset.SyntheticSlateBanditDataset(n_unique_action=5, len_list=3, "
            "dim_context=2, reward_type='binary', reward_structure='cascade_additive', "
            "behavior_policy_function=linear_behavior_policy_logit, random_state=12345)"
            ".obtain_batch_bandit_feedback(n_rounds=300); positions 0-based as obp's"
        ),
        "log": {
            k: np.asarray(bf[k]).tolist()
            for k in (
                "slate_id",
                "action",
                "position",
                "reward",
                "pscore_cascade",
                "pscore_item_position",
            )
        },
        "q_hat": q_hat.tolist(),
        "policies": {
            "plackett_luce": {"logits": pl_logits.tolist()},
            "two_stage": {
                "generator_logits": generator.tolist(),
                "generator_size": GENERATOR_SIZE,
                "ranker_logits": ranker.tolist(),
            },
        },
        "pscores": {name: {k: v.tolist() for k, v in t.items()} for name, t in targets.items()},
        "estimates": {name: estimates(bf, t, q_hat) for name, t in targets.items()},
    }
    PATH.write_text(json.dumps(result, separators=(",", ":"), sort_keys=True) + "\n")
    print(json.dumps(result["estimates"], indent=1))


if __name__ == "__main__":
    main()
