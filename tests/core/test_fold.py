"""The one fold driver: its chunker, its picklable fold state, and the probe of estimators."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from oracles import synthetic_log
from reference_estimators import IS, SNIS

import offeval.engine.accumulator as accumulator_module
from offeval.data.log import InteractionLog
from offeval.data.policy import ColumnPolicy
from offeval.engine.accumulator import Accumulator, bounded_chunks, fold
from offeval.engine.evaluation import evaluate, probe
from offeval.engine.fold import FoldState
from offeval.errors import OffevalError


def _log_of_lengths(lengths: list[int]) -> InteractionLog:
    """A log whose trajectories have the given numbers of rows."""
    trajectory = np.repeat(np.arange(len(lengths)), lengths)
    position = np.concatenate([np.arange(1, n + 1) for n in lengths])
    frame = {
        "trajectory": trajectory,
        "item": position,
        "position": position,
        "reward": np.ones(trajectory.size),
        "propensity": np.full(trajectory.size, 0.5),
    }
    return InteractionLog.from_frame(pd.DataFrame(frame))


@pytest.mark.parametrize("size", [1, 3, 4, 7, 50])
def test_a_fixed_size_cuts_at_the_first_trajectory_start_past_each_multiple(size):
    log = _log_of_lengths([3, 1, 5, 2, 2, 4, 1, 1, 6])  # starts 0 3 4 9 11 13 17 18 19; 25 rows
    starts = [0, 3, 4, 9, 11, 13, 17, 18, 19]
    expected = sorted({next(s for s in starts if s >= m) for m in range(0, 20, size)})
    cut = [c.n_rows for c in log.chunks(size)]
    assert np.cumsum([0, *cut])[:-1].tolist() == expected


def test_chunks_of_a_share_of_rows_start_at_its_first_row():
    log = _log_of_lengths([3, 1, 5, 2, 2, 4, 1, 1, 6])
    cut = [(c.n_rows, c.n_units) for c in log.chunks(5, rows=(4, 19))]
    assert cut == [(5, 1), (8, 3), (2, 2)]  # rows 4-8, 9-16, 17-18: cuts past 4 + 5k


def test_chunks_start_small_then_keep_the_unit_block_within_its_cells(bandit, monkeypatch):
    log, target, _ = bandit
    monkeypatch.setattr(accumulator_module, "BLOCK_CELLS", 4_000)
    acc = Accumulator([target], [IS(), SNIS()])
    units = []
    for chunk in bounded_chunks(log, acc, 250_000):
        units.append(chunk.n_units)
        acc.add(chunk, new_units=True)
    assert units[0] == accumulator_module.FIRST_CHUNK_ROWS // 2  # two rows per trajectory
    assert max(units[1:]) * len(acc.keys) <= 4_000 and sum(units) == log.n_units


def test_the_fold_state_pickles_and_merges_like_one_pass(bandit):
    log, target, _ = bandit
    parts = [fold(Accumulator([target], [IS(), SNIS()]), [c]).state for c in log.chunks(9_000)]
    travelled = [pickle.loads(pickle.dumps(state)) for state in parts]
    merged = travelled[0]
    for state in travelled[1:]:
        merged = merged.merge(state)
    one = evaluate(log, [target], [IS(), SNIS()], progress=False)
    got = Accumulator([target], [IS(), SNIS()]).with_state(merged).result()
    for estimator in ("is", "snis"):
        a, b = got.estimate("target", estimator), one.estimate("target", estimator)
        assert a.value == pytest.approx(b.value, rel=1e-12)
        assert a.se == pytest.approx(b.se, rel=1e-9)
        assert a.n_units == b.n_units == log.n_units
    assert FoldState().merge(merged) is merged and merged.merge(FoldState()) is merged


def test_the_driver_tells_of_every_chunk_and_a_chunk_gives_its_block(bandit):
    log, target, _ = bandit
    rows = []
    acc = fold(Accumulator([target], [IS()]), log.chunks(8_000), on_rows=rows.append)
    assert len(rows) == 5 and rows == [chunk.n_rows for chunk in log.chunks(8_000)]
    by_chunk = Accumulator([target], [IS()])
    seen = [(chunk.n_units, by_chunk.fold(chunk)) for chunk in log.chunks(8_000)]
    assert all(block.shape == (units, len(acc.keys)) for units, block in seen)
    total = sum(block.sum(axis=0) for _, block in seen)
    np.testing.assert_allclose(total / log.n_units, acc.moments.mean, rtol=1e-12)
    with pytest.raises(OffevalError, match="expected InteractionLog chunks, got str"):
        fold(Accumulator([target], [IS()]), ["not a log"])


class NeedsColumn(IS):
    """IS that reads a column the log may not have."""

    name = "needs_column"

    def contribute(self, view):
        view.log.column("absent")
        return super().contribute(view)


def test_the_probe_names_what_stops_each_estimator_on_a_small_chunk(bandit):
    log, target, _ = bandit
    errors = probe(log, [target], [IS(), NeedsColumn(), SNIS()])
    assert errors[0] is None and errors[2] is None
    assert isinstance(errors[1], OffevalError) and "absent" in str(errors[1])
    with pytest.raises(OffevalError, match="nope"):  # a policy's mistake is its own
        probe(log, [ColumnPolicy("nope")], [IS()])


def test_a_wrong_covariances_choice_is_refused_with_a_suggestion(bandit):
    log, target, _ = bandit
    with pytest.raises(OffevalError, match="covariances must be one of .*, got 'al'.*all"):
        Accumulator([target], [IS()], covariances="al")


def test_a_log_of_synthetic_trajectories_is_probed_on_its_first_rows_only():
    log, target, _ = synthetic_log(50_000, seed=1)
    seen = []

    class Counts(IS):
        name = "counts"

        def contribute(self, view):
            seen.append(view.log.n_rows)
            return super().contribute(view)

    assert probe(log, [target], [Counts()], rows=500) == [None]
    assert seen == [500]


@pytest.mark.parametrize("rows", [0, -3, 2.5, True])
def test_the_probe_refuses_a_number_of_rows_that_is_not_a_whole_number_above_zero(bandit, rows):
    log, target, _ = bandit
    with pytest.raises(OffevalError, match=r"^rows must be a whole number >= 1, got "):
        probe(log, [target], [IS()], rows=rows)
