"""One pass over a log for many policies and many estimators.

Estimators emit columns per row or per unit for every (policy, estimator)
pair; the engine sums row columns over each trajectory (the unit), keys every
column by its owner, and folds all of them into one moment accumulator, whose
cross-covariances give paired comparisons between policies for free.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from offeval.data.log import InteractionLog
from offeval.data.policy import Policy
from offeval.data.units import UnitLedger
from offeval.engine.declaration import Declaration, declaration_of
from offeval.engine.estimator import Contribution, Estimator, PolicyView, Shared
from offeval.engine.parallel import fold_in_workers, fork_available, one_blas_thread
from offeval.engine.result import Estimate
from offeval.engine.summary import EstimatorSummary
from offeval.errors import OffevalError, OffevalWarning, did_you_mean, plain
from offeval.progress import progress_bar
from offeval.specs import find_label
from offeval.stats.compare import PairwiseComparison, pairwise_grid
from offeval.stats.inference import (
    Linearisation,
    check_level,
    interval,
    quadratic_form,
    variance,
)
from offeval.stats.moments import Moments, Tally

#: Which cross-products of columns are kept: those within each estimator's columns
#: (every comparison between policies, the default) or all of them (estimates of
#: different estimators compared with each other too).
COVARIANCES = ("estimator", "all")

#: Largest block of unit sums (units x columns) one chunk may fill: 32 MB of floats.
BLOCK_CELLS = 1 << 22
#: Rows of the first chunk of a log, which tells how many columns the estimators emit.
PROBE_ROWS = 20_000

#: How to fix input whose trajectories arrive in several chunks.
SPLIT_ADVICE = (
    "sort the input by trajectory first (a Parquet file: "
    "pq.write_table(pq.read_table(path).sort_by(trajectory_column), sorted_path)), "
    "or read it whole with InteractionLog.from_file, which sorts it"
)


@dataclass
class _Stats:
    """Moments of one (policy, estimator)'s columns, addressed by the estimator's keys."""

    moments: Moments
    keys: dict[Hashable, int]
    cov_matrix: np.ndarray
    owner: str

    @property
    def n(self) -> int:
        return self.moments.n

    def index(self, key: Hashable) -> int:
        if key not in self.keys:
            raise OffevalError(
                f"{self.owner} reads column {key!r}, which it never emitted "
                f"(its columns: {list(self.keys)})"
            )
        return self.keys[key]

    def mean(self, key: Hashable) -> float:
        return float(self.moments.mean[self.index(key)])

    def cov(self, a: Hashable, b: Hashable) -> float:
        return float(self.cov_matrix[self.index(a), self.index(b)])


class Accumulator:
    """Folds log chunks into moments for a fixed set of policies and estimators.

    Accumulators merge, so chunks may be processed anywhere (in a loop, from a
    Parquet stream, on workers) and combined: the result does not depend on
    the chunking. A trajectory that arrives in two chunks is an error naming
    it, never a second unit.
    """

    def __init__(
        self,
        policies: Sequence[Policy],
        estimators: Sequence[Estimator],
        *,
        covariances: str = "estimator",
    ):
        #: What each estimator declares (its label, for one).
        self.declarations = _check_components(policies, estimators)
        if covariances not in COVARIANCES:
            raise OffevalError(f"covariances must be one of {COVARIANCES}, got {covariances!r}")
        self.policies = list(policies)
        self.estimators = list(estimators)
        self.covariances = covariances
        #: Global column keys: (p, e, key) owned, (p, Shared) per policy, (None, Shared) shared.
        self.keys: list[tuple] = []
        self._where: dict[tuple, int] = {}
        #: Per (p, e): the estimator's own column key -> global column key.
        self.local: dict[tuple[int, int], dict[Hashable, tuple]] = {}
        self.moments: Moments | None = None
        self.tallies: dict[tuple[int, int], Tally] = {}
        self.excluded: dict[tuple[int, int], dict[str, int]] = {}
        self.ledger = UnitLedger()
        self._buffer = np.empty(0)

    def add(self, log: InteractionLog, *, new_units: bool = False) -> Accumulator:
        """Fold one chunk of whole trajectories.

        ``new_units=True`` vouches that no trajectory of the chunk was added
        before (chunks of one :class:`InteractionLog`), which skips the check.
        """
        self.fold(log, new_units=new_units, keep=False)
        return self

    def fold(
        self, log: InteractionLog, *, new_units: bool = False, keep: bool = True
    ) -> np.ndarray:
        """Fold one chunk and return its (n_units, k) block of unit sums.

        With ``keep=False`` the block is centred in place (saving a copy) and
        must not be used afterwards.
        """
        if not new_units:
            self.ledger.add(log.unit_ids, SPLIT_ADVICE)
        block, index = self.unit_block(log)
        groups = self._groups(index) if self.covariances == "estimator" else None
        chunk = Moments.from_array(block, overwrite=not keep, groups=groups).gathered(index)
        self.moments = chunk if self.moments is None else self.moments.merge(chunk)
        if not keep:
            return block
        full = np.zeros((block.shape[0], index.size))
        full[:, index >= 0] = block[:, index[index >= 0]]
        return full

    def unit_block(self, log: InteractionLog) -> tuple[np.ndarray, np.ndarray]:
        """Column sums of one chunk over its distinct columns; tallies and exclusions recorded.

        Returns the (n_units, u) block of distinct columns and, for each of
        the k global columns, its index in the block (-1: absent, all zero).
        Each policy's columns are summed per unit as soon as its estimators
        have contributed, so memory holds one policy's row columns at a time.
        Columns that are the same array (a cap that never binds returns the
        uncapped column itself) are summed and cross-multiplied once.
        """
        block = _ChunkBlock(log, self)
        for p, policy in enumerate(self.policies):
            view = PolicyView(policy, log)
            produced: dict[tuple, tuple[np.ndarray, bool]] = {}
            for e, estimator in enumerate(self.estimators):
                contribution = estimator.contribute(view)
                if not isinstance(contribution, Contribution):
                    raise OffevalError(
                        f"{self.declarations[e].label}.contribute() returned "
                        f"{type(contribution).__name__}, not a Contribution"
                    )
                self._collect(p, e, contribution, view, produced, block)
                self.tallies[p, e] = self.tallies.get((p, e), Tally()).merge(contribution.tally)
                counts = self.excluded.setdefault((p, e), {})
                for reason, count in contribution.excluded.items():
                    counts[reason] = counts.get(reason, 0) + int(count)
            block.add(produced)
        return block.finish()

    def _collect(self, p, e, contribution, view, produced, block) -> None:
        """Key one contribution's columns by their owner, computing shared ones once."""
        local = self.local.setdefault((p, e), {})
        owner = f"estimator {self.declarations[e].label!r} on policy {self.policies[p].name!r}"
        if not isinstance(contribution.tally, Tally) or not isinstance(
            contribution.unit_columns, dict
        ):
            raise OffevalError(
                f"{owner}: build the contribution as Contribution(columns, unit_columns, "
                "tally=..., excluded=...)"
            )
        both = set(contribution.columns) & set(contribution.unit_columns)
        if both:
            raise OffevalError(
                f"{owner}: keys {sorted(map(str, both))} are both row and unit columns"
            )
        items = [(k, v, False) for k, v in contribution.columns.items()]
        items += [(k, v, True) for k, v in contribution.unit_columns.items()]
        for key, column, per_unit in items:
            if isinstance(column, Shared):
                if per_unit:
                    raise OffevalError(f"{owner}: Shared columns are per row, not unit columns")
                where = (None, column) if column.policy_free else (p, column)
                if where not in produced and not block.has(where):
                    produced[where] = (column.compute(view), False)
            else:
                where = (p, e, key)
                produced[where] = (column, per_unit)
            if local.setdefault(key, where) != where:
                raise OffevalError(f"{owner}: column {key!r} changed between chunks")
            if where not in self._where:
                self._new_column(where)

    def _new_column(self, where: tuple) -> None:
        """A column first seen in this chunk: it was zero for earlier units."""
        self._where[where] = len(self.keys)
        self.keys.append(where)
        if self.moments is not None:
            self.moments = self.moments.extended(1)

    def _groups(self, index: np.ndarray) -> list[np.ndarray]:
        """Per estimator, the distinct block columns it reads (for ``covariances='estimator'``)."""
        groups = []
        for e in range(len(self.estimators)):
            used = {
                self._where[where]
                for (_, e2), keys in self.local.items()
                if e2 == e
                for where in keys.values()
            }
            present = index[sorted(used)] if used else np.zeros(0, dtype=np.int64)
            groups.append(np.unique(present[present >= 0]))
        return groups

    def _scratch(self, rows: int, columns: int, keep: np.ndarray | None = None) -> np.ndarray:
        """A (rows, columns) Fortran-ordered block on memory reused from chunk to chunk.

        Fresh chunk-sized arrays cost page faults on every chunk; this buffer
        only grows. Its contents are overwritten by the next chunk, except the
        columns of ``keep`` (a smaller block on the old buffer), copied over.
        """
        if self._buffer.size < rows * columns:
            buffer = np.empty(rows * columns)
            if keep is not None:
                view = np.ndarray(keep.shape, dtype=float, buffer=buffer, order="F")
                view[...] = keep
            self._buffer = buffer
        return np.ndarray((rows, columns), dtype=float, buffer=self._buffer, order="F")

    def merge(self, other: Accumulator) -> Accumulator:
        """Combine with an accumulator over other trajectories of the same setup."""
        if [p.name for p in other.policies] != [p.name for p in self.policies] or [
            d.label for d in other.declarations
        ] != [d.label for d in self.declarations]:
            raise OffevalError("cannot merge accumulators of different policies or estimators")
        if other.moments is None:
            return self
        if self.moments is None:
            return other
        if other.covariances != self.covariances:
            raise OffevalError("cannot merge accumulators that keep different covariances")
        out = Accumulator(self.policies, self.estimators, covariances=self.covariances)
        out.ledger = self.ledger.merge(other.ledger, SPLIT_ADVICE)
        for where in [*self.keys, *other.keys]:
            if where not in out._where:
                out._new_column(where)
        for pe in set(self.local) | set(other.local):
            out.local[pe] = {**other.local.get(pe, {}), **self.local.get(pe, {})}
        out.moments = _aligned(self.moments, self.keys, out.keys).merge(
            _aligned(other.moments, other.keys, out.keys)
        )
        for pe in set(self.tallies) | set(other.tallies):
            out.tallies[pe] = self.tallies.get(pe, Tally()).merge(other.tallies.get(pe, Tally()))
            merged = dict(self.excluded.get(pe, {}))
            for reason, count in other.excluded.get(pe, {}).items():
                merged[reason] = merged.get(reason, 0) + count
            out.excluded[pe] = merged
        return out

    def stats(self, p: int, e: int, moments: Moments, covariance: np.ndarray) -> _Stats:
        """The columns of one (policy, estimator), as its ``combine`` sees them."""
        keys = {key: self._where[where] for key, where in self.local.get((p, e), {}).items()}
        owner = f"estimator {self.declarations[e].label!r}"
        return _Stats(moments, keys, covariance, owner)

    def result(self, level: float = 0.95) -> Evaluation:
        """Values, standard errors and intervals of every (policy, estimator)."""
        if self.moments is None:
            raise OffevalError("no data was added")
        return Evaluation(self, level)


