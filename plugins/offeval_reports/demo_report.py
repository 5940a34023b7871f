"""The demo's report: its estimates against the truth, in the same document as evaluate's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from offeval.plugin import (
    DPI,
    ReportDocument,
    ess_units,
    markdown_escape,
    write_csv,
)
from offeval_reports.command import left_out_note
from offeval_reports.demo import DemoResult
from offeval_reports.evaluation_report import better_label, legend, lower_is_better, not_run
from offeval_reports.figures import MIN_FONT, PAGE_WIDTH, figure_text
from offeval_reports.tables import UNITS, headers


def estimates_figure(
    estimates: pd.DataFrame,
    truth: pd.Series,
    other_scale: set[str] = frozenset(),
    lower: set[str] = frozenset(),
) -> Figure:
    """Small multiples: each estimator's intervals against the true values, page wide.

    Estimators in ``other_scale`` (normalised metrics, rewards per trajectory)
    are not estimates of the truth's quantity: their panels have no diagonal
    and say "own scale: order only", since only their order can be compared. Panels of estimators
    in ``lower`` say "lower is better". Axes say their unit: the truth's is a reward
    per impression; a panel on its own scale says so on its own axis.
    """
    labels = list(dict.fromkeys(estimates["estimator"]))
    titles = [_panel_title(label, label in other_scale, label in lower) for label in labels]
    lines = max(title.count("\n") + 1 for title in titles)
    cols = min(3, len(labels))
    rows = int(np.ceil(len(labels) / cols))
    panel, above, below = 1.9, 0.2 * lines + 0.15, 0.7  # inches
    width, height = PAGE_WIDTH, rows * (panel + above + below)
    fig = Figure(figsize=(width, height))  # no pyplot: the user's backend is left alone
    axes = fig.subplots(rows, cols, squeeze=False)
    # fixed margins in inches (a layout pass would measure every label of every panel)
    fig.subplots_adjust(
        left=0.95 / width,
        right=1 - 0.1 / width,
        bottom=below / height,
        top=1 - above / height,
        wspace=0.45,
        hspace=(above + below) / panel,
    )
    lo, hi = truth.min(), truth.max()
    pad = 0.1 * (hi - lo)
    for i, (ax, label, title) in enumerate(zip(axes.ravel(), labels, titles, strict=False)):
        part = estimates[estimates["estimator"] == label]
        x = truth.loc[part["policy"]].to_numpy()
        err = [part["value"] - part["ci_low"], part["ci_high"] - part["value"]]
        ax.errorbar(x, part["value"], yerr=err, fmt="o", ms=4, capsize=2)
        if label not in other_scale:
            ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "k--", lw=0.8)
        ax.set_title(title, fontsize=MIN_FONT, y=1.0, pad=4)  # a fixed y: no layout pass
        ax.locator_params(nbins=4)
        ax.tick_params(labelsize=MIN_FONT)
        if label in other_scale:  # on every panel: its neighbours' unit is not its own
            ax.set_ylabel("offline estimate\n(own scale)", fontsize=MIN_FONT)
        elif i % cols == 0:
            ax.set_ylabel(f"offline estimate\n({TRUTH_UNIT})", fontsize=MIN_FONT)
        if i + cols >= len(labels):
            ax.set_xlabel(f"true online value\n({TRUTH_UNIT})", fontsize=MIN_FONT)
    for ax in axes.ravel()[len(labels) :]:
        ax.axis("off")
    return fig


#: Characters on a line of a panel's title (at 9 pt, a third of the page wide).
TITLE_CHARS = 24
#: The unit of the demo's true values (and of its A/B test's means).
TRUTH_UNIT = UNITS["reward_per_impression"]


def _panel_title(label: str, other_scale: bool, lower: bool) -> str:
    """An estimator's panel title: its label wrapped, what its scale is, which way is better."""
    # a line may also break after "(": labels are calls with long arguments
    title = textwrap.fill(label.replace("(", "( "), TITLE_CHARS).replace("( ", "(")
    if other_scale:
        title += "\n(own scale: order only)"
    if lower:
        title += "\n(lower is better)"
    return figure_text(title)


