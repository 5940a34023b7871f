"""Sweeps over estimator settings: how the choice moves with the cap (Gruson et al., 2019).

Every setting of every family (capped and capped-normalised importance
sampling by default, caps on a log10 grid) is evaluated in one pass over the
log; then each setting's rank probabilities are drawn. The families are
estimator spec templates resolved through the registry, so any registered
estimator with a ``cap`` (or other numeric) parameter can be swept.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from offeval import ConfigurationError, active_registry, evaluate
from offeval_decision.ranks import rank_distribution

#: Gruson et al.'s two families: capped IS without and with normalisation.
FAMILIES = {"without normalisation": "cis:cap={cap}", "with normalisation": "ncis:cap={cap}"}
#: Caps 10^0 .. 10^5 in half decades, and no cap.
CAPS = tuple(float(c) for c in np.logspace(0, 5, 11)) + (float("inf"),)


def sweep(
    log,
    policies: Sequence,
    *,
    caps: Sequence[float] = CAPS,
    families: Mapping[str, str] = FAMILIES,
    baseline: str | None = None,
    draws: int = 100_000,
    seed: int = 0,
    depth: int | None = None,
    chunk_rows: int = 250_000,
    progress: bool | None = None,
    workers: int = 1,
) -> pd.DataFrame:
    """Rank probabilities of every policy for every (family, cap), from one pass over the log.

    Returns one row per (family, cap, policy): the estimate, P(rank 1..depth)
    and the expected rank. ``depth`` defaults to 3, or the number of policies
    when there are fewer. ``progress`` shows the pass's bar (rows, with an ETA);
    ``workers`` processes share the pass (:func:`offeval.evaluate`).
    """
    if not caps or not families:
        raise ConfigurationError("give at least one cap and one family")
    registry = active_registry()
    settings = [
        (family, float(cap), registry.create_from_spec("estimator", template.format(cap=cap)))
        for family, template in families.items()
        for cap in caps
    ]
    estimators = [s[2] for s in settings]
    evaluation = evaluate(
        log, policies, estimators, chunk_rows=chunk_rows, progress=progress, workers=workers
    )
    depth = min(3, len(policies)) if depth is None else depth
    rows = []
    for family, cap, estimator in settings:
        summary = evaluation.summary(estimator.label, baseline)
        dist = rank_distribution(summary, draws=draws, seed=seed, depth=depth)
        frame = dist.to_frame()
        frame.insert(0, "value", summary.values)
        frame.insert(0, "cap", cap)
        frame.insert(0, "family", family)
        rows.append(frame.reset_index())
    return pd.concat(rows, ignore_index=True)


def plot_sweep(
    table: pd.DataFrame,
    rank: int = 1,
    highlight: str | None = None,
    *,
    min_share: float = 0.01,
    width: float | None = None,
    fontsize: float = 9,
):
    """P(ranked ``rank``-th) against log10(cap), one panel per family (Gruson et al.'s Figs. 4-5).

    Every policy whose probability exceeds ``min_share`` at some cap of some family
    gets its own colour, marker and legend entry; the others (near 0 throughout,
    where their markers would pile up) are thin grey lines under one entry that
    names them ("others, never above 1%"). ``highlight`` (the truly best policy) is
    drawn thicker and always has its own entry. No cap is drawn one step right of
    the largest finite cap and labelled "inf". The figure is ``width`` inches wide
    (default 5 per family); its text is ``fontsize`` points, titles one more.
    """
    import matplotlib.pyplot as plt

    families = list(dict.fromkeys(table["family"]))
    finite = table.loc[np.isfinite(table["cap"]), "cap"]
    top = np.log10(finite.max()) if len(finite) else 0.0
    x = np.where(np.isfinite(table["cap"]), np.log10(table["cap"].clip(lower=1e-300)), top + 0.5)
    table = table.assign(x=x)
    column = f"p_rank_{rank}"
    width = 5 * len(families) if width is None else width
    fig, axes = plt.subplots(1, len(families), figsize=(width, 3.8), sharey=True, squeeze=False)
    policies = list(dict.fromkeys(table["policy"]))
    peak = table.groupby("policy", sort=False)[column].max()
    shown = [p for p in policies if peak[p] > min_share or p == highlight]
    others = [p for p in policies if p not in shown]
    palette = plt.get_cmap("tab20").colors
    colours = [palette[i] for i in (*range(0, 20, 2), *range(1, 20, 2))]  # dark shades first
    markers = "os^vD<>ph*Xd"
    ticks = sorted(set(np.round(table["x"], 6)))
    for ax, family in zip(axes[0], families, strict=True):
        part = table[table["family"] == family]
        for j, policy in enumerate(others):  # under the others, one legend entry for all
            line = part[part["policy"] == policy].sort_values("x")
            label = _others_label(others, min_share) if j == 0 else "_nolegend_"
            ax.plot(line["x"], line[column], color="0.7", lw=0.8, label=label, zorder=1)
        for j, policy in enumerate(shown):
            line = part[part["policy"] == policy].sort_values("x")
            ax.plot(
                line["x"],
                line[column],
                marker=markers[j % len(markers)],
                ms=4,
                lw=2.6 if policy == highlight else 1.0,
                color=colours[j % len(colours)],
                label=f"{policy} (truly best)" if policy == highlight else policy,
                zorder=2,
            )
        ax.set_title(family, fontsize=fontsize + 1)
        ax.set_xticks(ticks, [f"{t:g}" if t <= top else "inf" for t in ticks])
        ax.set_xlabel("log10(cap)", fontsize=fontsize)
        ax.tick_params(labelsize=fontsize)
    axes[0, 0].set_ylabel(f"P(ranked {rank})", fontsize=fontsize)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if others:  # their entry last
        handles, labels = handles[1:] + handles[:1], labels[1:] + labels[:1]
    legend = fig.legend(
        handles, labels, loc="center right", bbox_to_anchor=(1, 0.5), fontsize=fontsize,
        frameon=False,
    )  # fmt: skip
    fig.canvas.draw()  # the legend's width, to lay the panels out beside it
    box = legend.get_window_extent().transformed(fig.transFigure.inverted())
    fig.tight_layout(rect=(0, 0, max(0.5, 1 - box.width - 0.01), 1))
    return fig


def _others_label(others: list[str], min_share: float) -> str:
    """The legend entry of the policies never above ``min_share``: how many, and their names."""
    names = ", ".join(others)
    if len(names) > 60:
        names = ", ".join(others[:6]) + f" and {len(others) - 6} more"
    head = f"others, never above {min_share:.0%}"
    return head + ":\n" + textwrap.fill(names, 22)
