"""What a new user stumbled on (issue 28, section 6): the demo runs offeval's own estimators
unless asked for more; reports group the estimators not run by reason, show docstring
literals as code, name their columns and units for people, let wide tables scroll (and wrap
in print), and label their log axes without overprinting."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import offeval.registry.manager as registry_module
from offeval.cli.document import ReportDocument
from offeval.cli.shell import main
from offeval.plugin import (
    BaseEstimator,
    Contribution,
    Linearisation,
    PolicyView,
    hookimpl,
    ratio_of_means,
)
from offeval.registry.manager import Registry, get_registry
from offeval_reports.demo import demo_estimators, left_out, usable_estimators
from offeval_reports.evaluation_report import not_run
from offeval_reports.tables import skipped_by_reason

MAPPING = "--map trajectory=session --map reward=stream --map propensity=mu".split()


class ThirdPartyIS(BaseEstimator):
    """Importance sampling, from a plugin that does not come with offeval."""

    name = "third_party_is"
    estimand = "reward_per_impression"
    guarantee = "unbiased"
    requires = ("propensity",)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * pi/mu and 1 per row."""
        columns = {"rw": view.log.column("reward") * view.weights(), "rows": view.log.ones}
        return Contribution(columns)

    def combine(self, stats) -> Linearisation:
        """Mean of r * pi/mu per row."""
        return ratio_of_means(stats, "rw", "rows")


class ThirdPartyPlugin:
    """An installed plugin that is not offeval's: one estimator, no demo configuration."""

    @hookimpl
    def register_estimators(self, register):
        register("third_party_is", ThirdPartyIS)


class ConfiguringPlugin:
    """An installed plugin that configures its estimator for the demo."""

    @hookimpl
    def register_estimators(self, register):
        register("third_party_is", ThirdPartyIS)

    @hookimpl
    def register_demo_estimators(self, register):
        register("third_party_is")


@pytest.fixture()
def with_third_party(monkeypatch):
    """The process-wide registry: the built-ins and a third-party plugin."""
    registry = Registry()
    registry.add_plugin(ThirdPartyPlugin(), "third_party")
    monkeypatch.setattr(registry_module, "_default", registry)
    return registry


def _names(estimators) -> set[str]:
    return {e.name for e in estimators}


# --- the demo's estimators ---------------------------------------------------------------


def test_the_demo_leaves_a_third_party_estimator_out_unless_asked(with_third_party, env):
    registry = with_third_party
    default, _ = demo_estimators(registry, env)
    builtin, _ = demo_estimators(Registry(), env)  # offeval's plugins alone
    assert "third_party_is" not in _names(default)
    assert sorted(map(repr, default)) == sorted(map(repr, builtin))  # the built-ins' demo
    assert left_out(registry) == ["third_party"] and left_out(Registry()) == []
    asked, _ = demo_estimators(registry, env, include=["third_party_is"])
    every, _ = demo_estimators(registry, env, every_plugin=True)
    assert "third_party_is" in _names(asked) and "third_party_is" in _names(every)
    assert len(asked) == len(every) == len(default) + 1


def test_a_plugin_configuring_the_demo_is_left_out_too_unless_all_are_asked(env):
    registry = Registry()
    registry.add_plugin(ConfiguringPlugin(), "configuring")
    default, _ = demo_estimators(registry, env)
    every, _ = demo_estimators(registry, env, every_plugin=True)
    assert "third_party_is" not in _names(default) and "third_party_is" in _names(every)


@pytest.mark.slow
def test_offeval_demo_runs_a_third_party_estimator_only_when_asked(
    with_third_party, tmp_path, capsys
):
    small = "--trajectories 3000 --per-cell 2000 --policies 4 --quiet --workers 1".split()
    assert main(["demo", *small, "--out", str(tmp_path / "default")]) == 0
    out, err = capsys.readouterr()
    summary = pd.read_csv(tmp_path / "default" / "summary.csv")
    assert "third_party_is" not in set(summary["estimator"]) and "third_party_is" not in out
    assert "third_party" in err and "--all-estimators" in err and "--estimator SPEC" in err
    assert "--all-estimators" in (tmp_path / "default" / "report.md").read_text()
    for asked in (["--estimator", "third_party_is"], ["--all-estimators"]):
        folder = tmp_path / asked[0].strip("-")
        assert main(["demo", *small, *asked, "--out", str(folder)]) == 0
        assert "third_party_is" in set(pd.read_csv(folder / "summary.csv")["estimator"])
    capsys.readouterr()


