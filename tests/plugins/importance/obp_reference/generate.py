"""Compute reference values with obp (Open Bandit Pipeline), which is too heavy for the test suite.

obp needs torch, and its newest release (0.5.7) declares Python < 3.11 and exact
old pins (torch 1.12, numpy 1.23.5, scikit-learn 1.1.3, pandas 1.5.2). On
Python 3.11 ``pip install obp`` resolves to obp 0.4.1. Both are used, each in
its own virtual environment outside the repository (never the project's venv):

    # obp 0.5.7: its own numpy/scikit-learn/pandas/scipy pins, torch 2.13 CPU
    python3.11 -m venv /tmp/obp57-env
    /tmp/obp57-env/bin/pip install torch==2.13.0 numpy==1.23.5 scikit-learn==1.1.3 \
        pandas==1.5.2 scipy==1.9.3 matplotlib==3.7.5 seaborn==0.11.2 "pingouin<0.5" \
        "mypy-extensions<0.5" tqdm pyyaml
    /tmp/obp57-env/bin/pip install --no-deps --ignore-requires-python obp==0.5.7

    # obp 0.4.1: what plain pip resolves on Python 3.11
    python3.11 -m venv /tmp/obp-env
    /tmp/obp-env/bin/pip install torch==2.13.0 obp==0.4.1

    # inputs and obp 0.5.7's values (rewrites pinned.json), then 0.4.1's on the same inputs
    /tmp/obp57-env/bin/python tests/plugins/importance/obp_reference/generate.py
    /tmp/obp-env/bin/python tests/plugins/importance/obp_reference/generate.py --add-estimates

Without ``--add-estimates`` the inputs are drawn afresh with the running obp's
``SyntheticBanditDataset`` (this needs obp >= 0.5, whose behavior policy is
contextual) and the bundled Open Bandit Dataset sample, and the file is
rewritten. With it, the inputs are read back from ``pinned.json`` and only the
running obp's estimates are added under its version. Round-by-round values are
stored for the version that made the inputs; other versions store their point
estimates and the largest absolute difference of their round values from it.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore")

PATH = Path(__file__).with_name("pinned.json")
N_ROUNDS = 400
N_ACTIONS = 5
DIM_CONTEXT = 3
SEED = 12345
LAMBDA = 5
OBD_STEP = 5  # keep rows 0, 5, 10, ... of the 10,000-row bundled sample: 2,000 rows
SG_LAMBDAS = (0.0, 0.1, 0.5, 1.0)  # sub-Gaussian IPW's lambda_ (obp's default is 0)
N_FOLDS = 2  # cross-fitting folds of obp's classifiers (KFold over rounds, shuffled with SEED)
BIPW_CLIP = 5.0  # balanced IPW's clipping lambda_ (obp's default is inf)


def obp_version() -> str:
    return version("obp")


def environment() -> dict:
    env = {"python": platform.python_version()}
    for package in ("obp", "numpy", "scikit-learn", "scipy", "pandas", "torch"):
        env[package] = version(package)
    return env


# -- inputs ---------------------------------------------------------------------------------
def synthetic_inputs() -> dict:
    from obp.dataset import SyntheticBanditDataset, linear_behavior_policy, logistic_reward_function
    from obp.ope import RegressionModel
    from sklearn.linear_model import LogisticRegression

    dataset = SyntheticBanditDataset(
        n_actions=N_ACTIONS,
        dim_context=DIM_CONTEXT,
        reward_type="binary",
        reward_function=logistic_reward_function,
        behavior_policy_function=linear_behavior_policy,
        random_state=SEED,
    )
    bf = dataset.obtain_batch_bandit_feedback(n_rounds=N_ROUNDS)
    assert bf["position"] is None
    n = bf["n_rounds"]

    reg = RegressionModel(
        n_actions=N_ACTIONS,
        len_list=1,
        action_context=bf["action_context"],
        base_model=LogisticRegression(C=1.0, random_state=SEED),
        fitting_method="normal",
    )
    q_hat = reg.fit_predict(
        context=bf["context"],
        action=bf["action"],
        reward=bf["reward"],
        n_folds=2,
        random_state=SEED,
    )
    q_hat = np.round(q_hat, 6)  # rounded before use: the estimators see exactly what is pinned

    # eps_greedy: 0.92 on the action with the highest true expected reward, 0.02 on each other
    best = bf["expected_reward"].argmax(axis=1)
    eps_greedy = np.full((n, N_ACTIONS), 0.02)
    eps_greedy[np.arange(n), best] = 0.92
    # contrarian: 0.7 on the action the logging policy is least likely to take, 0.18 on the
    # second least likely, 0.04 on each other (large importance weights, so clipping bites)
    order = np.argsort(bf["pi_b"][:, :, 0], axis=1, kind="stable")
    contrarian = np.full((n, N_ACTIONS), 0.04)
    contrarian[np.arange(n), order[:, 0]] = 0.7
    contrarian[np.arange(n), order[:, 1]] = 0.18
    policies = {
        "eps_greedy": {
            "description": "0.92 on argmax of expected_reward (first on ties), 0.02 on the others",
            "action_dist": eps_greedy[:, :, None],
        },
        "contrarian": {
            "description": "0.7 on the argmin of the logging policy's probabilities pi_b(.|x), "
            "0.18 on the second smallest (stable order on ties), 0.04 on each of the other three",
            "action_dist": contrarian[:, :, None],
        },
    }
    ground_truth = {
        name: float(dataset.calc_ground_truth_policy_value(bf["expected_reward"], p["action_dist"]))
        for name, p in policies.items()
    }
    return {
        "description": (
            "obp.dataset.SyntheticBanditDataset(n_actions=5, dim_context=3, reward_type='binary', "
            "reward_function=logistic_reward_function, behavior_policy_function="
            "linear_behavior_policy, random_state=12345)"
            ".obtain_batch_bandit_feedback(n_rounds=400); position is None (omitted)"
        ),
        "n_rounds": n,
        "n_actions": bf["n_actions"],
        "len_list": 1,
        "context": bf["context"],
        "action": bf["action"],
        "reward": bf["reward"],
        "pscore": bf["pscore"],
        "expected_reward": bf["expected_reward"],
        "estimated_rewards_by_reg_model": q_hat,
        "regression_model": (
            "obp.ope.RegressionModel(n_actions=5, len_list=1, action_context=identity(5), "
            "base_model=sklearn LogisticRegression(C=1.0, random_state=12345), "
            "fitting_method='normal').fit_predict(context, action, reward, n_folds=2, "
            "random_state=12345), then rounded to 6 decimals"
        ),
        "policies": policies,
        "ground_truth_policy_value": ground_truth,
    }


def obd_inputs() -> dict:
    from obp.dataset import OpenBanditDataset

    dataset = OpenBanditDataset(behavior_policy="random", campaign="all")
    bf = dataset.obtain_batch_bandit_feedback()
    rows = np.arange(0, bf["n_rounds"], OBD_STEP)
    n_actions, len_list = bf["n_actions"], dataset.len_list
    # fixed: at position k, action a has weight 1 + ((a + 7k) mod 10), normalised over actions
    a, k = np.meshgrid(np.arange(n_actions), np.arange(len_list), indexing="ij")
    weights = 1.0 + (a + 7 * k) % 10
    fixed = weights / weights.sum(axis=0, keepdims=True)
    return {
        "description": (
            "obp.dataset.OpenBanditDataset(behavior_policy='random', campaign='all') (the sample "
            "bundled with obp, 10,000 rows), obtain_batch_bandit_feedback(), rows 0, 5, 10, ..."
        ),
        "source_n_rounds": bf["n_rounds"],  # rows kept: 0, row_step, 2 * row_step, ...
        "row_step": OBD_STEP,
        "n_rounds": len(rows),
        "n_actions": n_actions,
        "len_list": len_list,
        "action": bf["action"][rows],
        "context": bf["context"][rows],
        "position": bf["position"][rows],
        "reward": bf["reward"][rows],
        "pscore": bf["pscore"][rows],
        "policies": {
            "uniform": {
                "description": "action_dist[i, a, k] = 1/80 for every round, action and position",
                "by_action_position": np.full((n_actions, len_list), 1.0 / n_actions),
            },
            "fixed": {
                "description": "action_dist[i, a, k] = by_action_position[a][k] for every round i: "
                "(1 + ((a + 7k) mod 10)) normalised over the 80 actions at each position k",
                "by_action_position": fixed,
            },
        },
    }


# -- estimators -----------------------------------------------------------------------------
def estimators(modern: bool) -> dict:
    """name -> (class name, kwargs, whether it takes estimated_rewards_by_reg_model)."""
    out = {
        "ipw": ("InverseProbabilityWeighting", {}, False),
        "snipw": ("SelfNormalizedInverseProbabilityWeighting", {}, False),
        "dm": ("DirectMethod", {}, True),
        "dr": ("DoublyRobust", {}, True),
        "sndr": ("SelfNormalizedDoublyRobust", {}, True),
        "dros_5": ("DoublyRobustWithShrinkage", {"lambda_": LAMBDA}, True),
    }
    if modern:  # obp >= 0.5: clipping lambda_ on IPW and DR, Switch-DR's threshold is lambda_
        out["ipw_clip_5"] = ("InverseProbabilityWeighting", {"lambda_": LAMBDA}, False)
        out["switch_dr_5"] = ("SwitchDoublyRobust", {"lambda_": LAMBDA}, True)
        for lam in SG_LAMBDAS:  # sub-Gaussian IPW (Metelli et al. 2021), obp >= 0.5
            kwargs = {"lambda_": lam}
            out[f"sg_ipw_{lam:g}"] = ("SubGaussianInverseProbabilityWeighting", kwargs, False)
    else:  # obp 0.4: no clipping; Switch-DR's threshold is called tau
        out["switch_dr_5"] = ("SwitchDoublyRobust", {"tau": LAMBDA}, True)
    return out


def run_estimators(data: dict, action_dists: dict, q_hat, only=None) -> dict:
    import obp.ope

    modern = int(obp_version().split(".")[1]) >= 5
    n = data["n_rounds"]
    position = np.asarray(data["position"]) if "position" in data else np.zeros(n, dtype=int)
    common = {
        "reward": np.asarray(data["reward"]),
        "action": np.asarray(data["action"]),
        "pscore": np.asarray(data["pscore"], dtype=float),
        "position": position,
    }
    out = {}
    for policy, action_dist in action_dists.items():
        out[policy] = {}
        for name, (cls, kwargs, needs_q) in estimators(modern).items():
            if (q_hat is None and needs_q) or (only is not None and name not in only):
                continue
            est = getattr(obp.ope, cls)(**kwargs)
            args = dict(common, action_dist=action_dist)
            if needs_q:
                args["estimated_rewards_by_reg_model"] = q_hat
            value = float(est.estimate_policy_value(**args))
            rounds = np.asarray(est._estimate_round_rewards(**args), dtype=float)
            assert rounds.shape == (n,)
            np.testing.assert_allclose(rounds.mean(), value, rtol=1e-12, atol=1e-15)
            out[policy][name] = {
                "class": cls,
                "kwargs": kwargs,
                "policy_value": value,
                "round_rewards": rounds,
            }
    return out


def synthetic_estimates(data: dict) -> dict:
    dists = synthetic_dists(data)
    q_hat = np.asarray(data["estimated_rewards_by_reg_model"], dtype=float)
    return run_estimators(data, dists, q_hat)


def obd_estimates(data: dict) -> dict:
    dists = obd_dists(data)
    only = ("ipw", "snipw", *(f"sg_ipw_{lam:g}" for lam in SG_LAMBDAS))
    return run_estimators(data, dists, None, only=only)


# -- classifier-based: estimated propensities and balanced IPW ------------------------------
CLASSIFIER = "sklearn LogisticRegression(C=1.0, solver='newton-cg', tol=1e-10, max_iter=1000)"


def classifier():
    from sklearn.linear_model import LogisticRegression

    # Newton steps to a tight tolerance, so that another scikit-learn and scipy reach the same
    # optimum (lbfgs in scikit-learn 1.1.3 stops ~1e-5 from it, whatever its tol)
    return LogisticRegression(C=1.0, solver="newton-cg", tol=1e-10, max_iter=1000)


def kfold(n: int) -> np.ndarray:
    """The fold of each round in obp's cross-fitting: KFold(N_FOLDS, shuffle, SEED) over rounds."""
    from sklearn.model_selection import KFold

    fold = np.empty(n, dtype=int)
    splits = KFold(n_splits=N_FOLDS, shuffle=True, random_state=SEED).split(np.zeros(n))
    for f, (_, test) in enumerate(splits):
        fold[test] = f
    return fold


