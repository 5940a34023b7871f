"""Write a demo or evaluation report: Markdown tables, CSV files, PNG plots."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from offeval.demo import DemoResult
from offeval.sections import ReportSection
from offeval.tables import markdown_table


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
        ax.set_title(title, fontsize=8)
        if i % cols == 0:
            ax.set_ylabel("offline estimate")
        if i + cols >= len(labels):
            ax.set_xlabel("true online value")
    for ax in axes.ravel()[len(labels) :]:
        ax.axis("off")
    fig.savefig(path, dpi=100)
    return path


def write_sections(sections: list[ReportSection], out: Path) -> str:
    """Write each section's tables (CSV) and figures (PNG) into ``out``; return its Markdown."""
    import matplotlib.pyplot as plt  # sections' figures may be pyplot's: close them after

    parts = []
    for section in sections:
        slug = "".join(c if c.isalnum() else "_" for c in section.title.lower()).strip("_")
        parts.append(f"## {section.title}\n\n{section.text}".rstrip() + "\n")
        for name, figure in section.figures.items():
            path = out / f"{slug}_{name}.png"
            figure.savefig(path, dpi=110)
            plt.close(figure)
            parts.append(f"![{name}]({path.name})\n")
        for name, table in section.tables.items():
            table.to_csv(out / f"{slug}_{name}.csv")
            parts.append(markdown_table(table.reset_index()) + "\n")
    return "\n".join(parts)


def write_demo_report(result: DemoResult, out: str | Path) -> Path:
    """Write ``report.md`` with its tables and plots into folder ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result.summary.to_csv(out / "summary.csv", index=False)
    result.estimates.to_csv(out / "estimates.csv", index=False)
    result.ab.to_csv(out / "ab_test.csv", index=False)
    summary = result.summary.set_index("estimator")
    other = set(summary.index[summary["ci_coverage"].isna()]) - {"online A/B test"}
    plot_estimates(result.estimates, result.truth, out / "estimates.png", other)
    sections = write_sections(result.sections, out)
    wide = result.estimates.pivot(index="policy", columns="estimator", values="value")
    wide.insert(0, "truth", result.truth)
    wide.insert(1, "A/B mean", result.ab.set_index("policy")["mean"])
    s = result.settings
    skipped = "".join(f"\n- `{k}` skipped: {v}" for k, v in result.skipped.items())
    text = f"""# offeval demo report

Simulated environment: {s["environment"]}.
One log of {s["n_trajectories"]:,} trajectories ({s["n_rows"]:,} rows) from the
environment's logging policy; {s["n_policies"]} candidate
policies; an online A/B test with {s["n_per_cell"]:,} trajectories per cell.
True best policy: **{s["true_best"]}**. Seed {s["seed"]}.{skipped}

## How well each estimator predicts the online order

Kendall tau against the true order (with its p-value), mean absolute error,
share of 95% intervals covering the truth, the policy each estimator picks,
and what the plugins' sections add.

{markdown_table(result.summary)}

![estimates against truth](estimates.png)

{sections}

## Estimates per policy

{markdown_table(wide.reset_index())}

Files: `summary.csv`, `estimates.csv` (with standard errors, intervals and
diagnostics), `ab_test.csv`.
"""
    path = out / "report.md"
    path.write_text(text)
    return path
