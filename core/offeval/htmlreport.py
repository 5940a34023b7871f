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

import html
import platform
import shlex
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from offeval.evaluation import Evaluation
from offeval.sections import ReportSection
from offeval.tables import markdown_table

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
#: Packages whose versions the report states.
PACKAGES = ("offeval", "numpy", "pandas", "scipy", "statsmodels", "matplotlib")
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
    fig.savefig(path, dpi=100)
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
    fig.savefig(path, dpi=100)
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
    fig.savefig(path, dpi=100)
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


def provenance(argv: list[str]) -> dict[str, str]:
    """The command that made the report, when, and the versions it ran with."""
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return {
        "command": shlex.join(["offeval", *argv]),
        "written": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": f"{platform.python_version()} ({sys.platform})",
        **versions,
    }


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
    parts: list[tuple[str, str, object]] = []  # (kind, title, payload)
    relative = baseline is not None
    intro = (
        f"{len(evaluation.policies)} policies, {len(evaluation.estimators)} estimators, "
        f"{evaluation.n_units:,} units; {evaluation.level:.0%} intervals"
        + (f", values relative to {baseline}" if relative else "")
        + (f"; pairwise tests corrected by {correction}" if correction else "")
        + "."
    )
    parts.append(("text", "", intro))
    parts.append(("figure", "Estimates", forest_plot(table, relative, out / "estimates.png")))
    columns = ["policy", "estimator", "value", "se", "ci_low", "ci_high", "n_units"]
    if relative:
        columns += ["relative_value", "relative_ci_low", "relative_ci_high"]
    parts.append(("table", "", table[[c for c in columns if c in table]]))
    for k, estimator in enumerate(evaluation.estimators):
        path = grid_heatmap(evaluation, estimator, correction, baseline, out / f"grid_{k}.png")
        parts.append(("figure", f"Paired significance grid: {estimator}", path))
    weights = weight_table(evaluation)
    if not weights.empty:
        parts.append(("table", "Weight diagnostics", weights))
    histogram = weight_histograms(log, policies or [], out / "weights.png")
    if histogram is not None:
        parts.append(("figure", "Importance weights", histogram))
    for section in sections:
        parts.append(("text", section.title, section.text))
        for name, figure in section.figures.items():
            path = out / f"section_{len(parts)}_{name}.png"
            figure.savefig(path, dpi=100)
            parts.append(("figure", "", path))
        for _, frame in section.tables.items():
            parts.append(("table", "", frame.reset_index()))
    made = provenance(argv if argv is not None else sys.argv[1:])
    parts.append(("table", "How this report was made", pd.DataFrame([made]).T.reset_index()))
    (out / "report.html").write_text(_html(parts))
    (out / "report.md").write_text(_markdown(parts))
    return out / "report.html"


def _html(parts) -> str:
    body = []
    for kind, title, payload in parts:
        if title:
            body.append(f"<h2>{html.escape(title)}</h2>")
        if kind == "text":
            body += [f"<p>{html.escape(p)}</p>" for p in str(payload).split("\n\n") if p.strip()]
        elif kind == "figure":
            name = html.escape(Path(payload).name)
            body.append(f'<img src="{name}" alt="{html.escape(title or name)}">')
        else:
            body.append(
                '<div class="table">'
                + payload.to_html(index=False, float_format=lambda v: f"{v:.4g}", border=0)
                + "</div>"
            )
    style = (
        "body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}"
        "img{max-width:100%;height:auto}div.table{overflow-x:auto}"
        "table{border-collapse:collapse;font-size:0.85em}"
        "td,th{padding:0.2em 0.6em;border-bottom:1px solid #ddd;text-align:right}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>offeval report</title><style>{style}</style></head><body>"
        "<h1>offeval evaluation report</h1>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _markdown(parts) -> str:
    lines = ["# offeval evaluation report", ""]
    for kind, title, payload in parts:
        if title:
            lines += [f"## {title}", ""]
        if kind == "text":
            lines += [str(payload), ""]
        elif kind == "figure":
            lines += [f"![{title or Path(payload).stem}]({Path(payload).name})", ""]
        else:
            lines += [markdown_table(payload), ""]
    return "\n".join(lines)