class _ChunkBlock:
    """The distinct unit-level columns of one chunk, filled policy by policy.

    Row columns are summed per unit into a Fortran-ordered buffer reused
    from chunk to chunk (it grows by doubling on the first chunks); arrays
    produced twice within one policy (the same object) take one column.
    """

    def __init__(self, log: InteractionLog, acc: Accumulator):
        self.log, self.acc = log, acc
        self.slot: dict[tuple, int] = {}
        self.used = 0
        self.block = acc._scratch(log.n_units, max(16, len(acc.keys)))

    def has(self, where: tuple) -> bool:
        """Whether the column is already in the block (policy-free shared columns)."""
        return where in self.slot

    def add(self, produced: dict[tuple, tuple[np.ndarray, bool]]) -> None:
        """Sum one policy's columns per unit into the block."""
        distinct: dict[tuple[int, bool], int] = {}
        log = self.log
        one_row_units = log.n_units == log.n_rows
        for where, (values, per_unit) in produced.items():
            identity = (id(values), per_unit)
            if identity in distinct:
                self.slot[where] = distinct[identity]
                continue
            column = np.asarray(values, dtype=float)
            size = log.n_units if per_unit else log.n_rows
            if column.shape != (size,):
                kind = "units" if per_unit else "rows"
                raise OffevalError(
                    f"column {_describe(where, self.acc)} has shape {column.shape}, expected one "
                    f"value per {kind[:-1]} ({size} {kind})"
                )
            j = self._next()
            if per_unit or one_row_units:
                self.block[:, j] = column
            else:
                np.add.reduceat(column, log.unit_starts, out=self.block[:, j])
            distinct[identity] = self.slot[where] = j

    def _next(self) -> int:
        if self.used == self.block.shape[1]:
            grown = self.acc._scratch(self.block.shape[0], 2 * self.used, keep=self.block)
            self.block = grown
        self.used += 1
        return self.used - 1

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """The (n_units, u) block and each global column's index in it (-1: absent)."""
        index = np.array([self.slot.get(where, -1) for where in self.acc.keys], dtype=np.int64)
        return self.block[:, : self.used], index


