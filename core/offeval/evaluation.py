"""One pass over a log for many policies and many estimators.

Each log chunk is turned into per-unit column sums for every (policy,
estimator) pair; all of them are folded into one moment accumulator, whose
cross-covariances give paired comparisons between policies for free.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm import tqdm

from offeval.errors import OffevalError
from offeval.estimator import Estimator, PolicyView, Shared
from offeval.log import InteractionLog
from offeval.policy import Policy
from offeval.result import Estimate
from offeval.stats.compare import PairwiseComparison, pairwise_grid
from offeval.stats.inference import Linearisation, interval, variance
from offeval.stats.moments import Moments, Tally


@dataclass
class _Stats:
    """Moments of one policy's columns, addressed by column key."""

    moments: Moments
    keys: dict[Hashable, int]
    cov_matrix: np.ndarray

    @property
    def n(self) -> int:
        return self.moments.n

    def index(self, key: Hashable) -> int:
        return self.keys[key]

    def mean(self, key: Hashable) -> float:
        return float(self.moments.mean[self.keys[key]])

    def cov(self, a: Hashable, b: Hashable) -> float:
        return float(self.cov_matrix[self.keys[a], self.keys[b]])


class Accumulator:
    """Folds log chunks into moments for a fixed set of policies and estimators.

    Accumulators merge, so chunks may be processed anywhere (in a loop, from a
    Parquet stream, on workers) and combined: the result does not depend on
    the chunking.
    """

    def __init__(self, policies: Sequence[Policy], estimators: Sequence[Estimator]):
        names = [p.name for p in policies]
        if len(set(names)) != len(names):
            raise OffevalError(f"policy names must be unique, got {names}")
        labels = [_label(e) for e in estimators]
        if len(set(labels)) != len(labels):
            raise OffevalError(f"estimators must differ, got {labels}")
        self.policies = list(policies)
        self.estimators = list(estimators)
        self.keys: list[tuple[str, Hashable]] | None = None
        self.moments: Moments | None = None
        self.tallies: dict[tuple[int, int], Tally] = {}
        self.excluded: dict[tuple[int, int], dict[str, int]] = {}

    def add(self, log: InteractionLog) -> Accumulator:
        """Fold one chunk of whole trajectories."""
        chunk = Moments.from_array(self.unit_block(log), overwrite=True)
        self.moments = chunk if self.moments is None else self.moments.merge(chunk)
        return self

    def unit_block(self, log: InteractionLog) -> np.ndarray:
        """(n_units, k) column sums of one chunk; tallies and exclusions are recorded."""
        columns: dict[tuple[str, Hashable], np.ndarray] = {}
        for p, policy in enumerate(self.policies):
            view = PolicyView(policy, log)
            for e, estimator in enumerate(self.estimators):
                contribution = estimator.contribute(view)
                for key, values in contribution.columns.items():
                    owner = None if isinstance(key, Shared) else policy.name
                    columns.setdefault((owner, key), values)
                self.tallies[p, e] = self.tallies.get((p, e), Tally()).merge(contribution.tally)
                counts = self.excluded.setdefault((p, e), {})
                for reason, count in contribution.excluded.items():
                    counts[reason] = counts.get(reason, 0) + int(count)
        self._extend_keys(columns)
        return _unit_sums(columns, self.keys, log)

    def _extend_keys(self, columns: Mapping[tuple[str, Hashable], np.ndarray]) -> None:
        """Add columns first seen in this chunk; they were zero for earlier units."""
        if self.keys is None:
            self.keys = list(columns)
            return
        new = [key for key in columns if key not in set(self.keys)]
        if new and self.moments is not None:
            self.moments = self.moments.extended(len(new))
        self.keys.extend(new)

    def merge(self, other: Accumulator) -> Accumulator:
        """Combine with an accumulator over other trajectories of the same setup."""
        if other.moments is None:
            return self
        if self.moments is None:
            return other
        if [p.name for p in other.policies] != [p.name for p in self.policies] or [
            _label(e) for e in other.estimators
        ] != [_label(e) for e in self.estimators]:
            raise OffevalError("cannot merge accumulators of different policies or estimators")
        keys = list(self.keys) + [k for k in other.keys if k not in set(self.keys)]
        out = Accumulator(self.policies, self.estimators)
        out.keys = keys
        out.moments = _aligned(self.moments, self.keys, keys).merge(
            _aligned(other.moments, other.keys, keys)
        )
        for pe in set(self.tallies) | set(other.tallies):
            out.tallies[pe] = self.tallies.get(pe, Tally()).merge(other.tallies.get(pe, Tally()))
            merged = dict(self.excluded.get(pe, {}))
            for reason, count in other.excluded.get(pe, {}).items():
                merged[reason] = merged.get(reason, 0) + count
            out.excluded[pe] = merged
        return out

    def policy_stats(self, policy: str, moments: Moments, covariance: np.ndarray) -> _Stats:
        """The columns of one policy, as its estimators' ``combine`` sees them."""
        own = {k: i for i, (name, k) in enumerate(self.keys) if name in (policy, None)}
        return _Stats(moments, own, covariance)

    def result(self, level: float = 0.95) -> Evaluation:
        """Values, standard errors and intervals of every (policy, estimator)."""
        if self.moments is None or self.keys is None:
            raise OffevalError("no data was added")
        return Evaluation(self, level)


