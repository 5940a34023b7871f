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
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from offeval.evaluation import Evaluation
from offeval.reportdoc import DPI, ReportDocument
from offeval.sections import ReportSection

#: Marker shapes cycled over series, so that no two series look alike in grey print.
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "p", "h", "*")
#: Diagnostics shown in the weight table, when an estimator reports them.
WEIGHT_DIAGNOSTICS = (
    "ess",
    "mean_weight",
    "mean_weight_z",
    "max_weight",
    "clipped_share",
    "support_violations",
    "unsupported_mass_per_slot",
)
#: Width of every figure in inches (readable at page width, 800 px at 100 dpi).
WIDTH = 8.0


def _colours(n: int) -> list:
    """n distinct colours (tab10, then tab20's lighter shades)."""
    from matplotlib import colormaps

    base = list(colormaps["tab10"].colors) + list(colormaps["tab20"].colors[1::2])
    return [base[i % len(base)] for i in range(n)]


def forest_plot(table: pd.DataFrame, relative: bool, path: Path) -> Path:
    """One panel per estimator: each policy's value and interval, policies on the y axis."""
    prefix = "relative_" if relative else ""
    estimators = list(dict.fromkeys(table["estimator"]))
    policies = list(dict.fromkeys(table["policy"]))
    colours = _colours(len(policies))
    cols = min(2, len(estimators))
    rows = int(np.ceil(len(estimators) / cols))
    height = 0.35 * len(policies) * rows + 0.9 * rows + 0.4
    fig = Figure(figsize=(WIDTH, height), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax, estimator in zip(axes, estimators, strict=False):
        part = table[table["estimator"] == estimator].set_index("policy").loc[policies]
        y = np.arange(len(policies))[::-1]
        for i, policy in enumerate(policies):
            value = part.loc[policy, f"{prefix}value"]
            low, high = part.loc[policy, f"{prefix}ci_low"], part.loc[policy, f"{prefix}ci_high"]
            ax.plot([low, high], [y[i], y[i]], color=colours[i], lw=2)
            ax.plot(value, y[i], MARKERS[i % len(MARKERS)], color=colours[i], ms=6)
        if relative:
            ax.axvline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_yticks(y, policies, fontsize=8)
        ax.set_title(estimator, fontsize=9, wrap=True)
        ax.set_xlabel("value relative to the baseline" if relative else "estimated value")
        ax.grid(axis="x", alpha=0.3)
    for ax in axes[len(estimators) :]:
        ax.axis("off")
    fig.savefig(path, dpi=DPI)
    return path


def grid_heatmap(evaluation: Evaluation, estimator: str, correction, baseline, path: Path) -> Path:
    """Signed z of every paired difference (row minus column); * where significant."""
    grid = evaluation.grid(estimator, correction=correction, baseline=baseline)
    names = grid.names
    z = np.zeros((len(names), len(names)))
    star = np.zeros_like(z, dtype=bool)
    at = {n: i for i, n in enumerate(names)}
    for row in grid.table.itertuples(index=False):
        i, j = at[row.a], at[row.b]
        z[i, j], z[j, i] = row.z, -row.z
        star[i, j] = star[j, i] = bool(row.significant)
    size = min(WIDTH, 1.5 + 0.45 * len(names))
    fig = Figure(figsize=(size + 1.2, size), layout="constrained")
    ax = fig.subplots()
    finite = np.nan_to_num(z, nan=0.0, posinf=0.0, neginf=0.0)
    bound = max(3.0, float(np.abs(finite).max(initial=0.0)))
    image = ax.imshow(np.clip(finite, -bound, bound), cmap="RdBu", vmin=-bound, vmax=bound)
    for i, j in zip(*np.nonzero(star), strict=True):
        ax.text(j, i, "*", ha="center", va="center", fontsize=11)
    ax.set_xticks(range(len(names)), names, rotation=90, fontsize=8)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_title(f"{estimator}: row minus column, z (* significant)", fontsize=9, wrap=True)
    fig.colorbar(image, ax=ax, shrink=0.8, label="z")
    fig.savefig(path, dpi=DPI)
    return path


def weight_histograms(log, policies: list, path: Path) -> Path | None:
    """Distribution of each policy's importance weights pi/mu over the log rows (log scale)."""
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
    fig = Figure(figsize=(WIDTH, 1.9 * rows + 0.5), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True).ravel()
    colours = _colours(len(weights))
    for k, (ax, (name, w)) in enumerate(zip(axes, weights.items(), strict=False)):
        ax.hist(w[w > 0], bins=bins, color=colours[k])
        ax.set_xscale("log")
        zero = np.mean(w == 0)
        ax.set_title(f"{name} (w = 0 on {zero:.0%} of rows)", fontsize=8)
    for ax in axes[len(weights) :]:
        ax.axis("off")
    fig.supxlabel("importance weight pi / mu (log scale)", fontsize=9)
    fig.savefig(path, dpi=DPI)
    return path


def weight_table(evaluation: Evaluation) -> pd.DataFrame:
    """The weight diagnostics each (policy, estimator) reports, one row each."""
    rows = []
    for policy in evaluation.policies:
        for estimator in evaluation.estimators:
            e = evaluation.estimate(policy, estimator)
            shown = {k: e.diagnostics[k] for k in WEIGHT_DIAGNOSTICS if k in e.diagnostics}
            if shown:
                rows.append({"policy": policy, "estimator": estimator, **shown})
    return pd.DataFrame(rows)


def estimator_legend(evaluation: Evaluation) -> pd.DataFrame:
    """Each estimator's label, its every parameter (defaults included) and what it computes."""
    rows = []
    for label, component in zip(evaluation.estimators, evaluation.components, strict=True):
        doc = (type(component).__doc__ or "").strip().split("\n\n")[0]
        rows.append(
            {
                "estimator": label,
                "parameters": getattr(component, "full_label", label),
                "what it computes": " ".join(doc.split()),
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
    log=None,
    policies: list | None = None,
    argv: list[str] | None = None,
) -> Path:
    """Write ``report.html``, ``report.md`` and their figures into folder ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    doc = ReportDocument("offeval evaluation report")
    relative = baseline is not None
    doc.text(
        f"{len(evaluation.policies)} policies, {len(evaluation.estimators)} estimators, "
        f"{evaluation.n_units:,} units; {evaluation.level:.0%} intervals"
        + (f", values relative to {baseline}" if relative else "")
        + (f"; pairwise tests corrected by {correction}" if correction else "")
        + "."
    )
    doc.figure(forest_plot(table, relative, out / "estimates.png"), "Estimates")
    columns = ["policy", "estimator", "value", "se", "ci_low", "ci_high", "n_units"]
    if relative:
        columns += ["relative_value", "relative_ci_low", "relative_ci_high"]
    doc.table(table[[c for c in columns if c in table]])
    doc.table(estimator_legend(evaluation), "Estimators")
    for k, estimator in enumerate(evaluation.estimators):
        path = grid_heatmap(evaluation, estimator, correction, baseline, out / f"grid_{k}.png")
        doc.figure(path, f"Paired significance grid: {estimator}")
    weights = weight_table(evaluation)
    if not weights.empty:
        doc.table(weights, "Weight diagnostics")
    histogram = weight_histograms(log, policies or [], out / "weights.png")
    if histogram is not None:
        doc.figure(histogram, "Importance weights")
    doc.sections(sections, out)
    doc.provenance(argv if argv is not None else sys.argv[1:])
    return doc.write(out)
