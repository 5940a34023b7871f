"""Slate and ranking estimators: IIPS, RIPS, the pseudo-inverse estimator, Cascade-DR.

A trajectory is a ranking a_1..a_L with a reward r_k at each position. The
estimators differ in what they assume of the rewards, and so in the weight
they put on r_k:

- IIPS (Li et al. 2018): r_k depends only on the item at k (the
  position-based model). Weight pi(a_k at k) / mu(a_k at k), the rank
  marginals.
- RIPS (McInerney et al. 2020): r_k depends on the items at 1..k (the
  cascade model, and the position-based one as a special case). Weight
  pi(a_1..a_k) / mu(a_1..a_k), the prefix probabilities.
- PI (Swaminathan et al. 2017): only the trajectory's total reward counts,
  and its expectation is additive over slots. Weight sum_k pi_k / mu_k - (L - 1)
  on the total.
- Cascade-DR (Kiyohara et al. 2022): RIPS with a reward model as control
  variate, unbiased where RIPS is, whatever the model.

Each targets the reward per impression (log row; ``per="impression"``, as
the ncis family) or per trajectory (``per="trajectory"``); the unit is the
trajectory. ``self_normalized=True`` divides by the weights' own means,
position by position (obp's SNIIPS, SNRIPS): consistent, not unbiased.
"""

from __future__ import annotations

import numpy as np

from offeval import BaseEstimator, ConfigurationError, Contribution, PolicyView
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_rewardmodels.columns import (
    DEFAULT_COLUMN,
    candidate_predictions,
    check_column,
    logged_predictions,
)
from offeval_rewardmodels.fitting import attach_kit_model
from offeval_slates.combine import by_position, scaled_ratio
from offeval_slates.layout import layout, unit_sum
from offeval_slates.plackett_luce import candidate_rows
from offeval_slates.prefixes import (
    PL_COLUMNS,
    logging_log_prefix,
    target_log_extended,
    target_log_prefix,
)
from offeval_slates.pseudo_inverse import check_logging_ranker, exact_weights

PER = ("impression", "trajectory")


