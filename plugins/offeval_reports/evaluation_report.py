"""``offeval evaluate --report DIR``: a self-contained report of an evaluation on the user's log.

``report.html`` (and ``report.md`` with the same content) hold: the estimates
with their intervals as a forest plot (relative to the baseline when one is
given), each estimator's paired significance grid as a heatmap, the weight
diagnostics per policy and estimator with the distribution of importance
weights, the plugins' report sections (the probability of being best, from
the ``decision`` plugin), and the exact command and versions that produced
it. Figures are PNG files next to the report, referenced by relative paths:
the report loads nothing from the network.
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from offeval import Evaluation, InteractionLog
from offeval.plugin import (
    EvaluationReport,
    ReportSection,
    markdown_escape,
)
from offeval_reports.document import DPI, ReportDocument
from offeval_reports.figures import MIN_FONT, PAGE_WIDTH, figure_text
from offeval_reports.tables import OWN_SCALE, headers, skipped_by_reason, unit_of, units

#: Marker shapes cycled over series, so that no two series look alike in grey print.
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "p", "h", "*")
#: Width of every figure in inches (readable at page width, 800 px at 100 dpi).
WIDTH = PAGE_WIDTH


def _colours(n: int) -> list:
    """n distinct colours (tab10, then tab20's lighter shades)."""
    from matplotlib import colormaps

    base = list(colormaps["tab10"].colors) + list(colormaps["tab20"].colors[1::2])
    return [base[i % len(base)] for i in range(n)]


def lower_is_better(evaluation: Evaluation) -> set[str]:
    """Labels of the estimators whose lower values are better (disagreement rates, say)."""
    return {d.label for d in evaluation.declarations if not d.higher_is_better}


def better_label(label: str, lower: set[str]) -> str:
    """``label``, followed by "(lower is better)" when it is in ``lower``."""
    return f"{label} (lower is better)" if label in lower else label


def forest_figure(
    table: pd.DataFrame,
    relative: bool,
    lower: set[str] = frozenset(),
    unit: dict[str, str] | None = None,
) -> Figure:
    """One panel per estimator: each policy's value and interval, policies on the y axis.

    Panels of estimators in ``lower`` say "lower is better" in their title;
    ``unit`` (estimator: the unit of its values) labels each panel's axis. Panels
    in the same unit (an estimand's, or ratios to the baseline) share their x
    axis, so that they compare by eye; estimators on their own scale keep their
    own. Half a row's margin above the first policy and below the last keeps
    their markers inside the frame.
    """
    prefix = "relative_" if relative else ""
    estimators = list(dict.fromkeys(table["estimator"]))
    policies = list(dict.fromkeys(table["policy"]))
    colours = _colours(len(policies))
    cols = min(2, len(estimators))
    rows = int(np.ceil(len(estimators) / cols))
    height = 0.35 * len(policies) * rows + 1.1 * rows + 0.4
    fig = Figure(figsize=(WIDTH, height), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    first_of_unit: dict[str, object] = {}
    for ax, estimator in zip(axes, estimators, strict=False):
        scale = "ratio" if relative else (unit or {}).get(estimator, OWN_SCALE)
        if scale != OWN_SCALE:  # the same quantity: one x axis
            if scale in first_of_unit:
                ax.sharex(first_of_unit[scale])
            else:
                first_of_unit[scale] = ax
        part = table[table["estimator"] == estimator].set_index("policy").loc[policies]
        y = np.arange(len(policies))[::-1]
        for i, policy in enumerate(policies):
            value = part.loc[policy, f"{prefix}value"]
            low, high = part.loc[policy, f"{prefix}ci_low"], part.loc[policy, f"{prefix}ci_high"]
            ax.plot([low, high], [y[i], y[i]], color=colours[i], lw=2)
            ax.plot(value, y[i], MARKERS[i % len(MARKERS)], color=colours[i], ms=6)
        if relative:
            ax.axvline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_yticks(y, [figure_text(p) for p in policies], fontsize=MIN_FONT)
        ax.set_ylim(-0.5, len(policies) - 0.5)  # half a row beyond the end policies
        ax.tick_params(axis="x", labelsize=MIN_FONT)
        title = figure_text(textwrap.fill(better_label(estimator, lower), 40))
        ax.set_title(title, fontsize=MIN_FONT + 1)
        if relative:
            xlabel = "estimate / baseline's estimate (ratio, baseline = 1)"
        else:
            xlabel = f"estimate ({(unit or {}).get(estimator, 'own scale')})"
        ax.set_xlabel(figure_text(xlabel), fontsize=MIN_FONT)
        ax.grid(axis="x", alpha=0.3)
    for ax in axes[len(estimators) :]:
        ax.axis("off")
    return fig


def forest_plot(
    table: pd.DataFrame,
    relative: bool,
    path: Path,
    lower: set[str] = frozenset(),
    unit: dict[str, str] | None = None,
) -> Path:
    """:func:`forest_figure`, saved as PNG at ``path``."""
    forest_figure(table, relative, lower, unit).savefig(path, dpi=DPI)
    return path


def grid_figure(
    evaluation: Evaluation,
    estimator: str,
    correction: str | None,
    baseline: str | None,
    lower: set[str] = frozenset(),
) -> Figure:
    """Paired differences, row minus column: colour by z, each cell its difference and p-value.

    The p-value shown is the corrected one when a correction is asked for;
    ``*`` marks the significant pairs.
    """
    grid = evaluation.grid(estimator, correction=correction, baseline=baseline)
    names = grid.names
    n = len(names)
    z, diff, p = np.zeros((n, n)), np.zeros((n, n)), np.full((n, n), np.nan)
    star = np.zeros((n, n), dtype=bool)
    at = {name: i for i, name in enumerate(names)}
    p_column = "p_adjusted" if "p_adjusted" in grid.table else "p_value"
    for row in grid.table.itertuples(index=False):
        i, j = at[row.a], at[row.b]
        z[i, j], z[j, i] = row.z, -row.z
        diff[i, j], diff[j, i] = row.difference, -row.difference
        p[i, j] = p[j, i] = getattr(row, p_column)
        star[i, j] = star[j, i] = bool(row.significant)
    size = min(WIDTH - 1.6, 2.0 + 0.75 * n)
    fig = Figure(figsize=(size + 1.6, size + 0.6), layout="constrained")
    ax = fig.subplots()
    finite = np.nan_to_num(z, nan=0.0, posinf=0.0, neginf=0.0)
    bound = max(3.0, float(np.abs(finite).max(initial=0.0)))
    image = ax.imshow(np.clip(finite, -bound, bound), cmap="RdBu", vmin=-bound, vmax=bound)
    cell_font = MIN_FONT if n <= 6 else MIN_FONT - 2  # 7 pt: 9.7 px at page width
    cells = []
    for i, j in zip(*np.nonzero(~np.eye(n, dtype=bool)), strict=True):
        text = f"{diff[i, j]:+.2g}\n{p[i, j]:.2g}" + ("*" if star[i, j] else "")
        dark = abs(finite[i, j]) > 0.6 * bound
        colour = "white" if dark else "black"
        cells.append(
            ax.text(j, i, text, ha="center", va="center", fontsize=cell_font, color=colour)
        )
    labels = [figure_text(name) for name in names]
    ax.set_xticks(range(n), labels, rotation=90, fontsize=MIN_FONT)
    ax.set_yticks(range(n), labels, fontsize=MIN_FONT)
    bar = fig.colorbar(image, ax=ax, shrink=0.8)
    bar.set_label("z = difference / its standard error (no unit)", fontsize=MIN_FONT)
    bar.ax.tick_params(labelsize=MIN_FONT)
    unit = units(evaluation).get(estimator, "own scale")
    scale = f"values relative to {baseline}" if baseline is not None else f"values ({unit})"
    p_name = f"p-value ({correction}-corrected)" if correction else "p-value"
    label = better_label(estimator, lower)
    title = f"{label}: each cell is the difference of {scale}, row minus column, above its {p_name}"
    ax.set_title(figure_text(textwrap.fill(f"{title}; * significant", 60)), fontsize=MIN_FONT + 1)
    if not _cells_fit(fig, ax, cells):
        for text, significant in zip(cells, star[~np.eye(n, dtype=bool)], strict=True):
            text.set_text("*" if significant else "")
        title = (
            f"{label}: colour: z of the difference of {scale}, row minus column (cells too "
            f"small for the numbers: the table below has each difference and {p_name})"
        )
        ax.set_title(
            figure_text(textwrap.fill(f"{title}; * significant", 60)), fontsize=MIN_FONT + 1
        )
    return fig


def _cells_fit(fig: Figure, ax, cells: list) -> bool:
    """Whether every cell's text, laid out at the figure's size, lies inside its cell."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    (x0, y0), (x1, y1) = ax.transData.transform([(0, 0), (1, 1)])
    renderer = canvas.get_renderer()
    boxes = [text.get_window_extent(renderer) for text in cells]
    return all(b.width <= abs(x1 - x0) and b.height <= abs(y1 - y0) for b in boxes)


def grid_heatmap(
    evaluation: Evaluation,
    estimator: str,
    correction: str | None,
    baseline: str | None,
    path: Path,
    lower: set[str] = frozenset(),
) -> Path:
    """:func:`grid_figure`, saved as PNG at ``path`` (trimmed: long names are never cut)."""
    figure = grid_figure(evaluation, estimator, correction, baseline, lower)
    figure.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    return path


def weight_histograms(log: InteractionLog | None, policies: list, path: Path) -> Path | None:
    """Distribution of each policy's importance weights pi/mu over the log rows (log scale)."""
    figure = weight_figure(log, policies)
    if figure is None:
        return None
    figure.savefig(path, dpi=DPI)
    return path


def weight_figure(log: InteractionLog | None, policies: list) -> Figure | None:
    """The figure of :func:`weight_histograms`; None when there is nothing to draw."""
    if log is None or "propensity" not in log.frame:
        return None
    weights = {}
    for policy in policies:
        try:
            w = np.asarray(policy.probabilities(log.frame), dtype=float) / log.column("propensity")
        except (AttributeError, ValueError):
            continue
        weights[policy.name] = w
    if not weights:
        return None
    positive = np.concatenate([w[w > 0] for w in weights.values()])
    if not positive.size:
        return None
    bins = np.logspace(np.log10(positive.min()), np.log10(positive.max()) + 1e-9, 40)
    cols = min(3, len(weights))
    rows = int(np.ceil(len(weights) / cols))
    fig = Figure(figsize=(WIDTH, 2.1 * rows + 0.6), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True).ravel()
    colours = _colours(len(weights))
    for k, (ax, (name, w)) in enumerate(zip(axes, weights.items(), strict=False)):
        ax.hist(w[w > 0], bins=bins, color=colours[k])
        _log_ticks(ax, positive.min(), positive.max(), WIDTH / cols - 0.6)
        ax.tick_params(labelsize=MIN_FONT)
        zero = np.mean(w == 0)
        title = textwrap.fill(f"{name} (w = 0 on {zero:.0%} of rows)", 34)
        ax.set_title(figure_text(title), fontsize=MIN_FONT)
    for ax in axes[len(weights) :]:
        ax.axis("off")
    fig.supxlabel("importance weight pi / mu (no unit; log scale)", fontsize=MIN_FONT + 1)
    fig.supylabel("log rows (count)", fontsize=MIN_FONT + 1)
    return fig


#: Most labelled powers of ten on a histogram's log axis: more overprint in a third of a page.
LOG_TICKS = 4
#: Sets of multiples of the powers of ten a short log axis is labelled at, densest first.
LOG_SUBS = (tuple(range(1, 10)), (1, 2, 5), (1, 3), (1,))


def _log_ticks(ax, low: float, high: float, width: float) -> None:
    """A log x axis over weights ``low`` to ``high`` whose labels never overprint in a panel
    ``width`` inches wide.

    Over 1.5 decades or more: at most :data:`LOG_TICKS` labelled powers of ten,
    the other ticks unlabelled (matplotlib's default labels every decade, or
    every multiple between, and they run into one another). Over less, where
    there may be a single power of ten or none: plain numbers (``0.5``, ``1``,
    ``2``) at the densest of :data:`LOG_SUBS` whose labels fit the width (at
    9 pt, a character is about 0.075 inch), else at every k-th multiple.
    """
    from matplotlib.ticker import (
        FixedLocator,
        FuncFormatter,
        LogFormatterSciNotation,
        LogLocator,
        NullFormatter,
    )

    ax.set_xscale("log")
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs="auto", numticks=20))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if np.log10(high / low) >= 1.5:
        ax.xaxis.set_major_locator(LogLocator(base=10, numticks=LOG_TICKS))
        ax.xaxis.set_major_formatter(LogFormatterSciNotation(base=10, labelOnlyBase=True))
        return

    def ticks(subs) -> list[float]:
        decades = range(int(np.floor(np.log10(low))), int(np.floor(np.log10(high))) + 1)
        return [m * 10.0**e for e in decades for m in subs if low <= m * 10.0**e <= high]

    def fits(values: list[float]) -> bool:
        return sum(0.075 * len(f"{v:.3g}") + 0.15 for v in values) <= width

    chosen = next((t for t in map(ticks, LOG_SUBS) if t and fits(t)), None)
    if chosen is None:  # no nice set fits: every k-th multiple, k as small as fits
        every = ticks(LOG_SUBS[0])
        chosen = next((every[::k] for k in range(1, len(every) + 1) if fits(every[::k])), every[:1])
    ax.xaxis.set_major_locator(FixedLocator(chosen))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.3g}"))


