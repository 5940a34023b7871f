"""obp 0.5.7's reward-model estimators on the Open Bandit Dataset rows, pinned for the command
line's test (tests/plugins/test_evaluate_candidates_obp.py), outside the test suite.

The inputs are the 2,000 Open Bandit Dataset rows of
tests/plugins/importance/obp_reference/pinned.json (rows 0, 5, 10, ... of the sample bundled
with obp; behaviour policy ``random``, campaign ``all``: 80 actions, 3 positions) and its
two target policies. This adds their contexts and the items' features (``action_context``),
fits obp's ``RegressionModel`` (logistic regression, one per position, cross-fitted on 3
folds as ``fit_predict(n_folds=3)`` does; the rows hold 9 clicks, so the folds' seed is the
first from 12345 that leaves a click at every position in every training set) and pins
what reproduces its predictions without obp: each round's fold and each fold's and
position's coefficients (a prediction is ``expit(intercept + context @ w_context +
action_context[a] @ w_action)``), a few of obp's predictions to check that, and the policy
values of obp's DM, DR, SNDR, Switch-DR and DR-OS.

Run with obp 0.5.7's environment (see tests/plugins/importance/obp_reference/generate.py):

    /tmp/obp57-env/bin/python tests/plugins/cli_obp_reference/generate.py

A fresh run rewrites pinned.json byte for byte.
"""

from __future__ import annotations

import json
import platform
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore")

HERE = Path(__file__).parent
PATH = HERE / "pinned.json"
INPUTS = HERE.parent / "importance" / "obp_reference" / "pinned.json"
FOLDS = 3
SEED = 12345
C = 100.0
LAMBDA = 5
#: Rounds whose predictions (every action, at the round's position) are pinned as a check.
CHECKED_ROUNDS = 10


def _every_fold_learns(kfold, reward: np.ndarray, position: np.ndarray) -> bool:
    """Whether each fold's training rows hold a click and a non-click at every position
    (the 2,000 rows hold 9 clicks: a logistic regression needs both classes)."""
    return all(
        len(np.unique(reward[train][position[train] == k])) == 2
        for train, _ in kfold.split(reward)
        for k in np.unique(position)
    )


def main() -> None:
    from obp.dataset import OpenBanditDataset
    from obp.ope import (
        DirectMethod,
        DoublyRobust,
        DoublyRobustWithShrinkage,
        RegressionModel,
        SelfNormalizedDoublyRobust,
        SwitchDoublyRobust,
    )
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold

    pinned = json.loads(INPUTS.read_text())["obd"]
    bf = OpenBanditDataset(behavior_policy="random", campaign="all").obtain_batch_bandit_feedback()
    rows = np.arange(0, bf["n_rounds"], pinned["row_step"])
    for key in ("action", "position", "reward", "pscore"):
        assert np.array_equal(bf[key][rows], np.asarray(pinned[key])), key
    assert set(np.unique(bf["context"])) <= {0, 1}  # pinned as strings of 0/1 digits
    context, action_context = bf["context"][rows].astype(float), bf["action_context"]
    action, position = bf["action"][rows], bf["position"][rows]
    reward, pscore = bf["reward"][rows], bf["pscore"][rows]
    n, n_actions, len_list = len(rows), pinned["n_actions"], pinned["len_list"]

    def model() -> RegressionModel:
        return RegressionModel(
            n_actions=n_actions,
            len_list=len_list,
            action_context=action_context,
            base_model=LogisticRegression(C=C, max_iter=10_000, random_state=SEED),
        )

    seed = SEED  # the first from SEED whose folds leave clicks at each position to learn from
    while not _every_fold_learns(KFold(FOLDS, shuffle=True, random_state=seed), reward, position):
        seed += 1
    reference = model().fit_predict(
        context, action, reward, pscore=pscore, position=position, n_folds=FOLDS, random_state=seed
    )
    # fit_predict's loop, again, to read each fold's models
    fold = np.empty(n, dtype=int)
    q_hat = np.zeros((n, n_actions, len_list))
    coefficients, intercepts = [], []
    reg = model()
    for k, (train, test) in enumerate(KFold(FOLDS, shuffle=True, random_state=seed).split(context)):
        reg.fit(context[train], action[train], reward[train], pscore[train], position[train])
        q_hat[test] = reg.predict(context[test])
        fold[test] = k
        coefficients.append([m.coef_[0].tolist() for m in reg.base_model_list])
        intercepts.append([float(m.intercept_[0]) for m in reg.base_model_list])
    assert np.array_equal(q_hat, reference)

    policies = {
        name: np.broadcast_to(np.asarray(p["by_action_position"], dtype=float), (n, n_actions, 3))
        for name, p in pinned["policies"].items()
    }
    estimators = {
        "dm": DirectMethod(),
        "dr": DoublyRobust(),
        "sndr": SelfNormalizedDoublyRobust(),
        f"switch_dr_{LAMBDA}": SwitchDoublyRobust(lambda_=LAMBDA),
        f"dros_{LAMBDA}": DoublyRobustWithShrinkage(lambda_=LAMBDA),
    }
    estimates = {
        name: {
            obp_name: float(
                estimator.estimate_policy_value(
                    reward=reward,
                    action=action,
                    position=position,
                    pscore=pscore,
                    action_dist=dist,
                    estimated_rewards_by_reg_model=q_hat,
                )
            )
            for obp_name, estimator in estimators.items()
        }
        for name, dist in policies.items()
    }
    checked = np.arange(CHECKED_ROUNDS)
    out = {
        "description": (
            "obp 0.5.7's RegressionModel (LogisticRegression(C=100, max_iter=10000, "
            "random_state=12345), one per position, action_context = the items' features) "
            "fitted on the 2,000 Open Bandit Dataset rows of "
            "tests/plugins/importance/obp_reference/pinned.json (context: each round's 20 0/1 "
            "features as digits) with fit_predict(n_folds=3, "
            "random_state=kfold_random_state: the first from 12345 whose training folds hold a "
            "click at every position); q_hat[i, a, k] = expit(intercepts[fold[i]][k] + "
            "context[i] @ coefficients[fold[i]][k][:20] + action_context[a] @ "
            "coefficients[fold[i]][k][20:]); obp's policy values with that q_hat"
        ),
        "environment": {
            "python": platform.python_version(),
            **{p: version(p) for p in ("obp", "numpy", "scikit-learn", "pandas", "scipy")},
        },
        "generator": "tests/plugins/cli_obp_reference/generate.py",
        "inputs": "tests/plugins/importance/obp_reference/pinned.json (obd)",
        "context": ["".join(map(str, row)) for row in bf["context"][rows]],
        "action_context": action_context.tolist(),
        "kfold_random_state": seed,
        "fold": fold.tolist(),
        "coefficients": coefficients,
        "intercepts": intercepts,
        "checked_rounds": checked.tolist(),
        "q_hat_checked": q_hat[checked, :, position[checked]].tolist(),
        "estimates": estimates,
    }
    lines = ",\n".join(f" {json.dumps(key)}: {json.dumps(value)}" for key, value in out.items())
    PATH.write_text("{\n" + lines + "\n}\n")  # one line per key


if __name__ == "__main__":
    main()
