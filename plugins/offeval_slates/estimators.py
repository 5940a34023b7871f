"""Slate and ranking estimators: IIPS, RIPS and the pseudo-inverse estimator.

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
  and its expectation is additive over slots. Weight q_pi' Gamma_mu^+ 1_s on
  the total.
- Cascade-DR (:mod:`offeval_slates.cascade_dr`): RIPS with a reward model
  as control variate, unbiased where RIPS is, whatever the model.

Each targets the reward per impression (log row; ``per="impression"``, as
the importance-sampling family) or per trajectory (``per="trajectory"``); the unit is the
trajectory. ``self_normalized=True`` divides by the weights' own means,
position by position (obp's SNIIPS, SNRIPS): consistent, not unbiased.

Where the log has a candidate table with the logger's propensities, each
estimator checks support (:mod:`offeval_slates.support`): the target's mass
on candidates the logger never shows at a slot. ``support="fail"`` (the
default) refuses such a log naming the trajectories, ``"warn"`` warns,
``"drop"`` excludes them; diagnostics ``support_violations`` and
``unsupported_mass_per_slot``, with the effective sample size as a share of
the weights (``ess_share``) and the largest weight.
"""

from __future__ import annotations

import numpy as np

from offeval import Contribution, PolicyView
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_slates.base import (
    BettingIntervals,
    SlateEstimator,
    both,
    check_column_name,
    weight_tally,
)
from offeval_slates.combine import scaled_ratio
from offeval_slates.layout import unit_sum
from offeval_slates.logger import PL_COLUMNS, logging_log_prefix
from offeval_slates.prefixes import prefix_mass, target_log_prefix
from offeval_slates.pseudo_inverse import check_logging_ranker, exact_weights
from offeval_slates.support import apply_support, marginal_mass


class IIPS(BettingIntervals, SlateEstimator):
    """Independent IPS (Li et al. 2018; obp's SlateIndependentIPS, and its SelfNormalized form
    with ``self_normalized=True``): sum_k r_k pi_k / mu_k, per impression by default (obp: per
    slate, ``per="trajectory"``); a target putting mass where the candidate table says the
    logger never shows is refused (``support="fail"``; obp does not check).

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

    def __init__(
        self, self_normalized: bool = False, per: str = "impression", support: str = "fail"
    ):
        self.self_normalized = self_normalized
        self.per = per
        self.support = support
        self._check()

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r pi/mu per row (per position when normalised)."""
        w = view.weights()
        tally = Tally()
        check = apply_support(view, marginal_mass(view), self.support, tally)
        if check.included is not None:
            w = np.where(check.included[view.log.unit_index], w, 0.0)
            contribution = self.row_columns(view, w, check.included)
            w = w[check.included[view.log.unit_index]]
        else:
            contribution = self.row_columns(view, w, None)
        contribution.tally = weight_tally(w, tally)
        contribution.excluded = check.excluded
        return contribution