def every_action_trained(action, position, fold, n_actions) -> bool:
    """Whether every action is logged at every position in every training split (else obp's
    PropensityScoreEstimator indexes predict_proba's columns by action wrongly)."""
    return all(
        np.unique(action[(position == k) & (fold != f)]).size == n_actions
        for k in np.unique(position)
        for f in range(N_FOLDS)
    )


def classifier_estimates(data: dict, dists: dict) -> dict:
    """obp's estimated propensities and importance weights (cross-fitted, calibrated or not),
    and IPW/SNIPW with the propensities and B-IPW with the weights."""
    import obp.ope as ope

    n, n_actions, len_list = data["n_rounds"], data["n_actions"], data["len_list"]
    context = np.asarray(data["context"], dtype=float)
    action, reward = np.asarray(data["action"]), np.asarray(data["reward"])
    position = np.asarray(data["position"]) if "position" in data else np.zeros(n, dtype=int)
    fold = kfold(n)
    out = {
        "classifier": CLASSIFIER,
        "n_folds": N_FOLDS,
        "random_state": SEED,
        "kfold": fold,
        "every_action_trained": every_action_trained(action, position, fold, n_actions),
        "propensities": {},
        "balanced": {},
    }
    for cv in (1, 2):
        key = f"calibration_cv_{cv}"
        model = ope.PropensityScoreEstimator(
            base_model=classifier(), n_actions=n_actions, len_list=len_list, calibration_cv=cv
        )
        # with an action missing from a training split obp raises IndexError (or, when the
        # missing action is not the last, reads the wrong column): then it fits in sample
        n_folds = N_FOLDS if out["every_action_trained"] else 1
        pscore = model.fit_predict(
            context, action, position=position, n_folds=n_folds, random_state=SEED
        )
        entry = {"n_folds": n_folds, "estimated_pscore": pscore}
        for policy, dist in dists.items():
            args = dict(reward=reward, action=action, action_dist=dist, position=position)
            entry[policy] = {
                name: float(
                    getattr(ope, cls)(use_estimated_pscore=True).estimate_policy_value(
                        **args, estimated_pscore=pscore
                    )
                )
                for name, cls in (
                    ("ipw", "InverseProbabilityWeighting"),
                    ("snipw", "SelfNormalizedInverseProbabilityWeighting"),
                )
            }
        out["propensities"][key] = entry
        out["balanced"][key] = {}
        for policy, dist in dists.items():
            model = ope.ImportanceWeightEstimator(
                base_model=classifier(),
                n_actions=n_actions,
                len_list=len_list,
                fitting_method="sample",
                calibration_cv=cv,
            )
            weights = model.fit_predict(
                context, action, dist, position=position, n_folds=N_FOLDS, random_state=SEED
            )
            args = dict(reward=reward, action=action, action_dist=dist, position=position)
            out["balanced"][key][policy] = {
                "estimated_importance_weights": weights,
                "b_ipw": float(
                    ope.BalancedInverseProbabilityWeighting().estimate_policy_value(
                        **args, estimated_importance_weights=weights
                    )
                ),
                f"b_ipw_clip_{BIPW_CLIP:g}": float(
                    ope.BalancedInverseProbabilityWeighting(
                        lambda_=BIPW_CLIP
                    ).estimate_policy_value(**args, estimated_importance_weights=weights)
                ),
            }
    return out


