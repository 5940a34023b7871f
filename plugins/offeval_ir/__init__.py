"""Plugin ``ir``: top-n IR metrics with every convention explicit and switchable."""

from offeval.plugin import Deferred, hookimpl, lazy_names
from offeval_ir import hookspecs


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
    from offeval_ir.conventions import PRESETS

    for name, factory in PRESETS.items():
        register(name, factory)


@hookimpl
def register_commands(register):
    """Register ``offeval metrics``, ``offeval compare`` and ``offeval trec_eval``, each
    imported when it runs (the helps are the commands' own, shown by ``offeval --help``)."""
    register(
        "metrics",
        Deferred(
            "offeval_ir.command:MetricsCommand",
            help="IR measures of a run against qrels (TREC files, CSV, Parquet, JSON), "
            "trec_eval's way",
        ),
    )
    register(
        "compare",
        Deferred(
            "offeval_ir.command:CompareCommand",
            help="compare runs on the same qrels, paired on the queries every run averages: "
            "means, intervals, paired tests (Markdown/CSV/LaTeX)",
        ),
    )
    register(
        "trec_eval",
        Deferred(
            "offeval_ir.trec_command:TrecEvalCommand",
            help="trec_eval's command line and output (trec_eval [-q] [-c] [-n] [-l N] [-M N] "
            "[-m measure] QRELS RUN), computed by offeval",
        ),
    )


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

#: The public names, imported on first use (loading the plugin imports no numerical module).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_ir.blocks": ("compute_frames",),
        "offeval_ir.conventions": ("PRESETS", "Conventions"),
        "offeval_ir.judgements": ("Judgements",),
        "offeval_ir.measures": ("Measure", "parse_measure", "parse_measures"),
        "offeval_ir.metrics": ("METRICS", "MetricResult", "compute"),
        "offeval_ir.runs": (
            "RunEvaluation",
            "compare_systems",
            "compute_measures",
            "evaluate_results",
            "evaluate_runs",
        ),
    },
)
