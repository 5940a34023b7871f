"""What one pass folds chunks with: the set-up (policies, estimators), its fold state, and
the one driver that folds a log's chunks into it (:func:`fold`).
The accumulator sums the estimators' row columns over each trajectory (the unit), keys every
column by its owner and folds them into the moments of its
:class:`~offeval.engine.fold.FoldState`, whose cross-covariances pair the policies."""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from offeval.data.log import InteractionLog
from offeval.data.policy import Policy
from offeval.data.units import UnitTable
from offeval.engine.declaration import Declaration, declaration_of
from offeval.engine.estimator import Contribution, Estimator, PolicyView, Shared
from offeval.engine.fold import BLOCK_CELLS, FIRST_CHUNK_ROWS, SPLIT_ADVICE, FoldState
from offeval.engine.intervals import ChunkSums, checked_methods, chosen_methods
from offeval.engine.result import Evaluation
from offeval.errors import OffevalError
from offeval.stats.moments import Moments, Tally
from offeval.validation import check_choice

#: Which cross-products of columns are kept: those within each estimator's columns
#: (every comparison between policies, the default) or all of them (estimates of
#: different estimators compared with each other too).
COVARIANCES = ("estimator", "all")


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
    """Folds log chunks into a :class:`FoldState` for a fixed set of policies and estimators.

    What it has folded is its ``state`` (whatever the chunking); a trajectory in two chunks
    is an error naming it.
    """

    def __init__(
        self,
        policies: Sequence[Policy],
        estimators: Sequence[Estimator],
        *,
        covariances: str = "estimator",
        interval: str | Mapping[str, str] | None = None,
        reward_range: tuple[float, float] | None = None,
    ):
        #: What each estimator declares (its label, for one).
        self.declarations = _check_components(policies, estimators)
        self.covariances = check_choice(covariances, "covariances", COVARIANCES, error=OffevalError)
        #: Each estimator's interval method, by name (see :func:`chosen_methods`).
        self.intervals = chosen_methods(self.declarations, interval)
        #: The rewards' known bounds the user declared, as (low, high) checked by the entry
        #: point that took them (None: each estimator's own, if any).
        self.reward_range = reward_range
        #: The interval methods used (registered components of kind ``interval``), by name,
        #: each having checked the estimators that use it.
        self.methods = checked_methods(self.declarations, self.intervals, reward_range)
        #: Per method, the (policy, estimator) pairs using it and what it read of each.
        self._uses = {
            name: {
                (p, e): self.declarations[e].intervals[name]
                for p in range(len(policies))
                for e, chosen in enumerate(self.intervals)
                if chosen == name
            }
            for name in self.methods
        }
        #: The bounds intervals are clipped to (None: none): the declared value_range, else
        #: for a reward per impression (a mean reward) the rewards' known range.
        self.value_ranges = [
            d.value_range
            or ((reward_range or d.reward_range) if d.estimand == "reward_per_impression" else None)
            for d in self.declarations
        ]
        self.policies = list(policies)
        self.estimators = list(estimators)
        self.state = FoldState()
        self._buffer = np.empty(0)

    @property
    def keys(self) -> list[tuple]:
        """Global column keys: (p, e, key) owned, (p, Shared) per policy, (None, Shared) shared."""
        return self.state.keys

    @property
    def moments(self) -> Moments | None:
        """Moments of every column over the units folded (None before any)."""
        return self.state.moments

    def with_state(self, state: FoldState) -> Accumulator:
        """A new accumulator of this set-up that has folded ``state`` (a worker's, say)."""
        out = copy.copy(self)
        out.state, out._buffer = state, np.empty(0)
        return out

    def add(self, log: InteractionLog, *, new_units: bool = False) -> Accumulator:
        """Fold one chunk of whole trajectories (``new_units=True``: none was added before)."""
        self.fold(log, new_units=new_units, keep=False)
        return self

    def fold(
        self, log: InteractionLog, *, new_units: bool = False, keep: bool = True
    ) -> np.ndarray:
        """Fold one chunk and return its (n_units, k) block of unit sums (``keep=False``: centred
        in place, saving a copy, and not to be used afterwards)."""
        if not new_units:
            self.state.ledger.add(log.unit_ids, SPLIT_ADVICE)
        block, index = self.unit_block(log)
        self._fold_intervals(log, block, index)
        groups = self._groups(index) if self.covariances == "estimator" else None
        chunk = Moments.from_array(block, overwrite=not keep, groups=groups).gathered(index)
        state = self.state
        state.moments = chunk if state.moments is None else state.moments.merge(chunk)
        if not keep:
            return block
        full = np.zeros((block.shape[0], index.size))
        full[:, index >= 0] = block[:, index[index >= 0]]
        return full

    def _fold_intervals(self, log: InteractionLog, block: np.ndarray, index: np.ndarray) -> None:
        """Fold the chunk's unit sums, not yet centred, into each interval method's state."""
        chunk = None
        for name, method in self.methods.items():
            part = self.state.intervals.get(name)
            if part is None:
                part = method.start(self._uses[name])
                if part is None:  # the method folds nothing (normal)
                    continue
                self.state.intervals[name] = part
            chunk = chunk or ChunkSums(log, self, block, index)
            part.add(chunk)

    def unit_block(self, log: InteractionLog) -> tuple[np.ndarray, np.ndarray]:
        """The (n_units, u) block of one chunk's distinct columns summed per unit, and each
        global column's index in it (-1: absent, all zero); tallies and exclusions recorded.
        One policy's row columns are held at a time; an array given twice is summed once."""
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
                self.state.record((p, e), contribution.tally, contribution.excluded)
            block.add(produced)
        return block.finish()

    def _collect(self, p, e, contribution, view, produced, block) -> None:
        """Key one contribution's columns by their owner, computing shared ones once."""
        state = self.state
        local = state.local.setdefault((p, e), {})
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
                if where not in produced and where not in block.slot:
                    produced[where] = (column.compute(view), False)
            else:
                where = (p, e, key)
                produced[where] = (column, per_unit)
            if local.setdefault(key, where) != where:
                raise OffevalError(f"{owner}: column {key!r} changed between chunks")
            if where not in state.where:
                state.new_column(where)

    def _groups(self, index: np.ndarray) -> list[np.ndarray]:
        """Per estimator, the distinct block columns it reads (for ``covariances='estimator'``)."""
        groups = []
        for e in range(len(self.estimators)):
            used = {
                self.state.where[where]
                for (_, e2), keys in self.state.local.items()
                if e2 == e
                for where in keys.values()
            }
            present = index[sorted(used)] if used else np.zeros(0, dtype=np.int64)
            groups.append(np.unique(present[present >= 0]))
        return groups

    def _scratch(self, rows: int, columns: int, keep: np.ndarray | None = None) -> np.ndarray:
        """A (rows, columns) Fortran-ordered block on a buffer that only grows (fresh arrays
        cost page faults), ``keep`` (a block on the old buffer) copied over."""
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
        if self.moments is None or other.moments is None:
            return self if other.moments is None else other
        if other.covariances != self.covariances:
            raise OffevalError("cannot merge accumulators that keep different covariances")
        return self.with_state(self.state.merge(other.state))

    def stats(self, p: int, e: int, moments: Moments, covariance: np.ndarray) -> _Stats:
        """The columns of one (policy, estimator), as its ``combine`` sees them."""
        where = self.state.where
        keys = {key: where[glob] for key, glob in self.state.local.get((p, e), {}).items()}
        owner = f"estimator {self.declarations[e].label!r}"
        return _Stats(moments, keys, covariance, owner)

    def result(self, level: float = 0.95) -> Evaluation:
        """Values, standard errors and intervals of every (policy, estimator), at a
        confidence ``level`` in (0, 1) that the caller's entry point checked."""
        if self.moments is None:
            raise OffevalError("no data was added")
        return Evaluation(self, level)


