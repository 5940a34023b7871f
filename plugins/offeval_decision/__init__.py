"""Plugin ``decision``: which candidates deserve an A/B test (Gruson et al., WSDM 2019, 3.3-4.6).

Rank probabilities from the paired covariance of one offline evaluation,
sweeps over estimator settings (Gruson et al. 2019, Figures 4 and 5), component
questions, the selection of systems to test online, and the size of the
online test that would detect the predicted lift.
"""

from offeval.plugin import hookimpl
from offeval_decision.choices import (
    ab_sample_size,
    component_probabilities,
    plan_ab_test,
    select,
    unit_sd,
)
from offeval_decision.ranks import RankDistribution, expected_ranks, rank_distribution
from offeval_decision.section import decision_section
from offeval_decision.sweep import CAPS, FAMILIES, plot_sweep, sweep


@hookimpl
def register_report_sections(register, report):
    """Rank probabilities and a selection per estimator; a cap sweep in the demo."""
    section = decision_section(report)
    if section is not None:
        register(section)


@hookimpl
def register_commands(register):
    """Register ``offeval decide``."""
    from offeval_decision.command import DecideCommand

    register("decide", DecideCommand)


__all__ = [
    "CAPS",
    "FAMILIES",
    "RankDistribution",
    "ab_sample_size",
    "component_probabilities",
    "decision_section",
    "expected_ranks",
    "plan_ab_test",
    "plot_sweep",
    "rank_distribution",
    "select",
    "sweep",
    "unit_sd",
]
