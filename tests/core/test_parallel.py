"""Evaluations shared among forked workers: the one-process numbers, the one-process errors."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import pytest
from oracles import synthetic_log
from parallel_checks import workers_give_the_one_process_estimates
from reference_estimators import IS, SNIS

from offeval import (
    ColumnError,
    Contribution,
    LoggingPolicy,
    OffevalError,
    OffevalWarning,
    evaluate,
)
from offeval.engine import evaluation as evaluation_module
from offeval.engine import parallel as parallel_module
from offeval.engine.estimator import BaseEstimator, Shared
from offeval.engine.parallel import fold_in_workers, fork_available, shares
from offeval.stats import ratio_of_means

pytestmark = pytest.mark.skipif(not fork_available(), reason="workers are forked processes")


@pytest.fixture(scope="module")
def setup():
    """A two-slot bandit log of 6,000 trajectories with candidates, two policies, IS and SNIS."""
    log, target, _ = synthetic_log(6_000, seed=4)
    return log, [target, LoggingPolicy()], [IS(), SNIS()]


@pytest.mark.parametrize("workers", [2, 3])
def test_workers_give_the_one_process_estimates(setup, workers, monkeypatch):
    workers_give_the_one_process_estimates(monkeypatch, *setup, workers)


def test_shares_cut_at_trajectory_boundaries_and_cover_every_row(setup):
    log = setup[0]
    parts = shares(log, 3)
    assert parts[0][0] == 0 and parts[-1][1] == log.n_rows
    assert all(a[1] == b[0] for a, b in zip(parts[:-1], parts[1:], strict=True))
    assert all(lo in set(log.unit_starts) for lo, _ in parts)
    assert max(hi - lo for lo, hi in parts) < 0.4 * log.n_rows


class FailsLate(BaseEstimator):
    """Raises a ColumnError naming a row of the log's second half."""

    name = "fails_late"

    def contribute(self, view):
        reward = view.log.column("reward")
        late = view.log.source_rows >= 10_000
        if late.any():
            raise ColumnError("reward", "refused here", positions=np.flatnonzero(late)[:1])
        return Contribution({"x": reward, "n": view.log.ones})

    def combine(self, stats):
        return ratio_of_means(stats, "x", "n")


def test_a_failing_worker_gives_the_one_process_error(setup, monkeypatch):
    log, policies, _ = setup
    with pytest.raises(ColumnError) as one:
        evaluate(log, policies, [FailsLate()])
    merged = []

    def recorded(*args):
        merged.append(fold_in_workers(*args))
        return merged[-1]

    monkeypatch.setattr(evaluation_module, "fold_in_workers", recorded)
    with pytest.raises(ColumnError) as many:
        evaluate(log, policies, [FailsLate()], workers=2)
    assert merged == [None]  # the workers ran, one failed, and the error came from here
    assert str(many.value) == str(one.value)


def test_a_result_that_cannot_travel_back_is_computed_here(setup):
    log, policies, _ = setup

    def local_column(view):  # a local function: its Shared key cannot be pickled
        return view.log.column("reward")

    class UsesLocal(BaseEstimator):
        name = "uses_local"

        def contribute(self, view):
            return Contribution({"x": Shared(local_column), "n": view.log.ones})

        def combine(self, stats):
            return ratio_of_means(stats, "x", "n")

    value = evaluate(log, policies, [UsesLocal()], workers=2).estimate(policies[0].name).value
    assert value == pytest.approx(log.column("reward").mean(), rel=1e-12)


@pytest.mark.parametrize("workers", [0, 1.5, True, "2"])
def test_workers_must_be_a_positive_whole_number(setup, workers):
    log, policies, _ = setup
    with pytest.raises(OffevalError, match="workers must be a whole number >= 1"):
        evaluate(log, policies, [IS()], workers=workers)


@pytest.mark.filterwarnings("ignore::offeval.OffevalWarning")  # 3 trajectories: wild weights
def test_a_log_too_small_to_share_is_evaluated_here(setup, monkeypatch):
    log, policies, _ = setup
    tiny = log.slice_rows(0, int(log.unit_starts[3]))
    forked = lambda *a, **k: pytest.fail("forked")  # noqa: E731
    monkeypatch.setattr(parallel_module, "ProcessPoolExecutor", forked)
    one = evaluate(tiny, policies, [IS()]).to_frame()
    with pytest.warns(OffevalWarning, match="workers=8 capped at 1"):
        many = evaluate(tiny, policies, [IS()], workers=8).to_frame()
    np.testing.assert_allclose(many["value"], one["value"], rtol=1e-12)


def test_evaluations_in_threads_each_get_their_own_log():
    logs, targets, _ = zip(*(synthetic_log(3_000, seed=s) for s in (21, 22)), strict=True)
    policies = [targets[0], LoggingPolicy()]
    alone = [evaluate(log, policies, [SNIS()]).to_frame()["value"].to_numpy() for log in logs]
    assert not np.allclose(alone[0], alone[1])  # a thread given the other's log would show
    for _ in range(3):
        with ThreadPoolExecutor(2) as threads:
            together = list(
                threads.map(lambda log: evaluate(log, policies, [SNIS()], workers=2), logs)
            )
        for got, want in zip(together, alone, strict=True):
            np.testing.assert_allclose(got.to_frame()["value"], want, rtol=1e-12)


