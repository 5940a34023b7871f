"""Interaction logs: validated tabular data with named column roles (read from files,
whole or streamed, through :mod:`offeval.data.files`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pandas as pd

from offeval.data.candidates import TABLE, candidate_frame, in_users_words, read_candidates
from offeval.data.files import PARQUET_SUFFIXES, ParquetBatches, in_lines, read_table
from offeval.data.keys import COMPOSITE_ROLES, composite_column, composite_key, refuse
from offeval.errors import (
    ColumnError,
    ConfigurationError,
    OffevalError,
    RowError,
    decimal_comma_hint,
    did_you_mean,
    hint,
)
from offeval.validation import check_whole

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
        key = composite_column(frame, role, list(parts), labels, "the data", "rows")
        name = "+".join(map(str, parts))
        if name in frame.columns:
            raise ColumnError(name, f"the {role} key's name is already a column of the data")
        frame = frame.assign(**{name: key})
        mapping[role] = name
    return frame, mapping


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
    for name in dict.fromkeys(roles.values()):
        used = [role for role, column in roles.items() if column == name]
        if len(used) > 1:
            raise ColumnError(name, f"one column cannot serve two roles {used}")
    for role in REQUIRED:
        if role not in roles:
            how = hint(f"mapping={{{role!r}: COLUMN}}", f"--map {role}=COLUMN")
            raise ColumnError(role, f"required column is missing (map it with {how})")
    return frame.rename(columns={name: role for role, name in roles.items()})


def _numeric(frame: pd.DataFrame, column: str, labels: np.ndarray) -> np.ndarray:
    """A column as floats; non-numbers are an error naming their rows."""
    values = frame[column]
    if values.dtype.kind in "biuf":
        return values.to_numpy(dtype=float)
    numbers = pd.to_numeric(values, errors="coerce")
    bad = (numbers.isna() & values.notna()).to_numpy()
    if values.dtype.kind in "Mm" or bad.any():
        problem = f"must be numeric (found {values.dtype} values){decimal_comma_hint(values[bad])}"
        raise ColumnError(column, problem, labels[bad])
    return numbers.to_numpy(dtype=float)


def booleans(values: pd.Series, column: str, labels: np.ndarray) -> np.ndarray:
    """True/false values: booleans, 0/1, or the words true/false, yes/no, t/f, y/n."""
    if values.dtype == bool:
        return values.to_numpy()
    if values.dtype.kind in "iuf":
        numbers = values.to_numpy(dtype=float)
        refuse(~np.isin(numbers, (0.0, 1.0)), column, "must be true or false (0 or 1)", labels)
        return numbers == 1.0
    words = values.map(lambda v: str(v).strip().lower())
    true, false = words.isin(TRUE_WORDS).to_numpy(), words.isin(FALSE_WORDS).to_numpy()
    refuse(~(true | false), column, "must be true or false (true/false, yes/no, 1/0)", labels)
    return true


#: The smallest logging propensity offeval takes: importance weights up to 1e150 keep their
#: squares (in every variance) finite in floating point; below it IS would be inf, SNIPS nan.
MIN_PROPENSITY = 1e-150
#: Why a smaller propensity is refused.
TINY_PROPENSITY = (
    f"must be at least {MIN_PROPENSITY:g}: a smaller propensity's importance weight overflows "
    "floating point in a variance (is it a log-probability or a rounding artefact?)"
)


#: How far (relative) a logged item's candidate propensity may be from the log's own: a
#: float's round trip through a text file (15 significant digits) stays well within it.
PROPENSITY_RTOL = 1e-9
#: What a streamed candidate file must be, said with its errors.
ORDER = (
    "streamed, the candidate file must list the trajectories in the log's order, each one's "
    "rows together"
)


def _validate(frame: pd.DataFrame, labels: np.ndarray) -> pd.DataFrame:
    """Check every role's values; return the frame with canonical dtypes."""
    reward = _numeric(frame, "reward", labels)
    refuse(~np.isfinite(reward), "reward", "must be finite (found NaN or inf)", labels)
    frame["reward"] = reward
    for column in ("trajectory", "item", "context"):
        if column in frame:
            refuse(frame[column].isna().to_numpy(), column, "must not be missing", labels)
    if "propensity" in frame:
        p = _numeric(frame, "propensity", labels)
        refuse(~((p > 0) & (p <= 1)), "propensity", "must lie in (0, 1]", labels)
        refuse(p < MIN_PROPENSITY, "propensity", TINY_PROPENSITY, labels)
        frame["propensity"] = p
    if "exposure" in frame:
        e = _numeric(frame, "exposure", labels)
        refuse(~(np.isfinite(e) & (e > 0)), "exposure", "must be positive and finite", labels)
        frame["exposure"] = e
    if "logging_score" in frame:
        s = _numeric(frame, "logging_score", labels)
        refuse(~np.isfinite(s), "logging_score", "must be finite (found NaN or inf)", labels)
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
    refuse(bad, "position", f"must be a whole number from 1 to {MAX_POSITION}", labels)
    return pos.astype(np.int64)


