"""Betting intervals on RIPS's heavy-tailed prefix weights, with the declaration proposed for it
(its weights and weighted rows as columns, ``interval = "betting"``): on the simulator they
cover where normal intervals do not, and the kit passes with no expected failure."""

from __future__ import annotations

import math

import numpy as np

from offeval import evaluate
from offeval.testing import check_chunking_invariance, check_unbiased, kit_setup, known_failures
from offeval_slates import RIPS


class BettingRIPS(RIPS):
    """RIPS declaring the columns betting intervals read, and betting intervals."""

    interval = "betting"
    expected_failed_checks: dict = {}

    @property
    def betting_columns(self):
        """r w, w and the weighted rows per row; the value divides by rows or trajectories."""
        if self.self_normalized:
            return None
        divisor = "rows" if self.per == "impression" else "units"
        return {"rewards": "y", "weights": "w", "rows": "weighted_rows", "divisor": divisor}

    def contribute(self, view):
        """RIPS's columns, its weights and the rows they weigh (trajectories it uses)."""
        contribution = super().contribute(view)
        w, included, _ = self.weights(view)
        rows = included[view.log.unit_index].astype(float)
        contribution.columns.update(w=w, weighted_rows=rows)
        return contribution


def test_betting_intervals_cover_the_truth_where_normal_ones_do_not():
    """100 independent logs of 500 trajectories of cascade users: betting intervals cover
    at least 95% of the time less three binomial standard errors (they are conservative);
    normal ones cover about 55% (the prefix weights' effective sample size is below 1% of
    the rows), far below."""
    estimator = BettingRIPS()
    env, log, (policy, _) = kit_setup(estimator, 50_000, seed=11)
    truth = env.true_value(policy, "reward_per_impression")
    bounds = np.r_[log.unit_starts, log.n_rows]
    logs = 100
    betting, normal = [], []
    for r in range(logs):
        part = log.slice_rows(int(bounds[r * 500]), int(bounds[(r + 1) * 500]))
        for method, covered in (("betting", betting), ("normal", normal)):
            est = evaluate(part, [policy], [estimator], interval=method, progress=False)
            e = est.estimate(policy.name)
            assert e.interval_method == method
            covered.append(e.ci_low <= truth <= e.ci_high)
    se = math.sqrt(0.95 * 0.05 / logs)
    assert np.mean(betting) >= 0.95 - 3 * se
    assert np.mean(normal) <= 0.80


def test_rips_declaring_betting_passes_the_kits_coverage_check_without_expected_failures():
    """The check RIPS declares a known failure with normal intervals (the other checks do
    not read intervals, but for invariance to chunking, run here too)."""
    per_row, per_trajectory = BettingRIPS(), BettingRIPS(per="trajectory")
    assert known_failures(per_row) == known_failures(per_trajectory) == {}
    for estimator in (per_row, per_trajectory):
        check_unbiased(estimator)
        check_chunking_invariance(estimator)