def no_histogram_reason(log: InteractionLog | None) -> str:
    """Why :func:`weight_figure` drew nothing for this log."""
    if log is None:
        return (
            "not drawn: the log was not kept in memory (with --stream it is read in batches "
            "and the weights are not collected)"
        )
    if "propensity" not in log.frame:
        return "not drawn: the log has no propensity column, so there are no weights pi / mu"
    return "not drawn: no policy gives a positive probability to a logged row"


def weight_table(evaluation: Evaluation) -> pd.DataFrame:
    """The weight diagnostics each (policy, estimator) reports, one row each.

    The effective sample size ``(sum w)^2 / sum w^2`` counts what the
    estimator weights: log rows (impressions) unless its tag ``ess_unit``
    says otherwise ("trajectories" for one weight per trajectory); the
    column ``ess unit`` says which. The diagnostics shown are those the
    estimator declares as weight diagnostics (its ``weight_diagnostics``).
    """
    units = evaluation.ess_units
    rows = []
    for policy in evaluation.policies:
        for estimator, declared in zip(evaluation.estimators, evaluation.declarations, strict=True):
            e = evaluation.estimate(policy, estimator)
            shown = {k: e.diagnostics[k] for k in declared.weight_diagnostics if k in e.diagnostics}
            if "ess" in shown:
                shown = {"ess": shown.pop("ess"), "ess unit": units[estimator], **shown}
            if shown:
                rows.append({"policy": policy, "estimator": estimator, **shown})
    return pd.DataFrame(rows)