def _check_components(
    policies: Sequence[Policy], estimators: Sequence[Estimator]
) -> list[Declaration]:
    """The estimators' declarations, once policies and estimators are checked."""
    if isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence) or not policies:
        raise OffevalError("give at least one target policy (a list of policies)")
    if (
        isinstance(estimators, (str, bytes))
        or not isinstance(estimators, Sequence)
        or not estimators
    ):
        raise OffevalError("give at least one estimator (a list of estimators)")
    for policy in policies:
        if not isinstance(getattr(policy, "name", None), str):
            raise OffevalError(f"{policy!r} is not a policy: it needs a name and probabilities()")
    for estimator in estimators:
        if not isinstance(estimator, Estimator):
            raise OffevalError(
                f"{estimator!r} is not an estimator (contribute, combine, diagnose, get_params); "
                "build one with get_registry().create_from_spec('estimator', spec)"
            )
    names = [p.name for p in policies]
    if len(set(names)) != len(names):
        raise OffevalError(f"policy names must be unique, got {names}")
    declarations = [declaration_of(e) for e in estimators]
    labels = [d.label for d in declarations]
    if len(set(labels)) != len(labels):
        raise OffevalError(f"estimators must differ, got {labels}")
    return declarations


def _describe(where: tuple, acc: Accumulator) -> str:
    if len(where) == 3:
        p, e, key = where
        return f"{key!r} of {acc.declarations[e].label} on {acc.policies[p].name}"
    return f"{where[1].function.__name__}{where[1].args}"


