"""The demo's report: its estimates against the truth, in the same document as evaluate's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from offeval.demo import DemoResult
from offeval.htmlreport import estimator_legend
from offeval.reportdoc import DPI, ReportDocument


def plot_estimates(
    estimates: pd.DataFrame, truth: pd.Series, path: Path, other_scale: set[str] = frozenset()
) -> Path:
    """Small multiples: each estimator's intervals against the true values.

    Estimators in ``other_scale`` (normalised metrics, rewards per trajectory)
    are not estimates of the truth's quantity: their panels have no diagonal
    and say so, since only their order can be compared.
    """
    labels = list(dict.fromkeys(estimates["estimator"]))
    cols = min(3, len(labels))
    rows = int(np.ceil(len(labels) / cols))
    width, height = 4.2 * cols, 3.6 * rows
    fig = Figure(figsize=(width, height))  # no pyplot: the user's backend is left alone
    axes = fig.subplots(rows, cols, squeeze=False)
    # fixed margins in inches (tight_layout would measure every label of every panel)
    fig.subplots_adjust(
        left=0.75 / width,
        right=1 - 0.2 / width,
        bottom=0.6 / height,
        top=1 - 0.7 / height,
        wspace=0.3,
        hspace=0.75,
    )
    lo, hi = truth.min(), truth.max()
    pad = 0.1 * (hi - lo)
    for i, (ax, label) in enumerate(zip(axes.ravel(), labels, strict=False)):
        part = estimates[estimates["estimator"] == label]
        x = truth.loc[part["policy"]].to_numpy()
        err = [part["value"] - part["ci_low"], part["ci_high"] - part["value"]]
        ax.errorbar(x, part["value"], yerr=err, fmt="o", ms=4, capsize=2)
        title = textwrap.fill(label, 48)
        if label in other_scale:
            title += "\n(own scale: compare the order only)"
        else:
            ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "k--", lw=0.8)
        ax.set_title(title, fontsize=8, y=1.0, pad=4)  # a fixed y: no layout pass per title
        ax.locator_params(nbins=4)
        if i % cols == 0:
            ax.set_ylabel("offline estimate")
        if i + cols >= len(labels):
            ax.set_xlabel("true online value")
    for ax in axes.ravel()[len(labels) :]:
        ax.axis("off")
    fig.savefig(path, dpi=DPI)
    return path


def write_demo_report(result: DemoResult, out: str | Path, argv: list[str] | None = None) -> Path:
    """Write ``report.html`` and ``report.md``, their figures and CSV files into folder ``out``.

    The same document as ``offeval evaluate --report``: the demo's comparison
    with the truth, the estimators' legend, the plugins' sections and how the
    report was made. Returns the HTML's path.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result.summary.to_csv(out / "summary.csv", index=False)
    result.estimates.to_csv(out / "estimates.csv", index=False)
    result.ab.to_csv(out / "ab_test.csv", index=False)
    summary = result.summary.set_index("estimator")
    other = set(summary.index[summary["ci_coverage"].isna()]) - {"online A/B test"}
    s = result.settings
    doc = ReportDocument("offeval demo report")
    doc.text(
        f"Simulated environment: {s['environment']}. One log of {s['n_trajectories']:,} "
        f"trajectories ({s['n_rows']:,} rows) from the environment's logging policy; "
        f"{s['n_policies']} candidate policies; an online A/B test with "
        f"{s['n_per_cell']:,} trajectories per cell. True best policy: {s['true_best']}. "
        f"Seed {s['seed']}."
    )
    doc.text(SUMMARY_TEXT, "How well each estimator predicts the online order")
    doc.table(result.summary)
    figure = plot_estimates(result.estimates, result.truth, out / "estimates.png", other)
    doc.figure(figure, caption="estimates against truth: 95% intervals, the diagonal is exact")
    doc.table(estimator_legend(result.evaluation), "Estimators")
    if result.skipped:
        reasons = pd.DataFrame({"estimator": list(result.skipped), "why": result.skipped.values()})
        doc.text("Registered, but they cannot run on this log:", "Estimators not run")
        doc.table(reasons)
    doc.sections(result.sections, out)
    wide = result.estimates.pivot(index="policy", columns="estimator", values="value")
    wide.insert(0, "truth", result.truth)
    wide.insert(1, "A/B mean", result.ab.set_index("policy")["mean"])
    doc.table(wide.reset_index(), "Estimates per policy")
    doc.text(
        "`summary.csv`, `estimates.csv` (with standard errors, intervals and diagnostics), "
        "`ab_test.csv`, and each section's tables.",
        "Files",
    )
    doc.provenance(argv if argv is not None else ["demo"])
    return doc.write(out)


SUMMARY_TEXT = """Kendall tau against the true order (with its p-value), mean absolute
error, share of 95% intervals covering the truth, the policy each estimator
picks, and what the plugins' sections add. Estimators of another quantity
than the reward per impression (rewards per trajectory, normalised metrics,
rates) have no error or coverage: only their order is compared."""
