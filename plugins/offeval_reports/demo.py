"""The demo: a simulated A/B test of a dozen policies, predicted from one log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from offeval import (
    Evaluation,
    InteractionLog,
    OffevalError,
    Registry,
    declaration_of,
    evaluate,
    get_registry,
    probe,
)
from offeval.plugin import ReportContext, ReportSection, report_sections, worthwhile_workers
from offeval.stats import first_maximum, interval, kendall_tau

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
    #: Installed plugins (not offeval's own) whose estimators the demo did not run.
    left_out: list[str] = field(default_factory=list)


def demo_estimators(
    registry: Registry, environment, *, include: Sequence[str] = (), every_plugin: bool = False
) -> tuple[list, dict[str, str]]:
    """The estimators the demo runs: the built-in plugins' configurations, and those asked for.

    By default only offeval's own plugins take part (:meth:`Registry.is_builtin`),
    so that an installed third-party plugin does not change the demo's output;
    ``include`` adds estimators by spec (``"my_estimator:cap=10"``) and
    ``every_plugin`` lets every installed plugin take part. A plugin
    implementing ``register_demo_estimators`` shows exactly the configurations
    it registers; the estimators of a plugin without that hook join with their
    default parameters, each once (an alias is left out: its original is
    there). Returns the estimators and, for each configuration that could not
    be built, why.
    """
    built, skipped = [], {}
    taking_part = {p for p in registry.plugins if every_plugin or registry.is_builtin(p)}
    hook = "register_demo_estimators"
    for plugin, item in registry.call(hook, environment=environment):
        if plugin not in taking_part:
            continue
        try:
            built.append(registry.resolve("estimator", item))
        except OffevalError as exc:
            skipped[f"{item} (from {plugin})"] = str(exc)
    configuring = set(registry.implementers(hook))
    distinct = set(registry.distinct("estimator"))
    for component in registry.components("estimator"):
        plugin = component.plugin
        if plugin in configuring or plugin not in taking_part or component.name not in distinct:
            continue
        try:
            built.append(registry.create("estimator", component.name))
        except OffevalError as exc:
            skipped[component.name] = str(exc)
    for spec in include:  # a mistake in a spec the user typed is theirs to see
        built.append(registry.create_from_spec("estimator", spec))
    return sorted(built, key=lambda e: e.name), skipped


def left_out(registry: Registry) -> list[str]:
    """The installed plugins, not offeval's own, that register estimators the demo leaves out
    unless asked (``--estimator SPEC``, ``--all-estimators``)."""
    return sorted(
        {c.plugin for c in registry.components("estimator") if not registry.is_builtin(c.plugin)}
    )


def usable_estimators(
    registry: Registry,
    log: InteractionLog,
    policy,
    environment,
    *,
    include: Sequence[str] = (),
    every_plugin: bool = False,
) -> tuple[list, dict[str, str]]:
    """The demo's estimators (:func:`demo_estimators`) that run on this log and policy
    (:func:`probe`); the others with the reason."""
    candidates, skipped = demo_estimators(
        registry, environment, include=include, every_plugin=every_plugin
    )
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
    estimators: Sequence[str] = (),
    all_estimators: bool = False,
) -> DemoResult:
    """Simulate, evaluate offeval's built-in estimators, compare with the truth.

    ``estimators`` adds estimators by spec (``["my_estimator:cap=10"]``, the
    command's ``--estimator``); ``all_estimators`` runs those of every
    installed plugin too (``--all-estimators``), configured as their plugin
    says (:func:`demo_estimators`). ``workers`` processes share the evaluation
    (default: the available cores, at most :data:`MAX_WORKERS`).

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
    included, skipped = usable_estimators(
        registry, log, policies[0], env, include=estimators, every_plugin=all_estimators
    )
    if not included:
        raise OffevalError(f"no registered estimator runs on the demo log: {skipped}")
    if workers is None:  # as many as are worth a process, so none is capped with a warning
        workers = worthwhile_workers(log.n_units, MAX_WORKERS)
    evaluation = evaluate(log, policies, included, progress=progress, workers=workers)
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
        [] if all_estimators else left_out(registry),
    )
