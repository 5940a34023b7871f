"""Interaction logs: validated tabular data with named column roles."""

from __future__ import annotations

import gzip
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from offeval.errors import (
    DECIMAL_COMMA,
    ColumnError,
    ConfigurationError,
    OffevalError,
    OffevalWarning,
    RowError,
    decimal_comma_hint,
    did_you_mean,
    hint,
)
from offeval.validation import check_choice, check_whole

if TYPE_CHECKING:
    from offeval.data.policy import Policy

#: Column roles an interaction log understands, with what each holds.
ROLES: dict[str, str] = {
    "trajectory": "session or banner id: the unit of independent observation",
    "context": "user or context id (defaults to the trajectory)",
    "item": "the shown item",
    "position": "1-based rank of the item in its trajectory (defaults to row order)",
    "reward": "observed reward, binary or real",
    "propensity": "logging probability mu(a|x) of showing the item at that position",
    "exposure": "logging exposure eps0(x, a)",
    "logging_score": "score the logging ranker gave the item (Plackett-Luce logits)",
    "day": "day or date of the interaction",
    "shuffled": "true where the trajectory came from uniformly shuffled traffic",
}
REQUIRED = ("trajectory", "item", "reward")
#: Largest position (1-based rank) a log may hold.
MAX_POSITION = np.iinfo(np.int32).max
TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1"})
FALSE_WORDS = frozenset({"false", "f", "no", "n", "0"})


#: Roles that may be keyed by several columns.
COMPOSITE_ROLES = ("trajectory", "context")


def composite_key(columns: pd.DataFrame) -> np.ndarray:
    """One 64-bit key per row from several columns (equal rows, equal keys, in any chunk).

    A hash of the values: two of n distinct combinations share a key with
    probability about n^2 / 2^65 (3e-8 for a million trajectories).
    """
    return pd.util.hash_pandas_object(columns, index=False).to_numpy().view(np.int64)


def _composite_keys(
    frame: pd.DataFrame, mapping: Mapping, labels: np.ndarray
) -> tuple[pd.DataFrame, dict]:
    """Roles mapped to a list of columns get one key column, named ``a+b`` (parts kept)."""
    mapping = dict(mapping)
    for role, parts in list(mapping.items()):
        if not isinstance(parts, (list, tuple)):
            continue
        if role not in COMPOSITE_ROLES or len(parts) < 2:
            raise OffevalError(
                f"mapping: only {list(COMPOSITE_ROLES)} may map to several columns (two or "
                f"more), got {role!r} -> {parts!r}"
            )
        for column in parts:
            if column not in frame.columns:
                raise ColumnError(column, f"part of the {role} key but not in the data")
        missing = frame[list(parts)].isna().any(axis=1).to_numpy()
        if missing.any():
            raise ColumnError(f"{role} key {list(parts)}", "must not be missing", labels[missing])
        name = "+".join(map(str, parts))
        if name in frame.columns:
            raise ColumnError(name, f"the {role} key's name is already a column of the data")
        frame = frame.assign(**{name: composite_key(frame[list(parts)])})
        mapping[role] = name
    return frame, mapping


def _logged_propensities(data: pd.DataFrame, logging: Policy) -> pd.DataFrame:
    """The propensity column from a declared logging policy (never beside a given one)."""
    if "propensity" in data:
        raise ColumnError(
            "propensity", "the data has propensities and a logging policy is declared: give one"
        )
    rows = data if "position" in data else data.assign(position=1)
    return data.assign(propensity=np.asarray(logging.probabilities(rows), dtype=float))


def _mapped(frame: pd.DataFrame, mapping: Mapping[str, str]) -> pd.DataFrame:
    """The frame with canonical role names: each role's column renamed, extras kept."""
    unknown = sorted(map(str, set(mapping) - set(ROLES)))
    if unknown:
        close = "".join(did_you_mean(role, ROLES) for role in unknown)
        raise OffevalError(f"unknown column roles {unknown}{close}; the roles: {', '.join(ROLES)}")
    for role, name in mapping.items():
        if not isinstance(name, (str, int)):
            raise OffevalError(f"mapping: role {role!r} must map to one column name, got {name!r}")
    duplicated = sorted(map(str, frame.columns[frame.columns.duplicated()].unique()))
    if duplicated:
        raise OffevalError(f"the data has duplicate column names: {duplicated}")
    for role, name in mapping.items():
        if name not in frame.columns:
            raise ColumnError(
                name,
                f"mapped to role {role!r} but not in the data (columns: {list(frame.columns)})",
            )
        if role in frame.columns and name != role:
            raise ColumnError(
                role,
                f"role {role!r} is mapped to column {name!r}, but the data also has a column "
                f"named {role!r}: rename or drop one of them",
            )
    roles = {role: role for role in ROLES if role in frame.columns and role not in mapping}
    roles.update(mapping)
    by_column: dict[str, list[str]] = {}
    for role, name in roles.items():
        by_column.setdefault(name, []).append(role)
    for name, used in by_column.items():
        if len(used) > 1:
            raise ColumnError(name, f"one column cannot serve two roles {used}")
    for role in REQUIRED:
        if role not in roles:
            how = hint(f"mapping={{{role!r}: COLUMN}}", f"--map {role}=COLUMN")
            raise ColumnError(role, f"required column is missing (map it with {how})")
    renamed = {name: role for role, name in roles.items()}
    out = frame[list(renamed)].rename(columns=renamed)
    extras = frame.drop(columns=list(renamed))
    return pd.concat([out, extras], axis=1) if len(extras.columns) else out