def _aligned(moments: Moments, keys: list, target: list) -> Moments:
    """Moments re-indexed onto ``target`` keys (absent columns are all zero)."""
    where = {key: i for i, key in enumerate(target)}
    idx = np.array([where[key] for key in keys], dtype=np.int64)
    mean = np.zeros(len(target))
    comoment = np.zeros((len(target), len(target)))
    mean[idx] = moments.mean
    comoment[np.ix_(idx, idx)] = moments.comoment
    return Moments(moments.n, mean, comoment)


class Evaluation:
    """Estimates of many policies by many estimators on one log.

    Because every estimate is linearised over the same unit-level columns, any
    two estimates have a known covariance: paired differences, values relative
    to a baseline and significance grids are exact delta-method computations.
    Estimators are named by their label, which omits parameters at their
    defaults (``"my_est"``, ``"my_est(cap=10)"``), or by their registered name
    or a spec with any parameters (``"my_est(cap=100)"``, ``"my_est:cap=100"``)
    when only one of the evaluated estimators matches.
    """

    def __init__(self, acc: Accumulator, level: float):
        self.level = check_level(level)
        self.policies = [p.name for p in acc.policies]
        self.estimators = [d.label for d in acc.declarations]
        self.components = list(acc.estimators)
        self.declarations = list(acc.declarations)
        self.n_units = acc.moments.n
        self._covariance = acc.moments.covariance()
        self._lin: dict[tuple[str, str], Linearisation] = {}
        self._estimates: dict[tuple[str, str], Estimate] = {}
        for p, policy in enumerate(acc.policies):
            for e, estimator in enumerate(acc.estimators):
                stats = acc.stats(p, e, acc.moments, self._covariance)
                lin = estimator.combine(stats)
                label = self.estimators[e]
                self._lin[policy.name, label] = lin
                tally = acc.tallies.get((p, e), Tally())
                diagnostics = {**tally.counts, **estimator.diagnose(tally)}
                fitted = self.declarations[e].fitted
                if fitted is not None:  # parameters the estimator fitted from the log
                    diagnostics.update({f"fitted_{k}": v for k, v in fitted(stats).items()})
                excluded = acc.excluded.get((p, e), {})
                if sum(excluded.values()) > self.n_units:
                    raise OffevalError(
                        f"estimator {label!r} excluded {sum(excluded.values())} units out of "
                        f"{self.n_units}: a unit was excluded twice"
                    )
                self._estimates[policy.name, label] = self._estimate(
                    policy.name, label, lin, excluded, diagnostics
                )

    def _estimate(self, policy, label, lin, excluded=None, diagnostics=None) -> Estimate:
        se = self.standard_error(lin)
        low, high = interval(lin.value, se, self.level)
        excluded = dict(excluded or {})
        return Estimate(
            policy,
            label,
            lin.value,
            se,
            low,
            high,
            self.level,
            self.n_units - sum(excluded.values()),
            excluded,
            dict(diagnostics or {}),
        )

    def estimate(self, policy: str, estimator: str | None = None) -> Estimate:
        """The estimate of one policy by one estimator (the only one, if omitted)."""
        return self._estimates[self._policy(policy), self._estimator(estimator)]

    def _policy(self, policy: str) -> str:
        if policy not in self.policies:
            close = did_you_mean(policy, self.policies)
            raise OffevalError(f"unknown policy {policy!r}{close}: one of {self.policies}")
        return policy

    def _estimator(self, estimator: str | None) -> str:
        """The label of the estimator named by label, registered name or spec."""
        if estimator is None:
            if len(self.estimators) != 1:
                raise OffevalError(f"name an estimator: one of {self.estimators}")
            return self.estimators[0]
        known = {
            label: (component.name, component.get_params())
            for label, component in zip(self.estimators, self.components, strict=True)
        }
        return find_label(estimator, known)

    def linearisation(self, policy: str, estimator: str | None = None) -> Linearisation:
        """The value and gradient behind an estimate."""
        return self._lin[self._policy(policy), self._estimator(estimator)]

    def standard_error(self, lin: Linearisation) -> float:
        """Standard error of any linearisation of this evaluation's columns.

        For example ``ev.linearisation("p", "is").minus(ev.linearisation("p", "snips"))``:
        estimates of two estimators can be combined when the evaluation kept
        the covariances between them (``evaluate(..., covariances="all")``).
        """
        return float(np.sqrt(max(variance(lin, self._covariance, self.n_units), 0.0)))

    def difference(self, a: str, b: str, estimator: str | None = None) -> Estimate:
        """Paired difference V(a) - V(b) on the same log, with its interval.

        Units excluded are those either estimate excluded, by reason (the
        larger count of the two: exact when exclusions do not depend on the
        policy, a lower bound otherwise).
        """
        est = self._estimator(estimator)
        lin = self._lin[self._policy(a), est].minus(self._lin[self._policy(b), est])
        return self._estimate(f"{a} - {b}", est, lin, self._excluded_by_either(a, b, est))

    def relative(self, baseline: str, estimator: str | None = None) -> list[Estimate]:
        """Every policy's value divided by the baseline's (baseline = 1, se 0).

        Units excluded count as in :meth:`difference`, for the policy and the baseline.
        """
        est = self._estimator(estimator)
        base = self._baseline(baseline, est)
        return [
            self._estimate(
                p, est, self._lin[p, est].ratio(base), self._excluded_by_either(p, baseline, est)
            )
            for p in self.policies
        ]

    def _excluded_by_either(self, a: str, b: str, est: str) -> dict[str, int]:
        first, second = self._estimates[a, est].excluded, self._estimates[b, est].excluded
        return {r: max(first.get(r, 0), second.get(r, 0)) for r in {*first, *second}}

    def _baseline(self, baseline: str, est: str) -> Linearisation:
        base = self._lin[self._policy(baseline), est]
        if not np.isfinite(base.value) or base.value == 0:
            raise OffevalError(
                f"baseline {baseline!r} has value {base.value} under {est}: values relative "
                "to it are undefined; choose another baseline"
            )
        return base

    def covariance(self, estimator: str | None = None, baseline: str | None = None) -> np.ndarray:
        """Covariance matrix of the policies' estimates (already divided by n)."""
        est = self._estimator(estimator)
        lins = [self._lin[p, est] for p in self.policies]
        if baseline is not None:
            base = self._baseline(baseline, est)
            lins = [lin.ratio(base) for lin in lins]
        k = self._covariance.shape[0]
        grads = np.stack([lin.dense(k) for lin in lins])
        return quadratic_form(grads, self._covariance) / self.n_units

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

    def summary(
        self, estimator: str | None = None, baseline: str | None = None
    ) -> EstimatorSummary:
        """One estimator's values and their covariance, for decisions (and for saving)."""
        est = self._estimator(estimator)
        where = self.estimators.index(est)
        component, declared = self.components[where], self.declarations[where]
        if baseline is None:
            values = np.array([self._lin[p, est].value for p in self.policies])
        else:
            values = np.array([e.value for e in self.relative(baseline, est)])
        return EstimatorSummary(
            est,
            component.name,
            list(self.policies),
            values,
            self.covariance(est, baseline),
            self.n_units,
            self.level,
            baseline,
            declared.higher_is_better,
            dict(component.get_params()),
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per (policy, estimator)."""
        return pd.DataFrame([e.to_dict() for e in self._estimates.values()])

    def __repr__(self) -> str:
        frame = self.to_frame()[["policy", "estimator", "value", "se", "ci_low", "ci_high"]]
        return f"Evaluation on {self.n_units:,} units\n{frame.to_string(index=False)}"


def _bounded_chunks(
    log: InteractionLog,
    acc: Accumulator,
    chunk_rows: int,
    rows: tuple[int, int] | None = None,
) -> Iterator[InteractionLog]:
    """Chunks of at most ``chunk_rows`` rows whose unit-sum block stays within BLOCK_CELLS.

    The first chunk is small (``PROBE_ROWS``) and tells how many columns the
    estimators emit; the next ones are as long as the block allows. ``rows``
    (lo, hi at trajectory boundaries) restricts the chunks to those rows.
    """
    if (
        isinstance(chunk_rows, bool)
        or not isinstance(chunk_rows, (int, np.integer))
        or chunk_rows < 1
    ):
        raise OffevalError(
            f"chunk size must be a whole number of rows >= 1, got {plain(chunk_rows)!r}"
        )
    starts = log.unit_starts
    rows_per_unit = log.n_rows / max(log.n_units, 1)
    lo, stop = rows or (0, log.n_rows)
    while lo < stop:
        units = BLOCK_CELLS // max(len(acc.keys), 1)
        size = max(1, min(chunk_rows, int(units * rows_per_unit)))
        if not acc.keys:
            size = min(size, PROBE_ROWS)
        at = np.searchsorted(starts, lo + size)
        hi = min(int(starts[at]) if at < starts.size else log.n_rows, stop)
        yield log.slice_rows(lo, hi)
        lo = hi


def evaluate(
    log: InteractionLog | Iterable[InteractionLog],
    policies: Sequence[Policy],
    estimators: Sequence[Estimator],
    *,
    level: float = 0.95,
    chunk_rows: int = 250_000,
    progress: bool | None = None,
    covariances: str = "estimator",
    workers: int = 1,
) -> Evaluation:
    """Evaluate every policy with every estimator in one pass over the log.

    ``log`` is an :class:`InteractionLog` (processed in chunks of about
    ``chunk_rows`` rows, so memory beyond the data does not grow with its size)
    or any iterable of logs, such as :func:`offeval.data.log.stream_parquet`; a
    trajectory that appears in two of them is an error naming it.
    ``covariances="estimator"`` keeps the covariances every comparison of
    policies under one estimator needs; ``"all"`` also those between
    estimators (to combine estimates of different estimators yourself).
    ``progress`` shows a bar of rows with an ETA (by default in a notebook or
    a terminal: :func:`offeval.progress.progress_enabled`). ``workers > 1``
    splits an :class:`InteractionLog`'s trajectories among that many forked
    processes (:mod:`offeval.engine.parallel`; same estimates up to rounding). Each
    process runs its pass with one BLAS thread.
    """
    check_level(level)
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise OffevalError(f"workers must be a whole number >= 1, got {plain(workers)!r}")
    acc = Accumulator(policies, estimators, covariances=covariances)
    whole = isinstance(log, InteractionLog)
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
            stacklevel=2,
        )
    chunks = _bounded_chunks(log, acc, chunk_rows) if whole else log
    total = getattr(log, "n_rows", None)  # rows: a total and an ETA when the size is known
    work = None if total is None else total * len(acc.policies) * len(acc.estimators)
    with (
        progress_bar(
            progress, work, total=total, desc="evaluating", unit="row", unit_scale=True
        ) as bar,
        one_blas_thread(),
    ):
        if whole and workers > 1 and fork_available():  # capped, with a warning, by the log's size
            merged = fold_in_workers(
                log,
                lambda: Accumulator(policies, estimators, covariances=covariances),
                lambda share, into: _bounded_chunks(log, into, chunk_rows, rows=share),
                int(workers),
                bar.update,
            )
            if merged is not None:
                return merged.result(level)
            bar.reset()  # a worker failed: evaluate here, raising its error if there is one
        for chunk in chunks:
            if not isinstance(chunk, InteractionLog):
                raise OffevalError(f"expected InteractionLog chunks, got {type(chunk).__name__}")
            acc.add(chunk, new_units=whole)
            bar.update(chunk.n_rows)
    return acc.result(level)
