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
from offeval import BaseEstimator, Contribution, PolicyView, hookimpl
from offeval.cli.shell import main
from offeval.registry.manager import Registry, get_registry
from offeval.registry.sections import ReportSection
from offeval.stats import Linearisation, ratio_of_means
from offeval_reports.demo import demo_estimators, left_out, usable_estimators
from offeval_reports.document import ReportDocument
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


# --- wide tables transposed, sticky first column, captions above (issue 28, second pass) ------


def test_a_wide_section_table_of_numbers_is_shown_transposed_its_csv_unchanged(tmp_path):
    policies = [f"p{k:02d}" for k in range(3)]
    estimators = [f"estimator_{k}" for k in range(7)]
    p_best = pd.DataFrame(
        np.full((3, 7), 1 / 3), index=pd.Index(policies, name="policy"), columns=estimators
    ).rename_axis(columns="estimator")
    narrow = pd.DataFrame({"top 1": ["p01"]}, index=pd.Index(["is"], name="estimator"))
    doc = ReportDocument("r")
    doc.sections([ReportSection("S", "t", {"p_best": p_best, "selection": narrow})], tmp_path)
    back = pd.read_csv(tmp_path / "s_p_best.csv", index_col=0)
    assert list(back.index) == policies and list(back.columns) == estimators  # as computed
    md = doc.markdown()
    assert "| estimator | p00 | p01 | p02 |" in md  # a row per estimator
    assert "| estimator_6 | 0.3333 | 0.3333 | 0.3333 |" in md
    assert "shown transposed: a row per estimator, a column per policy" in md
    assert "| estimator | top 1 |" in md  # a long table stays as it is


def test_captions_come_before_their_tables_and_after_their_figures(tmp_path):
    doc = ReportDocument("r")
    doc.table(pd.DataFrame({"column_one": [1.0]}), caption="first table")
    doc.table(pd.DataFrame({"column_two": [2.0]}), caption="second table")
    doc.figure(tmp_path / "plot.png", caption="figure caption")
    page, md = doc.html(), doc.markdown()
    for text in (page, md):
        first, second = text.index("first table"), text.index("second table")
        assert first < text.index("column_one") < second < text.index("column_two")
    assert re.search(r'<p class="caption">first table</p>\s*<div class="table">', page)
    assert re.search(r'<img src="plot.png"[^>]*>\s*<p class="caption">figure caption', page)


def test_the_first_column_of_a_scrolling_table_stays_in_view_on_screen_not_in_print():
    style = re.search(r"<style>(.*)</style>", ReportDocument("r").html()).group(1)
    screen, _, printed = style.partition("@media print")
    sticky = r"div\.table td:first-child,div\.table th:first-child\{"
    assert re.search(sticky + r"position:sticky;left:0;[^}]*background:#fff", screen)
    assert re.search(sticky + r"position:static", printed)


def test_the_demos_estimates_per_policy_have_a_row_per_estimator():
    from types import SimpleNamespace

    from offeval_reports.demo_report import estimates_per_policy

    truth = pd.Series({"p1": 0.1, "p2": 0.2, "p3": 0.15}, name="truth")
    rows = [
        {"policy": p, "estimator": e, "value": v + d}
        for e, d in (("is", 0.01), ("pd", 0.5))
        for p, v in truth.items()
    ]
    declarations = [
        SimpleNamespace(label="is", estimand="reward_per_impression"),
        SimpleNamespace(label="pd", estimand=None),
    ]
    result = SimpleNamespace(
        estimates=pd.DataFrame(rows),
        truth=truth,
        ab=pd.DataFrame({"policy": ["p3", "p1", "p2"], "mean": [0.16, 0.11, 0.21]}),
        evaluation=SimpleNamespace(declarations=declarations),
        settings={"true_best": "p2"},
    )
    table = estimates_per_policy(result, lower={"pd"})
    assert list(table.columns) == ["estimator", "unit", "p1", "p2 *", "p3"]
    assert table["estimator"].tolist() == ["truth", "A/B test mean", "is", "pd (lower is better)"]
    assert table["unit"].tolist() == ["reward per impression"] * 3 + ["own scale"]
    assert table.loc[1, ["p1", "p2 *", "p3"]].tolist() == [0.11, 0.21, 0.16]  # by policy
    assert table.loc[2, "p3"] == pytest.approx(0.16)


# --- weight diagnostics' headers ------------------------------------------------------------


def test_every_weight_diagnostic_of_a_built_in_estimator_has_a_header():
    from offeval import declaration_of
    from offeval_reports.tables import headers

    registry = get_registry()
    declared = set()
    for name in registry.names("estimator"):
        try:
            estimator = registry.create("estimator", name)
        except Exception:  # noqa: BLE001 -- one that needs arguments declares as its class does
            continue
        declared |= set(declaration_of(estimator).weight_diagnostics)
    assert {"mean_weight", "mean_weight_z", "support_violations"} <= declared
    assert "unsupported_mass_per_slot" in declared
    named = headers()
    assert declared <= set(named), declared - set(named)
    assert all("_" not in named[d] for d in declared)