class RIPS(BettingIntervals, SlateEstimator):
    """Reward-interaction IPS (McInerney et al. 2020; obp's SlateRewardInteractionIPS, and its
    SelfNormalized form with ``self_normalized=True``): sum_k r_k pi(a_1..a_k) / mu(a_1..a_k),
    per impression by default (obp: per slate, ``per="trajectory"``); targets and loggers may be
    two-stage rankers; unsupported target mass is refused (``support="fail"``; obp does not check).

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
    kit_environment = "default"  # the simulator (plugin simulation): its rankers and users

    def __init__(
        self,
        self_normalized: bool = False,
        per: str = "impression",
        logging_prefix: str | None = None,
        support: str = "fail",
    ):
        self.self_normalized = self_normalized
        self.per = per
        self.logging_prefix = logging_prefix
        self.support = support
        self._check()
        check_column_name("logging_prefix", logging_prefix, optional=True)

    @property
    def interval(self) -> str:
        """Betting intervals unless self-normalised: the prefix weights are heavy-tailed
        (effective sample size below 1% of the rows at positions 2-4), and normal intervals
        cover the truth 55% of the time on 500-trajectory logs and 65% on 50,000, betting ones
        98-99% (the book's intervals chapter); ``evaluate(..., interval={"rips": "normal"})``
        asks for normal ones."""
        return "normal" if self.self_normalized else "betting"

    #: RIPS models cascading clicks: its betting intervals assume rewards in [0, 1] unless
    #: the user declares other bounds (``reward_range=``, ``--reward-range``); a log with a
    #: reward outside them is refused, naming both options.
    reward_range = (0.0, 1.0)

    @property
    def requires(self) -> tuple[str, ...]:
        """The target's prefix probabilities and the logger's columns."""
        logging = PL_COLUMNS if self.logging_prefix is None else (self.logging_prefix,)
        return ("prefix_probabilities()", *logging)

    def weights(
        self, view: PolicyView, tally: Tally | None = None
    ) -> tuple[np.ndarray, np.ndarray | None, dict]:
        """pi(a_1..a_k) / mu(a_1..a_k) per row (0 on excluded trajectories), and exclusions.

        The support check's counts go into ``tally`` when given.
        """
        logging = logging_log_prefix(view.log, self.logging_prefix)
        tally = Tally() if tally is None else tally
        check = apply_support(view, prefix_mass(view, logging, self.name), self.support, tally)
        included = both(logging.included, check.included)
        w = np.exp(target_log_prefix(view, self.name) - logging.rows)
        if included is not None:
            w = np.where(included[view.log.unit_index], w, 0.0)
        return w, included, {**logging.excluded, **check.excluded}

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r times the prefix weight per row (per position when normalised)."""
        tally = Tally()
        w, included, excluded = self.weights(view, tally)
        contribution = self.row_columns(view, w, included)
        used = w if included is None else w[included[view.log.unit_index]]
        contribution.tally = weight_tally(used, tally)
        contribution.excluded = excluded
        return contribution


class PseudoInverse(SlateEstimator):
    """The pseudo-inverse estimator (Swaminathan et al. 2017) for additive slate rewards: the
    trajectory's total reward times q_pi' Gamma_mu^+ 1_s, exact given the logging ranker
    (``logging``, two-stage included), per impression by default; obp has no PI. Unsupported
    target mass is refused (``support="fail"``).

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
    candidate at every position from the log's candidate table. A two-stage
    logging ranker's slate probabilities sum over its generator's candidate
    sets, exactly (:func:`offeval.data.ranking.two_stage_slates`; refused
    beyond its limit on the number of sets).
    """

    name = "pi"
    assumptions = {"user_model": "position_based"}
    kit_environment = "default"  # the simulator (plugin simulation): its rankers and users
    #: One weight G per trajectory: its effective sample size counts trajectories.
    tags = {**SlateEstimator.tags, "ess_unit": "trajectories"}

    def __init__(
        self,
        self_normalized: bool = False,
        per: str = "impression",
        logging=None,
        support: str = "fail",
    ):
        self.self_normalized = self_normalized
        self.per = per
        self.logging = logging
        self.support = support
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
        tally = Tally()
        check = apply_support(view, marginal_mass(view), self.support, tally)
        if check.included is not None:
            units = {key: np.where(check.included, values, 0.0) for key, values in units.items()}
            g = g[check.included]
        return Contribution(
            unit_columns=units, tally=weight_tally(g, tally), excluded=check.excluded
        )

    def combine(self, stats) -> Linearisation:
        """Mean of R G per trajectory or per row; wPI divides by the mean of G."""
        if self.self_normalized:
            rows = "units" if self.per == "trajectory" else "rows"
            return scaled_ratio(stats, "y", "w", "units", rows)
        return ratio_of_means(stats, "y", "units" if self.per == "trajectory" else "rows")
