"""Figure 3 of Gilotte et al. (2019) on the simulator: non-shuffled metrics vs shuffled PD.

A Plackett-Luce logging policy with a small uniformly shuffled share serves
banners to position-biased users; about 40 test models of close quality
differ in how much they copy the logging policy's own score noise. PD on
shuffled banners is the unbiased but scarce reference; PD on non-shuffled
banners rewards copying the logging policy (its favourites sit on top and
get the clicks); CD on non-shuffled banners compares the clicked product with
the product the logging policy could equally have put at the clicked rank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from offeval import ConfigurationError, active_registry, evaluate, trajectory_flags
from offeval.stats import correlation
from offeval_disagreement.estimators import CounterfactualDisagreement, PairwiseDisagreement

REFERENCE = "pd(banners=shuffled)"
BIASED = "pd(banners=non_shuffled)"
COUNTERFACTUAL = "cd(banners=non_shuffled)"
#: The registered environment figure 3 runs on: the simulation plugin's.
SIMULATOR = "default"


@dataclass(frozen=True)
class Figure3:
    """Per-model metrics and what Gilotte et al.'s (2019) Figure 3 reads off them.

    ``table`` has one row per model: each metric's value, standard error and
    banners used. ``correlations`` are Pearson and Kendall coefficients (with
    p-values) of the two non-shuffled metrics against the shuffled reference.
    ``variance_ratio`` is CD's variance per banner over PD's on the same
    non-shuffled banners (median, min, max over models), and
    ``shuffled_needed`` the shuffled banners PD would need for CD's standard
    error (median over models), counted like ``banners["shuffled"]``: every
    shuffled banner, with a click or not. PD's variance falls as 1 / (the
    shuffled traffic), so that is the log's shuffled banners times
    (PD's standard error on them / CD's)^2.
    """

    table: pd.DataFrame
    correlations: pd.DataFrame
    variance_ratio: tuple[float, float, float]
    shuffled_needed: float
    banners: dict[str, int]


def close_models(env, logging, n_models: int = 40, seed: int = 0) -> list:
    """Test models of close quality: a * affinity + b * (the logging policy's noise) + c * noise.

    a in [0.7, 1.2], b in [0, 1], c in [0, 0.6]; deterministic rankers of the logging
    policy's own class (the simulator's ranking policy).
    """
    ranker = type(logging)
    rng = np.random.default_rng(seed)
    copied = logging.score_matrix - env.affinity
    models = []
    for j in range(n_models):
        a, b, c = rng.uniform(0.7, 1.2), rng.uniform(0.0, 1.0), rng.uniform(0.0, 0.6)
        scores = a * env.affinity + b * copied + c * rng.standard_normal(env.affinity.shape)
        models.append(ranker(f"m{j:02d}", scores, env.candidates, env.n_positions, None))
    return models


def world(
    *, gamma: float = 0.4, temperature: float = 0.7, shuffled_share: float = 0.05, seed: int = 0
):
    """Figure 3's environment and logging policy.

    Users examine rank i with probability gamma^(i - 1); the logging policy
    is Plackett-Luce at ``temperature`` over noisy scores, with
    ``shuffled_share`` of banners uniformly shuffled. The environment is the
    simulation plugin's (``default``), built through the registry.
    """
    registry = active_registry()
    if SIMULATOR not in registry.names("environment"):
        raise ConfigurationError(
            f"figure 3's world is the simulation plugin's environment {SIMULATOR!r}, which is "
            "not loaded: install offeval's simulation plugin, or add simulation to OFFEVAL_PLUGINS"
        )
    env = registry.create(
        "environment",
        SIMULATOR,
        seed=seed,
        n_contexts=2_000,
        n_items=300,
        n_candidates=10,
        n_positions=5,
        examination=f"exponential(gamma={gamma})",
    )
    logging = env.policy(
        "logging",
        skill=1.0,
        noise=1.0,
        temperature=temperature,
        mix_uniform=shuffled_share,
        seed=10_000,
    )
    return env, logging


def figure3(
    *,
    n_banners: int = 100_000,
    n_models: int = 40,
    gamma: float = 0.4,
    temperature: float = 0.7,
    shuffled_share: float = 0.05,
    seed: int = 0,
) -> Figure3:
    """Simulate :func:`world`, evaluate the three metrics for every model in one pass, summarise."""
    env, logging = world(
        gamma=gamma, temperature=temperature, shuffled_share=shuffled_share, seed=seed
    )
    log = env.simulate(logging, n_banners, seed=seed + 1)
    models = close_models(env, logging, n_models, seed)
    estimators = [
        PairwiseDisagreement("shuffled"),
        PairwiseDisagreement("non_shuffled"),
        CounterfactualDisagreement("non_shuffled", score_scale="logit"),
    ]
    frame = evaluate(log, models, estimators, progress=False).to_frame()
    return summarise(frame, log)


def summarise(frame: pd.DataFrame, log) -> Figure3:
    """Figure 3's numbers from an evaluation of the three metrics."""
    value, se, used = (
        frame.pivot(index="policy", columns="estimator", values=column)
        for column in ("value", "se", "n_units")
    )
    rows = []
    for other in (BIASED, COUNTERFACTUAL):
        pearson = correlation(value[REFERENCE], value[other])
        kendall = correlation(value[REFERENCE], value[other], "kendall")
        rows.append(
            {
                "metric": other,
                "pearson": pearson.statistic,
                "pearson_p": pearson.p_value,
                "kendall": kendall.statistic,
                "kendall_p": kendall.p_value,
            }
        )
    ratio = (se[COUNTERFACTUAL] ** 2 * used[COUNTERFACTUAL]) / (se[BIASED] ** 2 * used[BIASED])
    shuffled = trajectory_flags(log, "shuffled")
    needed = shuffled.sum() * se[REFERENCE] ** 2 / se[COUNTERFACTUAL] ** 2
    table = pd.concat({"value": value, "se": se, "banners": used}, axis=1)
    return Figure3(
        table,
        pd.DataFrame(rows).set_index("metric"),
        (float(ratio.median()), float(ratio.min()), float(ratio.max())),
        float(needed.median()),
        {"shuffled": int(shuffled.sum()), "non_shuffled": int((~shuffled).sum())},
    )


def plot_figure3(result: Figure3):
    """Two panels as in Gilotte et al. (2019): each non-shuffled metric against shuffled PD."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharex=True)
    value, se = result.table["value"], result.table["se"]
    titles = {BIASED: "(a) PD on non-shuffled banners", COUNTERFACTUAL: "(b) CD on non-shuffled"}
    for ax, metric in zip(axes, (BIASED, COUNTERFACTUAL), strict=True):
        ax.errorbar(
            value[REFERENCE],
            value[metric],
            xerr=1.96 * se[REFERENCE],
            yerr=1.96 * se[metric],
            fmt="o",
            ms=3,
            lw=0.6,
            capsize=0,
        )
        r = result.correlations.loc[metric, "pearson"]
        ax.set_title(f"{titles[metric]}: r = {r:.2f}", fontsize=10)
        ax.set_xlabel("PD on shuffled banners (the unbiased reference)")
        ax.set_ylabel("metric on non-shuffled banners")
    fig.tight_layout()
    return fig
