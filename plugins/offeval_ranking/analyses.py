"""The analyses of Jeunen, Potapov and Ustimenko (KDD 2024) with tidy outputs.

Consistency, off/online correlation and sensitivity to clipping.

- :func:`consistency`: how often nDCG inverts DCG's order over a set of models
  (Appendix A), with Pearson and Kendall between the two.
- :func:`held_out_study`: a full-information top-n study (users with held-out
  relevant items, models of graded quality) to feed :func:`consistency`.
- :func:`evaluate_by`: estimates per group of trajectories (e.g. per day).
- :func:`correlation`: Pearson r and two-sided p-value between per-day
  offline estimates and per-day online values (Table 2).
- :func:`sensitivity`: over experiments with known online improvements, the
  true-positive rate of a 99% normal interval, the mean p-value of
  H0: difference <= 0, and sign agreement, per metric and clipping m (Fig. 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from offeval import ColumnError, ConfigurationError, InteractionLog, evaluate
from offeval_ir.agreement_statistics import agreement

#: The clipping grid of Jeunen et al. (2024)'s sensitivity study: m in {1, 2, 4, ..., 4096, inf}.
CLIPPING_GRID = tuple(float(2**j) for j in range(13)) + (float("inf"),)


@dataclass(frozen=True)
class Consistency:
    """Agreement of two metrics over a set of models."""

    inversion_share: float
    pairs: int
    pearson: float
    pearson_p: float
    kendall: float
    kendall_p: float


def consistency(first: Sequence[float], second: Sequence[float]) -> Consistency:
    """Share of model pairs that ``second`` orders opposite to ``first``; correlations.

    Pairs tied under ``first`` are left out of the share (NaN when every pair
    is tied). The numbers are :func:`offeval_ir.agreement_statistics.agreement`'s on the
    per-model values; give it users x models values for bootstrap intervals.
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 3:
        raise ConfigurationError("consistency needs two equal-length vectors of >= 3 models")
    found = agreement(a, b)
    return Consistency(
        found.inverted_share,
        found.ordered_pairs,
        found.pearson,
        found.pearson_p,
        found.kendall,
        found.kendall_p,
    )


def held_out_study(
    *,
    n_users: int = 2_000,
    n_items: int = 200,
    n_models: int = 40,
    held_out: int | tuple[int, int] = (1, 30),
    k: int = 20,
    seed: int = 0,
) -> pd.DataFrame:
    """DCG@k and nDCG@k (log2 discount) of ``n_models`` models on held-out items.

    Each user has a latent taste; ``held_out`` relevant items per user, fixed
    (an int) or uniform in [low, high], are drawn with probability rising
    with affinity. Model j scores items by affinity plus noise whose level
    depends on the model and, with a model-specific tilt, on how many items
    the user holds out (some models serve heavy users better, some light
    ones), plus a popularity bias of its own weight. Returns one row per model.
    """
    rng = np.random.default_rng(seed)
    users = rng.normal(size=(n_users, 8))
    items = rng.normal(size=(n_items, 8))
    popularity = rng.normal(size=n_items)
    affinity = users @ items.T / np.sqrt(8)
    low, high = (held_out, held_out) if isinstance(held_out, int) else held_out
    counts = rng.integers(low, high + 1, n_users)
    keys = affinity + 0.7 * popularity + rng.gumbel(size=affinity.shape)
    order = np.argsort(-keys, axis=1)
    relevant = np.zeros_like(affinity, dtype=bool)
    rank_of = np.argsort(order, axis=1)
    relevant[rank_of < counts[:, None]] = True
    discount = 1 / np.log2(np.arange(2, k + 2))
    ideal = np.cumsum(discount)[np.minimum(counts, k) - 1]
    activity = (counts - counts.mean()) / (counts.std() or 1.0)
    rows = []
    for j in range(n_models):
        noise = 0.5 + 1.5 * rng.random()
        tilt = rng.uniform(-1.0, 1.0)
        bias = 1.5 * rng.random()
        level = np.clip(noise * (1 + tilt * activity), 0.05, None)[:, None]
        scores = affinity + bias * popularity + level * rng.normal(size=affinity.shape)
        top = np.argsort(-scores, axis=1)[:, :k]
        dcg = (np.take_along_axis(relevant, top, axis=1) * discount).sum(axis=1)
        rows.append(
            {
                "model": f"m{j:02d}",
                "noise": noise,
                "popularity_bias": bias,
                "dcg": dcg.mean(),
                "ndcg": (dcg / ideal).mean(),
            }
        )
    return pd.DataFrame(rows)


