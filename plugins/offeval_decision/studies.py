"""Are the decisions any good? Selection quality and calibration across simulated worlds.

Each world is a registered simulation environment with its own seed: a
logging policy, a family of candidate policies of close quality, their exact
online values, and one log. In every world and for every estimator, the
rank distribution is drawn and m candidates are chosen three ways (the m
best point estimates, in the estimator's direction; the m most likely to be
among the top m; m sampled in proportion to the probability of being best).
Recorded: whether the chosen set contains the truly best policy, the regret
of the best chosen one (in the spirit of SCOPE-RL's top-k off-policy
selection metrics), and every policy's predicted probability of being best
next to whether it is.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from offeval import OffevalWarning, active_registry, evaluate
from offeval.plugin import progress_bar
from offeval.stats import first_maximum
from offeval_decision.choices import select
from offeval_decision.ranks import rank_distribution

#: Estimators compared by default: unbiased, normalised with a high cap, and a low cap.
ESTIMATORS = ("is", "ncis:cap=100", "cis:cap=10")
#: A smaller default world than the simulator's, so that many worlds run quickly.
WORLD = {"n_contexts": 500, "n_items": 150}


def decision_study(
    *,
    n_worlds: int = 60,
    n_policies: int = 12,
    n_trajectories: int = 20_000,
    m: int = 3,
    estimators: Sequence[str] = ESTIMATORS,
    environment: str = "default",
    environment_params: Mapping = WORLD,
    draws: int = 20_000,
    seed: int = 0,
    progress: bool | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run the worlds; return (selections, predictions). ``progress`` counts the worlds.

    ``selections``: one row per (world, estimator, method) with
    ``contains_best`` and ``regret``. ``predictions``: one row per (world,
    estimator, policy) with ``p_best`` and ``is_best``.
    """
    registry = active_registry()
    built = [registry.create_from_spec("estimator", spec) for spec in estimators]
    selections, predictions = [], []
    for world in progress_bar(progress, iterable=range(n_worlds), desc="worlds", unit="world"):
        env = registry.create("environment", environment, seed=seed + world, **environment_params)
        policies = list(env.candidate_policies(n_policies))
        truth = pd.Series({p.name: env.true_value(p, "reward_per_impression") for p in policies})
        best = truth.index[first_maximum(truth.to_numpy())]
        log = env.simulate(env.logging_policy(), n_trajectories, seed=seed + world)
        with warnings.catch_warnings():  # exact propensities: alarms here are chance (3 SE)
            warnings.simplefilter("ignore", OffevalWarning)
            evaluation = evaluate(log, policies, built, progress=False)
        for estimator in built:
            summary = evaluation.summary(estimator.label)
            dist = rank_distribution(summary, draws=draws, seed=seed + world, depth=m)
            sign = 1.0 if summary.higher_is_better else -1.0
            points = pd.Series(sign * summary.values, index=summary.policies)
            chosen = {
                "top point estimates": list(points.sort_values(ascending=False).index[:m]),
                "top by P(top m)": select(dist, m),
                "sampled by P(best)": select(dist, m, method="sample", seed=seed + world),
            }
            for method, names in chosen.items():
                selections.append(
                    {
                        "world": world,
                        "estimator": estimator.label,
                        "method": method,
                        "contains_best": best in names,
                        "regret": float(truth[best] - truth[names].max()),
                    }
                )
            predictions.append(
                pd.DataFrame(
                    {
                        "world": world,
                        "estimator": estimator.label,
                        "policy": dist.names,
                        "p_best": dist.best.to_numpy(),
                        "is_best": np.array(dist.names) == best,
                    }
                )
            )
    return pd.DataFrame(selections), pd.concat(predictions, ignore_index=True)


def reliability(
    predictions: pd.DataFrame, bins: Sequence[float] = (0, 0.05, 0.2, 0.4, 0.6, 0.8, 1.0001)
):
    """Per estimator and bin of predicted P(best): mean prediction, observed share, count, and
    the binomial standard error of the observed share."""
    binned = predictions.assign(bin=pd.cut(predictions["p_best"], list(bins), right=False))
    table = binned.groupby(["estimator", "bin"], observed=True).agg(
        predicted=("p_best", "mean"), observed=("is_best", "mean"), count=("is_best", "size")
    )
    table["se"] = np.sqrt(table["observed"] * (1 - table["observed"]) / table["count"])
    return table


def plot_reliability(table: pd.DataFrame):
    """Observed share of truly best policies against predicted probability, per estimator."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4.5))
    markers = "osD^v"
    for j, (estimator, part) in enumerate(table.groupby(level="estimator", sort=False)):
        ax.errorbar(
            part["predicted"],
            part["observed"],
            yerr=1.96 * part["se"],
            marker=markers[j % len(markers)],
            capsize=3,
            label=estimator,
        )
    ax.plot([0, 1], [0, 1], "k--", lw=0.8, label="calibrated")
    ax.set_xlabel("predicted probability of being best")
    ax.set_ylabel("share that were truly best")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig
