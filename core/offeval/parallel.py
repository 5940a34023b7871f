"""One evaluation on several processes: each folds a share of the trajectories; the results merge.

Accumulators merge exactly, so splitting a log's trajectories into
contiguous shares, folding each share in a forked worker process and merging
the workers' accumulators gives the estimates of the one-process pass (up to
floating-point rounding). Workers are forked, so they read the log, the
policies and the estimators from the parent's memory without copying them;
only the accumulators (moments over the unit-level columns) come back.
Where ``fork`` is not available (Windows, macOS' default), or when a worker
fails, the evaluation runs in this process instead: a failure then raises the
same error, with the same message, as a one-process evaluation would.

The pass runs with one BLAS thread per process (:func:`one_blas_thread`):
its matrix products are many and small, and OpenBLAS' threads slowed the
demo's evaluation by 40% on 2 cores (7.0-7.5 s against 5.0-5.4 s) and by 4x
when two workers each started their own. More cores are used by workers.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from functools import cache, reduce

import numpy as np

from offeval.log import InteractionLog

#: What forked workers read: (log, accumulator factory, chunker, shared row counter).
_JOB: tuple | None = None


@cache
def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # finds the loaded BLAS libraries once


def one_blas_thread() -> AbstractContextManager:
    """Within the block, BLAS libraries use one thread (restored after)."""
    return _controller().limit(limits=1, user_api="blas")


def available_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def fork_available() -> bool:
    """Whether worker processes can be forked here (they share the parent's memory)."""
    return "fork" in multiprocessing.get_all_start_methods()


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
):
    """The merged accumulator of ``workers`` forked processes, or None if a worker failed.

    ``new_accumulator()`` builds an empty accumulator; ``chunker((lo, hi), acc)``
    yields the chunks of the log's rows lo:hi (slices of the parent's log, so a
    worker copies one chunk at a time); ``on_rows(n)`` is told of rows folded.
    """
    global _JOB
    context = multiprocessing.get_context("fork")
    counter = context.Value("q", 0)
    _JOB = (log, new_accumulator, chunker, counter)
    gc.freeze()  # workers' collections then leave the parent's objects (and pages) untouched
    try:
        with context.Pool(workers) as pool:
            pending = pool.map_async(_fold_share, shares(log, workers))
            done = 0
            while not pending.ready():
                pending.wait(0.2)
                folded = counter.value
                if folded > done:
                    on_rows(folded - done)
                    done = folded
            try:
                parts = pending.get()
            except Exception:  # a result that cannot travel back (a column of a local function)
                return None
    finally:
        _JOB = None
        gc.unfreeze()
    if any(part is None for part in parts):
        return None
    template = new_accumulator()
    for part in parts:
        part.policies, part.estimators = template.policies, template.estimators
    return reduce(lambda a, b: a.merge(b), parts)


def _fold_share(bounds: tuple[int, int]):
    """In a worker: fold one share of the log; None if anything fails (the parent re-runs)."""
    _, new_accumulator, chunker, counter = _JOB
    try:
        acc = new_accumulator()
        for chunk in chunker(bounds, acc):
            acc.add(chunk, new_units=True)
            with counter.get_lock():
                counter.value += chunk.n_rows
    except Exception:  # the parent evaluates in-process and raises the error itself
        return None
    acc.policies = acc.estimators = None  # the parent has them: send back only the moments
    acc._buffer = np.empty(0)
    return acc
