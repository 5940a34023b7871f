"""The demo's report: its estimates against the truth, in the same document as evaluate's."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from offeval.plugin import markdown_escape, write_csv
from offeval.stats import first_maximum
from offeval_reports.demo import DemoResult
from offeval_reports.document import DPI, ReportDocument
from offeval_reports.evaluation_report import better_label, legend, lower_is_better, not_run
from offeval_reports.figures import MIN_FONT, PAGE_WIDTH, figure_text
from offeval_reports.tables import OWN_SCALE, UNITS, headers, unit_of


def left_out_note(plugins: list[str]) -> str:
    """What the demo says of the installed plugins whose estimators it did not run."""
    return (
        f"the demo ran offeval's built-in estimators; installed plugin(s) "
        f"{', '.join(plugins)} register others: --all-estimators runs them too, "
        "--estimator SPEC one of them"
    )


def estimates_figure(
    estimates: pd.DataFrame,
    truth: pd.Series,
    other_scale: set[str] = frozenset(),
    lower: set[str] = frozenset(),
    picked: Mapping[str, str] | None = None,
) -> Figure:
    """Small multiples: each estimator's intervals against the true values, page wide.

    Estimators in ``other_scale`` (normalised metrics, rewards per trajectory)
    are not estimates of the truth's quantity: their panels have no diagonal
    and say "own scale: order only", since only their order can be compared. Panels of estimators
    in ``lower`` say "lower is better". Axes say their unit: the truth's is a reward
    per impression; a panel on its own scale says so on its own axis.

    The true best policy's dot is an orange diamond (the legend above the panels
    names it) and, when it is another, the dot of the policy the estimator picks a
    red square; a corner of each panel names its pick ("picks p10", orange when it is
    the best). ``picked`` is
    estimator: policy, by default its highest value (lowest for ``lower``).
    """
    labels = list(dict.fromkeys(estimates["estimator"]))
    titles = [_panel_title(label, label in other_scale, label in lower) for label in labels]
    lines = max(title.count("\n") + 1 for title in titles)
    cols = min(3, len(labels))
    rows = int(np.ceil(len(labels) / cols))
    panel, above, below, band = 1.9, 0.2 * lines + 0.15, 0.7, 0.35  # inches
    width, height = PAGE_WIDTH, rows * (panel + above + below) + band
    fig = Figure(figsize=(width, height))  # no pyplot: the user's backend is left alone
    axes = fig.subplots(rows, cols, squeeze=False)
    # fixed margins in inches (a layout pass would measure every label of every panel)
    fig.subplots_adjust(
        left=0.95 / width,
        right=1 - 0.1 / width,
        bottom=below / height,
        top=1 - (above + band) / height,
        wspace=0.45,
        hspace=(above + below) / panel,
    )
    lo, hi = truth.min(), truth.max()
    pad = 0.1 * (hi - lo)
    best = truth.index[first_maximum(truth.to_numpy())]
    for i, (ax, label, title) in enumerate(zip(axes.ravel(), labels, titles, strict=False)):
        part = estimates[estimates["estimator"] == label].set_index("policy")
        x = truth.loc[part.index].to_numpy()
        err = [part["value"] - part["ci_low"], part["ci_high"] - part["value"]]
        ax.errorbar(x, part["value"], yerr=err, fmt="o", ms=4, capsize=2, color=OTHERS)
        if label not in other_scale:
            ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "k--", lw=0.8)
        pick = _pick(part["value"], label in lower) if picked is None else picked.get(label)
        _mark_dot(ax, part, truth, best, TRUE_BEST, "D")
        if pick in part.index:
            if pick != best:
                _mark_dot(ax, part, truth, pick, PICK, "s")
            colour = TRUE_BEST if pick == best else PICK  # orange: the best, the legend says
            _corner_text(ax, x, part["value"].to_numpy(), figure_text(f"picks {pick}"), colour)
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
    from matplotlib.lines import Line2D

    keys = [
        Line2D([], [], ls="", marker="D", color=TRUE_BEST, label=f"true best policy ({best})"),
        Line2D([], [], ls="", marker="s", color=PICK, label="the estimator's pick, if another"),
        Line2D([], [], ls="", marker="o", color=OTHERS, label="other policies"),
    ]
    fig.legend(
        handles=keys, loc="upper center", bbox_to_anchor=(0.5, 1), ncol=3, fontsize=MIN_FONT,
        frameon=False, borderaxespad=0.2,
    )  # fmt: skip
    return fig


#: Colours of the demo's dots: the true best policy, an estimator's other pick, the rest.
TRUE_BEST, PICK, OTHERS = "tab:orange", "tab:red", "tab:blue"


def _pick(values: pd.Series, lower: bool) -> str:
    """The policy an estimator's ``values`` pick: the first highest (lowest when ``lower``)."""
    sign = -1.0 if lower else 1.0
    return values.index[first_maximum(sign * values.to_numpy())]


