"""Plugin ``reports``: the demo and the reports, with their figures.

``offeval demo`` (a simulated A/B test predicted from one log, and its
report) and the report writer of ``offeval evaluate --report`` (HTML and
Markdown with a forest plot, significance grids and weight diagnostics).
The core draws nothing: matplotlib is this plugin's.
"""

from offeval.plugin import hookimpl
from offeval_reports.command import DemoCommand
from offeval_reports.demo import DemoResult, run_demo
from offeval_reports.demo_report import plot_estimates, write_demo_report
from offeval_reports.evaluation_report import EvaluationReportWriter, write_evaluation_report


@hookimpl
def register_commands(register):
    """``offeval demo``."""
    register("demo", DemoCommand)


@hookimpl
def register_reports(register):
    """The HTML and Markdown report of ``offeval evaluate --report``."""
    register("html", EvaluationReportWriter)


__all__ = [
    "DemoResult",
    "EvaluationReportWriter",
    "plot_estimates",
    "run_demo",
    "write_demo_report",
    "write_evaluation_report",
]