def _check_finite(values: np.ndarray, column: str, labels: np.ndarray) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        raise ColumnError(column, "must be finite (found NaN or inf)", labels[bad])


def _numeric(frame: pd.DataFrame, column: str, labels: np.ndarray) -> np.ndarray:
    """A column as floats; non-numbers are an error naming their rows."""
    values = frame[column]
    if values.dtype.kind in "biuf":
        return values.to_numpy(dtype=float)
    numbers = pd.to_numeric(values, errors="coerce")
    bad = (numbers.isna() & values.notna()).to_numpy()
    if values.dtype.kind == "M" or values.dtype.kind == "m" or bad.any():
        rows = labels[bad] if bad.any() else labels[:0]
        how = decimal_comma_hint(values[bad]) if bad.any() else ""
        raise ColumnError(column, f"must be numeric (found {values.dtype} values){how}", rows)
    return numbers.to_numpy(dtype=float)


def booleans(values: pd.Series, column: str, labels: np.ndarray) -> np.ndarray:
    """True/false values: booleans, 0/1, or the words true/false, yes/no, t/f, y/n."""
    if values.dtype == bool:
        return values.to_numpy()
    if values.dtype.kind in "iuf":
        numbers = values.to_numpy(dtype=float)
        bad = ~np.isin(numbers, (0.0, 1.0))
        if bad.any():
            raise ColumnError(column, "must be true or false (0 or 1)", labels[bad])
        return numbers == 1.0
    words = values.map(lambda v: str(v).strip().lower())
    true, false = words.isin(TRUE_WORDS).to_numpy(), words.isin(FALSE_WORDS).to_numpy()
    bad = ~(true | false)
    if bad.any():
        raise ColumnError(column, "must be true or false (true/false, yes/no, 1/0)", labels[bad])
    return true


def _validate(frame: pd.DataFrame, labels: np.ndarray) -> pd.DataFrame:
    """Check every role's values; return the frame with canonical dtypes."""
    reward = _numeric(frame, "reward", labels)
    _check_finite(reward, "reward", labels)
    frame["reward"] = reward
    for column in ("trajectory", "item", "context"):
        if column in frame:
            missing = frame[column].isna().to_numpy()
            if missing.any():
                raise ColumnError(column, "must not be missing", labels[missing])
    if "propensity" in frame:
        p = _numeric(frame, "propensity", labels)
        bad = ~((p > 0) & (p <= 1))
        if bad.any():
            raise ColumnError("propensity", "must lie in (0, 1]", labels[bad])
        frame["propensity"] = p
    if "exposure" in frame:
        e = _numeric(frame, "exposure", labels)
        bad = ~(np.isfinite(e) & (e > 0))
        if bad.any():
            raise ColumnError("exposure", "must be positive and finite", labels[bad])
        frame["exposure"] = e
    if "logging_score" in frame:
        s = _numeric(frame, "logging_score", labels)
        _check_finite(s, "logging_score", labels)
        frame["logging_score"] = s
    if "shuffled" in frame:
        frame["shuffled"] = booleans(frame["shuffled"], "shuffled", labels)
    return frame


def _positions(frame: pd.DataFrame, labels: np.ndarray) -> np.ndarray | None:
    """The position column as int64, checked whole and in range (None if absent)."""
    if "position" not in frame:
        return None
    column = frame["position"]
    if column.dtype.kind in "iu":  # whole already: only the range to check (two reductions)
        values = column.to_numpy()
        if values.size and 1 <= values.min() and values.max() <= MAX_POSITION:
            return values.astype(np.int64, copy=False)
    pos = _numeric(frame, "position", labels)
    bad = ~(np.isfinite(pos) & (pos >= 1) & (pos <= MAX_POSITION) & (pos == np.round(pos)))
    if bad.any():
        raise ColumnError(
            "position", f"must be a whole number from 1 to {MAX_POSITION}", labels[bad]
        )
    return pos.astype(np.int64)


def _grouped_starts(ids: pd.Series, pos: np.ndarray | None) -> np.ndarray | None:
    """Unit starts when the rows are already grouped by trajectory and ordered by position.

    The fast path of :func:`_order_and_positions`: one pass of comparisons, no
    hashing and no sort. None when the rows are not so ordered (or the check
    cannot tell cheaply).
    """
    values = ids.to_numpy()
    try:
        change = values[1:] != values[:-1]
    except TypeError:  # mixed types that numpy cannot compare
        return None
    starts = np.flatnonzero(np.r_[True, np.asarray(change, dtype=bool)])
    first = pd.Index(values[starts])  # consecutive groups differ, so ordered means unique
    try:
        ordered = first.is_monotonic_increasing or first.is_monotonic_decreasing
    except TypeError:
        ordered = False
    if not (ordered or first.is_unique):
        return None  # a trajectory comes back later: sort
    if pos is not None:
        same = ~np.r_[True, np.asarray(change, dtype=bool)]
        if np.any(same[1:] & (pos[1:] <= pos[:-1])):
            return None  # positions out of order (or repeated) within a trajectory
    return starts