def _mark_dot(ax, part: pd.DataFrame, truth: pd.Series, policy, colour, marker: str) -> None:
    """Draw ``policy``'s dot and interval over the others, in ``colour`` and ``marker``."""
    row = part.loc[policy]
    x, y = truth[policy], row["value"]
    err = [[y - row["ci_low"]], [row["ci_high"] - y]]
    ax.errorbar([x], [y], yerr=err, fmt=marker, ms=5, capsize=2, color=colour, zorder=3)


#: The corners of a panel (axes fraction of the text's anchor, alignment), most wanted first.
CORNERS = (
    ((0.04, 0.96), "left", "top"),
    ((0.96, 0.04), "right", "bottom"),
    ((0.04, 0.04), "left", "bottom"),
    ((0.96, 0.96), "right", "top"),
)


def _corner_text(ax, x: np.ndarray, y: np.ndarray, text: str, colour) -> None:
    """``text`` in the corner of the panel with the fewest dots near it (of :data:`CORNERS`:
    a box of 45% of the width and 25% of the height)."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    u, v = (x - x0) / (x1 - x0), (y - y0) / (y1 - y0)

    def crowd(corner) -> int:
        (cu, cv), _, _ = corner
        return int(np.sum((np.abs(u - cu) < 0.45) & (np.abs(v - cv) < 0.25)))

    (cu, cv), ha, va = min(CORNERS, key=crowd)  # the first of the least crowded
    ax.text(cu, cv, text, transform=ax.transAxes, ha=ha, va=va, fontsize=MIN_FONT, color=colour,
            fontweight="bold")  # fmt: skip


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
    picked: Mapping[str, str] | None = None,
) -> Path:
    """:func:`estimates_figure` saved as PNG at ``path``; returns the path."""
    estimates_figure(estimates, truth, other_scale, lower, picked).savefig(path, dpi=DPI)
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
    picked = dict(zip(result.summary["estimator"], result.summary["picked"], strict=True))
    figure = plot_estimates(
        result.estimates, result.truth, out / "estimates.png", other, lower, picked
    )
    doc.figure(
        figure,
        caption="estimates against truth: 95% intervals, the diagonal is exact; named: "
        "the true best policy and, where it is another, each estimator's pick",
    )
    legend(doc, result.evaluation)
    if result.left_out:
        doc.text(f"Note: {left_out_note(result.left_out)}.")
    not_run(doc, result.skipped)
    doc.sections(result.sections, out)
    doc.table(
        estimates_per_policy(result, lower),
        "Estimates per policy",
        caption="one row per estimator, one column per policy; the unit column says what "
        f"each row's values are in (the true best policy, {s['true_best']}, is marked *)",
    )
    doc.text(
        "`summary.csv`, `estimates.csv` (with standard errors, intervals and diagnostics; "
        "`ess_unit` says what the effective sample size `diag_ess` counts), "
        "`ab_test.csv`, and each section's tables.",
        "Files",
    )
    doc.provenance(argv if argv is not None else ["demo"])
    return doc.write(out)


def estimates_per_policy(result: DemoResult, lower: set[str] = frozenset()) -> pd.DataFrame:
    """The truth, the A/B test's means and each estimator's values: a row each, a column
    per policy (estimators outnumber policies: the table grows down, not past the page).

    ``unit`` says what a row's values are in; the true best policy's column is marked
    ``*``; labels of estimators in ``lower`` say "(lower is better)".
    """
    declared = {d.label: unit_of(d) for d in result.evaluation.declarations}
    wide = result.estimates.pivot(index="estimator", columns="policy", values="value")
    order = list(dict.fromkeys(result.estimates["estimator"]))
    policies = list(result.truth.index)
    wide = wide.loc[order, policies]
    ab = result.ab.set_index("policy")["mean"].reindex(policies)
    rows = pd.concat([result.truth.to_frame("truth").T, ab.to_frame("A/B test mean").T, wide])
    rows.insert(0, "unit", [TRUTH_UNIT, TRUTH_UNIT, *(declared.get(e, OWN_SCALE) for e in order)])
    rows.index = [better_label(str(e), lower) for e in rows.index]
    best = result.settings["true_best"]
    rows.columns = [f"{c} *" if c == best else str(c) for c in rows.columns]
    return rows.rename_axis("estimator").reset_index()


def _with_ess_unit(result: DemoResult) -> pd.DataFrame:
    """The estimates, with ``ess_unit`` (rows or trajectories) where there is a ``diag_ess``."""
    estimates = result.estimates
    if "diag_ess" not in estimates:
        return estimates
    unit = estimates["estimator"].map(result.evaluation.ess_units)
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
