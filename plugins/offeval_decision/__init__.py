"""Plugin ``decision``: which candidates deserve an A/B test (Gruson et al., WSDM 2019, 3.3-4.6).

Rank probabilities from the paired covariance of one offline evaluation,
sweeps over estimator settings (Gruson et al. 2019, Figures 4 and 5), component
questions, the selection of systems to test online, and the size of the
online test that would detect the predicted lift.
"""

from offeval import hookimpl
from offeval.plugin import Deferred, lazy_names

#: The plugins this one builds on, by registry name: its studies and sweeps run the
#: importance-sampling family's estimators (is, cis, ncis) in the simulator's world.
REQUIRES = ("importance", "simulation")


@hookimpl
def register_report_sections(register, report):
    """Rank probabilities and a selection per estimator; a cap sweep in the demo."""
    from offeval_decision.section import decision_section

    section = decision_section(report)
    if section is not None:
        register(section)


@hookimpl
def register_commands(register):
    """Register ``offeval decide`` (imported when it runs)."""
    register(
        "decide",
        Deferred(
            "offeval_decision.command:DecideCommand",
            help="rank probabilities and an A/B selection from saved summaries (no log needed)",
        ),
    )


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

#: The public names, imported on first use (loading the plugin imports none of its modules).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_decision.choices": (
            "ab_sample_size",
            "component_probabilities",
            "plan_ab_test",
            "select",
            "unit_sd",
        ),
        "offeval_decision.ranks": ("RankDistribution", "expected_ranks", "rank_distribution"),
        "offeval_decision.section": ("decision_section",),
        "offeval_decision.sweeps": ("CAPS", "FAMILIES", "plot_sweep", "sweep"),
    },
)
