"""Plugin ``ir``: top-n IR metrics with every convention explicit and switchable."""

from offeval.plugin import hookimpl
from offeval_ir import hookspecs
from offeval_ir.blocks import compute_frames
from offeval_ir.conventions import PRESETS, Conventions
from offeval_ir.judgements import Judgements
from offeval_ir.measures import Measure, parse_measure, parse_measures
from offeval_ir.metrics import METRICS, MetricResult, compute
from offeval_ir.runs import (
    RunEvaluation,
    compare_systems,
    compute_measures,
    evaluate_results,
    evaluate_runs,
)


@hookimpl
def register_hookspecs(register):
    """Bring the ``register_metric_conventions`` hook."""
    register(hookspecs)


@hookimpl
def register_component_kinds(register):
    """Bring the ``conventions`` component kind (IR metric convention presets)."""
    register("conventions", "register_metric_conventions", description="IR metric conventions")


@hookimpl
def register_metric_conventions(register):
    """Register the convention presets (blog, trec_eval, ranx, sklearn, ...)."""
    for name, factory in PRESETS.items():
        register(name, factory)


@hookimpl
def register_commands(register):
    """Register ``offeval metrics`` and ``offeval compare``."""
    from offeval_ir.command import CompareCommand, MetricsCommand
    from offeval_ir.trec_command import TrecEvalCommand

    register("metrics", MetricsCommand)
    register("compare", CompareCommand)
    register("trec_eval", TrecEvalCommand)


__all__ = [
    "METRICS",
    "PRESETS",
    "Conventions",
    "Judgements",
    "Measure",
    "MetricResult",
    "RunEvaluation",
    "compare_systems",
    "compute",
    "compute_frames",
    "compute_measures",
    "evaluate_results",
    "evaluate_runs",
    "parse_measure",
    "parse_measures",
]
