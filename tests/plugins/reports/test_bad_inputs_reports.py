"""What the reports say and show: ``offeval evaluate --report/--out`` and the demo's report.

User text (policy names, estimator labels, column names) reaches report.md,
report.html, figures and CSV files as written and harmless; tables say their
units and which way is better; figures are readable at page width.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from offeval.cli.shell import main
from offeval.data.tables import markdown_table
from offeval.engine.evaluation import evaluate
from offeval.registry.manager import get_registry
from offeval.registry.sections import ReportSection
from offeval_reports.document import DPI, ReportDocument

#: Width of a report's page in pixels: a wider PNG is shrunk to it.
PAGE_PX = 800

NCIS_CHAPTER = Path(__file__).parents[3] / "book" / "ncis.ipynb"
NASTY = ["<script>alert(1)</script>", "@cmd|x", "a_b*c$\\frac$"]
MAPPING = "--map trajectory=session --map reward=stream --map propensity=mu".split()


def _evaluate_report(user_log, tmp_path, *extra: str) -> tuple[str, str]:
    report = tmp_path / "report"
    policies = [f"--policy={name}=pi_p0{k}" for k, name in enumerate(NASTY, start=1)]
    args = [*MAPPING, *policies, "--estimator", "is", "--quiet", *extra]
    assert main(["evaluate", str(user_log), *args, "--report", str(report)]) == 0
    return (report / "report.md").read_text(), (report / "report.html").read_text()


class _Tags(HTMLParser):
    """Start tags of an HTML page, and its text."""

    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _parse(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


# --- user text in report.md and report.html ----------------------------------------------


def test_report_md_shows_policy_names_as_written_and_tables_keep_their_columns(user_log, tmp_path):
    markdown_it = pytest.importorskip("markdown_it")
    md, _ = _evaluate_report(user_log, tmp_path, "--baseline", "@cmd|x")
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(md)
    page = _parse(rendered)
    assert "script" not in page.tags  # the name is text, not a tag
    text = "".join(page.text)
    for name in NASTY:
        assert name in text, name
    assert "values relative to @cmd|x" in text
    # every row of the estimates table has as many cells as its header ("a|b" splits no cell)
    for table in re.findall(r"<table>.*?</table>", rendered, flags=re.S):
        head = len(re.findall(r"<th[\s>]", table.split("</thead>")[0]))
        rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], flags=re.S)
        assert all(len(re.findall(r"<td[\s>]", row)) == head for row in rows)


def test_report_html_runs_no_script_from_a_policy_name(user_log, tmp_path):
    _, page = _evaluate_report(user_log, tmp_path)
    parsed = _parse(page)
    assert "script" not in parsed.tags
    # shown as written (a long word may break after "(": <wbr> shows nothing)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.replace("<wbr>", "")


def test_markdown_escape_round_trips_through_a_markdown_renderer():
    from offeval.data.tables import markdown_escape

    markdown_it = pytest.importorskip("markdown_it")
    texts = ["<b>x</b>", "a|b", "*x*", "_x_", "[a](b)", "`c`", "a\\b", "# h", "p_value", "&amp;"]
    frame = pd.DataFrame({"a|b": texts, "v": np.arange(len(texts), dtype=float)})
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(markdown_table(frame))
    cells = re.findall(r"<td>(.*?)</td>", html)
    import html as html_module

    assert [html_module.unescape(c) for c in cells[::2]] == texts
    assert "<th>a|b</th>" in html
    assert markdown_escape("p_value") == "p_value"  # no clutter inside words


def test_dollars_in_user_text_start_no_mathematics_in_markdown():
    # GitHub and MyST (jupyter-book) read $...$ as mathematics: a policy "$x$" showed as x
    markdown_it = pytest.importorskip("markdown_it")
    dollarmath = pytest.importorskip("mdit_py_plugins.dollarmath")
    texts = ["$x$", "a $b$ c", "$$y$$", "\\$z$"]
    frame = pd.DataFrame({"policy": texts})
    renderer = markdown_it.MarkdownIt("commonmark").enable("table")
    html = renderer.use(dollarmath.dollarmath_plugin).render(markdown_table(frame))
    import html as html_module

    assert "math" not in html
    assert [html_module.unescape(c) for c in re.findall(r"<td>(.*?)</td>", html)] == texts


def test_report_paragraphs_in_html_show_escaped_user_text_without_backslashes():
    from offeval.data.tables import markdown_escape

    doc = ReportDocument("r")
    doc.text(f"relative to {markdown_escape('<i>a_b|c*</i>')}; see `x<y`")
    page = doc.html()
    assert "relative to &lt;i&gt;a_b|c*&lt;/i&gt;; see <code>x&lt;y</code>" in page


@pytest.mark.slow
def test_a_policy_name_with_dollars_does_not_break_the_figures(user_log, tmp_path):
    # matplotlib reads $...$ as mathematics: "$\frac$" made savefig raise
    md, _ = _evaluate_report(user_log, tmp_path)
    assert "Estimates" in md


# --- CSV cells that a spreadsheet would run --------------------------------------------------


def test_spreadsheet_safe_quotes_formula_text_and_keeps_numbers():
    from offeval.data.tables import spreadsheet_safe

    frame = pd.DataFrame(
        {
            "policy": ["=1+2", "+x", "-x", "@SUM(A1)", "ok", "\tx"],
            "value": [-1.5, 2.0, -3.0, 0.0, 1.0, 2.0],
            "mixed": ["-a", -2.0, 3, "b", None, "=c"],
        },
        index=pd.Index(["=i", "j", "k", "l", "m", "n"], name="=idx"),
    ).rename(columns={"mixed": "=mixed"})
    safe = spreadsheet_safe(frame)
    assert list(safe["policy"]) == ["'=1+2", "'+x", "'-x", "'@SUM(A1)", "ok", "'\tx"]
    assert list(safe["value"]) == [-1.5, 2.0, -3.0, 0.0, 1.0, 2.0]
    assert safe["'=mixed"].tolist()[:4] == ["'-a", -2.0, 3, "b"]  # numbers stay numbers
    assert safe.index[0] == "'=i" and safe.index.name == "'=idx"
    assert frame.loc["=i", "policy"] == "=1+2"  # the caller's frame is left alone


def test_write_csv_reads_back_negative_numbers_as_numbers(tmp_path):
    from offeval.data.tables import write_csv

    frame = pd.DataFrame({"policy": ["-p", "q"], "value": [-0.5, 0.25]})
    path = write_csv(frame, tmp_path / "t.csv")
    back = pd.read_csv(path)
    assert back["policy"].tolist() == ["'-p", "q"]
    assert back["value"].dtype.kind == "f" and back["value"].tolist() == [-0.5, 0.25]


def test_report_section_tables_are_spreadsheet_safe(tmp_path):
    frame = pd.DataFrame({"p": [0.5, -0.5]}, index=pd.Index(["=HYPERLINK(1)", "b"], name="policy"))
    doc = ReportDocument("r")
    doc.sections([ReportSection("S", "t", {"p_best": frame})], tmp_path)
    text = (tmp_path / "s_p_best.csv").read_text().splitlines()
    assert text[1] == "'=HYPERLINK(1),0.5" and text[2] == "b,-0.5"


def test_each_section_table_names_its_csv_file(tmp_path):
    frames = {"p_best": pd.DataFrame({"x": [1.0]}), "selection": pd.DataFrame({"y": ["a"]})}
    doc = ReportDocument("r")
    doc.sections([ReportSection("Pick", "t", frames)], tmp_path)
    md, page = doc.markdown(), doc.html()
    for name, caption in (("pick_p_best.csv", "p best"), ("pick_selection.csv", "selection")):
        assert (tmp_path / name).is_file()
        assert f"{caption} ({name})" in md and f'<p class="caption">{caption} ({name})' in page


# --- units, relative pairs, grids, lower is better, --stream ----------------------------------


@pytest.fixture()
def evaluation(env):
    """Three candidate policies under is (rows weighted) and pd (lower is better)."""
    log = env.simulate(env.logging_policy(), 3_000, seed=5, with_candidates=True)
    registry = get_registry()
    estimators = [registry.create("estimator", "is"), registry.create("estimator", "pd")]
    policies = env.candidate_policies(3)
    return log, policies, evaluate(log, policies, estimators, progress=False)


def test_ess_says_its_unit_and_counts_rows(evaluation):
    from offeval_reports.evaluation_report import weight_table

    log, policies, ev = evaluation
    table = weight_table(ev)
    row = table[(table["policy"] == policies[0].name) & (table["estimator"] == "is")]
    assert row["ess unit"].item() == "rows"
    w = np.asarray(policies[0].probabilities(log.frame)) / log.column("propensity")
    kish = w.sum() ** 2 / np.square(w).sum()  # over rows, not trajectories
    assert row["ess"].item() == pytest.approx(kish, rel=1e-9)


def test_ess_of_a_capped_estimator_is_said_to_be_of_the_weights_before_the_cap(env, tmp_path):
    # ncis(cap=2) showed the ESS and largest weight of pi/mu uncapped, under a text that
    # read as the ESS of the weights the estimator used
    from offeval_reports.evaluation_report import weight_table, write_evaluation_report

    log = env.simulate(env.logging_policy(), 2_000, seed=6)
    policy = env.candidate_policies(2)[1]
    ncis = get_registry().create("estimator", "ncis", cap=2.0)
    ev = evaluate(log, [policy], [ncis], progress=False)
    row = weight_table(ev).iloc[0]
    w = np.asarray(policy.probabilities(log.frame)) / log.column("propensity")
    assert row["clipped_share"] > 0 and row["max_weight"] > 2.0
    assert row["ess"] == pytest.approx(w.sum() ** 2 / np.square(w).sum(), rel=1e-9)
    write_evaluation_report(
        tmp_path, ev, ev.to_frame(), baseline=None, correction=None, sections=[]
    )
    assert "of the weights before their cap" in (tmp_path / "report.md").read_text()


def test_ess_of_an_estimator_weighting_trajectories_counts_trajectories(env):
    from offeval_reports.evaluation_report import weight_table

    log = env.simulate(env.logging_policy(), 2_000, seed=6)
    policy = env.candidate_policies(1)[0]
    ev = evaluate(log, [policy], [get_registry().create("estimator", "pi")], progress=False)
    row = weight_table(ev).iloc[0]
    assert row["ess unit"] == "trajectories"
    w = np.asarray(policy.probabilities(log.frame)) / log.column("propensity")
    unit = log.frame["trajectory"].to_numpy()
    g = pd.Series(w).groupby(unit).sum() - (pd.Series(w).groupby(unit).size() - 1)
    assert row["ess"] == pytest.approx(g.sum() ** 2 / np.square(g).sum(), rel=1e-9)


def test_pairs_with_a_baseline_say_they_are_relative(evaluation, tmp_path):
    from offeval_reports.evaluation_report import write_evaluation_report

    _, policies, ev = evaluation
    base = policies[0].name
    pairs = ev.pairs("is", None, base)
    assert set(pairs["relative_to"]) == {base}
    rel = {e.policy: e.value for e in ev.relative(base, "is")}
    first = pairs.iloc[0]
    assert first["difference"] == pytest.approx(rel[first["a"]] - rel[first["b"]], rel=1e-9)
    assert "relative_to" not in ev.pairs("is", None, None)
    write_evaluation_report(
        tmp_path, ev, ev.to_frame(), baseline=None, correction=None, sections=[]
    )
    md = (tmp_path / "report.md").read_text()
    assert "the estimated values, row minus column" in md


def test_grid_cells_show_the_difference_and_the_p_value(evaluation):
    from offeval_reports.evaluation_report import grid_figure

    _, policies, ev = evaluation
    a, b = policies[0].name, policies[1].name
    diff = ev.estimate(a, "is").value - ev.estimate(b, "is").value
    p = ev.grid("is").table.set_index(["a", "b"]).loc[(a, b), "p_value"]
    texts = [t.get_text() for t in grid_figure(ev, "is", None, None).axes[0].texts]
    assert f"{diff:+.2g}\n{p:.2g}" in [t.rstrip("*") for t in texts]
    assert len(texts) == 6  # every off-diagonal cell, not only the significant ones


def test_lower_is_better_is_marked_in_figures_and_tables(evaluation, tmp_path):
    from offeval_reports.evaluation_report import (
        estimator_legend,
        forest_figure,
        write_evaluation_report,
    )

    _, _, ev = evaluation
    lower = {"pd"}
    titles = [ax.get_title() for ax in forest_figure(ev.to_frame(), False, lower).axes]
    assert titles == ["is", "pd (lower is better)"]
    legend = estimator_legend(ev).set_index("estimator")["better"]
    assert legend.to_dict() == {"is": "higher", "pd": "lower"}
    write_evaluation_report(
        tmp_path, ev, ev.to_frame(), baseline=None, correction=None, sections=[]
    )
    md = (tmp_path / "report.md").read_text()
    assert "| pd (lower is better) |" in md and "## Paired significance grid: pd (lower" in md


def test_demo_marks_lower_is_better_in_its_panels():
    from offeval_reports.demo_report import estimates_figure

    truth = pd.Series({"p1": 0.1, "p2": 0.2})
    rows = [
        {"policy": p, "estimator": e, "value": v, "ci_low": v - 0.01, "ci_high": v + 0.01}
        for e in ("is", "pd")
        for p, v in truth.items()
    ]
    fig = estimates_figure(pd.DataFrame(rows), truth, {"pd"}, {"pd"})
    titles = [ax.get_title() for ax in fig.axes[:2]]
    assert titles[0] == "is" and titles[1].endswith("(lower is better)")


def test_a_report_without_the_weight_histogram_says_why(evaluation, tmp_path):
    from offeval_reports.evaluation_report import write_evaluation_report

    _, policies, ev = evaluation
    write_evaluation_report(
        tmp_path / "given", ev, ev.to_frame(), baseline=None, correction=None, sections=[],
        log=None, policies=policies, weights_note="not drawn: --stream reads the log in batches",
    )  # fmt: skip
    md = (tmp_path / "given" / "report.md").read_text()
    assert "## Importance weights\n\nnot drawn: --stream reads the log in batches" in md
    write_evaluation_report(
        tmp_path / "default", ev, ev.to_frame(), baseline=None, correction=None, sections=[]
    )
    md = (tmp_path / "default" / "report.md").read_text()
    assert re.search(r"## Importance weights\n\nnot drawn: .*--stream", md)


@pytest.mark.slow
def test_demo_estimates_csv_says_what_its_ess_counts(tmp_path):
    from offeval_reports.demo import run_demo
    from offeval_reports.demo_report import write_demo_report

    result = run_demo(n_trajectories=2_000, n_policies=3, n_per_cell=2_000, progress=False)
    write_demo_report(result, tmp_path)
    table = pd.read_csv(tmp_path / "estimates.csv")
    with_ess = table[table["diag_ess"].notna()]
    assert not with_ess.empty and with_ess["ess_unit"].isin({"rows", "trajectories"}).all()
    assert set(with_ess.loc[with_ess["estimator"] == "is", "ess_unit"]) == {"rows"}
    assert table.loc[table["diag_ess"].isna(), "ess_unit"].isna().all()


#: How the sources were called inside the project; readers know them by authors and year.
INTERNAL_NAMES = re.compile(r"\bthe seed\b|\bseed(?:'s| paper| blog| 0\d\d)\b", re.IGNORECASE)


@pytest.mark.slow
def test_plugins_listing_and_reports_cite_authors_not_seeds(tmp_path, capsys):
    from offeval_reports.demo import run_demo
    from offeval_reports.demo_report import write_demo_report

    assert main(["plugins"]) == 0
    listing = capsys.readouterr().out
    assert not INTERNAL_NAMES.findall(listing)
    result = run_demo(n_trajectories=2_000, n_policies=3, n_per_cell=2_000, progress=False)
    md = write_demo_report(result, tmp_path).with_name("report.md").read_text()
    assert not INTERNAL_NAMES.findall(md)
    assert "Random seed 0" in md  # the random-number seed keeps its name


def _many_policies_grid(n: int, env) -> Figure:
    from offeval_reports.evaluation_report import grid_figure

    log = env.simulate(env.logging_policy(), 2_000, seed=5)
    policies = list(env.candidate_policies(n))
    for k, policy in enumerate(policies):
        policy.name = f"policy_{k:02d}_" + "x" * 20
    ev = evaluate(log, policies, [get_registry().create("estimator", "is")], progress=False)
    return grid_figure(ev, "is", "holm", policies[0].name)


@pytest.mark.parametrize("n", [4, 12, 20])
def test_grid_cell_text_stays_inside_its_cell_or_is_not_drawn(env, n):
    # 12 or 20 policies: each cell's difference and p-value ran over its neighbours
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = _many_policies_grid(n, env)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    ax = fig.axes[0]
    (x0, y0), (x1, y1) = ax.transData.transform([(0, 0), (1, 1)])
    cell_w, cell_h = abs(x1 - x0), abs(y1 - y0)
    renderer = canvas.get_renderer()
    numbers = [t for t in ax.texts if t.get_text().strip("*")]
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        assert box.width <= cell_w and box.height <= cell_h, (n, text.get_text())
    if n == 4:
        assert len(numbers) == n * (n - 1)  # every cell its numbers when they fit
    if not numbers:  # the title says where the numbers are
        assert "table" in ax.get_title()


# --- figures readable at page width ------------------------------------------------------------


def _smallest_text_px(fig: Figure) -> float:
    """Height in pixels of the smallest visible text once the PNG is shown at page width."""
    fig.canvas.draw_idle() if fig.canvas is not None else None
    shrink = min(1.0, PAGE_PX / (fig.get_figwidth() * DPI))
    sizes = [
        t.get_fontsize()
        for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text"))
        if t.get_visible() and t.get_text().strip()
    ]
    return min(sizes) * DPI / 72 * shrink


def test_demo_panels_have_titles_readable_at_page_width():
    from offeval_reports.demo_report import estimates_figure

    truth = pd.Series({f"p{k}": 0.1 + k / 100 for k in range(12)})
    labels = ["is", "ncis", "cis(cap=10)", "ncis(cap=10)"]
    rows = [
        {"policy": p, "estimator": e, "value": v, "ci_low": v - 0.01, "ci_high": v + 0.01}
        for e in labels
        for p, v in truth.items()
    ]
    fig = estimates_figure(pd.DataFrame(rows), truth)
    assert _smallest_text_px(fig) >= 9


def test_evaluate_report_figures_are_readable_at_page_width(evaluation):
    from offeval_reports.evaluation_report import forest_figure, grid_figure, weight_figure

    log, policies, ev = evaluation
    for fig in (
        forest_figure(ev.to_frame(), False),
        grid_figure(ev, "is", None, None),
        weight_figure(log, policies),
    ):
        assert _smallest_text_px(fig) >= 9


def _ncis_sweep_figure() -> Figure:
    """The ncis chapter's sweep figure, drawn by the chapter's own cell on made-up numbers."""
    import matplotlib.pyplot as plt

    cells = json.loads(NCIS_CHAPTER.read_text())["cells"]
    source = next(
        "".join(c["source"]) for c in cells if 'titles = ["squared bias"' in "".join(c["source"])
    )
    caps = np.array([1, 2, 5, 10, 20, 50, 100, 1000, np.inf])
    sweep = pd.DataFrame(
        {
            "estimator": np.repeat(["cis", "ncis"], caps.size),
            "bias^2": np.geomspace(1e-2, 1e-6, caps.size).tolist() * 2,
            "variance": np.geomspace(1e-6, 6e-5, caps.size).tolist() * 2,
            "mean tau": np.linspace(0.0, 0.7, caps.size).tolist() * 2,
        }
    )
    plt.close("all")
    exec(source, {"plt": plt, "np": np, "caps": caps, "sweep_table": sweep})  # noqa: S102
    fig = plt.gcf()
    fig.canvas.draw()
    return fig


def test_ncis_chapter_legend_covers_no_panel(monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    fig = _ncis_sweep_figure()
    renderer = fig.canvas.get_renderer()
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    assert legends
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), ax.get_title()
    plt.close(fig)
