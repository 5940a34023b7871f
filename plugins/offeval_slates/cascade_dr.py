"""Cascade-DR (Kiyohara et al. 2022): RIPS with a reward model as control variate."""

from __future__ import annotations

import numpy as np

from offeval import Contribution, PolicyView
from offeval.stats import Linearisation, Tally
from offeval_rewardmodels import rewardmodel
from offeval_slates.base import SlateEstimator, both, check_column_name, weight_tally
from offeval_slates.candidates import candidate_rows
from offeval_slates.combine import by_position
from offeval_slates.layout import layout
from offeval_slates.logger import PL_COLUMNS, logging_log_prefix
from offeval_slates.prefixes import extension_weights, target_log_extended, target_log_prefix
from offeval_slates.support import apply_support, logger_zero


class CascadeDR(SlateEstimator):
    """Cascade doubly robust (Kiyohara et al. 2022; obp's SlateCascadeDoublyRobust): RIPS with a
    reward model as control variate, per impression by default (obp: per slate,
    ``per="trajectory"``); ``self_normalized=True`` is offeval's self-normalised form (obp 0.5.7
    has none); two-stage rankers allowed; unsupported target mass is refused (``support="fail"``;
    obp does not check).

    sum_k [ w_1:k (r_k - q(a_1..a_k)) + w_1:k-1 sum_c pi(c | a_1..a_k-1) q(a_1..a_k-1, c) ]
    with w_1:k = pi(a_1..a_k) / mu(a_1..a_k) (RIPS's weights) and q a reward
    model of the reward at k given the items down to k. The model enters as
    columns (the plugin API's ``rewardmodel`` convention): ``reward_model`` in the
    log holds q of the logged item at its slot, the same column in the
    candidate table q of every candidate of every slot (a slot belongs to a
    trajectory, so its predictions may depend on the logged items above it).
    The sum over c runs over the slot's candidates, with the target's choice
    at k given the logged prefix above. Unbiased wherever RIPS is, whatever
    the model (fitted on other trajectories: cross-fit it); the better the
    model, the smaller the variance. Prefix probabilities as for RIPS; the
    target's choice given a prefix needs Plackett-Luce logits or a
    deterministic ranker (two-stage ones included).

    ``self_normalized=True`` (offeval's definition: obp 0.5.7 has no
    self-normalised Cascade-DR) divides each of the two weight families by
    its own mean at each position, as obp's SNDR does for DR and its SNRIPS
    for RIPS (Swaminathan and Joachims 2015; Kallus and Uehara 2019):

        sum_k (n_k / d) [ mean(w_1:k (r_k - q_k)) / mean(w_1:k)
                          + mean(w_1:k-1 Qbar_k) / mean(w_1:k-1) ]

    with Qbar_k = sum_c pi(c | a_1..a_k-1) q(a_1..a_k-1, c), means over
    trajectories at position k, n_k the rows at k and d all rows (per
    impression) or trajectories (per trajectory). With q = 0 it is SNRIPS;
    with one position, obp's SelfNormalizedDoublyRobust. Consistent, not
    unbiased; its standard error is the delta method's on those means.
    """

    name = "cascade_dr"
    assumptions = {"user_model": "cascade"}
    kit_environment = "default"  # the simulator (plugin simulation): its rankers and users
    tags: dict = {}  # linear in the rewards and the model together, not in the rewards alone

    @property
    def expected_failed_checks(self) -> dict[str, str]:
        """Interval coverage on the kit's small logs (the self-normalised form is not checked)."""
        if self.self_normalized:
            return {}
        return {
            "check_unbiased": "RIPS's heavy-tailed prefix weights: with the kit's rough model "
            "(item-position means), normal intervals cover the truth 72% of the time on "
            "500-trajectory logs and 80% on 5,000 and 50,000 (400, 200 and 60 simulated logs: "
            "the book's intervals chapter), though the estimates average to it; betting "
            "intervals do not apply (the model's corrections make its terms negative too)"
        }

    def __init__(
        self,
        per: str = "impression",
        reward_model: str = rewardmodel.DEFAULT_COLUMN,
        logging_prefix: str | None = None,
        self_normalized: bool = False,
        support: str = "fail",
    ):
        self.self_normalized = self_normalized
        self.support = support
        self.per = per
        self.reward_model = reward_model
        self.logging_prefix = logging_prefix
        self._check()
        rewardmodel.check_column(reward_model)
        check_column_name("logging_prefix", logging_prefix, optional=True)

    @property
    def requires(self) -> tuple[str, ...]:
        """Prefix probabilities, the candidate table and the reward model's column."""
        logging = PL_COLUMNS if self.logging_prefix is None else (self.logging_prefix,)
        return ("prefix_probabilities()", "candidates", self.reward_model, *logging)

    def prepare_kit_log(self, log):
        """The kit's logs with a reward model: the plugin API's cross-fitted
        (item, position) means, which ignore the items above (a wrong cascade model)."""
        return rewardmodel.attach_kit_model(log, self.reward_model)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: the doubly robust term of each row (per row or per trajectory)."""
        log = view.log
        logging = logging_log_prefix(log, self.logging_prefix)
        target = target_log_prefix(view, self.name)
        extended = target_log_extended(view, self.name)
        unit, rank, _ = candidate_rows(log)
        slot = log.candidates["slot"].to_numpy()
        choice = extension_weights(view, logging, self.name)  # w_1:k-1 pi(c | a_1..a_k-1)
        tally = Tally()
        zero = logger_zero(view)
        mass = None if zero is None else np.where(zero, choice, 0.0)
        check = apply_support(view, mass, self.support, tally)
        included = both(logging.included, check.included)
        if check.included is not None:
            choice = np.where(check.included[unit], choice, 0.0)
        q = rewardmodel.candidate_predictions(log, self.reward_model, self.name)
        baseline = np.bincount(slot, weights=choice * q, minlength=log.n_rows)
        w = np.exp(target - logging.rows)
        if included is not None:
            w = np.where(included[log.unit_index], w, 0.0)
        residual = log.column("reward") - rewardmodel.logged_predictions(log, self.reward_model)
        if self.self_normalized:
            above_w = np.where(layout(log).rank > 0, np.r_[1.0, w[:-1]], 1.0)
            if included is not None:
                above_w = np.where(included[log.unit_index], above_w, 0.0)
            contribution = self._normalised(view, w * residual, w, baseline, above_w, included)
        else:
            contribution = self.row_columns(view, w, included)
            contribution.columns["y"] = w * residual + baseline
        used = w if included is None else w[included[log.unit_index]]
        contribution.tally = weight_tally(used, tally)
        self._tally_target_mass(contribution.tally, target, extended, slot, rank)
        contribution.excluded = {**logging.excluded, **check.excluded}
        return contribution

    def _normalised(self, view, y, w, baseline, above_w, included) -> Contribution:
        """Unit columns per position: both terms and both weight families, rows, units."""
        log = view.log
        lay = layout(log)
        used = np.ones(log.n_units) if included is None else included * 1.0
        parts = {"y": y, "w": w, "b": baseline, "v": above_w, "n": used[lay.unit]}
        units = {"units": used} if self.per == "trajectory" else {}
        for part, values in parts.items():
            matrix = lay.padded(values, 0.0)
            for k in range(lay.longest):
                units[part, k + 1] = matrix[:, k]
        return Contribution(unit_columns=units)

    def combine(self, stats) -> Linearisation:
        """The mean doubly robust term; normalised position by position when asked."""
        if self.self_normalized:
            per = "units" if self.per == "trajectory" else None
            return by_position(stats, per, (("y", "w"), ("b", "v")))
        return super().combine(stats)

    @staticmethod
    def _tally_target_mass(tally: Tally, target, extended, slot, rank) -> None:
        """Sum over the slot's candidates of pi(c | logged items above), where they are reachable.

        Its mean is 1 when every slot lists every item the target may put there.
        """
        above = np.where(rank > 0, target[np.maximum(slot - 1, 0)], 0.0)
        reachable = np.isfinite(above)
        mass = np.exp(extended[reachable] - above[reachable])
        tally.add("target_mass", float(mass.sum()))
        counted = slot[reachable]  # the candidate table is sorted by slot
        tally.add("target_slots", float(np.count_nonzero(np.diff(counted)) + (counted.size > 0)))

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Weight diagnostics, and the target's mean mass over each slot's candidates."""
        out = super().diagnose(tally)
        slots = tally.sums.get("target_slots", 0.0)
        out["target_mass"] = tally.sums["target_mass"] / slots if slots else float("nan")
        return out
