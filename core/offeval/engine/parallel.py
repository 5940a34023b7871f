"""One evaluation on several processes: each folds a share of the trajectories; the results merge.

Forked workers read the log, policies and estimators from the parent's memory and send back
their :class:`~offeval.engine.fold.FoldState`. Where forking is unsafe (Windows, macOS, a
daemonic worker) or a worker fails, dies, hangs (no heartbeat for :data:`STALL_SECONDS`, as
when one call holds the GIL that long) or returns columns that cannot be matched, the pass
runs in this process, raising any error as it would. Each process runs with one BLAS thread
(:func:`one_blas_thread`): OpenBLAS' threads slowed the demo's evaluation by 40% on 2 cores
and by 4x when two workers each started their own.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor
from concurrent.futures import wait as wait_for
from contextlib import AbstractContextManager
from functools import cache, reduce
from pathlib import Path

import numpy as np

from offeval.data.log import InteractionLog
from offeval.engine.accumulator import fold
from offeval.engine.fold import FoldState
from offeval.errors import OffevalWarning

#: In a worker: what it folds (chunker, accumulator factory, shared row counter).
_JOB: tuple | None = None
#: Fewest trajectories a worker's share should hold to be worth a process.
UNITS_PER_WORKER = 1_000
#: Seconds without a heartbeat after which a worker is taken as hung.
STALL_SECONDS = 30.0


@cache
def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # finds the loaded BLAS libraries once


def one_blas_thread() -> AbstractContextManager:
    """Within the block, BLAS libraries use one thread (restored after)."""
    return _controller().limit(limits=1, user_api="blas")


#: Where Linux shows this process's control group (its CPU quota).
CGROUP = Path("/sys/fs/cgroup")


def available_cores() -> int:
    """The cores this process may run on: its CPU affinity, capped at its container's
    CPU quota (cgroup ``cpu.max``, or v1's ``cpu.cfs_quota_us``), rounded up."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        if (CGROUP / "cpu.max").is_file():
            quota, period = (CGROUP / "cpu.max").read_text().split()[:2]
        else:
            quota = (CGROUP / "cpu.cfs_quota_us").read_text().strip()
            period = (CGROUP / "cpu.cfs_period_us").read_text().strip()
        share = float(quota) / float(period) if quota != "max" and float(quota) > 0 else None
    except (OSError, ValueError):
        share = None  # unlimited
    return max(1, min(cores or 1, math.ceil(share) if share else cores or 1))


def fork_available() -> bool:
    """Whether worker processes can be forked here, safely (they share the parent's memory)."""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and sys.platform != "darwin"
        and not multiprocessing.current_process().daemon
    )


