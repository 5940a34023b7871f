"""obp 0.5.7's clipped DR, sub-Gaussian DR and ``*Tuning`` estimators, pinned for the tests.

Run with the obp 0.5.7 environment described in the docstring of
``tests/plugins/importance/obp_reference/generate.py`` (obp is never needed by the
test suite):

    /tmp/obp57-env/bin/python tests/plugins/rewardmodels/obp_reference/generate.py

It reads the inputs pinned in ``tests/plugins/importance/obp_reference/pinned.json``
(obp's synthetic bandit with obp's fitted reward model, and 2,000 rows of the
Open Bandit Dataset sample bundled with obp) and writes ``pinned.json`` here:

- the Open Bandit Dataset rows get a reward model of their own: obp's
  ``RegressionModel`` (logistic regression on the rows' context and the
  actions' features, cross-fitted over 2 folds), fitted on those rows as
  obp's bundle gives them (checked equal to the pinned ones), its prediction
  at each round's position pinned in millionths (``q_micro``: obp's DR reads
  no other position);
- per data set and evaluation policy: ``DoublyRobust(lambda_)`` and
  ``SubGaussianDoublyRobust(lambda_)`` at several ``lambda_``; every
  ``*Tuning`` estimator (DR, Switch-DR, DR-OS, sub-Gaussian DR, IPW,
  sub-Gaussian IPW) on obp's benchmark grid and on a grid that bites on
  these weights, with ``tuning_method`` "slope" and "mse" (with and without
  the bias upper bound): obp's chosen ``best_hyperparam``, its estimate and,
  for "mse", its estimated MSE of every candidate.

A fresh run rewrites the file byte for byte.
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
INPUTS = HERE.parents[1] / "importance" / "obp_reference" / "pinned.json"
SEED = 12345
INF = float("inf")

#: obp's benchmark grid (benchmark/ope) and the sub-Gaussian grid of obp's tests.
LARGE = [10, 50, 100, 500, 1000, 5000, 10000, INF]
SUBGAUSSIAN = [0.005, 0.01, 0.05, 0.1, 0.5]
#: Grids that bite on these logs' weights (synthetic up to ~35, the OBD sample's up to ~1.8).
BITING = {"synthetic": [1, 2, 3, 5, 10, 20, INF], "obd": [1.0, 1.2, 1.4, 1.6, 2.0, INF]}
SUBGAUSSIAN_BITING = [0.0, 0.1, 0.25, 0.5, 0.75, 1.0]
CLIPS = {"synthetic": [0, 1, 2, 5, 10, INF], "obd": [0, 1.0, 1.2, 1.5, INF]}

#: offeval key -> (obp class, whether it reads the reward model, sub-Gaussian grid or not).
TUNED = {
    "dr_tuning": ("DoublyRobustTuning", True, False),
    "switch_dr_tuning": ("SwitchDoublyRobustTuning", True, False),
    "dr_os_tuning": ("DoublyRobustWithShrinkageTuning", True, False),
    "sg_dr_tuning": ("SubGaussianDoublyRobustTuning", True, True),
    "ips_tuning": ("InverseProbabilityWeightingTuning", False, False),
    "sg_ips_tuning": ("SubGaussianInverseProbabilityWeightingTuning", False, True),
}
RULES = [("slope", True), ("mse", True), ("mse", False)]


def environment() -> dict:
    env = {"python": platform.python_version()}
    for package in ("obp", "numpy", "scikit-learn", "scipy", "pandas"):
        env[package] = version(package)
    return env


def number(x: float):
    """A JSON-safe number: inf as the string "inf"."""
    return "inf" if x == INF else x


# -- inputs ---------------------------------------------------------------------------------
def synthetic(inputs: dict) -> dict:
    data = inputs["synthetic"]
    dists = {k: np.asarray(p["action_dist"], dtype=float) for k, p in data["policies"].items()}
    q_hat = np.asarray(data["estimated_rewards_by_reg_model"], dtype=float)
    return {"data": data, "dists": dists, "q_hat": q_hat, "position": None, "out": {}}


def obd(inputs: dict) -> dict:
    from obp.dataset import OpenBanditDataset
    from obp.ope import RegressionModel
    from sklearn.linear_model import LogisticRegression

    data = inputs["obd"]
    dataset = OpenBanditDataset(behavior_policy="random", campaign="all")
    bf = dataset.obtain_batch_bandit_feedback()
    rows = np.arange(0, data["source_n_rounds"], data["row_step"])
    for key in ("action", "position", "reward", "pscore"):
        assert np.array_equal(bf[key][rows], np.asarray(data[key])), key
    n, n_actions, len_list = data["n_rounds"], data["n_actions"], data["len_list"]
    position = np.asarray(data["position"])
    model = RegressionModel(  # one model for all positions: the rows have ~10 clicks
        n_actions=n_actions,
        len_list=1,
        action_context=bf["action_context"],
        base_model=LogisticRegression(C=1.0, random_state=SEED, max_iter=1000),
        fitting_method="normal",
    )
    fitted = model.fit_predict(
        context=bf["context"][rows],
        action=np.asarray(data["action"]),
        reward=np.asarray(data["reward"]),
        n_folds=2,
        random_state=SEED,
    )
    q_micro = np.round(fitted[:, :, 0] * 1e6).astype(int)
    q_hat = np.zeros((n, n_actions, len_list))
    q_hat[np.arange(n), :, position] = q_micro / 1e6  # the only position obp's DR reads
    dists = {}
    for name, policy in data["policies"].items():
        by_action_position = np.asarray(policy["by_action_position"], dtype=float)
        dists[name] = np.broadcast_to(by_action_position, (n, n_actions, len_list)).copy()
    out = {
        "regression_model": (
            "obp.ope.RegressionModel(n_actions=80, len_list=1, action_context=the bundle's "
            "action_context, base_model=sklearn LogisticRegression(C=1.0, random_state=12345, "
            "max_iter=1000), fitting_method='normal').fit_predict(the rows' context, action, "
            "reward, n_folds=2, random_state=12345) (one model for every position: the rows "
            "have few clicks); q_micro[i][a] is its prediction for action a at round i, in "
            "millionths (rounded), given to obp at round i's position"
        ),
        "q_micro": q_micro,
    }
    return {"data": data, "dists": dists, "q_hat": q_hat, "position": position, "out": out}


# -- estimates ------------------------------------------------------------------------------
def arguments(case: dict, dist: np.ndarray, reads_model: bool) -> dict:
    data = case["data"]
    n = data["n_rounds"]
    position = case["position"] if case["position"] is not None else np.zeros(n, dtype=int)
    args = {
        "reward": np.asarray(data["reward"]),
        "action": np.asarray(data["action"]),
        "pscore": np.asarray(data["pscore"], dtype=float),
        "position": position,
        "action_dist": dist,
    }
    if reads_model:
        args["estimated_rewards_by_reg_model"] = case["q_hat"]
    return args


def fixed(case: dict, dist: np.ndarray, cls: str, lambdas) -> dict:
    import obp.ope as ope

    args = arguments(case, dist, True)
    return {
        str(number(lam)): float(getattr(ope, cls)(lambda_=lam).estimate_policy_value(**args))
        for lam in lambdas
    }


def tuned(case: dict, dist: np.ndarray, key: str, lambdas: list, method: str, bound: bool):
    import obp.ope as ope

    cls, reads_model, _ = TUNED[key]
    est = getattr(ope, cls)(lambdas=list(lambdas), tuning_method=method, use_bias_upper_bound=bound)
    value = float(est.estimate_policy_value(**arguments(case, dist, reads_model)))
    entry = {
        "class": cls,
        "lambdas": [number(v) for v in lambdas],
        "tuning_method": method,
        "use_bias_upper_bound": bound,
        "delta": est.delta,
        "best_hyperparam": number(float(est.best_hyperparam)),
        "policy_value": value,
    }
    if method == "mse":
        scores = est.estimated_mse_score_dict
        entry["estimated_mse"] = {str(number(float(k))): float(v) for k, v in scores.items()}
    return entry


def estimates(name: str, case: dict) -> dict:
    out = {}
    for policy, dist in case["dists"].items():
        tuning = []
        for key, (_, _, subgaussian) in TUNED.items():
            grids = [SUBGAUSSIAN, SUBGAUSSIAN_BITING] if subgaussian else [LARGE, BITING[name]]
            for grid in grids:
                for method, bound in RULES:
                    tuning.append({"key": key, **tuned(case, dist, key, grid, method, bound)})
        out[policy] = {
            "dr": fixed(case, dist, "DoublyRobust", CLIPS[name]),
            "sg_dr": fixed(case, dist, "SubGaussianDoublyRobust", SUBGAUSSIAN_BITING),
            "tuning": tuning,
        }
    return out


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


def main() -> None:
    inputs = json.loads(INPUTS.read_text())
    result = {
        "generator": "tests/plugins/rewardmodels/obp_reference/generate.py",
        "inputs": "tests/plugins/importance/obp_reference/pinned.json",
        "environment": environment(),
    }
    for name, build in (("synthetic", synthetic), ("obd", obd)):
        case = build(inputs)
        result[name] = {**case["out"], "estimates": estimates(name, case)}
    text = json.dumps(plain(result), separators=(",", ":"), sort_keys=True)
    PATH.write_text(text + "\n")
    print(f"obp {version('obp')}: wrote {PATH} ({len(text) / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
