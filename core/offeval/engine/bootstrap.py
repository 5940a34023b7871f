"""Poisson-bootstrap intervals, streamed over the same chunks as the estimates.

Each unit (trajectory) gets an independent Poisson(1) weight in every
replicate; a replicate's column means are weighted means, so replicates are
accumulated chunk by chunk without keeping the data. Estimators' ``combine``
is then applied to each replicate's means. Nuisance coefficients that
``combine`` reads from the covariance (a control-variate slope, say) are held at their
full-sample value.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from offeval.data.log import InteractionLog
from offeval.data.policy import Policy
from offeval.engine.estimator import Estimator
from offeval.engine.evaluation import Accumulator
from offeval.errors import OffevalError, plain
from offeval.progress import progress_bar
from offeval.stats.inference import check_level
from offeval.stats.moments import Moments

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
    if (
        isinstance(replicates, bool)
        or not isinstance(replicates, (int, np.integer))
        or replicates < 2
    ):
        raise OffevalError(f"replicates must be a whole number >= 2, got {plain(replicates)!r}")
    check_level(level)
    acc = Accumulator(policies, estimators)
    names = [p.name for p in policies]
    if baseline is not None and baseline not in names:
        raise OffevalError(f"baseline {baseline!r} is not among the policies {names}")
    whole = isinstance(log, InteractionLog)
    chunks = log.chunks(chunk_rows) if whole else log
    sums = np.zeros((replicates, 0))
    totals = np.zeros(replicates)
    total = getattr(log, "n_rows", None)  # rows: a total and an ETA when the size is known
    bar = progress_bar(
        progress,
        None if total is None else total * replicates,
        total=total,
        desc="bootstrap",
        unit="row",
        unit_scale=True,
    )
    for index, chunk in enumerate(chunks):
        block = acc.fold(chunk, new_units=whole)
        bar.update(chunk.n_rows)
        sums = np.pad(sums, ((0, 0), (0, block.shape[1] - sums.shape[1])))
        rng = np.random.default_rng([seed, index])
        step = max(1, MAX_DRAWS // max(len(block), 1))
        for start in range(0, replicates, step):
            stop = min(start + step, replicates)
            weights = rng.poisson(1.0, (stop - start, len(block))).astype(float)
            sums[start:stop] += weights @ block
            totals[start:stop] += weights.sum(axis=1)
    bar.close()
    if acc.moments is None:
        raise OffevalError("no data was added")
    covariance = acc.moments.covariance()
    labels = [d.label for d in acc.declarations]
    values = np.empty((replicates + 1, len(policies), len(estimators)))
    means = np.vstack([acc.moments.mean, sums / totals[:, None]])
    ns = np.r_[acc.moments.n, totals]
    for r in range(replicates + 1):
        moments = Moments(int(ns[r]), means[r], acc.moments.comoment)
        for p in range(len(policies)):
            for e, estimator in enumerate(estimators):
                values[r, p, e] = estimator.combine(acc.stats(p, e, moments, covariance)).value
    if baseline is not None:
        values = values / values[:, [names.index(baseline)], :]
    tail = (1 - level) / 2
    rows = []
    for p, policy in enumerate(policies):
        for e, label in enumerate(labels):
            reps = values[1:, p, e]
            low, high = np.nanquantile(reps, [tail, 1 - tail])
            rows.append(
                {
                    "policy": policy.name,
                    "estimator": label,
                    "value": values[0, p, e],
                    "boot_se": np.nanstd(reps, ddof=1),
                    "ci_low": low,
                    "ci_high": high,
                    "level": level,
                    "replicates": replicates,
                }
            )
    return pd.DataFrame(rows)
