"""Plugin ``ir``: top-n IR metrics with every convention explicit and switchable."""

from offeval import hookimpl
from offeval.plugin import Deferred, lazy_names
from offeval_ir import hookspecs


@hookimpl
def register_hookspecs(register):
    """Bring the ``register_metric_conventions`` and ``register_measures`` hooks."""
    register(hookspecs)


@hookimpl
def register_component_kinds(register):
    """Bring the ``conventions`` (IR metric convention presets) and ``measure`` kinds."""
    register("conventions", "register_metric_conventions", description="IR metric conventions")
    register("measure", "register_measures", ("kernel", "provider"), description="IR measures")


@hookimpl
def register_metric_conventions(register):
    """Register the convention presets (blog, trec_eval, ranx, sklearn, ...)."""
    from offeval_ir.conventions import PRESETS

    for name, factory in PRESETS.items():
        register(name, factory)


@hookimpl
def register_measures(register):
    """Register every measure of :mod:`offeval_ir.measure`, its declaration as the component."""
    from offeval_ir.measure.registry import DECLARATIONS, component_name

    for name, declared in DECLARATIONS.items():
        register(component_name(name), declared)


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
    "Conventions",
    "Agreement",
    "DownloadError",
    "Judgements",
    "METRICS",
    "Measure",
    "MetricResult",
    "PRESETS",
    "PreparedQrels",
    "RunEvaluation",
    "agreement_statistics",
    "as_qrels",
    "as_run",
    "compare_systems",
    "compute",
    "compute_frames",
    "compute_measures",
    "compute_topn",
    "evaluate_results",
    "evaluate_runs",
    "evaluate_topn",
    "implicit_feedback",
    "load_movielens_100k",
    "measure_agreement",
    "package_file",
    "parse_measure",
    "parse_measures",
    "prepare_qrels",
    "split_by_user",
    "top_n",
    "trec_eval_measures",
    "tukey_hsd",
    "win_tie_loss",
]

#: The public names, imported on first use (loading the plugin imports no numerical module).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_ir.agreement": ("measure_agreement",),
        "offeval_ir.agreement_statistics": ("Agreement",),
        "offeval_ir.public": ("DownloadError", "package_file"),
        "offeval_ir.blocks": ("compute_frames",),
        "offeval_ir.comparison": ("tukey_hsd", "win_tie_loss"),
        "offeval_ir.conventions": ("PRESETS", "Conventions"),
        "offeval_ir.judgements": ("Judgements",),
        "offeval_ir.measures": ("Measure", "parse_measure", "parse_measures", "trec_eval_measures"),
        "offeval_ir.metrics": ("METRICS", "MetricResult", "compute"),
        "offeval_ir.movielens": ("implicit_feedback", "load_movielens_100k", "split_by_user"),
        "offeval_ir.peer_inputs": ("as_qrels", "as_run"),
        "offeval_ir.prepared": ("PreparedQrels", "prepare_qrels"),
        "offeval_ir.runs": (
            "RunEvaluation",
            "compare_systems",
            "compute_measures",
            "evaluate_results",
            "evaluate_runs",
        ),
        "offeval_ir.topn": ("compute_topn", "evaluate_topn", "top_n"),
    },
)