def worthwhile_workers(n_units: int, most: int) -> int:
    """As many workers as are worth a process for a log of ``n_units`` trajectories, at most
    ``most`` (one per :data:`UNITS_PER_WORKER`, within the usable cores; 1 without fork), so
    that :func:`usable_workers` never caps them with a warning."""
    if not fork_available():
        return 1
    return max(1, min(available_cores(), most, n_units // UNITS_PER_WORKER))


def usable_workers(requested: int, n_units: int) -> int:
    """``requested`` capped at the usable cores and at one per :data:`UNITS_PER_WORKER`
    trajectories (at least one), with an OffevalWarning when it is capped."""
    cores, worth = available_cores(), max(1, n_units // UNITS_PER_WORKER)
    workers = max(1, min(requested, cores, worth))
    if workers < requested:
        why = (
            f"the {cores} cores this process may use"
            if cores <= worth
            else f"one per {UNITS_PER_WORKER:,} of the log's {n_units:,} trajectories"
        )
        warnings.warn(
            f"workers={requested} capped at {workers}: {why}", OffevalWarning, stacklevel=5
        )
    return workers


def shares(log: InteractionLog, n: int) -> list[tuple[int, int]]:
    """``n`` contiguous row ranges of about equal size, cut at trajectory boundaries."""
    cuts = np.searchsorted(log.unit_starts, np.linspace(0, log.n_rows, n + 1)[1:-1])
    bounds = [0, *(int(log.unit_starts[c]) for c in cuts if c < log.n_units), log.n_rows]
    return [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo]


def fold_in_workers(
    log: InteractionLog,
    new_accumulator: Callable,
    chunker: Callable[[tuple[int, int], object], Iterator[InteractionLog]],
    workers: int,
    on_rows: Callable[[int], None],
) -> FoldState | None:
    """The merged fold state of ``workers`` forked processes (capped by :func:`usable_workers`),
    or None to fold here instead: ``new_accumulator()`` builds an empty accumulator,
    ``chunker((lo, hi), acc)`` yields the chunks of the log's rows lo:hi, ``on_rows(n)`` is
    told of rows folded."""
    workers = usable_workers(workers, log.n_units)
    if workers < 2:
        return None
    context = multiprocessing.get_context("fork")
    parts_of_log = shares(log, workers)
    counter = context.Value("q", 0)
    beats = Heartbeats(context, len(parts_of_log))
    job = (chunker, new_accumulator, counter, beats)  # forked, not pickled: any callables
    try:
        pool = ProcessPoolExecutor(
            len(parts_of_log), mp_context=context, initializer=_install, initargs=(job,)
        )
    except (OSError, ValueError):  # no process to be had: fold here
        return None
    with pool:
        try:
            futures = [pool.submit(_fold_share, share) for share in parts_of_log]
        except (OSError, RuntimeError):
            return None
        try:  # until the workers are done, report their rows, or stop them if one stalls
            done = 0
            while not all(f.done() for f in futures):
                wait_for(futures, timeout=0.2, return_when=FIRST_EXCEPTION)
                folded = counter.value
                if folded > done:
                    on_rows(folded - done)
                    done = folded
                if beats.stalled():
                    beats.kill(getattr(pool, "_processes", None) or ())  # those yet to beat too
                    warnings.warn(
                        f"a worker stopped responding for {STALL_SECONDS:g} s: the workers "
                        "were stopped and the evaluation runs in this process",
                        OffevalWarning,
                        stacklevel=4,  # evaluate()'s caller
                    )
                    return None
        except BaseException:  # Ctrl-C, or a notebook's interrupt (which reaches this
            beats.kill(getattr(pool, "_processes", None) or ())  # process only): now
            raise
        try:  # a worker that died (killed, out of memory) or a result that cannot travel back
            parts = [f.result() for f in futures]
        except Exception:
            return None
    if any(part is None for part in parts):
        return None
    states = [state for state, _ in parts]
    if any(state.local != states[0].local for state in states[1:]):
        return None  # columns keyed by objects that unpickle unequal: their sums cannot merge
    seen = set()  # the workers' warnings, once each, through this process's filters
    for message, category, filename, lineno in (c for _, warned in parts for c in warned):
        if (category, str(message), filename, lineno) not in seen:
            seen.add((category, str(message), filename, lineno))
            warnings.warn_explicit(message, category, filename, lineno)
    return reduce(FoldState.merge, states)


class Heartbeats:
    """Each worker's last heartbeat (a monotonic time) and process id, in shared memory,
    watched by the parent (:meth:`stalled`) on its own clock: a pause of the parent itself
    (Ctrl-Z, a starved machine) restarts the watch, and a worker that never took its slot
    counts as silent since the watch began."""

    def __init__(self, context, n: int, *, now: float | None = None):
        self.times = context.Array("d", n, lock=False)
        self.pids = context.Array("q", n, lock=False)
        self.taken = context.Value("i", 0)
        self._since = self._looked = time.monotonic() if now is None else now

    def start(self) -> None:
        """In a worker: take a slot and beat into it from a daemon thread until the process ends."""
        with self.taken.get_lock():  # the slot's first beat is in before the slot counts
            slot = self.taken.value
            if slot >= len(self.times):
                return
            self.pids[slot], self.times[slot] = os.getpid(), time.monotonic()
            self.taken.value += 1
        period = min(1.0, STALL_SECONDS / 5)

        def beat() -> None:
            while True:
                self.times[slot] = time.monotonic()
                time.sleep(period)

        threading.Thread(target=beat, daemon=True, name="offeval-heartbeat").start()

    def stalled(self, now: float | None = None) -> bool:
        """In the parent, called every fraction of a second: whether a worker has been
        silent for :data:`STALL_SECONDS` of the parent's uninterrupted watch."""
        now = time.monotonic() if now is None else now
        if now - self._looked > STALL_SECONDS / 2:  # the parent itself was paused: look again
            self._since = now
        self._looked = now
        taken = self.taken.value
        last = [max(self.times[i], self._since) for i in range(taken)]
        if taken < len(self.times):
            last.append(self._since)  # a worker not started yet
        return any(now - t > STALL_SECONDS for t in last)

    def kill(self, pids: Iterable[int] = ()) -> None:
        """Kill every started worker and ``pids`` (a stopped process dies of SIGKILL too)."""
        for pid in {*self.pids[: self.taken.value], *pids}:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _install(job: tuple) -> None:
    """In a new worker: keep what it is to fold, and start its heartbeat."""
    global _JOB
    _JOB = job
    job[3].start()


def _fold_share(bounds: tuple[int, int]):
    """In a worker: fold one share of the log; its fold state and the warnings raised (None
    if anything fails: the parent then folds the log itself, raising the error)."""
    chunker, new_accumulator, counter, _ = _JOB

    def count(rows: int) -> None:
        with counter.get_lock():
            counter.value += rows

    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            acc = new_accumulator()
            fold(acc, chunker(bounds, acc), new_units=True, on_rows=count)
    except BaseException:  # noqa: BLE001 - the parent re-runs and raises it itself
        return None
    caught = [(w.message, w.category, w.filename, w.lineno) for w in warned]
    return acc.state, caught