# --- forest plots ---------------------------------------------------------------------------


def test_forest_panels_of_one_unit_share_their_x_axis_and_keep_end_markers_inside():
    from offeval_reports.evaluation_report import forest_figure

    rows = []
    for estimator, centre, half in (("is", 0.2, 0.01), ("snips", 0.3, 0.05), ("ndcg", 5, 1)):
        for k, policy in enumerate(("p", "q", "r")):
            value = centre + k * half
            rows.append(
                {
                    "policy": policy,
                    "estimator": estimator,
                    "value": value,
                    "ci_low": value - half,
                    "ci_high": value + half,
                }
            )
    unit = {"is": "reward per impression", "snips": "reward per impression", "ndcg": "own scale"}
    fig = forest_figure(pd.DataFrame(rows), relative=False, unit=unit)
    FigureCanvasAgg(fig).draw()
    is_ax, snips_ax, ndcg_ax = fig.axes[:3]
    assert is_ax.get_xlim() == snips_ax.get_xlim()  # one x axis: compared by eye
    low, high = is_ax.get_xlim()
    assert low <= 0.19 and high >= 0.4  # both panels' intervals
    assert ndcg_ax.get_xlim()[0] > 3  # its own scale keeps its own axis
    for ax in fig.axes[:3]:
        assert ax.get_ylim() == (-0.5, 2.5)  # half a row beyond the first and last policy


# --- the demo's estimates against the truth ---------------------------------------------------


def test_the_demos_panels_name_the_true_best_policy_and_each_estimators_pick():
    from offeval_reports.demo_report import estimates_figure

    truth = pd.Series({"p1": 0.1, "p2": 0.3, "p3": 0.2})
    estimates = {"is": [0.1, 0.3, 0.2], "cis": [0.1, 0.2, 0.3], "pd": [0.9, 0.8, 0.5]}
    rows = [
        {"policy": p, "estimator": e, "value": v, "ci_low": v - 0.01, "ci_high": v + 0.01}
        for e, values in estimates.items()
        for p, v in zip(truth.index, values, strict=True)
    ]
    fig = estimates_figure(pd.DataFrame(rows), truth, {"pd"}, {"pd"})
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "true best policy (p2)" in legend
    said = [[t.get_text() for t in ax.texts] for ax in fig.axes[:3]]
    assert said == [["picks p2"], ["picks p3"], ["picks p3"]]  # pd: lower is better
    assert _smallest_text_px(fig) >= 9


# --- the p_best sweep's legend ----------------------------------------------------------------


def _smallest_text_px(fig) -> float:
    """Height in pixels of the smallest visible text once the PNG is shown at page width
    (800 px: a wider figure is shrunk)."""
    FigureCanvasAgg(fig).draw() if fig.canvas is None else fig.canvas.draw()
    shrink = min(1.0, 800 / (fig.get_figwidth() * 100))
    sizes = [
        t.get_fontsize()
        for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text"))
        if t.get_visible() and t.get_text().strip()
    ]
    return min(sizes) * 100 / 72 * shrink


def test_the_sweep_legend_is_readable_and_lists_only_policies_that_ever_exceed_one_percent():
    import matplotlib.pyplot as plt

    from offeval_decision.section import REPORT_WIDTH
    from offeval_decision.sweeps import plot_sweep

    caps = [1.0, 10.0, float("inf")]
    p = {"a": [0.9, 0.5, 0.2], "b": [0.1, 0.5, 0.8], "c": [0, 0, 0], "d": [0, 0.005, 0]}
    p["e"] = [0.0, 0.0, 0.0]  # the true best, never likely: still named
    rows = [
        {"family": f, "cap": c, "policy": name, "p_rank_1": v}
        for f in ("without normalisation", "with normalisation")
        for name, values in p.items()
        for c, v in zip(caps, values, strict=True)
    ]
    fig = plot_sweep(pd.DataFrame(rows), 1, "e", width=REPORT_WIDTH)
    try:
        texts = [t.get_text() for t in fig.legends[0].get_texts()]
        assert texts[:3] == ["a", "b", "e (truly best)"]
        assert texts[3].startswith("others, never above 1%") and "c, d" in texts[3]
        assert len(texts) == 4
        assert all(t.get_fontsize() >= 9 for t in fig.legends[0].get_texts())
        assert _smallest_text_px(fig) >= 12  # 9 pt at 100 dpi, shown at its size
        renderer = fig.canvas.get_renderer()
        box = fig.legends[0].get_window_extent(renderer)
        assert not any(box.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes)
    finally:
        plt.close(fig)
