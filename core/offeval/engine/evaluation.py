"""One pass over a log for many policies and many estimators (:func:`evaluate`, in this
process or in workers), and the trial of estimators on a small chunk of it (:func:`probe`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence

from offeval.data.log import InteractionLog
from offeval.data.policy import Policy
from offeval.data.units import UnitTable
from offeval.engine.accumulator import Accumulator, bounded_chunks, fold
from offeval.engine.declaration import check_reward_range
from offeval.engine.estimator import Estimator, PolicyView
from offeval.engine.fold import FoldState
from offeval.engine.parallel import fold_in_workers, fork_available, one_blas_thread
from offeval.engine.result import Evaluation
from offeval.errors import OffevalError, OffevalWarning
from offeval.progress import progress_bar
from offeval.validation import check_level, check_whole

__all__ = ["PROBE_ROWS", "Accumulator", "Evaluation", "evaluate", "fold_log", "probe"]

#: Rows of the chunk on which :func:`probe` tries estimators.
PROBE_ROWS = 2_000


def evaluate(
    log: InteractionLog | UnitTable | Iterable[InteractionLog],
    policies: Sequence[Policy],
    estimators: Sequence[Estimator],
    *,
    level: float = 0.95,
    chunk_rows: int = 250_000,
    progress: bool | None = None,
    covariances: str = "estimator",
    workers: int = 1,
    interval: str | Mapping[str, str] | None = None,
    reward_range: Sequence[float] | str | None = None,
) -> Evaluation:
    """Evaluate every policy with every estimator in one pass over the log.

    ``log`` is an :class:`InteractionLog` (in chunks of about ``chunk_rows`` rows), any
    iterable of logs (:func:`offeval.data.log.stream_parquet`) or a :class:`UnitTable`.
    ``covariances="all"`` also keeps the covariances between estimators. ``progress`` shows
    a bar of rows (by default in a notebook or a terminal). ``workers > 1`` splits an
    InteractionLog's trajectories among forked processes (:mod:`offeval.engine.parallel`).
    ``interval`` names a registered interval method for all, or a dict one by estimator
    label or name (None: each its declared one); a method that needs the rewards' bounds
    known before the data reads ``reward_range=(low, high)``, else the estimator's declared
    one.
    """
    level = check_level(level)
    workers = check_whole(workers, "workers", low=1, error=OffevalError)
    rule = "a whole number of rows >= 1"
    chunk_rows = check_whole(chunk_rows, "chunk size", low=1, rule=rule, error=OffevalError)
    if reward_range is not None:
        reward_range = check_reward_range(reward_range, "reward_range")
    acc = Accumulator(
        policies, estimators, covariances=covariances, interval=interval, reward_range=reward_range
    )
    return fold_log(log, acc, chunk_rows=chunk_rows, progress=progress, workers=workers).result(
        level
    )


def fold_log(
    log: InteractionLog | UnitTable | Iterable[InteractionLog],
    acc: Accumulator,
    *,
    chunk_rows: int,
    progress: bool | None,
    workers: int,
) -> Accumulator:
    """:func:`evaluate`'s pass: ``acc`` having folded the log (in this process or in
    workers), its options taken as checked, by :func:`evaluate` or by a command's request
    (whole numbers >= 1)."""
    whole = isinstance(log, (InteractionLog, UnitTable))
    if not whole and not isinstance(log, Iterable):
        raise OffevalError(f"log must be an InteractionLog or an iterable of them, got {log!r}")
    if workers > 1 and not whole:
        raise OffevalError(
            "workers share the trajectories of an InteractionLog held in memory; "
            "an iterable of logs (a stream) is folded in this process: give workers=1"
        )
    if workers > 1 and not fork_available():
        warnings.warn(
            "workers need processes forked from this one, which this platform does not "
            "offer: evaluating in one process",
            OffevalWarning,
            stacklevel=3,  # evaluate()'s caller
        )
        workers = 1
    chunks = bounded_chunks(log, acc, chunk_rows) if whole else log
    total = getattr(log, "n_rows", None)  # rows: a total and an ETA when the size is known
    work = None if total is None else total * len(acc.policies) * len(acc.estimators)
    with (
        progress_bar(
            progress, work, total=total, desc="evaluating", unit="row", unit_scale=True
        ) as bar,
        one_blas_thread(),
    ):
        if workers > 1:  # capped, with a warning, by the log's size
            state = fold_in_workers(
                log,
                lambda: acc.with_state(FoldState()),  # the set-up checked once, above
                lambda share, into: bounded_chunks(log, into, chunk_rows, rows=share),
                workers,
                bar.update,
            )
            if state is not None:
                return acc.with_state(state)
            bar.reset()  # a worker failed: evaluate here, raising its error if there is one
        fold(acc, chunks, new_units=whole, on_rows=bar.update)
    return acc


def probe(
    log: InteractionLog,
    policies: Sequence[Policy],
    estimators: Sequence[Estimator],
    rows: int = PROBE_ROWS,
) -> list[OffevalError | None]:
    """Each estimator tried alone on the log's first chunk of ``rows`` rows: the error it
    raises there, or None (warnings silenced). One that cannot run on a log (a required
    column missing) fails on any chunk of it, so callers skip it before reading the whole
    log; the policies are queried first, so a policy's mistake raises as such."""
    rows = check_whole(rows, "rows", low=1, error=OffevalError)
    chunk = next(log.chunks(rows))
    for policy in policies:
        PolicyView(policy, chunk).probabilities()
    errors: list[OffevalError | None] = [None] * len(estimators)
    for i, estimator in enumerate(estimators):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OffevalWarning)
                evaluate(chunk, policies, [estimator], progress=False)
        except OffevalError as exc:
            errors[i] = exc
    return errors