def estimator_legend(evaluation: Evaluation) -> pd.DataFrame:
    """Each estimator's label, its every parameter (defaults included), what it computes.

    ``better`` says which way is better: "higher" or "lower"; ``unit`` what its values
    are in (:func:`offeval_reports.tables.unit_of`).
    """
    rows = []
    for declared in evaluation.declarations:
        rows.append(
            {
                "estimator": declared.label,
                "parameters": declared.full_label,
                "better": "higher" if declared.higher_is_better else "lower",
                "unit": unit_of(declared),
                "what it computes": declared.description,
            }
        )
    return pd.DataFrame(rows)


def write_evaluation_report(
    out: str | Path,
    evaluation: Evaluation,
    table: pd.DataFrame,
    *,
    baseline: str | None,
    correction: str | None,
    sections: list[ReportSection],
    log: InteractionLog | None = None,
    policies: list | None = None,
    argv: list[str] | None = None,
    weights_note: str | None = None,
    skipped: dict[str, str] | None = None,
) -> Path:
    """Write ``report.html``, ``report.md`` and their figures into folder ``out``.

    Without a histogram of the importance weights (no log in memory, say),
    the report says why in one line: ``weights_note`` when given, else what
    :func:`no_histogram_reason` finds. ``skipped`` (estimator: why) lists the
    estimators that could not run, after the estimators' legend.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    doc = ReportDocument("offeval evaluation report")
    relative = baseline is not None
    lower = lower_is_better(evaluation)
    paired = len(evaluation.policies) > 1
    doc.text(
        f"{counted(len(evaluation.policies), 'policy', 'policies')}, "
        f"{counted(len(evaluation.estimators), 'estimator')}, "
        f"{evaluation.n_units:,} trajectories (the units of the standard errors: the column "
        f"trajectories used counts those each estimate used); {evaluation.level:.0%} intervals"
        + (f", values relative to {markdown_escape(baseline)}" if relative else "")
        + (f"; pairwise tests corrected by {correction}" if correction and paired else "")
        + "."
        + (
            f" Lower is better for {', '.join(map(markdown_escape, sorted(lower)))}."
            if lower
            else ""
        )
    )
    unit = units(evaluation)
    named = headers(evaluation.level)
    doc.figure(
        forest_plot(table, relative, out / "estimates.png", lower, unit),
        "Estimates",
        caption="each policy's estimate and its interval; panels in the same unit share "
        "their x axis (estimators on their own scale have their own)",
    )
    columns = ["policy", "estimator", "value", "se", "ci_low", "ci_high", "n_units"]
    if relative:
        columns += ["relative_value", "relative_ci_low", "relative_ci_high"]
    shown = table[[c for c in columns if c in table]].copy()
    shown.insert(2, "unit", shown["estimator"].map(unit))
    shown["estimator"] = [better_label(e, lower) for e in shown["estimator"]]
    doc.table(shown, headers=named)
    legend(doc, evaluation)
    not_run(doc, skipped)
    if not paired:
        doc.text(ONE_POLICY, "Paired significance grids")
    else:
        doc.text(_grid_text(baseline, correction), "Paired significance grids")
    for k, estimator in enumerate(evaluation.estimators if paired else ()):
        path = grid_heatmap(
            evaluation, estimator, correction, baseline, out / f"grid_{k}.png", lower
        )
        doc.figure(path, f"Paired significance grid: {better_label(estimator, lower)}")
        doc.table(evaluation.pairs(estimator, correction, baseline), headers=named)
    weights = weight_table(evaluation)
    if not weights.empty:
        rows = (
            f" (the log has {log.n_rows:,} rows in {log.n_units:,} trajectories)"
            if log is not None
            else ""
        )
        doc.text(f"{ESS_TEXT}{rows}. {WEIGHT_TEXT}", "Weight diagnostics")
        doc.table(weights, headers=named)
    histogram = weight_histograms(log, policies or [], out / "weights.png")
    if histogram is not None:
        doc.figure(histogram, "Importance weights")
    else:
        doc.text(weights_note or no_histogram_reason(log), "Importance weights")
    doc.sections(sections, out)
    doc.provenance(argv if argv is not None else sys.argv[1:])
    return doc.write(out)


def legend(doc: ReportDocument, evaluation: Evaluation) -> None:
    """The estimators' legend, their docstrings' literals shown as code."""
    doc.table(estimator_legend(evaluation), "Estimators", docstrings=("what it computes",))


def not_run(doc: ReportDocument, skipped: dict[str, str] | None, note: str = "") -> None:
    """The estimators that could not run, one row per reason (nothing when none)."""
    if skipped:
        doc.text(
            "Registered, but they cannot run on this log (each listed once, under its own "
            "name: its aliases are left out)" + (f"; {note}" if note else "") + ":",
            "Estimators not run",
        )
        doc.table(skipped_by_reason(skipped), headers={"why": "why they cannot run"})


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``"1 policy"``, ``"2 policies"``: ``n`` and the word in its number."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


#: What a report or an output folder of one policy has instead of paired comparisons.
ONE_POLICY = (
    "Paired comparisons need two or more policies: with one policy there are no "
    "significance grids and no pairwise tests."
)


def _grid_text(baseline: str | None, correction: str | None) -> str:
    """What the paired grids and their tables show."""
    scale = (
        f"values relative to {markdown_escape(baseline)} (its value = 1)"
        if baseline is not None
        else "the estimated values"
    )
    p = f'p-value corrected by {correction} ("p-value (corrected)")' if correction else "p-value"
    return (
        f"Each cell is the paired difference of {scale}, row minus column, with its {p}, "
        "when the cell is large enough for them (the grid's title says); "
        "the colour is z = difference / se, and * marks the significant pairs. "
        "The table under each grid has every pair (policy a minus policy b)."
    )


ESS_TEXT = (
    "The effective sample size is (sum w)^2 / sum w^2 of the importance weights w = pi / mu "
    "(an estimator with a cap may report it, and the largest weight, of the weights before "
    "their cap: a largest weight above the cap says so; the share of weights capped is the "
    "share of rows whose weight the cap lowered), in the unit the next column says: log "
    "rows (impressions) for estimators that weight each row, trajectories for those that "
    "weight each trajectory as a whole"
)
#: What the weight table's other columns are, after :data:`ESS_TEXT`.
WEIGHT_TEXT = (
    "The mean weight is 1 when the logging propensities are right and the logger covers "
    "the target; its z is its distance from 1 in standard errors (beyond 3, suspect the "
    "propensities). Unsupported cells count the (slot, item) pairs where the target puts "
    "probability and the logger none; the unsupported target mass per slot is the "
    "probability the target puts there, per slot."
)


class EvaluationReportWriter:
    """``report.html`` and ``report.md``: forest plot, significance grids, weights, sections."""

    help = "HTML and Markdown report with figures (offeval evaluate --report)"

    def write(self, out: Path, report: EvaluationReport) -> Path:
        """Write the report of one evaluation into folder ``out``; the path of report.html."""
        return write_evaluation_report(
            out, **{f.name: getattr(report, f.name) for f in fields(report)}
        )
