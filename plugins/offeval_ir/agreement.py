"""Do two measures rank many models alike? One call from qrels and runs.

:func:`measure_agreement` judges every run (a predictions frame, or a users x
n top-n matrix as recommender toolkits produce them) against one qrels under
two measure strings, and hands each user's values to
:func:`offeval.plugin.agreement`: Pearson's r and Kendall's tau-b between the
models' values under the two measures, the share of model pairs the second
measure orders opposite to the first, and BCa bootstrap intervals over
users (NaN, with a warning, for a statistic the bootstrap is too biased on:
models tied within their noise). This is the analysis of Jeunen, Potapov and
Ustimenko (2024, Appendix A), where nDCG@100 inverts DCG@100's order for about
a quarter of the pairs of models trained on MovieLens-1M. A top-n matrix is
judged as :func:`~offeval_ir.topn.compute_topn` judges it (its padding rule is
:meth:`~offeval_ir.prepared.PreparedQrels.topn_judgements`').
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from offeval import ConfigurationError
from offeval_ir.agreement_statistics import Agreement, agreement
from offeval_ir.conventions import PRESETS, Conventions
from offeval_ir.measures import parse_measures
from offeval_ir.prepared import PreparedQrels, prepare_qrels


def measure_agreement(
    qrels: pd.DataFrame | np.ndarray | PreparedQrels,
    runs: Mapping[str, pd.DataFrame | np.ndarray],
    a: str = "nDCG@100",
    b: str = "DCG@100",
    *,
    users: Sequence | None = None,
    conventions: Conventions | None = None,
    columns: Mapping[str, str] | None = None,
    resamples: int = 1_000,
    level: float = 0.95,
    seed: int = 0,
    interval: str = "bca",
) -> Agreement:
    """How measures ``a`` and ``b`` agree on the runs: Pearson, Kendall's tau-b and the
    share of run pairs ``b`` orders opposite to ``a``, with bootstrap intervals over users.

    ``qrels`` is a long frame (user, item, relevance), a users x items
    relevance matrix or :func:`~offeval_ir.prepared.prepare_qrels`' result
    (prepared once here otherwise). ``runs`` maps a model's name to its
    predictions (a frame as :func:`~offeval_ir.runs.compute_measures` reads
    it) or its top-n matrix (users x n items as the qrels name them, best
    first, -1 padding a short list, as :func:`~offeval_ir.topn.top_n` cuts
    them; ``users`` names the rows, by default the qrels' users in order of
    first appearance, or row r is user r of a relevance matrix).
    Each run's value of a measure is its mean over the users it averages
    (under ``conventions``, default the ``trec_eval`` preset; the per-user
    values of ``compute_measures``); ``pnDCG@k`` is the ratio of the sums of DCG@k and
    ideal DCG@k, resampled as one. A resample draws users from the union of
    the runs' users (see :func:`offeval.plugin.agreement`, whose ``resamples``,
    ``level``, ``seed`` and ``interval`` these are).
    """
    if not isinstance(runs, Mapping) or len(runs) < 3:
        raise ConfigurationError("runs: give at least 3 runs, as {name: predictions or top-n}")
    if not isinstance(a, str) or not isinstance(b, str):
        raise ConfigurationError(f"a and b are measure strings, got {a!r} and {b!r}")
    parsed = parse_measures([a, b])
    if len(parsed) != 2:
        raise ConfigurationError(f"a and b must name one measure each, got {a!r} and {b!r}")
    for measure in parsed:
        if measure.aggregate not in ("mean", "ratio"):
            raise ConfigurationError(
                f"{measure.name}: its values aggregate as a {measure.aggregate}, and agreement "
                "compares means (or ratios of sums) over users"
            )
    names = [m.name for m in parsed]
    if names[0] == names[1]:
        raise ConfigurationError(f"a and b must be two different measures, got {names[0]!r}")
    conv = conventions or PRESETS["trec_eval"]()
    prepared = prepare_qrels(qrels, conv, columns=columns)
    if users is None and isinstance(qrels, pd.DataFrame):
        users = prepared.users  # a top-n matrix's rows: the qrels' users, in order
    values: dict[str, dict[str, pd.Series]] = {n: {} for n in names}
    weights: dict[str, dict[str, pd.Series]] = {n: {} for n in names}
    for model, run in runs.items():
        if isinstance(run, pd.DataFrame):
            result = prepared.measures(run, parsed, conv, columns=columns)
        else:
            result = prepared.measures(np.asarray(run), parsed, conv, users=users)
        for name in names:
            column = result.per_user[name]
            values[name][model] = column
            parts = result.parts.get(name) if result.aggregation.get(name) == "ratio" else None
            weights[name][model] = (
                pd.Series(1.0, index=column.index)
                if parts is None
                else parts["denominator"].astype(float)
            )
    frames = [pd.DataFrame(values[n]) for n in names]
    index = frames[0].index.union(frames[1].index, sort=False)
    frames = [f.reindex(index) for f in frames]
    weight_frames = [pd.DataFrame(weights[n]).reindex(index).fillna(0.0) for n in names]
    return agreement(
        frames[0],
        frames[1],
        measures=(names[0], names[1]),
        weights=(weight_frames[0], weight_frames[1]),
        resamples=resamples,
        level=level,
        seed=seed,
        interval=interval,
    )


#: Smallest font of :func:`agreement_figure`, in points, at its own width (a page's).
MIN_FONT = 9
#: Width of :func:`agreement_figure` in inches: a page's, so that its fonts are shown at size.
FIGURE_WIDTH = 8.0
#: How :func:`agreement_figure` draws an inverted pair, and what its legend calls it.
INVERTED_STYLE = {"color": "red", "lw": 0.8, "alpha": 0.6}


def agreement_figure(
    found: Agreement,
    panels: Mapping[str, Sequence] | None = None,
    family=None,
):
    """Each model at its values under the two measures; a segment joins each inverted pair.

    ``found`` is :func:`measure_agreement`'s result: the x axis is its second
    measure (``b``, the reference), the y axis its first. ``panels`` maps a
    panel's title to the models it shows (default: one panel of every model);
    ``family(name)`` names a model's family, coloured alike and listed in the
    legend (default: the name up to its first ``(``). The legend also says
    what a red segment is: a pair of models the first measure orders opposite
    to the second. Fonts are at least :data:`MIN_FONT` points at the figure's
    width of :data:`FIGURE_WIDTH` inches (a page). Returns a matplotlib
    ``Figure`` (no pyplot: the user's backend is left alone).
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    y_measure, x_measure = found.measures
    means = found.means
    panels = dict(panels) if panels is not None else {f"all {len(means)} models": means.index}
    family = family or (lambda name: str(name).split("(")[0])
    families = list(dict.fromkeys(family(name) for name in means.index))
    colours = {f: f"C{k % 10}" for k, f in enumerate(families)}
    pairs = found.pairs()
    inverted = pairs[pairs["inverted"]]
    fig = Figure(figsize=(FIGURE_WIDTH, 3.6 + 0.25 * (len(families) > 4)), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False).ravel()
    for ax, (title, shown) in zip(axes, panels.items(), strict=True):
        view = means.loc[list(shown)]
        for row in inverted.itertuples(index=False):
            if row.model in view.index and row.other in view.index:
                ends = view.loc[[row.model, row.other]]
                ax.plot(ends[x_measure], ends[y_measure], **INVERTED_STYLE)
        for name, point in view.iterrows():
            colour = colours[family(name)]
            ax.scatter(point[x_measure], point[y_measure], s=18, color=colour)
        ax.set_xlabel(f"{x_measure} (mean over users)", fontsize=MIN_FONT + 1)
        ax.set_ylabel(f"{y_measure} (mean over users)", fontsize=MIN_FONT + 1)
        ax.set_title(str(title), fontsize=MIN_FONT + 1)
        ax.tick_params(labelsize=MIN_FONT)
    handles = [
        Line2D([], [], ls="", marker="o", ms=5, color=colours[f], label=str(f)) for f in families
    ]
    handles.append(
        Line2D([], [], **INVERTED_STYLE, label=f"pair {y_measure} orders\nopposite to {x_measure}")
    )
    axes[0].legend(handles=handles, loc="lower right", fontsize=MIN_FONT)
    return fig