def _order_and_positions(
    frame: pd.DataFrame, labels: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Sort rows by (trajectory, position); fill and check positions; find unit starts."""
    pos = _positions(frame, labels)
    starts = _grouped_starts(frame["trajectory"], pos)
    if starts is None:
        codes, _ = pd.factorize(frame["trajectory"], sort=False)
        if pos is None:
            order = np.argsort(codes, kind="stable")
        else:  # one int64 key (trajectory, position): a single sort instead of a lexsort
            order = np.argsort(codes.astype(np.int64) * (MAX_POSITION + 1) + pos)
        sorted_codes = codes[order]
        if not np.array_equal(order, np.arange(len(order))):
            frame = frame.iloc[order].reset_index(drop=True)
            labels = labels[order]
        starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        if pos is not None:
            pos = pos[order]
            dup = np.r_[False, (sorted_codes[1:] == sorted_codes[:-1]) & (pos[1:] == pos[:-1])]
            if dup.any():
                raise ColumnError("position", "duplicate position within a trajectory", labels[dup])
    if pos is None:
        if len(starts) == len(frame):
            pos = np.ones(len(frame), dtype=np.int64)
        else:
            counts = np.diff(np.r_[starts, len(frame)])
            pos = np.arange(len(frame)) - np.repeat(starts, counts) + 1
    frame["position"] = pos
    return frame, labels, starts


@runtime_checkable
class Log(Protocol):
    """What the engine needs from a log: rows grouped into units, chunkable.

    Rows are sorted so that each unit (trajectory) is contiguous and
    ``unit_starts`` gives the first row of each unit.
    """

    frame: pd.DataFrame
    unit_starts: np.ndarray

    @property
    def n_rows(self) -> int: ...

    @property
    def n_units(self) -> int: ...

    def column(self, role: str) -> np.ndarray: ...

    def chunks(self, max_rows: int) -> Iterator[Log]: ...


@dataclass(frozen=True, repr=False)
class InteractionLog:
    """A validated interaction log, rows sorted by trajectory then position.

    Build one with :meth:`from_frame` or :meth:`from_file`; never mutate ``frame``.
    ``frame`` holds the canonical role names (see :data:`ROLES`) plus any extra
    columns, for instance target-policy probabilities. ``source_rows`` maps each
    row back to its label in the input, so errors can name input rows.
    ``candidates`` optionally lists, for each (trajectory, position) slot, every
    item the logging policy could have shown there with its ``propensity``; its
    ``slot`` column is the index of the log row of that slot, and
    ``candidate_source_rows`` the input label of each of its rows.
    """

    frame: pd.DataFrame
    source_rows: np.ndarray
    unit_starts: np.ndarray
    candidates: pd.DataFrame | None = None
    candidate_source_rows: np.ndarray | None = None

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        mapping: Mapping[str, str | Sequence[str]] | None = None,
        candidates: pd.DataFrame | None = None,
        *,
        logging: Policy | None = None,
    ) -> InteractionLog:
        """Validate ``frame`` with column ``mapping`` (role -> column name).

        The trajectory (or context) may be a list of columns, a composite
        key: ``{"trajectory": ["user", "session"]}``. ``logging`` declares
        the logging policy instead of a propensity column, e.g.
        ``logging=TablePolicy.uniform(items, positions=3)``: each row's
        propensity is its probability under it.
        """
        if not isinstance(frame, pd.DataFrame):
            raise OffevalError(f"expected a pandas DataFrame, got {type(frame).__name__}")
        if len(frame) == 0:
            raise OffevalError("the log has no rows")
        if not isinstance(mapping or {}, Mapping):
            raise OffevalError(f"mapping must be a dict of role -> column, got {mapping!r}")
        labels = frame.index.to_numpy()
        frame, mapping = _composite_keys(frame.reset_index(drop=True), mapping or {}, labels)
        data = _mapped(frame, mapping)
        try:
            if logging is not None:
                data = _logged_propensities(data, logging)
            data = _validate(data, labels)
            data, labels, starts = _order_and_positions(data, labels)
        except ColumnError as exc:  # named after the user's column, not its role
            raise exc.named(mapping) from None
        if "context" not in data:
            data["context"] = data["trajectory"]
        roles = [r for r in ROLES if r in data]
        data = data[roles + [c for c in data.columns if c not in ROLES]]
        cand_rows = None
        if candidates is not None:
            candidates, cand_rows = _validate_candidates(candidates, data, labels)
        return cls(data, labels, starts, candidates, cand_rows)

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        mapping: Mapping[str, str] | None = None,
        *,
        sep: str | None = None,
        decimal: str | None = None,
    ) -> InteractionLog:
        """Read a Parquet or CSV file whole (see :func:`read_table`) and validate it.

        Errors name the rows of a delimited text file by their line numbers.
        """
        frame = read_table(path, sep=sep, decimal=decimal)
        try:
            return cls.from_frame(frame, mapping)
        except RowError as exc:
            raise in_lines(exc, path) from None

    @cached_property
    def unit_index(self) -> np.ndarray:
        """Index (0 .. n_units - 1) of each row's trajectory."""
        return np.repeat(np.arange(self.n_units), np.diff(np.r_[self.unit_starts, self.n_rows]))

    @cached_property
    def unit_ids(self) -> np.ndarray:
        """The trajectory id of each unit."""
        return self.frame["trajectory"].to_numpy()[self.unit_starts]

    @cached_property
    def candidate_items(self) -> tuple[np.ndarray, np.ndarray]:
        """Codes of the candidate table's distinct (trajectory, item) pairs; each's first row."""
        cands = self.require_candidates()
        unit = self.unit_index[cands["slot"].to_numpy()]
        items, uniques = pd.factorize(cands["item"].to_numpy())
        codes = pd.factorize(unit.astype(np.int64) * max(len(uniques), 1) + items)[0]
        running = np.maximum.accumulate(codes)
        first = np.flatnonzero(np.r_[True, running[1:] > running[:-1]])
        return codes, first

    @cached_property
    def _memo(self) -> dict:
        return {}

    def memo(self, function, *args, key=None):
        """``function(log, *args)``, computed once per log (chunk).

        For work that depends on the log but not on the policy (a logging
        policy's rank probabilities, say): every policy and estimator
        evaluated on the chunk shares it. Keyed by the function and its
        arguments, or the function and ``key`` when the arguments are not hashable.
        """
        cache_key = (function, args if key is None else key)
        if cache_key not in self._memo:
            self._memo[cache_key] = function(self, *args)
        return self._memo[cache_key]

    @cached_property
    def ones(self) -> np.ndarray:
        """A read-only array of ones, one per row (shared by every estimator)."""
        ones = np.ones(self.n_rows)
        ones.flags.writeable = False
        return ones

    @property
    def n_rows(self) -> int:
        """Number of logged rows (impressions)."""
        return len(self.frame)

    @property
    def n_units(self) -> int:
        """Number of trajectories."""
        return len(self.unit_starts)

    @property
    def has_candidates(self) -> bool:
        """Whether per-slot candidate sets with logging propensities are known."""
        return self.candidates is not None

    def require_candidates(self) -> pd.DataFrame:
        """The candidate table; a clear error if the log has none."""
        if self.candidates is None:
            how = hint(
                "build the log with InteractionLog.from_frame(..., candidates=table), or "
                "from_obp(..., with_candidates=True) for obp's bandit_feedback",
                "offeval evaluate cannot read candidate sets yet: leave this estimator out",
            )
            raise ConfigurationError(f"this estimator needs the log's candidate sets: {how}")
        return self.candidates

    def column(self, role: str) -> np.ndarray:
        """The values of one column as a numpy array; a clear error if absent."""
        if role not in self.frame:
            how = ""
            if role in ROLES:
                how = (
                    " (map it with "
                    + hint(f"mapping={{{role!r}: COLUMN}}", f"--map {role}=COLUMN")
                    + ")"
                )
            raise ColumnError(role, f"this estimator needs it but the log has no such column{how}")
        return self.frame[role].to_numpy()

    def chunks(self, max_rows: int) -> Iterator[InteractionLog]:
        """Split into consecutive logs of whole trajectories, about ``max_rows`` each."""
        rows = "a whole number of rows >= 1"
        max_rows = check_whole(max_rows, "chunk size", low=1, rule=rows, error=OffevalError)
        bounds = np.r_[self.unit_starts, self.n_rows]
        cut_units = np.unique(np.searchsorted(bounds, np.arange(0, self.n_rows, max_rows)))
        edges = np.r_[bounds[cut_units[cut_units < self.n_units]], self.n_rows]
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            yield self.slice_rows(int(lo), int(hi))

    def slice_rows(self, lo: int, hi: int) -> InteractionLog:
        """Rows ``lo:hi``, which must start and end at trajectory boundaries."""
        first, last = np.searchsorted(self.unit_starts, [lo, hi])
        starts = self.unit_starts[first:last] - lo
        frame = self.frame.iloc[lo:hi].reset_index(drop=True)
        cands, cand_rows = None, None
        if self.candidates is not None:
            slot = self.candidates["slot"].to_numpy()
            a, b = np.searchsorted(slot, [lo, hi])
            cands = self.candidates.iloc[a:b].reset_index(drop=True)
            cands["slot"] -= lo
            cand_rows = self.candidate_source_rows[a:b]
        return InteractionLog(frame, self.source_rows[lo:hi], starts, cands, cand_rows)

    def with_columns(self, **columns: np.ndarray) -> InteractionLog:
        """A copy with extra per-row columns (e.g. target probabilities)."""
        frame = self.frame.assign(**columns)
        return InteractionLog(
            frame, self.source_rows, self.unit_starts, self.candidates, self.candidate_source_rows
        )

    def __repr__(self) -> str:
        roles = [r for r in ROLES if r in self.frame]
        extra = [c for c in self.frame.columns if c not in ROLES]
        return (
            f"InteractionLog({self.n_rows:,} rows, {self.n_units:,} trajectories, "
            f"roles={roles}, extra={extra}, candidates={self.has_candidates})"
        )


def _validate_candidates(
    candidates: pd.DataFrame, rows: pd.DataFrame, row_labels: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray]:
    """Candidate sets: trajectory, position, item, propensity in [0, 1].

    Returns the table sorted by slot with an integer ``slot`` column (the row
    of the log whose (trajectory, position) the candidate belongs to), and the
    input label of each of its rows.
    """
    if not isinstance(candidates, pd.DataFrame):
        raise OffevalError(
            f"candidates must be a pandas DataFrame, got {type(candidates).__name__}"
        )
    for column in ("trajectory", "position", "item", "propensity"):
        if column not in candidates:
            raise ColumnError(column, "the candidate table must have this column")
    labels = candidates.index.to_numpy()
    cands = candidates.reset_index(drop=True)
    p = _numeric(cands, "propensity", labels)
    bad = ~((p >= 0) & (p <= 1))
    if bad.any():
        raise ColumnError(
            "propensity",
            "candidate propensities must lie in [0, 1]",
            labels[bad],
            table="candidate rows",
        )
    cands["propensity"] = p
    slots = _ordered_slots(cands, rows)
    if slots is not None:
        cands["slot"] = slots
        return cands, labels
    dup = cands.duplicated(["trajectory", "position", "item"]).to_numpy()
    if dup.any():
        raise ColumnError(
            "item", "candidate listed twice for the same slot", labels[dup], table="candidate rows"
        )
    slots = rows[["trajectory", "position"]].assign(slot=np.arange(len(rows)))
    try:
        cands = cands.merge(slots, on=["trajectory", "position"], how="left", sort=False)
    except (TypeError, ValueError):
        kinds = {c: (str(cands[c].dtype), str(rows[c].dtype)) for c in ("trajectory", "position")}
        raise ColumnError(
            "trajectory",
            f"the candidate table's trajectory and position must have the log's types "
            f"(candidate table vs log: {kinds})",
        ) from None
    orphan = cands["slot"].isna().to_numpy()
    if orphan.any():
        raise ColumnError(
            "trajectory",
            "candidate for a slot that is not in the log",
            labels[orphan],
            table="candidate rows",
        )
    cands["slot"] = cands["slot"].astype(np.int64)
    logged = rows[["item"]].assign(slot=np.arange(len(rows)))
    found = logged.merge(cands[["slot", "item"]], on=["slot", "item"], how="left", indicator=True)
    missing = (found["_merge"] == "left_only").to_numpy()
    if missing.any():
        raise ColumnError(
            "item", "logged item absent from its slot's candidate set", row_labels[missing]
        )
    order = np.argsort(cands["slot"].to_numpy(), kind="stable")
    return cands.iloc[order].reset_index(drop=True), labels[order]


def _ordered_slots(cands: pd.DataFrame, rows: pd.DataFrame) -> np.ndarray | None:
    """Each candidate's slot, when the table lists the log's slots in the log's order.

    The usual layout of a generated table: every slot's candidates together,
    slots in the log's order, the same number per slot. Returns None unless
    that holds and every check passes (distinct items per slot, the logged
    item among them); the general path then finds and names any bad row.
    """
    t, pos, item = (cands[c].to_numpy() for c in ("trajectory", "position", "item"))
    logged_t, logged_pos = rows["trajectory"].to_numpy(), rows["position"].to_numpy()
    n = len(rows)
    kinds = {t.dtype.kind, logged_t.dtype.kind, pos.dtype.kind, item.dtype.kind}
    if not n or len(t) % n or not kinds <= set("iu"):
        return None
    k = len(t) // n
    by_slot = (t.reshape(n, k), pos.reshape(n, k))
    for column, logged in zip(by_slot, (logged_t, logged_pos), strict=True):
        if not ((column == logged[:, None]).all()):
            return None
    items = np.sort(item.reshape(n, k), axis=1)
    if (items[:, 1:] == items[:, :-1]).any():
        return None
    if not (items == rows["item"].to_numpy()[:, None]).any(axis=1).all():
        return None
    return np.repeat(np.arange(n), k)


#: File suffixes read as Parquet, and as delimited text with their default separator.
PARQUET_SUFFIXES = (".parquet", ".pq")
TEXT_SUFFIXES = {".csv": ",", ".gz": ",", ".txt": ",", ".tsv": "\t"}
#: Separators a delimited text file is sniffed for.
SEPARATORS = ",;\t|"
#: Separators by name, as a command line may write them (``--sep tab``).
SEPARATOR_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
#: How much of a text file, and how many of its lines, the separator is read off.
SNIFF_BYTES, SNIFF_LINES = 64 * 1024, 50
_QUOTED = re.compile(r'"[^"]*"')
#: What a delimited text file's numbers may use as decimal mark.
DECIMALS = (",", ".")


def _checked_path(path: str | Path) -> Path:
    """The path of a readable data file; an OffevalError naming it otherwise."""
    path = Path(path)
    if not path.exists():
        raise OffevalError(f"{path}: no such file")
    if path.is_dir():
        raise OffevalError(f"{path}: is a directory, not a data file")
    if path.suffix.lower() not in (*PARQUET_SUFFIXES, *TEXT_SUFFIXES):
        raise OffevalError(
            f"{path}: unsupported file type {path.suffix!r}: use .parquet, .csv or .tsv"
        )
    return path


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def separator(path: str | Path) -> str:
    """The separator of a delimited text file: one of :data:`SEPARATORS`, read off its header.

    The header line (its quoted names left out) decides: the suffix's
    default (tab for ``.tsv``, comma otherwise) if it holds one, else the
    separator it holds (a semicolon- or tab-separated ``.csv`` is read as
    such); of several, the one found as often on the most lines that follow
    it; none, the default (a single column). The rows' text never outvotes
    the header, so a comma CSV with a comma in its header is read with commas.
    (``csv.Sniffer`` misread comma files whose text held ``|``, ``;`` and
    quotes, and took seconds on a text holding a stray quote.)
    """
    path = Path(path)
    default = TEXT_SUFFIXES[path.suffix.lower()]
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as file:
            lines = [line for line in file.read(SNIFF_BYTES).splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError, EOFError):
        return default  # the reader then reports what is wrong with the file
    if not lines:
        return default
    return header_separator(lines[0], lines[1:SNIFF_LINES], default) or default


def header_separator(header: str, rows: Sequence[str] = (), default: str = ",") -> str | None:
    """The separator of a delimited file with this header line, by :func:`separator`'s rule.

    Of :data:`SEPARATORS`, those the header holds outside quoted names:
    ``default`` if it is one of them; else the one found as often on most of
    the ``rows`` that follow; None if the header holds none (one column, or
    no header at all).
    """
    header = _QUOTED.sub("", header)
    found = [sep for sep in SEPARATORS if sep in header]
    if not found or default in found:
        return default if found else None
    count = [_QUOTED.sub("", row) for row in rows]
    return max(found, key=lambda sep: sum(row.count(sep) == header.count(sep) for row in count))


def separator_named(sep: str | None) -> str | None:
    """A separator given by the user: one character or a name of :data:`SEPARATOR_NAMES`
    (None: found from the file); an OffevalError naming ``sep``/``--sep`` otherwise."""
    if sep is None:
        return None
    sep = SEPARATOR_NAMES.get(sep, sep)
    if not isinstance(sep, str) or len(sep) != 1 or sep in '"\n\r':
        option = hint("sep", "--sep")
        raise OffevalError(
            f"{option} must be one character other than a quote or a line break, such as "
            f"',' or ';', or one of {', '.join(SEPARATOR_NAMES)}; got {sep!r}"
        )
    return sep


def _text_separator(path: Path, sep: str | None) -> str:
    return separator_named(sep) or separator(path)


def columns_of(path: str | Path, sep: str | None = None) -> list:
    """The column names of a data file, from its header or schema (no row is read)."""
    path = _checked_path(path)
    try:
        if path.suffix.lower() in PARQUET_SUFFIXES:
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        return list(pd.read_csv(path, sep=_text_separator(path, sep), nrows=0).columns)
    except pd.errors.EmptyDataError:
        raise OffevalError(f"{path}: the file is empty") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise OffevalError(f"{path}: cannot read its columns ({_first_line(exc)})") from None


def in_lines(exc: RowError, path: str | Path) -> RowError:
    """The error naming a delimited text file's rows (labelled by :func:`read_table`) as
    ``log.csv, lines [...]``: the lines they start on, counting the line breaks in
    quoted values and the blank lines before them (the file is read again, up to the
    last row named, only here: an error's cost, not every read's)."""
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES or exc.table != "rows" or not exc.rows:
        return exc
    return exc.in_table(f"{path.name}, lines", _lines_of(path, exc.rows))


def _lines_of(path: Path, labels: list) -> list:
    """The lines on which the rows that :func:`read_table` labelled ``labels`` start."""
    if not all(isinstance(x, int) and x >= 2 for x in labels):
        return labels
    try:
        starts = _row_starts(path, max(labels) - 1)
    except (OSError, EOFError):
        return labels  # the file changed or reads otherwise: the labels as read
    return [int(starts[x - 2]) if x - 2 < len(starts) else x for x in labels]


def _row_starts(path: Path, n: int) -> np.ndarray:
    """The line each of a text file's first ``n`` rows starts on (1-based; the header
    and blank lines are not rows, a quoted value's line breaks are counted)."""
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rb") as file:
        data = np.frombuffer(file.read(), np.uint8)
    return filled_records(data, *text_records(data))[1 : n + 1]


#: The bytes of a blank line.
_BLANK = np.frombuffer(b"\t\n\r ", np.uint8)


def text_records(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each record of delimited text (bytes; blank records included) starts, and the
    1-based line it starts on: a line break inside double quotes does not end a record."""
    newlines = np.flatnonzero(data == ord("\n"))
    ends = np.r_[True, np.cumsum(data == ord('"'))[newlines] % 2 == 0]  # outside quotes
    return np.r_[0, newlines + 1][ends], np.arange(1, len(newlines) + 2)[ends]


def filled_records(data: np.ndarray, starts: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """The ``lines`` of the records of ``data`` beginning at ``starts`` that are not blank."""
    inside = starts < len(data)
    filled = np.logical_or.reduceat(~np.isin(data, _BLANK), starts[inside])
    return lines[inside][filled]


def read_table(
    path: str | Path, *, sep: str | None = None, decimal: str | None = None
) -> pd.DataFrame:
    """Read a Parquet, CSV or TSV file into a DataFrame; unreadable files are OffevalErrors.

    A delimited text file's separator is ``sep``, else sniffed (:func:`separator`);
    its decimal mark is ``decimal`` (``","`` or ``"."``), else found by
    :func:`decimal_commas`. Its rows are labelled by their line numbers as an editor shows them:
    the header is line 1, the first row line 2, one line per row (where a
    quoted value holds a line break, or a line is blank, the rows after it
    start further down: :func:`in_lines` names those lines). A Parquet file's
    broken pandas metadata is ignored, with a warning (:func:`broken_pandas_metadata`).
    """
    path = _checked_path(path)
    suffix = path.suffix.lower()
    parquet = suffix in PARQUET_SUFFIXES
    if parquet and decimal is not None:
        option = hint("decimal", "--decimal")
        raise OffevalError(f"{path}: {option} is for CSV and TSV files, not Parquet")
    if not parquet:
        sep = _text_separator(path, sep)
        mark = _decimal(decimal, sep)
    try:
        if parquet:
            frame = _read_parquet(path)
        else:
            frame = pd.read_csv(path, sep=sep, decimal=mark)
            frame.index = pd.RangeIndex(2, len(frame) + 2)
            if decimal is None and sep == ";":
                frame = decimal_commas(frame)
    except pd.errors.EmptyDataError:
        raise OffevalError(f"{path}: the file is empty") from None
    except pd.errors.ParserError as exc:
        detail = str(exc).strip().splitlines()[-1]
        raise OffevalError(f"{path}: not a well-formed delimited file ({detail})") from None
    except UnicodeDecodeError:
        raise OffevalError(f"{path}: not a text file (cannot decode it as UTF-8)") from None
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise OffevalError(f"{path}: cannot read it as {suffix[1:]} ({_first_line(exc)})") from None
    if len(frame) == 0:
        raise OffevalError(f"{path}: the file has no rows")
    return frame


def _decimal(decimal: str | None, sep: str) -> str:
    """The decimal mark to read a text file of separator ``sep`` with (``"."`` unless given)."""
    if decimal is None:
        return "."
    option = hint("decimal", "--decimal")
    decimal = check_choice(decimal, option, DECIMALS, rule="',' or '.'", error=OffevalError)
    if decimal == sep:
        raise OffevalError(
            f"{option} {decimal!r}: {sep!r} separates the file's columns; if another "
            "character does, say which with " + hint("sep=';'", "--sep ';'")
        )
    return decimal


def decimal_commas(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame of a semicolon-separated file, its numbers with decimal commas read as numbers.

    The rule (applied when no decimal mark is given): if no column holds a
    number with a fractional part read with a decimal point, every text
    column whose values (the missing ones aside) are all whole numbers or
    numbers with one decimal comma (``0,5``, ``-12,25``, ``3,2e-05``), at
    least one of them with a comma, is read as numbers. Anything else is left as read:
    a file mixing both marks, or with a column of ``1,5`` and ``abc``, keeps
    its text, and the column's checks then say to give the mark. Ids written
    like ``12,3`` would be read as numbers too: give ``decimal="."`` (``--decimal .``)
    to keep them as text.
    """
    floats = [c for c in frame if frame[c].dtype.kind == "f"]
    if any((frame[c].dropna() % 1 != 0).any() for c in floats):
        return frame
    converted = {}
    for column in frame.columns:
        if not pd.api.types.is_string_dtype(frame[column].dtype):
            continue
        text = frame[column].dropna().astype(str)
        whole = text.str.fullmatch(r"\s*[-+]?\d+(?:[eE][-+]?\d+)?\s*")
        comma = text.str.fullmatch(DECIMAL_COMMA)
        if len(text) and (whole | comma).all() and comma.any():
            numbers = frame[column].astype("string").str.replace(",", ".", regex=False)
            converted[column] = pd.to_numeric(numbers).astype(float)
    return frame.assign(**converted) if converted else frame


def broken_pandas_metadata(schema) -> str | None:
    """Why a Parquet schema's pandas metadata cannot be used; None if it can, or if absent.

    Broken metadata (not JSON, keys missing: a file written by hand or cut
    short) is found by converting an empty table with it.
    """
    if b"pandas" not in (schema.metadata or {}):
        return None
    try:
        schema.empty_table().to_pandas()
    except Exception as exc:  # noqa: BLE001 - whatever pandas makes of it, the metadata is unusable
        return f"{type(exc).__name__}: {_first_line(exc)}"
    return None


def _warn_broken_metadata(path: Path, why: str, stacklevel: int) -> None:
    warnings.warn(
        f"{path}: its pandas metadata is broken ({why}): read without it (the index and "
        "column types pandas stored there are lost)",
        OffevalWarning,
        stacklevel=stacklevel + 1,
    )


def _without_pandas_metadata(data):
    """A pyarrow table or batch without its pandas metadata."""
    metadata = {k: v for k, v in (data.schema.metadata or {}).items() if k != b"pandas"}
    return data.replace_schema_metadata(metadata)


def _read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file whole; broken pandas metadata ignored, with a warning."""
    import pyarrow.parquet as pq

    why = broken_pandas_metadata(pq.read_schema(path))
    if why is None:
        return pd.read_parquet(path)
    _warn_broken_metadata(path, why, stacklevel=3)
    return _without_pandas_metadata(pq.read_table(path)).to_pandas()


class ParquetStream:
    """The logs of a Parquet file's batches: iterable (each pass reads the file again),
    with the file's row count (``n_rows``) so that progress bars have a total.
    ``plain`` reads the batches without the file's (broken) pandas metadata."""

    def __init__(self, source, mapping, trajectory: list, batch_rows: int, plain: bool = False):
        self._source, self._mapping = source, mapping
        self._trajectory, self._batch_rows, self._plain = trajectory, batch_rows, plain
        self.n_rows = int(source.metadata.num_rows)

    def __iter__(self) -> Iterator[InteractionLog]:
        return _batches(
            self._source, self._mapping, self._trajectory, self._batch_rows, self._plain
        )


def stream_parquet(
    path: str | Path, mapping: Mapping[str, str] | None = None, batch_rows: int = 1_000_000
) -> ParquetStream:
    """Validated logs of whole trajectories, read from a Parquet file in batches.

    The rows of a trajectory must be contiguous in the file; a trajectory that
    straddles a batch boundary is carried over to the next batch. A file not
    grouped by trajectory cannot be streamed: :func:`offeval.evaluate` and
    :class:`offeval.Accumulator` then stop with an error naming a trajectory
    that comes back, and saying how to sort the file. Broken pandas metadata
    is ignored, with a warning (:func:`broken_pandas_metadata`).
    """
    import pyarrow.parquet as pq

    path = _checked_path(path)
    if path.suffix.lower() not in PARQUET_SUFFIXES:
        raise OffevalError(f"{path}: only Parquet files can be streamed")
    batch_rows = check_whole(batch_rows, "batch_rows", low=1, error=OffevalError)
    trajectory = (mapping or {}).get("trajectory", "trajectory")
    parts = list(trajectory) if isinstance(trajectory, (list, tuple)) else [trajectory]
    try:
        # pre_buffer keeps every row group read until the file closes (apache/arrow#39808)
        source = pq.ParquetFile(path, pre_buffer=False)
    except (OSError, ValueError) as exc:
        raise OffevalError(f"{path}: cannot read it as parquet ({_first_line(exc)})") from None
    for column in parts:
        if column not in source.schema_arrow.names:
            raise ColumnError(column, f"the trajectory column is not in {path}")
    why = broken_pandas_metadata(source.schema_arrow)
    if why is not None:
        _warn_broken_metadata(path, why, stacklevel=2)
    return ParquetStream(source, mapping, parts, batch_rows, plain=why is not None)


def _batches(
    source, mapping, trajectory: list, batch_rows: int, plain: bool
) -> Iterator[InteractionLog]:
    carry: pd.DataFrame | None = None
    offset = 0
    for batch in source.iter_batches(batch_size=batch_rows):
        frame = (_without_pandas_metadata(batch) if plain else batch).to_pandas()
        if isinstance(frame.index, pd.RangeIndex):  # no stored index: label rows by file row
            frame.index = pd.RangeIndex(offset, offset + len(frame))
        offset += len(frame)
        if carry is not None:
            frame = pd.concat([carry, frame])
        key = frame[trajectory[0]] if len(trajectory) == 1 else composite_key(frame[trajectory])
        key = np.asarray(key)
        other = np.flatnonzero(key != key[-1])  # the last trajectory may go on in the next batch
        cut = other[-1] + 1 if other.size else 0
        carry = frame.iloc[cut:]
        if cut:
            yield InteractionLog.from_frame(frame.iloc[:cut], mapping)
    if carry is not None and len(carry):
        yield InteractionLog.from_frame(carry, mapping)