class _ChunkBlock:
    """The distinct unit-level columns of one chunk, filled policy by policy (on
    :meth:`Accumulator._scratch`, doubled as needed); one array given twice takes one column."""

    def __init__(self, log: InteractionLog, acc: Accumulator):
        self.log, self.acc = log, acc
        self.slot: dict[tuple, int] = {}
        self.used = 0
        self.block = acc._scratch(log.n_units, max(16, len(acc.keys)))

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
                kind, acc = "units" if per_unit else "rows", self.acc
                if len(where) == 3:
                    p, e, key = where
                    named = f"{key!r} of {acc.declarations[e].label} on {acc.policies[p].name}"
                else:
                    named = f"{where[1].function.__name__}{where[1].args}"
                raise OffevalError(
                    f"column {named} has shape {column.shape}, expected one "
                    f"value per {kind[:-1]} ({size} {kind})"
                )
            if self.used == self.block.shape[1]:
                self.block = self.acc._scratch(log.n_units, 2 * self.used, keep=self.block)
            j, self.used = self.used, self.used + 1
            if per_unit or one_row_units:
                self.block[:, j] = column
            else:
                np.add.reduceat(column, log.unit_starts, out=self.block[:, j])
            distinct[identity] = self.slot[where] = j

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """The (n_units, u) block and each global column's index in it (-1: absent)."""
        index = np.array([self.slot.get(where, -1) for where in self.acc.keys], dtype=np.int64)
        return self.block[:, : self.used], index