def _doubled(scale, view):
    return scale * view.log.column("reward")


DOUBLED = partial(_doubled, 2.0)  # one object: the same key on every chunk of one process


class KeyedByObjects(BaseEstimator):
    """Columns keyed by a partial and a bound method: equal within a process, not across."""

    name = "keyed_by_objects"

    def column(self, view):
        return view.log.column("reward")

    def contribute(self, view):
        columns = {"x": Shared(DOUBLED), "y": Shared(self.column)}
        return Contribution({**columns, "n": view.log.ones})

    def combine(self, stats):
        return ratio_of_means(stats, "x", "n")


def test_columns_keyed_by_objects_that_do_not_travel_are_summed_here(setup):
    log, policies, _ = setup
    one = evaluate(log, policies, [KeyedByObjects()], chunk_rows=2_000).to_frame()["value"]
    many = evaluate(log, policies, [KeyedByObjects()], chunk_rows=2_000, workers=2)
    np.testing.assert_allclose(many.to_frame()["value"], one, rtol=1e-12)
    np.testing.assert_allclose(one, 2 * log.column("reward").mean(), rtol=1e-12)


class MisbehavesInAWorker(FailsLate):
    """Sums the rewards, after ``misbehave()`` when it runs in a worker (not in this process)."""

    parent = os.getpid()

    def misbehave(self):
        raise NotImplementedError

    def contribute(self, view):
        if os.getpid() != self.parent:
            self.misbehave()
        return Contribution({"x": view.log.column("reward"), "n": view.log.ones})


class DiesInAWorker(MisbehavesInAWorker):
    """Kills its own process when it runs in a worker (as the out-of-memory killer would)."""

    name = "dies_in_a_worker"

    def misbehave(self):
        os._exit(9)


def test_a_worker_that_dies_does_not_hang_the_evaluation(setup):
    log, policies, _ = setup
    value = evaluate(log, policies, [DiesInAWorker()], workers=2).estimate(policies[0].name).value
    assert value == pytest.approx(log.column("reward").mean(), rel=1e-12)


class WarnsOnce(FailsLate):
    """Warns on every chunk it sees."""

    name = "warns_once"

    def contribute(self, view):
        warnings.warn("a word from the estimator", OffevalWarning, stacklevel=1)
        return Contribution({"x": view.log.column("reward"), "n": view.log.ones})


def test_warnings_in_workers_reach_the_caller_once(setup):
    log, policies, _ = setup
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate(log, policies, [WarnsOnce()], chunk_rows=2_000, workers=2)
    assert [str(w.message) for w in caught] == ["a word from the estimator"]


def test_no_workers_where_forking_is_not_safe(monkeypatch):
    monkeypatch.setattr(parallel_module.multiprocessing, "current_process", lambda: Daemon())
    assert not fork_available()


class Daemon:
    """A process that may not have children (a worker of a multiprocessing pool)."""

    daemon = True


def test_a_stream_cannot_be_shared_among_workers(setup):
    log, policies, _ = setup
    cut = int(log.unit_starts[100])
    parts = [log.slice_rows(0, cut), log.slice_rows(cut, log.n_rows)]
    with pytest.raises(OffevalError, match="an iterable of logs .* give workers=1"):
        evaluate(parts, policies, [IS()], workers=2)


def test_without_fork_one_process_evaluates_and_says_so(setup, monkeypatch):
    log, policies, _ = setup
    monkeypatch.setattr(evaluation_module, "fork_available", lambda: False)
    with pytest.warns(OffevalWarning, match="evaluating in one process"):
        many = evaluate(log, policies, [IS()], workers=2).to_frame()
    np.testing.assert_allclose(many["value"], evaluate(log, policies, [IS()]).to_frame()["value"])


class NoPool:
    """Stands for ProcessPoolExecutor: records how many processes were asked, forks none."""

    asked: list[int] = []

    def __init__(self, max_workers, **kwargs):
        NoPool.asked.append(max_workers)
        raise OSError("no fork in this test")


@pytest.mark.parametrize(
    ("cores", "workers", "expected", "why"),
    [
        (2, 1_000, 2, "the 2 cores this process may use"),
        (64, 64, 6, "one per 1,000 of the log's 6,000 trajectories"),
    ],
)
def test_workers_are_capped_at_the_cores_and_the_trajectories(
    setup, monkeypatch, cores, workers, expected, why
):
    log, policies, _ = setup
    monkeypatch.setattr(parallel_module, "available_cores", lambda: cores)
    monkeypatch.setattr(parallel_module, "ProcessPoolExecutor", NoPool)
    NoPool.asked = []
    with pytest.warns(OffevalWarning, match=f"workers={workers} capped at {expected}: {why}"):
        many = evaluate(log, policies, [IS()], workers=workers).to_frame()
    assert NoPool.asked == [expected]
    one = evaluate(log, policies, [IS()]).to_frame()
    np.testing.assert_allclose(many["value"], one["value"], rtol=1e-12)


