"""Target policies: what an estimator needs to know about the policy it evaluates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from offeval.data.keys import refuse
from offeval.errors import (
    ColumnError,
    ConfigurationError,
    decimal_comma_hint,
    describe_rows,
    plain,
)
from offeval.validation import check_whole


@runtime_checkable
class Policy(Protocol):
    """A target policy, queried on any table of (context, item, position) rows."""

    name: str

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """For each row (of the log or of its candidate table), the probability that the
        policy shows ``item`` at ``position`` to ``context``."""
        ...


class ColumnPolicy:
    """A policy whose probabilities are stored in a column of the rows queried (the log's
    and the candidate table's): how ``offeval evaluate`` takes target policies."""

    def __init__(self, column: str, name: str | None = None):
        self.column = column
        self.name = str(name or column)  # a numpy string from an array of names shows as text

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """The column's values, checked to be numbers in [0, 1]."""
        if self.column not in rows:
            raise ColumnError(self.column, f"policy {self.name!r} reads this column; it is absent")
        values = rows[self.column]
        p = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
        bad = ~((p >= 0) & (p <= 1))
        if bad.any():
            how = "" if values.dtype.kind in "iuf" else decimal_comma_hint(values[bad])
            raise ColumnError(
                self.column,
                f"target probabilities of policy {self.name!r} must be numbers in [0, 1]{how}",
                positions=np.flatnonzero(bad),
            )
        return p

    def __repr__(self) -> str:
        return f"ColumnPolicy({self.column!r}, name={self.name!r})"


class LoggingPolicy:
    """The logging policy itself, read from the ``propensity`` column."""

    name = "logging"

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """The logged propensities."""
        return ColumnPolicy("propensity").probabilities(rows)

    def __repr__(self) -> str:
        return "LoggingPolicy()"


#: The key columns a probability table may have, in lookup order.
TABLE_KEYS = ("context", "item", "position")
#: How far above 1 a sum of probabilities may be (rounding: single precision is off by up
#: to 6e-8; ``np.allclose(sums, 1)`` allows 1e-5).
PROBABILITY_TOLERANCE = 1e-5
#: Largest dense array a table of integer keys is expanded to (cells of float64).
DENSE_TABLE_CELLS = 1 << 24
#: What errors call a probability table's rows.
_ROWS = "table rows"


@dataclass(frozen=True, eq=False)
class DenseTable:
    """A table policy's probabilities over integer keys in small ranges, as one flat array.

    ``keys``: the key columns (in :data:`TABLE_KEYS` order), ``low`` their lowest values and
    ``shape`` their ranges; ``probabilities``: one per cell (C order), 0 where the table has none.
    """

    keys: tuple[str, ...]
    low: tuple[int, ...]
    shape: tuple[int, ...]
    probabilities: np.ndarray

    @classmethod
    def of(cls, keys: pd.DataFrame, p: np.ndarray) -> DenseTable | None:
        """The dense form of a table's integer keys and probabilities (None: keys not integers,
        or their grid above :data:`DENSE_TABLE_CELLS` cells)."""
        columns = [keys[c].to_numpy() for c in keys]
        if not len(p) or any(c.dtype.kind not in "iu" for c in columns):
            return None
        low = tuple(int(c.min()) for c in columns)
        shape = tuple(int(c.max()) - lo + 1 for c, lo in zip(columns, low, strict=True))
        if np.prod(shape, dtype=float) > DENSE_TABLE_CELLS:
            return None
        dense = np.zeros(shape)
        dense[tuple(c - lo for c, lo in zip(columns, low, strict=True))] = p
        return cls(tuple(keys.columns), low, shape, dense.reshape(-1))

    @property
    def layout(self) -> tuple:
        """What numbers the cells (tables of one layout share per-cell work)."""
        return self.keys, self.low, self.shape

    def cells(self, values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        """Each row's cell from its integer keys (one array per key), and which rows fall
        inside the grid (None: all of them, which one reduction per key column tells)."""
        codes, inside = [], None
        for v, lo, size in zip(values, self.low, self.shape, strict=True):
            code = v.astype(np.int64, copy=False)
            if lo:
                code = code - lo
            if not (code.size and code.view(np.uint64).max() < size):  # negatives wrap: too large
                within = (code >= 0) & (code < size)
                inside = within if inside is None else inside & within
            codes.append(code)
        if len(codes) == 1:
            return codes[0], inside
        return np.ravel_multi_index(codes, self.shape, mode="clip"), inside

    def lookup(self, values: list[np.ndarray]) -> np.ndarray:
        """The probability of each row's keys (0 outside the grid): one gather."""
        cell, inside = self.cells(values)
        if inside is None:
            return self.probabilities.take(cell)
        out = np.zeros(len(cell))
        out[inside] = self.probabilities.take(cell[inside])
        return out


def _key_kind(values: pd.Series) -> str | None:
    """``"number"`` or ``"text"`` for a key column of one kind; None for anything else."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.cat.categories
    inferred = pd.api.types.infer_dtype(values, skipna=True)
    if inferred in ("integer", "floating", "mixed-integer-float", "decimal"):
        return "number"
    return "text" if inferred in ("string", "bytes") else None


def _example(values: pd.Series) -> object:
    """The first present value of a column, as a plain Python value."""
    present = values.dropna()
    return plain(present.iloc[0]) if len(present) else None


class TablePolicy:
    """A policy given as a table of probabilities, without a row per candidate.

    ``table`` has a ``probability`` column and the keys it depends on: ``item`` and
    ``position``, optionally ``context``, or ``item`` alone (a bandit); an absent key has
    probability 0. Per (context, position) the items' probabilities sum to at most 1 (+
    :data:`PROBABILITY_TOLERANCE`). Positions are 1-based (0 is refused, not shifted); text
    keys looked up against numbers (or the reverse) are an error, not a match of nothing.
    """

    def __init__(self, table: pd.DataFrame, name: str = "table", probability: str = "probability"):
        if not isinstance(table, pd.DataFrame):
            raise ConfigurationError(
                f"table must be a pandas DataFrame, got {type(table).__name__}"
            )
        if not isinstance(name, str) or not name:
            raise ConfigurationError(
                f"a policy's name must be a non-empty string, got {plain(name)!r}"
            )
        if not isinstance(probability, str) or probability in TABLE_KEYS:
            raise ConfigurationError(
                f"probability must name the column of probabilities (not a key column), got "
                f"probability={plain(probability)!r}"
            )
        self.name, probability = str(name), str(probability)  # np.str_ shown as text
        if "item" not in table or probability not in table:
            raise ColumnError(
                "item" if "item" not in table else probability,
                "a probability table needs item and probability columns "
                "(and position, context when the probabilities depend on them)",
            )
        self.keys = [k for k in TABLE_KEYS if k in table]
        labels = table.index.to_numpy()
        _check_keys(table, self.keys, labels)
        p = pd.to_numeric(table[probability], errors="coerce").to_numpy(dtype=float)
        bad = ~((p >= 0) & (p <= 1))
        refuse(bad, probability, "probabilities must lie in [0, 1]", labels, _ROWS)
        index = pd.MultiIndex.from_frame(table[self.keys])
        refuse(index.duplicated(), "item", "a key appears twice in the table", labels, _ROWS)
        _check_sums(table, self.keys, p, self.name, labels)
        self._index, self._p = index, p
        self._kinds = {key: (_key_kind(table[key]), _example(table[key])) for key in self.keys}
        self._dense = DenseTable.of(table[self.keys], p)

    @property
    def dense(self) -> DenseTable | None:
        """The probabilities as a :class:`DenseTable` when the keys are integers in small
        ranges; None otherwise, and for a subclass that answers otherwise than its table."""
        return self._dense if type(self).probabilities is TablePolicy.probabilities else None

    @classmethod
    def uniform(cls, items, positions: int = 1, name: str = "uniform") -> TablePolicy:
        """Uniformly random rankings of ``positions`` distinct items out of ``items``: each
        item at each position with probability 1 / len(items)."""
        items = list(items)
        if not items:
            raise ConfigurationError("a uniform policy needs items, got none")
        positions = check_whole(positions, "positions", low=1, high=len(items))
        twice = pd.Index(items)
        twice = twice[twice.duplicated()].unique()
        if len(twice):
            raise ConfigurationError(
                f"a uniform policy's items must be distinct; listed twice: {describe_rows(twice)}"
            )
        grid = pd.MultiIndex.from_product([items, range(1, positions + 1)])
        table = grid.to_frame(index=False, name=["item", "position"])
        return cls(table.assign(probability=1 / len(items)), name=name)

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """The table's probability of each row's key (0 where the table has none)."""
        for key in self.keys:
            if key not in rows:
                raise ColumnError(key, f"policy {self.name!r} looks its probabilities up by this")
            kind, example = self._kinds[key]
            theirs = _key_kind(rows[key])
            if kind and theirs and kind != theirs:  # text keys never match numbers
                raise ColumnError(
                    key,
                    f"the table of policy {self.name!r} has {kind} keys (e.g. {example!r}) but "
                    f"the rows have {theirs} keys (e.g. {_example(rows[key])!r}), which would "
                    "match nothing: convert one column to the other's type",
                )
        if self._dense is not None:
            values = [rows[key].to_numpy() for key in self.keys]
            if all(v.dtype.kind in "iu" for v in values):
                return self._dense.lookup(values)
        at = self._index.get_indexer(pd.MultiIndex.from_frame(rows[self.keys]))
        return np.where(at >= 0, self._p[np.maximum(at, 0)], 0.0)

    def __repr__(self) -> str:
        return f"TablePolicy({self.name!r}, {len(self._p)} rows by {self.keys})"


def _check_keys(table: pd.DataFrame, keys: list[str], labels: np.ndarray) -> None:
    """Keys present in every row; positions whole numbers from 1 (refusing 0-based ones)."""
    for key in keys:
        refuse(table[key].isna().to_numpy(), key, "keys must not be missing", labels, _ROWS)
    if "position" not in keys:
        return
    pos = pd.to_numeric(table["position"], errors="coerce").to_numpy(dtype=float)
    zero = (
        "positions are 1-based (the top slot is 1), and this table has position 0, as 0-based "
        "tools number them: add 1 to its positions"
    )
    refuse(pos == 0, "position", zero, labels, _ROWS)
    bad = ~(pos >= 1) | (pos != np.floor(pos)) | ~np.isfinite(pos)
    refuse(bad, "position", "positions must be whole numbers from 1", labels, _ROWS)


def _check_sums(
    table: pd.DataFrame, keys: list[str], p: np.ndarray, name: str, labels: np.ndarray
) -> None:
    """Per (context, position) the items' probabilities sum to at most 1 (+ the tolerance);
    the bandit's in all. The error names the slots and the table rows that add up there."""
    slots = [k for k in keys if k != "item"]
    if not slots:
        if p.sum() > 1 + PROBABILITY_TOLERANCE:
            raise ConfigurationError(
                f"policy {name!r}: the items' probabilities sum to {p.sum():.6g}, more than 1"
            )
        return
    groups = pd.Series(p).groupby([table[k].to_numpy() for k in slots])
    total = groups.transform("sum").to_numpy()
    over = total > 1 + PROBABILITY_TOLERANCE
    if over.any():
        where = pd.MultiIndex.from_frame(table.loc[over, slots]).unique()
        where = where.get_level_values(0) if len(slots) == 1 else where
        raise ConfigurationError(
            f"policy {name!r}: the items' probabilities sum to more than 1 at {'/'.join(slots)} "
            f"{describe_rows(where.to_numpy())} (up to {total[over].max():.6g}; table rows "
            f"{describe_rows(labels[over])}); they must sum to at most 1 per {'/'.join(slots)}"
        )