def synthetic_dists(data: dict) -> dict:
    return {k: np.asarray(p["action_dist"], dtype=float) for k, p in data["policies"].items()}


def obd_dists(data: dict) -> dict:
    n = data["n_rounds"]
    out = {}
    for name, policy in data["policies"].items():
        by_action_position = np.asarray(policy["by_action_position"], dtype=float)
        out[name] = np.broadcast_to(by_action_position, (n, *by_action_position.shape)).copy()
    return out


def obd_context(data: dict) -> np.ndarray:
    """The context of the pinned Open Bandit Dataset rows (added after the first inputs)."""
    from obp.dataset import OpenBanditDataset

    bf = OpenBanditDataset(behavior_policy="random", campaign="all").obtain_batch_bandit_feedback()
    rows = np.arange(0, data["source_n_rounds"], data["row_step"])
    assert np.array_equal(bf["action"][rows], data["action"])
    return bf["context"][rows]


# -- output ---------------------------------------------------------------------------------
def plain(obj):
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return obj


def compare_rounds(new: dict, reference: dict) -> dict:
    """Another obp version's point estimates, with its round values' distance from the reference."""
    out = {}
    for policy, by_est in new.items():
        out[policy] = {}
        for name, entry in by_est.items():
            entry = dict(entry)
            rounds = entry.pop("round_rewards")
            if name in reference.get(policy, {}):
                ref = np.asarray(reference[policy][name]["round_rewards"])
                diff = float(np.max(np.abs(rounds - ref)))
                entry["round_rewards_max_abs_diff_vs_reference"] = diff
            else:
                entry["round_rewards"] = rounds
            out[policy][name] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--add-estimates", action="store_true")
    args = parser.parse_args()
    ver = obp_version()

    if not args.add_estimates:
        if int(ver.split(".")[1]) < 5:
            sys.exit(f"inputs need obp >= 0.5 (contextual behavior policy); this is obp {ver}")
        synthetic, obd = synthetic_inputs(), obd_inputs()
        synthetic["estimates"] = {ver: synthetic_estimates(synthetic)}
        obd["estimates"] = {ver: obd_estimates(obd)}
        for data, dists in ((synthetic, synthetic_dists), (obd, obd_dists)):
            data["classifier_based"] = {ver: classifier_estimates(data, dists(data))}
        result = {
            "generator": "tests/plugins/importance/obp_reference/generate.py",
            "inputs_from_obp": ver,
            "reference_obp": ver,
            "environments": {ver: environment()},
            "synthetic": synthetic,
            "obd": obd,
        }
    else:
        result = json.loads(PATH.read_text())
        ref = result["reference_obp"]
        result["environments"][ver] = environment()
        for key, func in (("synthetic", synthetic_estimates), ("obd", obd_estimates)):
            new = func(result[key])
            result[key]["estimates"][ver] = (
                new if ver == ref else compare_rounds(new, result[key]["estimates"][ref])
            )
        if int(ver.split(".")[1]) >= 5:  # obp 0.4 has no classifier-based estimators
            result["obd"].setdefault("context", obd_context(result["obd"]))
            for key, dists in (("synthetic", synthetic_dists), ("obd", obd_dists)):
                data = result[key]
                new = classifier_estimates(data, dists(data))
                data.setdefault("classifier_based", {})[ver] = new
    text = json.dumps(plain(result), separators=(",", ":"), sort_keys=True)
    PATH.write_text(text + "\n")
    print(f"obp {ver}: wrote {PATH} ({len(text) / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