def plot_estimates(
    estimates: pd.DataFrame,
    truth: pd.Series,
    path: Path,
    other_scale: set[str] = frozenset(),
    lower: set[str] = frozenset(),
) -> Path:
    """:func:`estimates_figure` saved as PNG at ``path``; returns the path."""
    estimates_figure(estimates, truth, other_scale, lower).savefig(path, dpi=DPI)
    return path


def write_demo_report(result: DemoResult, out: str | Path, argv: list[str] | None = None) -> Path:
    """Write ``report.html`` and ``report.md``, their figures and CSV files into folder ``out``.

    The same document as ``offeval evaluate --report``: the demo's comparison
    with the truth, the estimators' legend, the plugins' sections and how the
    report was made. Returns the HTML's path.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(result.summary, out / "summary.csv")
    write_csv(_with_ess_unit(result), out / "estimates.csv")
    write_csv(result.ab, out / "ab_test.csv")
    summary = result.summary.set_index("estimator")
    other = set(summary.index[summary["ci_coverage"].isna()]) - {"online A/B test"}
    lower = lower_is_better(result.evaluation)
    s = result.settings
    doc = ReportDocument("offeval demo report")
    doc.text(
        f"Simulated environment: {markdown_escape(s['environment'])}. One log of "
        f"{s['n_trajectories']:,} trajectories ({s['n_rows']:,} rows) from the environment's "
        f"logging policy; {s['n_policies']} candidate policies; an online A/B test with "
        f"{s['n_per_cell']:,} trajectories per cell. True best policy: "
        f"{markdown_escape(s['true_best'])}. Random seed {s['seed']}."
    )
    doc.text(SUMMARY_TEXT, "How well each estimator predicts the online order")
    named = headers()
    doc.table(_mark_lower(result.summary, lower), headers=named)
    figure = plot_estimates(result.estimates, result.truth, out / "estimates.png", other, lower)
    doc.figure(figure, caption="estimates against truth: 95% intervals, the diagonal is exact")
    legend(doc, result.evaluation)
    if result.left_out:
        doc.text(f"Note: {left_out_note(result.left_out)}.")
    not_run(doc, result.skipped)
    doc.sections(result.sections, out)
    wide = result.estimates.pivot(index="policy", columns="estimator", values="value")
    wide.columns = [better_label(c, lower) for c in wide.columns]
    wide.insert(0, f"truth ({TRUTH_UNIT})", result.truth)
    wide.insert(1, f"A/B test mean ({TRUTH_UNIT})", result.ab.set_index("policy")["mean"])
    doc.table(
        wide.reset_index(),
        "Estimates per policy",
        caption="each estimator's values are in its own unit: a reward per impression "
        'unless the estimators\' table above says "own scale"',
    )
    doc.text(
        "`summary.csv`, `estimates.csv` (with standard errors, intervals and diagnostics; "
        "`ess_unit` says what the effective sample size `diag_ess` counts), "
        "`ab_test.csv`, and each section's tables.",
        "Files",
    )
    doc.provenance(argv if argv is not None else ["demo"])
    return doc.write(out)


def _with_ess_unit(result: DemoResult) -> pd.DataFrame:
    """The estimates, with ``ess_unit`` (rows or trajectories) where there is a ``diag_ess``."""
    estimates = result.estimates
    if "diag_ess" not in estimates:
        return estimates
    unit = estimates["estimator"].map(ess_units(result.evaluation))
    return estimates.assign(ess_unit=unit.where(estimates["diag_ess"].notna()))


def _mark_lower(summary: pd.DataFrame, lower: set[str]) -> pd.DataFrame:
    """The summary with "(lower is better)" after the labels of such estimators."""
    marked = summary.copy()
    marked["estimator"] = [better_label(e, lower) for e in marked["estimator"]]
    return marked


SUMMARY_TEXT = """Kendall tau against the true order (with its p-value), mean absolute
error, share of 95% intervals covering the truth, the policy each estimator
picks, and what the plugins' sections add. Estimators of another quantity
than the reward per impression (rewards per trajectory, normalised metrics,
rates) have no error or coverage: only their order is compared. For
estimators marked "lower is better", a lower value
predicts a better policy, and their order is compared reversed."""
