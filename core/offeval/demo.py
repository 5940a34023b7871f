"""The demo: a simulated A/B test of a dozen policies, predicted from one log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from offeval.errors import OffevalError
from offeval.evaluation import Evaluation, evaluate
from offeval.log import InteractionLog
from offeval.registry import Registry, get_registry
from offeval.stats.compare import kendall_tau
from offeval.stats.inference import interval
from offeval.stats.ranking import rank_probabilities


def _coverage(values: np.ndarray, se: np.ndarray, truth: np.ndarray) -> float:
    """Share of 95% normal intervals around ``values`` that contain ``truth``."""
    low, high = interval(values, se, 0.95)
    return float(np.mean((low <= truth) & (truth <= high)))


@dataclass
class DemoResult:
    """Everything the demo computed, ready for reporting."""

    log: InteractionLog
    truth: pd.Series
    ab: pd.DataFrame
    evaluation: Evaluation
    summary: pd.DataFrame
    estimates: pd.DataFrame
    rank_1: pd.DataFrame
    skipped: dict[str, str]
    settings: dict[str, Any]


#: Extra configurations the demo adds when their estimator is registered: low
#: caps, to show what capping without normalisation does to the ranking.
DEMO_EXTRAS = ("cis:cap=10", "ncis:cap=10")
#: Configurations that replace an estimator's defaults in the demo: the DCG
#: family discounts with the environment's own examination model
#: (``{examination}``), and DCG reports reward per impression like the truth.
DEMO_SPECS = {
    "dcg": (
        "dcg:examination={examination},per=impression",
        "dcg:examination={examination},per=impression,cap=2",
    ),
    "ndcg": ("ndcg:examination={examination}",),
    "pndcg": ("pndcg:examination={examination}",),
}


def usable_estimators(
    registry: Registry, log: InteractionLog, policy, examination: str = "logarithmic"
) -> tuple[list, dict]:
    """Every registered estimator (DEMO_SPECS or defaults, plus DEMO_EXTRAS) that runs here."""
    probe = next(log.chunks(2_000))
    usable, skipped = [], {}
    names = registry.names("estimator")
    specs = [s.format(examination=examination) for n in names for s in DEMO_SPECS.get(n, (n,))]
    specs += [s for s in DEMO_EXTRAS if s.split(":")[0] in names]
    for name in specs:
        try:
            estimator = registry.create_from_spec("estimator", name)
            evaluate(probe, [policy], [estimator])
        except (OffevalError, TypeError) as exc:
            skipped[name] = str(exc)
            continue
        usable.append(estimator)
    return usable, skipped


def run_demo(
    *,
    seed: int = 0,
    n_trajectories: int = 100_000,
    n_policies: int = 12,
    n_per_cell: int = 100_000,
    environment: str = "default",
    draws: int = 20_000,
    progress: bool = True,
    registry: Registry | None = None,
) -> DemoResult:
    """Simulate, evaluate every registered estimator, compare with the truth."""
    registry = registry or get_registry()
    env = registry.create("environment", environment, seed=seed)
    policies = env.candidate_policies(n_policies)
    log = env.simulate(env.logging_policy(), n_trajectories, seed=seed, with_candidates=True)
    truth = pd.Series({p.name: env.online_value(p) for p in policies}, name="truth")
    ab = pd.DataFrame([vars(r) for r in env.ab_test(policies, n_per_cell, seed=seed)])
    examination = getattr(env, "examination", None)
    estimators, skipped = usable_estimators(
        registry, log, policies[0], getattr(examination, "spec", "logarithmic")
    )
    if not estimators:
        raise OffevalError(f"no registered estimator runs on the demo log: {skipped}")
    evaluation = evaluate(log, policies, estimators, progress=progress)
    names = list(truth.index)
    true_best = truth.idxmax()
    rows, ranks = [], {}
    normalised = {
        getattr(e, "label", e.name) for e in estimators if getattr(e, "tags", {}).get("normalised")
    }
    for label in evaluation.estimators:
        est = [evaluation.estimate(p, label) for p in names]
        values = np.array([e.value for e in est])
        covered = np.mean(
            [e.ci_low <= truth[p] <= e.ci_high for e, p in zip(est, names, strict=True)]
        )
        # Normalised metrics (nDCG) are not on the reward scale: only their order counts.
        error = np.nan if label in normalised else float(np.mean(np.abs(values - truth.to_numpy())))
        tau = kendall_tau(values, truth.to_numpy())
        probs = rank_probabilities(
            names, values, evaluation.covariance(label), draws=draws, seed=seed
        )
        ranks[label] = probs["p_rank_1"]
        rows.append(
            {
                "estimator": label,
                "kendall_tau": tau.statistic,
                "tau_p_value": tau.p_value,
                "mean_abs_error": error,
                "ci_coverage": np.nan if label in normalised else covered,
                "p_true_best_ranked_first": probs.loc[true_best, "p_rank_1"],
                "picked": names[int(np.argmax(values))],
            }
        )
    ab_tau = kendall_tau(ab["mean"].to_numpy(), truth.to_numpy())
    rows.append(
        {
            "estimator": "online A/B test",
            "kendall_tau": ab_tau.statistic,
            "tau_p_value": ab_tau.p_value,
            "mean_abs_error": float(np.mean(np.abs(ab["mean"].to_numpy() - truth.to_numpy()))),
            "ci_coverage": _coverage(ab["mean"].to_numpy(), ab["se"].to_numpy(), truth.to_numpy()),
            "p_true_best_ranked_first": np.nan,
            "picked": ab.loc[ab["mean"].idxmax(), "policy"],
        }
    )
    estimates = evaluation.to_frame().merge(truth.rename_axis("policy").reset_index(), on="policy")
    settings = {
        "seed": seed,
        "n_trajectories": n_trajectories,
        "n_rows": log.n_rows,
        "n_policies": n_policies,
        "n_per_cell": n_per_cell,
        "environment": repr(env),
        "true_best": true_best,
    }
    return DemoResult(
        log,
        truth,
        ab,
        evaluation,
        pd.DataFrame(rows),
        estimates,
        pd.DataFrame(ranks),
        skipped,
        settings,
    )