def _check_components(
    policies: Sequence[Policy], estimators: Sequence[Estimator]
) -> list[Declaration]:
    """The estimators' declarations, once policies and estimators are checked."""
    for given, one, many in (
        (policies, "target policy", "policies"),
        (estimators, "estimator", "estimators"),
    ):
        if isinstance(given, (str, bytes)) or not isinstance(given, Sequence) or not given:
            raise OffevalError(f"give at least one {one} (a list of {many})")
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


def bounded_chunks(
    log: InteractionLog,
    acc: Accumulator,
    chunk_rows: int,
    rows: tuple[int, int] | None = None,
) -> Iterator[InteractionLog]:
    """The log's chunks of at most ``chunk_rows`` rows whose unit-sum block stays within
    :data:`BLOCK_CELLS` for the columns ``acc`` has seen so far (the first chunk, of
    :data:`FIRST_CHUNK_ROWS`, tells how many columns the estimators emit); ``chunk_rows``
    is a whole number >= 1, as :func:`~offeval.engine.evaluation.evaluate` checked it."""
    rows_per_unit = log.n_rows / max(log.n_units, 1)

    def size() -> int:
        if not acc.keys:
            return min(chunk_rows, FIRST_CHUNK_ROWS)
        units = BLOCK_CELLS // len(acc.keys)
        return max(1, min(chunk_rows, int(units * rows_per_unit)))

    return log.chunks(size, rows)


def fold(
    acc: Accumulator,
    logs: Iterable[InteractionLog | UnitTable],
    *,
    new_units: bool = False,
    on_rows: Callable[[int], None] | None = None,
) -> Accumulator:
    """Fold every chunk of ``logs`` into ``acc``: the loop of an evaluation's pass (here, in
    a worker or in a Dask partition).

    ``new_units=True`` vouches that no trajectory arrives twice (chunks of one log);
    ``on_rows(n)`` is told of the rows of every chunk folded.
    """
    for chunk in logs:
        if not isinstance(chunk, (InteractionLog, UnitTable)):
            raise OffevalError(f"expected InteractionLog chunks, got {type(chunk).__name__}")
        acc.fold(chunk, new_units=new_units, keep=False)
        if on_rows is not None:
            on_rows(chunk.n_rows)
    return acc