def test_the_demo_help_says_how_to_include_other_estimators(capsys):
    try:
        main(["demo", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    assert "--estimator SPEC" in text and "--all-estimators" in text
    assert "estimators only" in text  # what the default runs


# --- estimators not run ------------------------------------------------------------------


def test_estimators_not_run_are_one_row_per_reason():
    skipped = {
        "dm": "dm needs the candidate table",
        "dr": "dr needs the candidate table",
        "pd": "policy 'a' has no scores() method",
        "cd": "policy 'a' has no scores() method",
        "dcg": "no exposure()",
    }
    table = skipped_by_reason(skipped)
    assert table["estimators"].tolist() == ["dm, dr", "pd, cd", "dcg"]
    assert table["why"].tolist() == [
        "needs the candidate table",
        "policy 'a' has no scores() method",
        "no exposure()",
    ]


def test_the_demos_not_run_table_lists_each_estimator_once_without_aliases(env):
    registry = get_registry()
    log = env.simulate(env.logging_policy(), 300, seed=1, with_candidates=True)
    _, skipped = usable_estimators(registry, log, env.candidate_policies(1)[0], env)
    names = set(registry.names("estimator"))
    assert skipped and not [s for s in skipped if s in names and registry.get("estimator", s).alias]
    doc = ReportDocument("r")
    not_run(doc, skipped)
    md = doc.markdown()
    rows = [line for line in md.splitlines() if line.startswith("| ")][1:]  # after the header
    assert len(rows) == len(set(skipped_by_reason(skipped)["why"])) < len(skipped)
    assert "dr-os" not in md and "switch-dr" not in md  # obp's names of dr_os, switch_dr


# --- docstring literals -------------------------------------------------------------------


def test_rst_literals_show_as_code_in_markdown_and_html():
    doc = ReportDocument("r")
    doc.text("the ``support`` parameter; a `code` span; user text \\`\\`kept\\`\\`")
    legend = pd.DataFrame(
        {"estimator": ["``as typed``"], "what it computes": ['refused (``support="a|b"``).']}
    )
    doc.table(legend, docstrings=("what it computes",))
    md, page = doc.markdown(), doc.html()
    assert "``support``" not in md and "the `support` parameter" in md
    assert '| refused (`support="a\\|b"`). |' in md  # a pipe in a code span stays in its cell
    assert "\\`\\`as typed\\`\\`" in md  # a cell not of docstrings shows as written
    assert "the <code>support</code> parameter" in page
    assert "<td>refused (<code>support=&quot;a|b&quot;</code>).</td>" in page
    assert "<td>``as typed``</td>" in page
    html_text = re.sub(r"<[^>]+>", "", page)
    assert "``support" not in html_text


def test_an_evaluation_report_has_no_double_backticks(user_log, tmp_path):
    report = tmp_path / "report"
    args = [*MAPPING, "--policy", "a=pi_p01", "--policy", "b=pi_p02", "--quiet"]
    args += ["--estimator", "is", "--estimator", "iips"]  # iips's docstring has ``literals``
    assert main(["evaluate", str(user_log), *args, "--report", str(report)]) == 0
    md, page = (report / "report.md").read_text(), (report / "report.html").read_text()
    assert "``" not in md and "\\`\\`" not in md and "``" not in page
    assert "`self_normalized=True`" in md and "<code>self_normalized=True</code>" in page


# --- headers and units ---------------------------------------------------------------------


def test_report_tables_have_headers_for_people_and_say_their_units(user_log, tmp_path):
    report = tmp_path / "report"
    args = [*MAPPING, "--policy", "a=pi_p01", "--policy", "b=pi_p02", "--quiet"]
    args += ["--estimator", "is", "--estimator", "ncis", "--baseline", "a"]
    assert main(["evaluate", str(user_log), *args, "--report", str(report)]) == 0
    md = (report / "report.md").read_text()
    headers = [line for line in md.splitlines() if line.startswith("| policy | estimator |")]
    assert headers[0] == (
        "| policy | estimator | unit | estimate | std. error | 95% CI low | 95% CI high | "
        "trajectories used | relative to baseline (baseline = 1) | 95% CI low (relative) | "
        "95% CI high (relative) |"
    )
    assert "| a | is | reward per impression |" in md
    assert "| policy a | policy b | relative to | difference a - b |" in md
    assert "| estimator | parameters | better | unit | what it computes |" in md
    for raw in ("ci_low", "n_units", "p_adjusted", "relative_value"):
        assert not re.search(rf"\| {raw} \|", md), raw


def test_figures_say_the_unit_of_each_axis(user_log):
    from offeval_reports.demo_report import estimates_figure
    from offeval_reports.evaluation_report import forest_figure

    table = pd.DataFrame(
        {
            "policy": ["p", "q"] * 2,
            "estimator": ["is", "is", "ndcg", "ndcg"],
            "value": [0.1, 0.2, 0.5, 0.6],
            "ci_low": [0.05, 0.15, 0.45, 0.55],
            "ci_high": [0.15, 0.25, 0.55, 0.65],
        }
    )
    unit = {"is": "reward per impression", "ndcg": "own scale"}
    forest = forest_figure(table, relative=False, unit=unit)
    labels = [ax.get_xlabel() for ax in forest.axes]
    assert labels == ["estimate (reward per impression)", "estimate (own scale)"]
    truth = pd.Series({"p": 0.1, "q": 0.2})
    panels = estimates_figure(table, truth, other_scale={"ndcg"}).axes
    assert "(reward per impression)" in panels[0].get_ylabel()
    assert "(own scale)" in panels[1].get_ylabel()  # its neighbour's unit is not its own
    assert all("(reward per impression)" in ax.get_xlabel() for ax in panels[:2])


# --- wide tables -----------------------------------------------------------------------------


def test_html_tables_scroll_in_their_own_box_and_wrap_in_print():
    doc = ReportDocument("r")
    wide = pd.DataFrame(
        {f"dcg(examination=exponential(gamma=0.{k}), cap=2)": [0.5] for k in range(20)}
    )
    doc.table(wide)
    doc.table(pd.DataFrame({"x": [1.0]}))
    page = doc.html()
    assert page.count("<table>") == 2
    assert page.count('<div class="table"><table>') == 2 and page.count("</table></div>") == 2
    style = re.search(r"<style>(.*)</style>", page).group(1)
    screen, _, printed = style.partition("@media print")
    assert re.search(r"div\.table\{[^}]*overflow-x:auto", screen)
    assert re.search(r"div\.table\{overflow:visible\}", printed)
    assert re.search(r"table\{[^}]*width:100%[^}]*font-size:7pt", printed)
    assert re.search(r"th\{overflow-wrap:anywhere\}", printed)  # headers wrap anywhere,
    assert re.search(r"td\.num\{white-space:nowrap\}", printed)  # numbers never
    assert "dcg(<wbr>examination=<wbr>exponential(<wbr>" in page  # a long header may break


# --- the weight histogram's log axis ------------------------------------------------------


class _SpreadPolicy:
    """Weights pi / mu spread evenly in log scale from 10**low to 10**high."""

    def __init__(self, low: float, high: float, k: int):
        self.name, self.low, self.high = f"p{k}", low, high

    def probabilities(self, frame):
        exponent = np.linspace(self.low, self.high, len(frame))
        return frame["propensity"].to_numpy() * 10.0**exponent


#: Spans of weights (log10 of the smallest and largest): 13 decades, 5, about one (where
#: matplotlib's labels of 3 x 10^-1, 4 x 10^-1 ... ran into one another), a fifth of one.
SPANS = [(-11, 2), (-3, 2), (-0.5, 0.3), (-0.5, 0.5), (-0.3, 0.9), (-1.2, 0.5), (-0.1, 0.1)]


@pytest.mark.parametrize("low, high", [*SPANS, (-5.3, -4.9)])
def test_the_weight_histograms_log_axis_labels_do_not_overprint(env, low, high):
    from offeval_reports.evaluation_report import LOG_TICKS, weight_figure

    log = env.simulate(env.logging_policy(), 500, seed=3)
    fig = weight_figure(log, [_SpreadPolicy(low, high, k) for k in range(3)])
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        lo, hi = ax.get_xlim()
        ticks = ax.xaxis.get_major_ticks() + ax.xaxis.get_minor_ticks()
        shown = [
            t
            for t in ticks
            if t.label1.get_visible() and t.label1.get_text() and lo <= t.get_loc() <= hi
        ]
        assert shown  # the axis is labelled
        if high - low >= 1.5:
            assert len(shown) <= LOG_TICKS
        boxes = sorted((t.label1.get_window_extent(renderer) for t in shown), key=lambda b: b.x0)
        assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:], strict=False))  # no overlap
    assert "no unit" in fig._supxlabel.get_text()  # what the axis counts is said
