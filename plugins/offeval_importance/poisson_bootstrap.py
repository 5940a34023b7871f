"""Poisson-bootstrap intervals, streamed over the same chunks as the estimates.

Each unit gets an independent Poisson(1) weight in every replicate, so replicates'
weighted column means accumulate chunk by chunk (:meth:`offeval.Accumulator.fold`);
``combine`` is applied to each. Nuisance coefficients that ``combine`` reads from the
covariance (a control-variate slope) are held at their full-sample value.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from offeval import Accumulator, Estimator, InteractionLog, OffevalError, Policy
from offeval.plugin import check_level, check_whole, progress_bar
from offeval.stats import Moments

#: Largest number of Poisson draws held in memory at once.
MAX_DRAWS = 4_000_000


def bootstrap(
    log: InteractionLog | Iterable[InteractionLog],
    policies: Sequence[Policy],
    estimators: Sequence[Estimator],
    *,
    replicates: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    baseline: str | None = None,
    chunk_rows: int = 250_000,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Percentile intervals and bootstrap standard errors of every estimate.

    With ``baseline``, values are relative to that policy (as in Gruson et
    al.'s 2019 tables), each replicate dividing by its own baseline value. Results are
    reproducible for a given ``seed`` and chunking.
    """
    replicates = check_whole(replicates, "replicates", low=2, error=OffevalError)
    check_level(level)
    acc = Accumulator(policies, estimators, interval="normal")  # replicates, not bets
    names = [p.name for p in policies]
    if baseline is not None and baseline not in names:
        raise OffevalError(f"baseline {baseline!r} is not among the policies {names}")
    whole = isinstance(log, InteractionLog)
    if whole:
        rule = "a whole number of rows >= 1"
        chunk_rows = check_whole(chunk_rows, "chunk size", low=1, rule=rule, error=OffevalError)
    draws = _Replicates(replicates, seed)
    total = getattr(log, "n_rows", None)  # rows: a total and an ETA when the size is known
    bar = progress_bar(
        progress,
        None if total is None else total * replicates,
        total=total,
        desc="bootstrap",
        unit="row",
        unit_scale=True,
    )
    for index, chunk in enumerate(log.chunks(chunk_rows) if whole else log):
        if not isinstance(chunk, InteractionLog):
            raise OffevalError(f"expected InteractionLog chunks, got {type(chunk).__name__}")
        draws.add(index, acc.fold(chunk, new_units=whole))  # its block, not held after
        bar.update(chunk.n_rows)
    bar.close()
    if acc.moments is None:
        raise OffevalError("no data was added")
    covariance = acc.moments.covariance()
    labels = [d.label for d in acc.declarations]
    values = np.empty((replicates + 1, len(policies), len(estimators)))
    means = np.vstack([acc.moments.mean, draws.sums / draws.totals[:, None]])
    ns = np.r_[acc.moments.n, draws.totals]
    for r in range(replicates + 1):
        moments = Moments(int(ns[r]), means[r], acc.moments.comoment)
        for p in range(len(policies)):
            for e, estimator in enumerate(estimators):
                values[r, p, e] = estimator.combine(acc.stats(p, e, moments, covariance)).value
    if baseline is not None:
        values = values / values[:, [names.index(baseline)], :]
    tail = (1 - level) / 2
    reps = values[1:].reshape(replicates, -1)
    low, high = np.nanquantile(reps, [tail, 1 - tail], axis=0)
    return pd.DataFrame(
        {
            "policy": [name for name in names for _ in labels],
            "estimator": labels * len(names),
            "value": values[0].ravel(),
            "boot_se": np.nanstd(reps, axis=0, ddof=1),
            "ci_low": low,
            "ci_high": high,
            "level": level,
            "replicates": replicates,
        }
    )


class _Replicates:
    """Every replicate's Poisson(1)-weighted column sums and total weight, chunk by chunk."""

    def __init__(self, replicates: int, seed: int):
        self.seed = seed
        self.sums = np.zeros((replicates, 0))
        self.totals = np.zeros(replicates)

    def add(self, index: int, block: np.ndarray) -> None:
        """Add chunk ``index``'s (n_units, k) block of unit sums, drawn from seed (seed, index)."""
        replicates = len(self.totals)
        self.sums = np.pad(self.sums, ((0, 0), (0, block.shape[1] - self.sums.shape[1])))
        rng = np.random.default_rng([self.seed, index])
        step = max(1, MAX_DRAWS // max(len(block), 1))
        for start in range(0, replicates, step):
            stop = min(start + step, replicates)
            weights = rng.poisson(1.0, (stop - start, len(block))).astype(float)
            self.sums[start:stop] += weights @ block
            self.totals[start:stop] += weights.sum(axis=1)