class StopsInAWorker(MisbehavesInAWorker):
    """Stops its own process (SIGSTOP) in a worker: a hung worker, not a dead one."""

    name = "stops_in_a_worker"

    def misbehave(self):
        os.kill(os.getpid(), signal.SIGSTOP)


@pytest.fixture()
def hung_workers_killed():
    """If the evaluation hangs after all, fail in 30 s and kill the stopped workers."""

    def give_up(*args):
        for child in multiprocessing.active_children():
            child.kill()
        raise TimeoutError("the evaluation hung on a stopped worker")

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.slow
def test_a_stopped_worker_is_detected_and_the_evaluation_runs_here(
    setup, monkeypatch, hung_workers_killed
):
    log, policies, _ = setup
    monkeypatch.setattr(parallel_module, "STALL_SECONDS", 2.0)  # the parent polls every 0.2 s
    with pytest.warns(OffevalWarning, match="a worker stopped responding for 2 s"):
        evaluation = evaluate(log, policies, [StopsInAWorker()], workers=2)
    value = evaluation.estimate(policies[0].name).value
    assert value == pytest.approx(log.column("reward").mean(), rel=1e-12)
    assert multiprocessing.active_children() == []  # the stopped workers were killed


@pytest.mark.slow
def test_a_worker_stopped_before_its_first_beat_is_detected_too(
    setup, monkeypatch, hung_workers_killed
):
    log, policies, _ = setup
    monkeypatch.setattr(parallel_module, "STALL_SECONDS", 2.0)
    install = parallel_module._install

    def stops_first(job):  # in each forked worker, before it takes a heartbeat slot
        os.kill(os.getpid(), signal.SIGSTOP)
        install(job)

    monkeypatch.setattr(parallel_module, "_install", stops_first)
    with pytest.warns(OffevalWarning, match="a worker stopped responding"):
        evaluation = evaluate(log, policies, [IS()], workers=2)
    value = evaluation.estimate(policies[0].name).value
    one = evaluate(log, policies, [IS()]).estimate(policies[0].name).value
    assert value == pytest.approx(one, rel=1e-12)
    assert multiprocessing.active_children() == []


def test_heartbeats_do_not_count_a_pause_of_the_whole_job_as_a_stall():
    """Ctrl-Z stops the parent with its workers: after fg, their beats are old but not hung."""
    beats = parallel_module.Heartbeats(multiprocessing.get_context("fork"), 2, now=100.0)
    beats.times[0] = beats.times[1] = 100.0
    beats.taken.value = 2
    assert not beats.stalled(now=100.2)
    # stopped for a minute with the workers; the parent looks first, before they beat again
    assert not beats.stalled(now=160.2)
    assert not beats.stalled(now=160.4)
    beats.times[0] = 160.5  # worker 0 beats again; worker 1 stays silent
    for now in np.arange(160.6, 160.2 + parallel_module.STALL_SECONDS, 0.2):
        assert not beats.stalled(now=now), now
    assert beats.stalled(now=160.2 + parallel_module.STALL_SECONDS + 0.2)


def test_heartbeats_find_a_worker_that_never_beat():
    beats = parallel_module.Heartbeats(multiprocessing.get_context("fork"), 2, now=0.0)
    beats.times[0], beats.taken.value = 0.0, 1  # one worker started, the other never did
    for now in np.arange(0.2, parallel_module.STALL_SECONDS, 0.2):
        beats.times[0] = now
        assert not beats.stalled(now=now), now
    assert beats.stalled(now=parallel_module.STALL_SECONDS + 0.2)


class SlowInAWorker(MisbehavesInAWorker):
    """Takes 20 s in a worker: long enough to be interrupted."""

    name = "slow_in_a_worker"

    def misbehave(self):
        time.sleep(20)


def test_an_interrupt_stops_the_workers_at_once(setup):
    """A notebook's interrupt reaches the parent only: the workers must not finish first."""
    log, policies, _ = setup

    def interrupt(*args):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(1)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            evaluate(log, policies, [SlowInAWorker()], workers=2)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - start < 10  # the workers' 20 s were not waited for
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"cpu.max": "150000 100000\n"}, 2),  # docker --cpus=1.5: two processes, not 64
        ({"cpu.max": "max 100000\n"}, 64),  # no quota
        ({"cpu.cfs_quota_us": "300000\n", "cpu.cfs_period_us": "100000\n"}, 3),  # cgroup v1
        ({"cpu.cfs_quota_us": "-1\n", "cpu.cfs_period_us": "100000\n"}, 64),
        ({}, 64),  # no cgroup files at all
    ],
)
def test_the_cores_are_capped_at_the_containers_cpu_quota(tmp_path, monkeypatch, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(parallel_module, "CGROUP", tmp_path)
    monkeypatch.setattr(parallel_module.os, "sched_getaffinity", lambda pid: set(range(64)))
    assert parallel_module.available_cores() == expected
