"""From rank probabilities to decisions: components, which systems to A/B test, how long.

- :func:`component_probabilities`: systems labelled with attributes (feature
  set, training data, ...); the probability that the best system has each
  value of each attribute (Gruson et al. 2019, section 4.6), from the same draws.
- :func:`select`: the m systems to send to online tests, the top m by
  probability of being among the top m, or sampled in proportion to the
  probability of being best (Gruson et al.'s suggestion, WSDM 2019, section 3.3).
- :func:`ab_sample_size` and :func:`plan_ab_test`: the trajectories per A/B
  cell needed to detect the offline-predicted lift with a two-sample
  (unpaired) test, as online cells are independent.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from offeval import ConfigurationError, EstimatorSummary, InteractionLog, OffevalError
from offeval.plugin import check_choice, check_number, check_whole, did_you_mean
from offeval.stats import tolerant_order
from offeval_decision.methods import METHODS
from offeval_decision.ranks import RankDistribution


def check_attributes(
    names: Sequence[str], attributes: pd.DataFrame, source: str = "attributes"
) -> None:
    """An OffevalError unless ``attributes`` has one row for each of ``names`` and a column;
    ``source`` (the file, say) begins the message. A name without a row gets the closest of
    the attributes' names that match no system as a suggestion, and those are listed."""
    if attributes.columns.empty:
        raise OffevalError(f"{source}: no attribute columns, only the systems' names")
    repeated = attributes.index[attributes.index.duplicated()].unique()
    if len(repeated):
        raise OffevalError(f"{source}: more than one row for systems {list(repeated)}")
    missing = [name for name in names if name not in set(attributes.index)]
    if missing:
        unknown = [name for name in attributes.index if name not in set(names)]
        shown = ", ".join(f"{name!r}{did_you_mean(name, unknown)}" for name in missing)
        rest = f"; rows for unknown systems: {unknown}" if unknown else ""
        raise OffevalError(f"{source}: no row for systems {shown}{rest}")


def component_probabilities(dist: RankDistribution, attributes: pd.DataFrame) -> pd.DataFrame:
    """P(the best system has value v of attribute a), for every attribute and value.

    ``attributes`` is indexed by system name, one column per attribute. Each
    draw has exactly one best system, so the probabilities of one attribute's
    values sum to 1. Standard errors are binomial over the draws.
    """
    check_attributes(dist.names, attributes)
    best = dist.best
    rows = []
    for attribute in attributes.columns:
        labels = attributes.loc[dist.names, attribute]
        if labels.isna().any():
            raise OffevalError(
                f"attributes: {attribute!r} is missing for {list(labels[labels.isna()].index)}"
            )
        for value, p in best.groupby(labels.to_numpy()).sum().items():
            rows.append(
                {"attribute": attribute, "value": value, "p_best": p, "se": float(dist.se(p))}
            )
    return pd.DataFrame(rows).set_index(["attribute", "value"])


def select(dist: RankDistribution, m: int, *, method: str = "top", seed: int = 0) -> list[str]:
    """The m systems to A/B test.

    ``top``: the m most likely to be among the top m (probabilities tied within a
    relative 1e-9 in the distribution's order of names). ``sample``: m distinct
    systems drawn with probability proportional to their probability of
    being best (systems never best come last, by probability of the top m).
    P(top m) comes from the same draws, tabulated deeper when m exceeds the
    distribution's depth.
    """
    check_choice(method, "method", METHODS)
    m = check_whole(m, "m", low=1, high=len(dist.names))
    top = dist.top(m)
    if method == "top":
        return [dist.names[i] for i in tolerant_order(top.to_numpy(), descending=True)[:m]]
    rng = np.random.default_rng(seed)
    with np.errstate(divide="ignore"):
        keys = np.log(dist.best.to_numpy()) + rng.gumbel(size=len(dist.names))
    order = np.lexsort((-top.to_numpy(), -keys))
    return [dist.names[i] for i in order[:m]]


def _probability(name: str, value) -> float:
    return check_number(value, name, low=0, high=1, low_open=True, high_open=True)


def _sd(name: str, value) -> float:
    return check_number(value, name, low=0)