def _grouped_starts(ids: pd.Series, pos: np.ndarray | None) -> np.ndarray | None:
    """Unit starts when the rows are already grouped by trajectory and ordered by position
    (one pass, no sort); None when they are not, or the check cannot tell cheaply."""
    values = ids.to_numpy()
    try:
        change = values[1:] != values[:-1]
    except TypeError:  # mixed types that numpy cannot compare
        return None
    new = np.r_[True, np.asarray(change, dtype=bool)]
    starts = np.flatnonzero(new)
    first = pd.Index(values[starts])  # consecutive groups differ, so ordered means unique
    try:
        ordered = first.is_monotonic_increasing or first.is_monotonic_decreasing
    except TypeError:
        ordered = False
    if not (ordered or first.is_unique):
        return None  # a trajectory comes back later: sort
    if pos is not None and np.any(~new[1:] & (pos[1:] <= pos[:-1])):
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
            refuse(dup, "position", "duplicate position within a trajectory", labels)
    if pos is None:
        counts = np.diff(np.r_[starts, len(frame)])
        pos = np.arange(len(frame)) - np.repeat(starts, counts) + 1
    frame["position"] = pos
    return frame, labels, starts


@dataclass(frozen=True, repr=False)
class InteractionLog:
    """A validated interaction log, rows sorted by trajectory then position.

    Build one with :meth:`from_frame` or :meth:`from_file`; never mutate ``frame`` (columns
    named by :data:`ROLES`, plus extras). ``source_rows``: each row's input label;
    ``candidates``: each slot's candidate items and ``propensity``, ``slot`` the log row of
    the slot (``candidate_source_rows``: their input labels).
    """

    #: The roles, the smallest propensity taken and why a smaller one is refused (for plugins).
    ROLES: ClassVar[dict[str, str]] = ROLES
    MIN_PROPENSITY: ClassVar[float] = MIN_PROPENSITY
    TINY_PROPENSITY: ClassVar[str] = TINY_PROPENSITY

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

        The trajectory (or context) may be a list of columns, a composite key:
        ``{"trajectory": ["user", "session"]}``. ``logging`` declares the logging
        policy instead of a propensity column (``TablePolicy.uniform(items, positions=3)``).
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
            if logging is not None and "propensity" in data:
                raise ColumnError(
                    "propensity",
                    "the data has propensities and a logging policy is declared: give one",
                )
            if logging is not None:
                rows = data if "position" in data else data.assign(position=1)
                data["propensity"] = np.asarray(logging.probabilities(rows), dtype=float)
            data = _validate(data, labels)
            data, labels, starts = _order_and_positions(data, labels)
        except ColumnError as exc:  # named after the user's column, not its role
            raise exc.named(mapping) from None
        if "context" not in data:
            data["context"] = data["trajectory"]
        roles = [r for r in ROLES if r in data]
        data = data[roles + [c for c in data.columns if c not in ROLES]]
        log = cls(data, labels, starts)
        return log if candidates is None else log.with_candidates(candidates)

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        mapping: Mapping[str, str] | None = None,
        *,
        sep: str | None = None,
        decimal: str | None = None,
        candidates: str | Path | None = None,
        candidates_mapping: Mapping[str, str | Sequence[str]] | None = None,
    ) -> InteractionLog:
        """Read a Parquet or CSV file whole (see :func:`read_table`) and validate it; errors name
        a text file's rows by line. ``candidates``: the file of its candidate table, with its own
        ``candidates_mapping`` (``sep`` and ``decimal`` apply to it too)."""
        frame = read_table(path, sep=sep, decimal=decimal)
        try:
            log = cls.from_frame(frame, mapping)
        except RowError as exc:
            raise in_lines(exc, path) from None
        if candidates is None:
            return log
        if Path(candidates).suffix.lower() in PARQUET_SUFFIXES:
            decimal = None  # a Parquet file stores numbers
        table = read_candidates(candidates, candidates_mapping, sep=sep, decimal=decimal)
        return attach_candidates(log, table, candidates, path, candidates_mapping, mapping)

    @cached_property
    def unit_index(self) -> np.ndarray:
        """Index (0 .. n_units - 1) of each row's trajectory."""
        return np.repeat(np.arange(self.n_units), np.diff(np.r_[self.unit_starts, self.n_rows]))

    @cached_property
    def unit_ids(self) -> np.ndarray:
        """The trajectory id of each unit."""
        return self.frame["trajectory"].to_numpy()[self.unit_starts]

    @cached_property
    def regular_slots(self) -> int | None:
        """k when every slot has exactly k candidate rows (candidate row j is slot j // k), else
        None (the table is sorted by slot: each block's first and last row tell)."""
        slot = self.require_candidates()["slot"].to_numpy()
        n = self.n_rows
        if not n or not slot.size or slot.size % n:
            return None
        k = slot.size // n
        every = np.arange(n)
        regular = np.array_equal(slot[::k], every) and np.array_equal(slot[k - 1 :: k], every)
        return k if regular else None

    @cached_property
    def _memo(self) -> dict:
        return {}

    def memo(self, function, *args, key=None):
        """``function(log, *args)``, computed once per log (chunk) and shared by every policy
        and estimator; keyed by the function and its arguments, or ``key`` if unhashable."""
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
                "build the log with InteractionLog.from_frame(..., candidates=table)",
                "give the candidate table with --candidates FILE (its columns mapped with "
                "--candidates-map ROLE=COLUMN)",
            )
            raise ConfigurationError(f"this estimator needs the log's candidate sets: {how}")
        return self.candidates

    def column(self, role: str) -> np.ndarray:
        """The values of one column as a numpy array; a clear error if absent."""
        if role not in self.frame:
            how = hint(f"mapping={{{role!r}: COLUMN}}", f"--map {role}=COLUMN")
            how = f" (map it with {how})" if role in ROLES else ""
            raise ColumnError(role, f"this estimator needs it but the log has no such column{how}")
        return self.frame[role].to_numpy()

    def chunks(
        self, max_rows: int | Callable[[], int], rows: tuple[int, int] | None = None
    ) -> Iterator[InteractionLog]:
        """Consecutive logs of whole trajectories, about ``max_rows`` each: the one chunker.

        A chunk ends at the first trajectory start from the next multiple of ``max_rows`` rows,
        counted from lo of ``rows`` ((lo, hi) at trajectory boundaries). A callable ``max_rows``
        is asked before each chunk; a new answer's multiples count from that chunk's first row.
        """
        if not callable(max_rows):
            rule = "a whole number of rows >= 1"
            max_rows = check_whole(max_rows, "chunk size", low=1, rule=rule, error=OffevalError)
        starts = self.unit_starts
        lo, stop = rows or (0, self.n_rows)
        origin, step = lo, None
        while lo < stop:
            now = max_rows() if callable(max_rows) else max_rows
            if now != step:
                origin, step = lo, now
            at = np.searchsorted(starts, origin + ((lo - origin) // step + 1) * step)
            hi = min(int(starts[at]) if at < starts.size else self.n_rows, stop)
            yield self.slice_rows(lo, hi)
            lo = hi

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

    def with_candidates(self, candidates: pd.DataFrame) -> InteractionLog:
        """A copy with this candidate table (roles as in :meth:`from_frame`'s), checked
        against the log's slots, and its logged items' propensities against the log's (within
        a relative :data:`PROPENSITY_RTOL`); its index labels its rows in errors."""
        cands, rows = _validate_candidates(candidates, self.frame, self.source_rows)
        if "propensity" in self.frame:
            slot = cands["slot"].to_numpy()
            logged = cands["item"].to_numpy() == self.frame["item"].to_numpy()[slot]
            given = cands["propensity"].to_numpy()[logged]
            own = self.frame["propensity"].to_numpy()[slot[logged]]
            off = np.abs(given - own) > PROPENSITY_RTOL * own
            if off.any():
                first = np.argmax(off)
                raise ColumnError(
                    "propensity",
                    "the logged item's candidate propensity differs from the log's propensity "
                    f"by more than a relative {PROPENSITY_RTOL:g}, e.g. {given[first]:.15g} "
                    f"where the log has {own[first]:.15g}",
                    rows[logged][off],
                    table=TABLE,
                )
        return replace(self, candidates=cands, candidate_source_rows=rows)

    def with_columns(self, **columns: np.ndarray) -> InteractionLog:
        """A copy with extra per-row columns (e.g. target probabilities)."""
        return replace(self, frame=self.frame.assign(**columns))

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
    """Candidate sets checked against the log's ``rows``: the table sorted by slot, with an
    integer ``slot`` column (the log row of its (trajectory, position)), and its row labels."""
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
    refuse(bad, "propensity", "candidate propensities must lie in [0, 1]", labels, TABLE)
    cands["propensity"] = p
    slots = _ordered_slots(cands, rows)
    if slots is not None:
        cands["slot"] = slots
        return cands, labels
    dup = cands.duplicated(["trajectory", "position", "item"]).to_numpy()
    refuse(dup, "item", "candidate listed twice for the same slot", labels, TABLE)
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
    refuse(orphan, "trajectory", "candidate for a slot that is not in the log", labels, TABLE)
    cands["slot"] = cands["slot"].astype(np.int64)
    logged = rows[["item"]].assign(slot=np.arange(len(rows)))
    found = logged.merge(cands[["slot", "item"]], on=["slot", "item"], how="left", indicator=True)
    missing = (found["_merge"] == "left_only").to_numpy()
    refuse(missing, "item", "logged item absent from its slot's candidate set", row_labels)
    order = np.argsort(cands["slot"].to_numpy(), kind="stable")
    return cands.iloc[order].reset_index(drop=True), labels[order]


def _ordered_slots(cands: pd.DataFrame, rows: pd.DataFrame) -> np.ndarray | None:
    """Each candidate's slot when the table lists the log's slots in order, k rows each, of
    distinct items and the logged one (a generated table); else None (the general path)."""
    t, pos, item = (cands[c].to_numpy() for c in ("trajectory", "position", "item"))
    logged_t, logged_pos = rows["trajectory"].to_numpy(), rows["position"].to_numpy()
    n = len(rows)
    kinds = {t.dtype.kind, logged_t.dtype.kind, pos.dtype.kind, item.dtype.kind}
    if not n or len(t) % n or not kinds <= set("iu"):
        return None
    k = len(t) // n
    items = np.sort(item.reshape(n, k), axis=1)
    regular = (
        (t.reshape(n, k) == logged_t[:, None]).all()
        and (pos.reshape(n, k) == logged_pos[:, None]).all()
        and not (items[:, 1:] == items[:, :-1]).any()
        and (items == rows["item"].to_numpy()[:, None]).any(axis=1).all()
    )
    return np.repeat(np.arange(n), k) if regular else None


def attach_candidates(
    log: InteractionLog,
    table: pd.DataFrame,
    path: str | Path,
    log_path: str | Path,
    mapping: Mapping | None = None,
    log_mapping: Mapping | None = None,
) -> InteractionLog:
    """``log`` with the candidate ``table`` read from ``path`` (a table without positions fits
    a log of one row per trajectory); errors name the user's columns and either file's lines."""
    try:
        return log.with_candidates(_positioned(table, log))
    except RowError as exc:
        raise in_users_words(exc, log_path, log_mapping, path, mapping) from None


def _positioned(table: pd.DataFrame, log: InteractionLog) -> pd.DataFrame:
    if "position" in table:
        return table
    if log.n_rows != log.n_units:
        how = hint("a 'position' column", "--candidates-map position=COLUMN")
        raise ColumnError(
            "position",
            "the candidate table needs the position of each candidate's slot: the log's "
            f"trajectories have several rows ({how})",
            table=TABLE,
        )
    return table.assign(position=1)


class ParquetStream:
    """The logs of a Parquet file's batches, each of whole trajectories (a batch's last one is
    carried over), with the file's row count (``n_rows``) for progress bars."""

    def __init__(self, path: str | Path, batch_rows: int, mapping):
        self._mapping, self._trajectory = mapping, _trajectory_columns(mapping)
        self._batches = ParquetBatches(path, batch_rows, self._trajectory)
        self.n_rows = self._batches.n_rows

    def __iter__(self) -> Iterator[InteractionLog]:
        carry: pd.DataFrame | None = None
        for frame in self._batches:
            if carry is not None:
                frame = pd.concat([carry, frame])
            key = _keys(frame, self._trajectory)
            other = np.flatnonzero(key != key[-1])  # the last trajectory may go on
            cut = other[-1] + 1 if other.size else 0
            carry = frame.iloc[cut:]
            if cut:
                yield InteractionLog.from_frame(frame.iloc[:cut], self._mapping)
        if carry is not None and len(carry):
            yield InteractionLog.from_frame(carry, self._mapping)


def stream_parquet(
    path: str | Path,
    mapping: Mapping[str, str] | None = None,
    batch_rows: int = 1_000_000,
    *,
    candidates: str | Path | None = None,
    candidates_mapping: Mapping[str, str | Sequence[str]] | None = None,
) -> Iterable[InteractionLog]:
    """Validated logs of whole trajectories, read from a Parquet file in batches.

    A trajectory's rows must be contiguous (:func:`offeval.evaluate` names one that comes
    back); ``candidates``: a Parquet candidate table (``candidates_mapping``) in the log's order.
    """
    batch_rows = check_whole(batch_rows, "batch_rows", low=1, error=OffevalError)
    logs = ParquetStream(path, batch_rows, mapping)
    if candidates is None:
        return logs
    return StreamedCandidates(logs, candidates, batch_rows, candidates_mapping)


def _trajectory_columns(mapping: Mapping | None) -> list:
    """The column (or columns, of a composite key) a mapping names for the trajectory."""
    trajectory = (mapping or {}).get("trajectory", "trajectory")
    return list(trajectory) if isinstance(trajectory, (list, tuple)) else [trajectory]


def _keys(frame: pd.DataFrame, trajectory: list) -> np.ndarray:
    """The trajectory key of each row of a raw batch (a composite key for several columns)."""
    if len(trajectory) == 1:
        return frame[trajectory[0]].to_numpy()
    return composite_key(frame[trajectory])


#: The column holding each streamed candidate row's trajectory key while it is held.
_KEY = "__offeval_key__"


class StreamedCandidates:
    """Logs of a streamed log's batches, each with the candidate rows of its trajectories (in
    the log's order: at most a batch and one log's candidates are held)."""

    def __init__(self, logs: ParquetStream, path: str | Path, batch_rows: int, mapping):
        self._logs, self._mapping, self.n_rows = logs, mapping, logs.n_rows
        self._trajectory = _trajectory_columns(mapping)
        self._batches = ParquetBatches(path, batch_rows, self._trajectory)

    def __iter__(self) -> Iterator[InteractionLog]:
        batches = iter(self._batches)
        held = pd.DataFrame()  # candidate rows read but not yet handed to a log
        for log in self._logs:
            ids = pd.Index(log.unit_ids)
            read = [held]
            # read until a row of a trajectory after the log's
            while not (len(read[-1]) and ids.get_indexer(read[-1][_KEY].to_numpy()[-1:])[0] < 0):
                batch = next(batches, None)
                if batch is None:
                    break
                read.append(batch.assign(**{_KEY: _keys(batch, self._trajectory)}))
            rows = pd.concat(read) if len(read) > 1 else held
            if not len(rows):
                raise ColumnError(
                    "item",
                    "logged item absent from its slot's candidate set (the candidate file "
                    "ends before the log)",
                    log.source_rows,
                )
            inside = ids.get_indexer(rows[_KEY].to_numpy()) >= 0
            if not inside[0]:
                self._orphans(rows, inside)
            cut = int(np.argmin(inside)) if not inside.all() else len(inside)
            held = rows.iloc[cut:]
            mine = candidate_frame(rows.iloc[:cut].drop(columns=_KEY), self._mapping)
            try:
                log = log.with_candidates(_positioned(mine, log))
            except ColumnError as exc:
                if exc.column == "propensity":  # a value's mistake, whatever the order
                    raise exc.named(self._mapping or {}) from None
                raise ColumnError(
                    exc.column, f"{exc.problem} ({ORDER})", exc.rows, table=exc.table, role=exc.role
                ) from None
            yield log
        rest = held if len(held) else next(batches, None)
        if rest is not None and len(rest):
            self._orphans(rest, np.zeros(len(rest), bool))

    @staticmethod
    def _orphans(rows: pd.DataFrame, inside: np.ndarray) -> None:
        """The error naming the leading candidate rows of trajectories this log does not have."""
        stop = int(np.argmax(inside)) if inside.any() else len(inside)
        raise ColumnError(
            "trajectory",
            f"candidate for a slot that is not in the log ({ORDER})",
            rows.index.to_numpy()[:stop],
            table=TABLE,
        )