def _aligned(moments: Moments, keys: list, target: list) -> Moments:
    """Moments re-indexed onto ``target`` keys (absent columns are all zero)."""
    where = {key: i for i, key in enumerate(target)}
    idx = np.array([where[key] for key in keys])
    mean = np.zeros(len(target))
    comoment = np.zeros((len(target), len(target)))
    mean[idx] = moments.mean
    comoment[np.ix_(idx, idx)] = moments.comoment
    return Moments(moments.n, mean, comoment)


def _unit_sums(
    columns: Mapping[tuple[str, Hashable], np.ndarray], keys: list, log: InteractionLog
) -> np.ndarray:
    """(n_units, k) array of each column summed over the rows of each trajectory."""
    block = np.empty((log.n_units, len(keys)), order="F")
    one_row_units = log.n_units == log.n_rows
    for j, key in enumerate(keys):
        if key not in columns:
            block[:, j] = 0.0
            continue
        values = np.asarray(columns[key], dtype=float)
        if values.shape != (log.n_rows,):
            raise OffevalError(f"column {key} has shape {values.shape}, expected ({log.n_rows},)")
        block[:, j] = values if one_row_units else np.add.reduceat(values, log.unit_starts)
    return block


def _label(estimator: Estimator) -> str:
    return getattr(estimator, "label", estimator.name)


