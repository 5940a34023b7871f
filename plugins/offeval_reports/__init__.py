"""Plugin ``reports``: the demo and the reports, with their figures.

``offeval demo`` (a simulated A/B test predicted from one log, and its
report) and the report writer of ``offeval evaluate --report`` (HTML and
Markdown with a forest plot, significance grids and weight diagnostics).
The core draws nothing: matplotlib is this plugin's.
"""

from offeval import hookimpl
from offeval.plugin import Deferred, lazy_names

#: The plugins this one builds on, by registry name: the demo's A/B test runs in the
#: simulator's world (environment ``default``).
REQUIRES = ("simulation",)


@hookimpl
def register_commands(register):
    """``offeval demo`` (imported when it runs)."""
    register(
        "demo",
        Deferred(
            "offeval_reports.command:DemoCommand",
            help="simulated A/B test predicted from logs; writes a report",
        ),
    )


@hookimpl
def register_reports(register):
    """The HTML and Markdown report of ``offeval evaluate --report``."""
    from offeval_reports.evaluation_report import EvaluationReportWriter

    register("html", EvaluationReportWriter)


__all__ = [
    "DemoResult",
    "EvaluationReportWriter",
    "plot_estimates",
    "run_demo",
    "write_demo_report",
    "write_evaluation_report",
]

#: The public names, imported on first use (loading the plugin imports no drawing).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_reports.demo": ("DemoResult", "run_demo"),
        "offeval_reports.demo_report": ("plot_estimates", "write_demo_report"),
        "offeval_reports.evaluation_report": (
            "EvaluationReportWriter",
            "write_evaluation_report",
        ),
    },
)