def ab_sample_size(
    lift: float,
    sd_a: float,
    sd_b: float | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    ratio: float = 1.0,
) -> float:
    """Trajectories in cell A for a two-sided two-sample z-test to detect ``lift``.

    Cell B gets ``ratio`` times as many. ``sd_a`` and ``sd_b`` are the
    per-trajectory standard deviations of the metric in each cell (``sd_b``
    defaults to ``sd_a``): n_A = (z_{1-alpha/2} + z_power)^2 (sd_a^2 + sd_b^2 / ratio) / lift^2.
    The test is two-sided, so a lift and its negation need as many; no lift
    needs infinitely many. Every parameter must be a finite number (NaN,
    text or a boolean is a ConfigurationError naming it).
    """
    lift = check_number(lift, "lift")
    sd_a = _sd("sd_a", sd_a)
    sd_b = sd_a if sd_b is None else _sd("sd_b", sd_b)
    alpha, power = _probability("alpha", alpha), _probability("power", power)
    ratio = check_number(ratio, "ratio", low=0, low_open=True)
    if lift == 0:
        return float("inf")
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return float(z**2 * (sd_a**2 + sd_b**2 / ratio) / lift**2)


def unit_sd(log: InteractionLog) -> float:
    """Standard deviation over trajectories of the reward per impression (the online metric)."""
    sums = np.add.reduceat(log.column("reward"), log.unit_starts)
    sizes = np.diff(np.r_[log.unit_starts, log.n_rows])
    return float(np.std(sums / sizes, ddof=1))


def plan_ab_test(
    summary: EstimatorSummary,
    candidates: Sequence[str],
    baseline: str,
    sd: float,
    *,
    baseline_value: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    level: float = 0.95,
) -> pd.DataFrame:
    """Trajectories per cell to detect each candidate's predicted lift over ``baseline``.

    The lift and its interval come from the paired offline covariance; ``sd``
    is the per-trajectory standard deviation of the online metric, in the
    metric's units (for instance :func:`unit_sd` of the log). ``n_per_cell``
    is for the point estimate of the lift, ``n_per_cell_cautious`` for the
    lower end of its interval (infinite when that end is not a gain).

    ``lift``, ``lift_se`` and ``lift_low`` are in the summary's units: the
    metric's for an absolute summary; for a relative one (``summary.baseline``
    set, every value divided by that policy's), fractions of the value of
    ``summary.baseline``, which must then be given as ``baseline_value`` (in
    the metric's units) so that ``sd`` is divided by it too.
    """
    sd, level = _sd("sd", sd), _probability("level", level)
    alpha, power = _probability("alpha", alpha), _probability("power", power)
    if isinstance(candidates, (str, bytes)):
        raise ConfigurationError(
            f"candidates must be a list of policy names, not one string {candidates!r}"
        )
    index = {name: i for i, name in enumerate(summary.policies)}
    unknown = [c for c in [*candidates, baseline] if c not in index]
    if unknown:
        raise OffevalError(f"unknown systems {unknown}: one of {summary.policies}")
    if summary.baseline is None and baseline_value is not None:
        raise ConfigurationError("baseline_value applies to a relative summary; this one is not")
    if summary.baseline is not None:
        relative = f"the summary is relative to {summary.baseline!r}: baseline_value"
        rule = (
            f"the value of {summary.baseline!r} in the metric's units (a finite positive number, "
            "so that sd= is in the lifts' units)"
        )
        sd = sd / check_number(baseline_value, relative, low=0, low_open=True, rule=rule)
    sign = 1.0 if summary.higher_is_better else -1.0
    z = norm.ppf((1 + level) / 2)
    rows = []
    for name in candidates:
        a, b = index[name], index[baseline]
        lift = sign * (summary.values[a] - summary.values[b])
        cov = summary.covariance
        se = float(np.sqrt(max(cov[a, a] + cov[b, b] - 2 * cov[a, b], 0.0)))
        low = lift - z * se
        rows.append(
            {
                "candidate": name,
                "lift": lift,
                "lift_se": se,
                "lift_low": low,
                "n_per_cell": ab_sample_size(lift, sd, alpha=alpha, power=power)
                if lift > 0
                else float("inf"),
                "n_per_cell_cautious": ab_sample_size(low, sd, alpha=alpha, power=power)
                if low > 0
                else float("inf"),
            }
        )
    return pd.DataFrame(rows).set_index("candidate")