def evaluate_by(
    log: InteractionLog, column: str, policies, estimators, *, level: float = 0.95
) -> pd.DataFrame:
    """One tidy row per (group, policy, estimator): the estimates within each group."""
    if column not in log.frame:
        raise ColumnError(column, "evaluate_by groups trajectories by this column")
    values = log.frame[column].to_numpy()
    first = values[log.unit_starts]
    mixed = np.flatnonzero(values != first[log.unit_index])
    if mixed.size:
        raise ColumnError(column, "must be constant within each trajectory", mixed)
    frames = []
    for group in np.unique(first):
        part = InteractionLog.from_frame(
            log.frame[values == group].drop(columns="slot", errors="ignore")
        )
        result = evaluate(part, policies, estimators, level=level, progress=False).to_frame()
        frames.append(result.assign(**{column: group}))
    return pd.concat(frames, ignore_index=True)


def correlation(offline: pd.DataFrame, online: pd.Series, *, by: str = "day") -> pd.DataFrame:
    """Pearson r and two-sided p-value of per-``by`` offline values against online ones.

    ``offline`` has columns ``by``, ``variant`` and ``value``; ``online`` is
    indexed by ``by``. One row per variant.
    """
    for column in (by, "variant", "value"):
        if column not in offline:
            raise ColumnError(column, "correlation needs this column in the offline table")
    rows = []
    for variant, part in offline.groupby("variant", sort=False):
        joined = part.set_index(by)["value"].to_frame().join(online.rename("online"), how="inner")
        if len(joined) < 3:
            raise ConfigurationError(f"variant {variant!r}: fewer than 3 {by}s match online values")
        r = stats.pearsonr(joined["value"], joined["online"])
        rows.append(
            {
                "variant": variant,
                "r": float(r.statistic),
                "p_value": float(r.pvalue),
                f"n_{by}s": len(joined),
            }
        )
    return pd.DataFrame(rows)


def sensitivity(frame: pd.DataFrame, *, level: float = 0.99) -> pd.DataFrame:
    """True-positive rate, mean p-value and sign agreement per (metric, m).

    ``frame`` has one row per experiment x metric x m with columns
    ``metric``, ``m``, ``difference`` (offline target minus control), ``se``
    and ``online_difference`` (the known online effect, positive for the
    improvements the study is about). A true positive is an offline
    difference whose two-sided ``level`` normal interval lies above 0 (Jeunen et
    al.'s 99% interval); ``p_value`` is the one-sided p-value of
    H0: difference <= 0.
    """
    for column in ("metric", "m", "difference", "se", "online_difference"):
        if column not in frame:
            raise ColumnError(column, "sensitivity needs this column")
    p = stats.norm.sf(frame["difference"] / frame["se"])
    table = frame.assign(
        p_value=p,
        detected=p < (1 - level) / 2,
        agrees=np.sign(frame["difference"]) == np.sign(frame["online_difference"]),
    )
    out = table.groupby(["metric", "m"], sort=True).agg(
        tpr=("detected", "mean"),
        mean_p_value=("p_value", "mean"),
        sign_agreement=("agrees", "mean"),
        experiments=("detected", "size"),
    )
    return out.reset_index()


def plot_sensitivity(table: pd.DataFrame):
    """Fig. 1 analogue: TPR and mean p-value against the clipping m, one line per metric."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for metric, part in table.groupby("metric"):
        x = np.arange(len(part))
        axes[0].plot(x, part["tpr"], marker="o", label=metric)
        axes[1].plot(x, part["mean_p_value"], marker="o", label=metric)
    labels = ["inf" if np.isinf(m) else f"{m:g}" for m in sorted(table["m"].unique())]
    titles = ("true-positive rate (higher is better)", "mean p-value (lower is better)")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_xticks(np.arange(len(labels)), labels, rotation=60)
        ax.set_xlabel("clipping m")
        ax.set_title(title)
        ax.legend()
    fig.tight_layout()
    return fig
