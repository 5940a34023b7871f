"""The demo: a simulated A/B test of a dozen policies, predicted from one log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from offeval.plugin import (
    UNITS_PER_WORKER,
    Evaluation,
    InteractionLog,
    OffevalError,
    Registry,
    ReportContext,
    ReportSection,
    available_cores,
    declaration_of,
    evaluate,
    first_maximum,
    fork_available,
    get_registry,
    interval,
    kendall_tau,
    probe,
    report_sections,
)

#: Most worker processes the demo starts by default (its log is small).
MAX_WORKERS = 4


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
    sections: list[ReportSection]
    skipped: dict[str, str]
    settings: dict[str, Any]


def demo_estimators(registry: Registry, environment) -> tuple[list, dict[str, str]]:
    """The estimators the plugins configure for the demo, and those of the others at defaults.

    A plugin implementing ``register_demo_estimators`` shows exactly the
    configurations it registers; the estimators of a plugin without that hook
    join with their default parameters, so a third-party estimator appears in
    the demo too. Returns the estimators and, for each configuration that
    could not be built, why.
    """
    built, skipped = [], {}
    hook = "register_demo_estimators"
    for plugin, item in registry.call(hook, environment=environment):
        try:
            built.append(registry.resolve("estimator", item))
        except OffevalError as exc:
            skipped[f"{item} (from {plugin})"] = str(exc)
    configuring = set(registry.implementers(hook))
    for component in registry.components("estimator"):
        if component.plugin not in configuring:
            try:
                built.append(registry.create("estimator", component.name))
            except OffevalError as exc:
                skipped[component.name] = str(exc)
    return sorted(built, key=lambda e: e.name), skipped


def usable_estimators(
    registry: Registry, log: InteractionLog, policy, environment
) -> tuple[list, dict[str, str]]:
    """The demo's estimators that run on this log and policy (:func:`probe`); the others
    with the reason."""
    candidates, skipped = demo_estimators(registry, environment)
    first: dict[str, Any] = {}  # of the estimators with one label, the first
    for estimator in candidates:
        first.setdefault(declaration_of(estimator).label, estimator)
    usable = []
    errors = probe(log, [policy], list(first.values()))
    for (label, estimator), error in zip(first.items(), errors, strict=True):
        if error is None:
            usable.append(estimator)
        else:
            skipped[label] = str(error)
    return usable, skipped


def run_demo(
    *,
    seed: int = 0,
    n_trajectories: int = 100_000,
    n_policies: int = 12,
    n_per_cell: int = 100_000,
    environment: str = "default",
    progress: bool | None = None,
    registry: Registry | None = None,
    workers: int | None = None,
) -> DemoResult:
    """Simulate, evaluate every registered estimator, compare with the truth.

    ``workers`` processes share the evaluation (default: the available cores,
    at most :data:`MAX_WORKERS`).

    The plugins add their own analyses as report sections (hook
    ``register_report_sections``), which may add columns to the summary.
    """
    registry = registry or get_registry()
    env = registry.create("environment", environment, seed=seed)
    policies = env.candidate_policies(n_policies)
    log = env.simulate(env.logging_policy(), n_trajectories, seed=seed, with_candidates=True)
    truth = pd.Series(
        {p.name: env.true_value(p, "reward_per_impression") for p in policies}, name="truth"
    )
    ab = pd.DataFrame([vars(r) for r in env.ab_test(policies, n_per_cell, seed=seed)])
    estimators, skipped = usable_estimators(registry, log, policies[0], env)
    if not estimators:
        raise OffevalError(f"no registered estimator runs on the demo log: {skipped}")
    if workers is None:  # as many as are worth a process, so none is capped with a warning
        worth = max(1, log.n_units // UNITS_PER_WORKER)
        workers = min(available_cores(), MAX_WORKERS, worth) if fork_available() else 1
    evaluation = evaluate(log, policies, estimators, progress=progress, workers=workers)
    names = list(truth.index)
    # A best policy is the first in the simulator's order among those tied within RTOL.
    true_best = names[first_maximum(truth.to_numpy())]
    rows = []
    # Only estimators of reward per impression are on the truth's scale; for the others
    # (rewards per trajectory, normalised metrics) only their order counts.
    declared = evaluation.declarations
    other_scale = {d.label for d in declared if d.estimand != "reward_per_impression"}
    # Lower-is-better metrics (disagreement rates) are ranked by their negation.
    sign = {d.label: 1 if d.higher_is_better else -1 for d in declared}
    for label in evaluation.estimators:
        est = [evaluation.estimate(p, label) for p in names]
        values = np.array([e.value for e in est])
        order_values = sign[label] * values
        covered = np.mean(
            [e.ci_low <= truth[p] <= e.ci_high for e, p in zip(est, names, strict=True)]
        )
        error = (
            np.nan if label in other_scale else float(np.mean(np.abs(values - truth.to_numpy())))
        )
        tau = kendall_tau(order_values, truth.to_numpy())
        rows.append(
            {
                "estimator": label,
                "kendall_tau": tau.statistic,
                "tau_p_value": tau.p_value,
                "mean_abs_error": error,
                "ci_coverage": np.nan if label in other_scale else covered,
                "picked": names[first_maximum(order_values)],
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
            "picked": ab["policy"].iloc[first_maximum(ab["mean"].to_numpy())],
        }
    )
    summaries = {label: evaluation.summary(label) for label in evaluation.estimators}
    context = ReportContext(summaries, truth, log, list(policies), seed, workers)
    sections = report_sections(registry, context)
    summary = pd.DataFrame(rows).set_index("estimator")
    for section in sections:
        if section.columns is not None:
            summary = summary.join(section.columns, how="left")
    summary = summary.reset_index()
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
        summary,
        estimates,
        sections,
        skipped,
        settings,
    )