class Evaluation:
    """Estimates of many policies by many estimators on one log.

    Because every estimate is linearised over the same unit-level columns, any
    two estimates have a known covariance: paired differences, values relative
    to a baseline and significance grids are exact delta-method computations.
    """

    def __init__(self, acc: Accumulator, level: float):
        self.level = level
        self.policies = [p.name for p in acc.policies]
        self.estimators = [_label(e) for e in acc.estimators]
        self.n_units = acc.moments.n
        self._covariance = acc.moments.covariance()
        self._lin: dict[tuple[str, str], Linearisation] = {}
        self._estimates: dict[tuple[str, str], Estimate] = {}
        for p, policy in enumerate(acc.policies):
            stats = acc.policy_stats(policy.name, acc.moments, self._covariance)
            for e, estimator in enumerate(acc.estimators):
                lin = estimator.combine(stats)
                label = self.estimators[e]
                self._lin[policy.name, label] = lin
                diagnostics = estimator.diagnose(acc.tallies[p, e])
                self._estimates[policy.name, label] = self._estimate(
                    policy.name, label, lin, acc.excluded[p, e], diagnostics
                )

    def _estimate(self, policy, label, lin, excluded=None, diagnostics=None) -> Estimate:
        se = float(np.sqrt(max(variance(lin, self._covariance, self.n_units), 0.0)))
        low, high = interval(lin.value, se, self.level)
        return Estimate(
            policy,
            label,
            lin.value,
            se,
            low,
            high,
            self.level,
            self.n_units,
            dict(excluded or {}),
            dict(diagnostics or {}),
        )

    def estimate(self, policy: str, estimator: str | None = None) -> Estimate:
        """The estimate of one policy by one estimator (the only one, if omitted)."""
        return self._estimates[policy, self._estimator(estimator)]

    def _estimator(self, estimator: str | None) -> str:
        if estimator is None:
            if len(self.estimators) != 1:
                raise OffevalError(f"name an estimator: one of {self.estimators}")
            return self.estimators[0]
        if estimator not in self.estimators:
            raise OffevalError(f"unknown estimator {estimator!r}: one of {self.estimators}")
        return estimator

    def linearisation(self, policy: str, estimator: str | None = None) -> Linearisation:
        """The value and gradient behind an estimate."""
        return self._lin[policy, self._estimator(estimator)]

    def difference(self, a: str, b: str, estimator: str | None = None) -> Estimate:
        """Paired difference V(a) - V(b) on the same log, with its interval."""
        est = self._estimator(estimator)
        lin = self._lin[a, est].minus(self._lin[b, est])
        return self._estimate(f"{a} - {b}", est, lin)

    def relative(self, baseline: str, estimator: str | None = None) -> list[Estimate]:
        """Every policy's value divided by the baseline's (baseline = 1, se 0)."""
        est = self._estimator(estimator)
        base = self._lin[baseline, est]
        return [self._estimate(p, est, self._lin[p, est].ratio(base)) for p in self.policies]

    def covariance(self, estimator: str | None = None, baseline: str | None = None) -> np.ndarray:
        """Covariance matrix of the policies' estimates (already divided by n)."""
        est = self._estimator(estimator)
        lins = [self._lin[p, est] for p in self.policies]
        if baseline is not None:
            lins = [lin.ratio(self._lin[baseline, est]) for lin in lins]
        k = self._covariance.shape[0]
        grads = np.stack([lin.dense(k) for lin in lins])
        return grads @ self._covariance @ grads.T / self.n_units

    def grid(
        self,
        estimator: str | None = None,
        correction: str | None = None,
        alpha: float = 0.05,
        baseline: str | None = None,
    ) -> PairwiseComparison:
        """Paired significance tests between every pair of policies."""
        est = self._estimator(estimator)
        if baseline is None:
            values = np.array([self._lin[p, est].value for p in self.policies])
        else:
            values = np.array([e.value for e in self.relative(baseline, est)])
        cov = self.covariance(est, baseline)
        return pairwise_grid(self.policies, values, cov, correction=correction, alpha=alpha)

    def to_frame(self) -> pd.DataFrame:
        """One row per (policy, estimator)."""
        return pd.DataFrame([e.to_dict() for e in self._estimates.values()])

    def __repr__(self) -> str:
        frame = self.to_frame()[["policy", "estimator", "value", "se", "ci_low", "ci_high"]]
        return f"Evaluation on {self.n_units:,} units\n{frame.to_string(index=False)}"


def evaluate(
    log: InteractionLog | Iterable[InteractionLog],
    policies: Sequence[Policy],
    estimators: Sequence[Estimator],
    *,
    level: float = 0.95,
    chunk_rows: int = 250_000,
    progress: bool = False,
) -> Evaluation:
    """Evaluate every policy with every estimator in one pass over the log.

    ``log`` is an :class:`InteractionLog` (processed in chunks of about
    ``chunk_rows`` rows, so memory beyond the data does not grow with its size)
    or any iterable of logs, such as :func:`offeval.log.stream_parquet`.
    """
    chunks = log.chunks(chunk_rows) if isinstance(log, InteractionLog) else log
    acc = Accumulator(policies, estimators)
    for chunk in tqdm(chunks, desc="evaluating", unit="chunk", disable=not progress):
        acc.add(chunk)
    return acc.result(level)