def _check_flag(name: str, value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigurationError(f"{name} must be True or False, got {value!r}")


def _check_per(per) -> None:
    if not isinstance(per, str) or per not in PER:
        raise ConfigurationError(f"per must be one of {PER}, got {per!r}")


def _check_column(name: str, value, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not isinstance(value, str) or not value:
        what = "None or a column name" if optional else "a column name"
        raise ConfigurationError(f"{name} must be {what}, got {value!r}")


def weight_tally(weights: np.ndarray) -> Tally:
    """Mergeable weight diagnostics: sums for the effective sample size, extremes."""
    tally = Tally()
    tally.add("weights", weights.size)
    tally.add("sum_w", float(weights.sum()))
    tally.add("sum_w2", float(np.square(weights).sum()))
    tally.maximum("max_weight", float(weights.max(initial=-np.inf)))
    tally.minimum("min_weight", float(weights.min(initial=np.inf)))
    return tally


class _SlateEstimator(BaseEstimator):
    """Shared parameters, declarations, columns and combination."""

    tags = {"linear_in_reward": True}
    self_normalized = False
    per = "impression"

    def _check(self) -> None:
        _check_flag("self_normalized", self.self_normalized)
        _check_per(self.per)

    @property
    def estimand(self) -> str:
        """Reward per impression or per trajectory, as ``per`` says."""
        return f"reward_per_{self.per}"

    @property
    def guarantee(self) -> str | None:
        """Unbiased where the assumption holds; self-normalised, consistent."""
        return "consistent" if self.self_normalized else "unbiased"

    def label_params(self) -> dict:
        """Only the parameters that differ from their defaults: ``iips(self_normalized=True)``."""
        return self.changed_params()

    def row_columns(
        self, view: PolicyView, weights: np.ndarray, included: np.ndarray | None
    ) -> Contribution:
        """Columns of a row-weighted estimator: r w per row, or per position when normalised.

        ``weights`` are zero on excluded trajectories; ``included`` flags the
        trajectories used (None: all).
        """
        log = view.log
        used = np.ones(log.n_units) if included is None else included.astype(float)
        rows = used[log.unit_index]
        y = log.column("reward") * weights
        units = {"units": used} if self.per == "trajectory" else {}
        if not self.self_normalized:
            columns = {"y": y} if self.per == "trajectory" else {"y": y, "rows": rows}
            return Contribution(columns, units)
        lay = layout(log)
        parts = {"y": lay.padded(y, 0.0), "w": lay.padded(weights, 0.0), "n": lay.padded(rows, 0)}
        for k in range(lay.longest):
            for part, matrix in parts.items():
                units[part, k + 1] = matrix[:, k]
        return Contribution(unit_columns=units)

    def combine(self, stats) -> Linearisation:
        """Mean of r w per row or trajectory; normalised position by position when asked."""
        if self.self_normalized:
            return by_position(stats, "units" if self.per == "trajectory" else None)
        return ratio_of_means(stats, "y", "units" if self.per == "trajectory" else "rows")

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Effective sample size, mean, largest and smallest weight."""
        s = tally.sums
        n = s.get("weights", 0.0)
        return {
            **tally.counts,
            "ess": s["sum_w"] ** 2 / s["sum_w2"] if s.get("sum_w2", 0) > 0 else 0.0,
            "mean_weight": s["sum_w"] / n if n else float("nan"),
            "max_weight": tally.maxima.get("max_weight", float("nan")),
            "min_weight": tally.minima.get("min_weight", float("nan")),
        }


class IIPS(_SlateEstimator):
    """Independent IPS (Li et al. 2018; obp's SlateIndependentIPS): sum_k r_k pi_k / mu_k.

    pi_k and mu_k are the target's and the logger's probabilities of the
    logged item at its position (the rank marginals; mu is the log's
    ``propensity``). Unbiased when the reward at each position depends only
    on the item there (position-based users); biased under cascade users,
    whose clicks at k depend on the items above. Per impression and not
    normalised, it is the ``is`` estimator applied to a ranking log.
    """

    name = "iips"
    requires = ("propensity",)
    assumptions = {"user_model": "position_based"}

    def __init__(self, self_normalized: bool = False, per: str = "impression"):
        self.self_normalized = self_normalized
        self.per = per
        self._check()

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r pi/mu per row (per position when normalised)."""
        w = view.weights()
        contribution = self.row_columns(view, w, None)
        contribution.tally = weight_tally(w)
        return contribution


class RIPS(_SlateEstimator):
    """Reward-interaction IPS (McInerney et al. 2020; obp's SlateRewardInteractionIPS).

    sum_k r_k pi(a_1..a_k) / mu(a_1..a_k): the weight of the reward at k is
    the ratio of the probabilities of the whole prefix down to k. Unbiased
    when the reward at k depends only on the items at 1..k (cascade users,
    and position-based ones), at a higher variance than IIPS.

    The target's prefix probabilities come from the policy (see
    :mod:`offeval_slates.prefixes`: a ``prefix_probabilities(rows)`` method,
    Plackett-Luce logits, or a deterministic ranker's 0/1 probabilities).
    The logger's come from ``logging_prefix``: None reads the Plackett-Luce
    logging columns (``logging_score``, ``logging_pool``, ``shuffled``;
    shuffled and deterministically ordered trajectories are excluded and
    counted), a column name reads P_logging(a_1..a_k) per row from it.
    """

    name = "rips"
    assumptions = {"user_model": "cascade"}

    def __init__(
        self,
        self_normalized: bool = False,
        per: str = "impression",
        logging_prefix: str | None = None,
    ):
        self.self_normalized = self_normalized
        self.per = per
        self.logging_prefix = logging_prefix
        self._check()
        _check_column("logging_prefix", logging_prefix, optional=True)

    @property
    def expected_failed_checks(self) -> dict[str, str]:
        """Interval coverage on the kit's small logs (the mean is on the truth; see tests)."""
        if self.self_normalized:
            return {}
        return {
            "check_unbiased": "prefix weights are heavy-tailed (effective sample size below 1% "
            "of the rows at positions 2-4): on 500-trajectory logs normal intervals cover the "
            "truth about 60% of the time, though the estimates average to it"
        }

    @property
    def requires(self) -> tuple[str, ...]:
        """The target's prefix probabilities and the logger's columns."""
        logging = PL_COLUMNS if self.logging_prefix is None else (self.logging_prefix,)
        return ("prefix_probabilities()", *logging)

    def weights(self, view: PolicyView) -> tuple[np.ndarray, np.ndarray | None, dict]:
        """pi(a_1..a_k) / mu(a_1..a_k) per row (0 on excluded trajectories), and exclusions."""
        logging = logging_log_prefix(view.log, self.logging_prefix)
        target = target_log_prefix(view, self.name)
        w = np.exp(target - logging.rows)
        if logging.included is not None:
            w = np.where(logging.included[view.log.unit_index], w, 0.0)
        return w, logging.included, logging.excluded

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r times the prefix weight per row (per position when normalised)."""
        w, included, excluded = self.weights(view)
        contribution = self.row_columns(view, w, included)
        used = w if included is None else w[included[view.log.unit_index]]
        contribution.tally = weight_tally(used)
        contribution.excluded = excluded
        return contribution


class PseudoInverse(_SlateEstimator):
    """The pseudo-inverse estimator (Swaminathan et al. 2017) for additive slate rewards.

    Only the trajectory's total reward R = sum_k r_k is used, weighted by
    G = q_pi' Gamma_mu^+ 1_s (see :mod:`offeval_slates.pseudo_inverse`). It is
    unbiased whenever the expected total reward is additive over slots
    (position-based users) and the logger covers the target. Self-normalised
    (wPI): sum R G / sum G.

    Gamma_mu needs the logger's pairwise slot marginals. With ``logging=None``
    only the slot-level marginals are used (the log's ``propensity``):
    G = sum_k pi_k / mu_k - (L - 1), which is the PI weight when the logger
    draws the slots independently. A ranking never repeats an item, which makes
    its slots dependent: on ranking logs this form keeps a bias (``guarantee``
    None; about -15% on the simulator's Plackett-Luce logs). Given the logging
    ranker (``logging=env.logging_policy()``), Gamma_mu is enumerated exactly
    and PI is unbiased; it then reads the target's probabilities of every
    candidate at every position from the log's candidate table.
    """

    name = "pi"
    assumptions = {"user_model": "position_based"}

    def __init__(self, self_normalized: bool = False, per: str = "impression", logging=None):
        self.self_normalized = self_normalized
        self.per = per
        self.logging = logging
        self._check()
        if logging is not None:
            check_logging_ranker(logging)

    @property
    def requires(self) -> tuple[str, ...]:
        """Propensities (slot-level form), or the candidate table (exact form)."""
        return ("propensity",) if self.logging is None else ("candidates",)

    @property
    def guarantee(self) -> str | None:
        """Exact form: unbiased (normalised: consistent); slot-level form: biased on rankings."""
        return None if self.logging is None else super().guarantee

    def contribute(self, view: PolicyView) -> Contribution:
        """Unit columns: R G per trajectory, G, rows and 1."""
        log = view.log
        lengths = np.diff(np.r_[log.unit_starts, log.n_rows]).astype(float)
        if self.logging is None:
            g = unit_sum(log, view.weights()) - (lengths - 1)
        else:
            g = exact_weights(log, self.logging, view.candidate_probabilities())
        total = unit_sum(log, log.column("reward"))
        units = {"y": total * g, "rows": lengths, "units": np.ones(log.n_units)}
        if self.self_normalized:
            units["w"] = g
        return Contribution(unit_columns=units, tally=weight_tally(g))

    def combine(self, stats) -> Linearisation:
        """Mean of R G per trajectory or per row; wPI divides by the mean of G."""
        if self.self_normalized:
            rows = "units" if self.per == "trajectory" else "rows"
            return scaled_ratio(stats, "y", "w", "units", rows)
        return ratio_of_means(stats, "y", "units" if self.per == "trajectory" else "rows")


class CascadeDR(_SlateEstimator):
    """Cascade doubly robust (Kiyohara et al. 2022; obp's SlateCascadeDoublyRobust).

    sum_k [ w_1:k (r_k - q(a_1..a_k)) + w_1:k-1 sum_c pi(c | a_1..a_k-1) q(a_1..a_k-1, c) ]
    with w_1:k = pi(a_1..a_k) / mu(a_1..a_k) (RIPS's weights) and q a reward
    model of the reward at k given the items down to k. The model enters as
    columns (the reward-model plugin's convention): ``reward_model`` in the
    log holds q of the logged item at its slot, the same column in the
    candidate table q of every candidate of every slot (a slot belongs to a
    trajectory, so its predictions may depend on the logged items above it).
    The sum over c runs over the slot's candidates, with the target's choice
    at k given the logged prefix above. Unbiased wherever RIPS is, whatever
    the model (fitted on other trajectories: cross-fit it); the better the
    model, the smaller the variance. Prefix probabilities as for RIPS; the
    target's choice given a prefix needs Plackett-Luce logits or a
    deterministic ranker.
    """

    name = "cascade_dr"
    assumptions = {"user_model": "cascade"}
    tags: dict = {}  # linear in the rewards and the model together, not in the rewards alone
    expected_failed_checks = {
        "check_unbiased": "RIPS's heavy-tailed prefix weights: with the kit's rough model "
        "(item-position means), normal intervals on 500-trajectory logs cover the truth about "
        "70% of the time, though the estimates average to it"
    }

    def __init__(
        self,
        per: str = "impression",
        reward_model: str = DEFAULT_COLUMN,
        logging_prefix: str | None = None,
    ):
        self.per = per
        self.reward_model = reward_model
        self.logging_prefix = logging_prefix
        self._check()
        check_column(reward_model)
        _check_column("logging_prefix", logging_prefix, optional=True)

    @property
    def requires(self) -> tuple[str, ...]:
        """Prefix probabilities, the candidate table and the reward model's column."""
        logging = PL_COLUMNS if self.logging_prefix is None else (self.logging_prefix,)
        return ("prefix_probabilities()", "candidates", self.reward_model, *logging)

    def prepare_kit_log(self, log):
        """The kit's logs with a reward model: the reward-model plugin's cross-fitted
        (item, position) means, which ignore the items above (a wrong cascade model)."""
        return attach_kit_model(log, self.reward_model)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: the doubly robust term of each row (per row or per trajectory)."""
        log = view.log
        logging = logging_log_prefix(log, self.logging_prefix)
        target = target_log_prefix(view, self.name)
        extended = target_log_extended(view, self.name)
        unit, rank, _ = candidate_rows(log)
        slot = log.candidates["slot"].to_numpy()
        above = np.where(rank > 0, logging.rows[np.maximum(slot - 1, 0)], 0.0)
        choice = np.exp(extended - above)  # w_1:k-1 pi(c | a_1..a_k-1)
        if logging.included is not None:
            choice = np.where(logging.included[unit], choice, 0.0)
        q = candidate_predictions(log, self.reward_model, self.name)
        baseline = np.bincount(slot, weights=choice * q, minlength=log.n_rows)
        w = np.exp(target - logging.rows)
        if logging.included is not None:
            w = np.where(logging.included[log.unit_index], w, 0.0)
        residual = log.column("reward") - logged_predictions(log, self.reward_model)
        contribution = self.row_columns(view, w, logging.included)
        contribution.columns["y"] = w * residual + baseline
        used = w if logging.included is None else w[logging.included[log.unit_index]]
        contribution.tally = weight_tally(used)
        self._tally_target_mass(contribution.tally, target, extended, slot, rank)
        contribution.excluded = logging.excluded
        return contribution

    @staticmethod
    def _tally_target_mass(tally: Tally, target, extended, slot, rank) -> None:
        """Sum over the slot's candidates of pi(c | logged items above), where they are reachable.

        Its mean is 1 when every slot lists every item the target may put there.
        """
        above = np.where(rank > 0, target[np.maximum(slot - 1, 0)], 0.0)
        reachable = np.isfinite(above)
        mass = np.exp(extended[reachable] - above[reachable])
        tally.add("target_mass", float(mass.sum()))
        tally.add("target_slots", float(np.unique(slot[reachable]).size))

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Weight diagnostics, and the target's mean mass over each slot's candidates."""
        out = super().diagnose(tally)
        slots = tally.sums.get("target_slots", 0.0)
        out["target_mass"] = tally.sums["target_mass"] / slots if slots else float("nan")
        return out
