"""The reports read what estimators declare through their evaluation's declarations."""

from __future__ import annotations

from offeval.engine.evaluation import evaluate
from offeval_importance import IS, NCIS
from offeval_reports.evaluation_report import estimator_legend, lower_is_better, weight_table


class LowerIS(IS):
    """IS, read as a metric where lower is better, with one weight diagnostic."""

    name = "lower_is"
    higher_is_better = False
    weight_diagnostics = ("max_weight",)


def test_the_reports_read_the_declaration(bandit):
    log, policy, _ = bandit
    evaluation = evaluate(log, [policy], [LowerIS(), NCIS(cap=10)], progress=False)
    assert lower_is_better(evaluation) == {"lower_is"}
    legend = estimator_legend(evaluation).set_index("estimator")
    assert legend.loc["ncis(cap=10)", "parameters"] == "ncis(cap=10)"
    assert legend.loc["lower_is", "better"] == "lower"
    assert legend.loc["lower_is", "what it computes"].startswith("IS, read as a metric")
    table = weight_table(evaluation).set_index("estimator")
    assert "max_weight" in table.columns and "ess" in table.columns
    assert table.loc["lower_is", ["ess"]].isna().all()  # declared: max_weight only
    assert table.loc["ncis(cap=10)", ["ess"]].notna().all()
