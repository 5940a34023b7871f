"""A table of units without rows (per-user values, say) through the engine: the same
values, standard errors and paired comparisons as computed by hand, whatever the chunking."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats

from offeval import BaseEstimator, Contribution, UnitTable, evaluate
from offeval.stats import ratio_of_means


class System:
    """A system measured per unit (a run's per-user values)."""

    def __init__(self, name: str, values: np.ndarray):
        self.name, self.values = name, values


class MeanValue(BaseEstimator):
    """The mean of a system's per-unit values."""

    name = "mean_value"

    def contribute(self, view) -> Contribution:
        values = view.policy.values[view.log.positions]
        return Contribution(unit_columns={"v": values, "n": np.ones(values.size)})

    def combine(self, stats):
        return ratio_of_means(stats, "v", "n")


@pytest.fixture
def systems():
    rng = np.random.default_rng(7)
    a = rng.gamma(2.0, 0.3, 501)
    return [System("a", a), System("b", a + rng.normal(0.05, 0.2, a.size))]


@pytest.mark.parametrize("chunk_rows", [7, 100, 250_000])
def test_means_and_standard_errors_are_those_computed_by_hand(systems, chunk_rows):
    evaluation = evaluate(
        UnitTable(501), systems, [MeanValue()], chunk_rows=chunk_rows, progress=False
    )
    for system in systems:
        estimate = evaluation.estimate(system.name, "mean_value")
        v = system.values
        assert estimate.value == pytest.approx(v.mean(), rel=1e-12)
        assert estimate.se == pytest.approx(v.std(ddof=1) / np.sqrt(v.size), rel=1e-9)
        assert estimate.n_units == v.size
    difference = systems[1].values - systems[0].values
    t = scipy_stats.ttest_rel(systems[1].values, systems[0].values)
    paired = evaluation.difference("b", "a", "mean_value")
    assert paired.value == pytest.approx(difference.mean(), rel=1e-9)
    assert paired.se == pytest.approx(difference.mean() / t.statistic, rel=1e-9)


def test_workers_share_a_unit_table_as_they_share_a_log():
    rng = np.random.default_rng(3)
    systems = [System(name, rng.normal(0.5, 0.2, 2_500)) for name in "ab"]
    one = evaluate(UnitTable(2_500), systems, [MeanValue()], progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # two workers run: none is capped
        two = evaluate(UnitTable(2_500), systems, [MeanValue()], progress=False, workers=2)
    for system in systems:
        first, second = (e.estimate(system.name, "mean_value") for e in (one, two))
        assert second.value == pytest.approx(first.value, rel=1e-12)
        assert second.se == pytest.approx(first.se, rel=1e-9)


def test_chunks_are_consecutive_runs_of_units():
    chunks = list(UnitTable(10).chunks(4))
    assert [c.positions.tolist() for c in chunks] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [c.unit_starts.tolist() for c in chunks][2] == [0, 1]
    assert [c.positions.tolist() for c in UnitTable(10).chunks(3, rows=(2, 7))] == [
        [2, 3, 4],
        [5, 6],
    ]
