"""Candidate tables read from files: whole beside a log read whole, or streamed in step with
a log streamed from Parquet.

A candidate table lists, for every slot (trajectory, position) of the log,
every item the logging policy could have shown there, with its logging
``propensity``; its other columns (target-policy probabilities or scores,
a reward model's predictions, features) are kept under their own names. Its
own mapping (role -> column) names the columns of :data:`CANDIDATE_ROLES`;
the trajectory may be a list of columns, a composite key, as in the log's
mapping (the parts may have other names in the two files, but the same values).
The propensity of each slot's logged item must be the log's own propensity for it
(:func:`check_logged_propensities`): a table that contradicts the log is refused.
Rows are labelled as :func:`~offeval.data.files.read_table` labels them (a text
file's line numbers), and :func:`candidates_in_lines` names them so in errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from offeval.data.files import ParquetBatches, in_lines, parquet_batches, read_table
from offeval.data.keys import COMPOSITE_ROLES, composite_key
from offeval.errors import ColumnError, OffevalError, RowError, did_you_mean, hint

if TYPE_CHECKING:  # logs are handed in, never made here: log.py imports this module
    from offeval.data.log import InteractionLog

#: The roles a candidate table's mapping may name, with what each holds.
CANDIDATE_ROLES: dict[str, str] = {
    "trajectory": "session or banner id, as in the log (may be several columns)",
    "position": "1-based position of the slot (defaults to 1: one slot per trajectory)",
    "item": "a candidate item of the slot",
    "propensity": "logging probability of showing the item at the slot's position",
}
#: What a streamed candidate file must be, said with its errors.
ORDER = (
    "streamed, the candidate file must list the trajectories in the log's order, each one's "
    "rows together"
)
#: What errors call the candidate table's rows (:class:`~offeval.errors.RowError`'s table).
TABLE = "candidate rows"
#: How far (relative) a logged item's candidate propensity may be from the log's own: a
#: float's round trip through a text file (15 significant digits) stays well within it.
PROPENSITY_RTOL = 1e-9


def check_candidate_roles(mapping: Mapping, option: str = "--candidates-map") -> None:
    """Every role of a candidate mapping is one of :data:`CANDIDATE_ROLES`."""
    for role, column in mapping.items():
        if role not in CANDIDATE_ROLES:
            raise OffevalError(
                f"{option} {role}={column}: no candidate role {role!r}"
                f"{did_you_mean(role, CANDIDATE_ROLES)}; the roles: {', '.join(CANDIDATE_ROLES)}"
            )


def candidate_frame(frame: pd.DataFrame, mapping: Mapping | None = None) -> pd.DataFrame:
    """A candidate table with canonical role names (its index, the row labels, kept).

    Each role's column is renamed to the role (a list of columns for the
    trajectory becomes one key, as :func:`~offeval.data.keys.composite_key`
    makes the log's); the other columns are kept. A table without a position
    is one of a log with one row per trajectory (see :func:`attach_candidates`).
    """
    mapping = dict(mapping or {})
    check_candidate_roles(mapping, "candidate mapping")
    labels = frame.index.to_numpy()
    renamed = {}
    for role, name in mapping.items():
        if isinstance(name, (list, tuple)):
            if role not in COMPOSITE_ROLES or len(name) < 2:
                raise OffevalError(
                    f"candidate mapping: only the trajectory may map to several columns (two "
                    f"or more), got {role!r} -> {list(name)!r}"
                )
            for column in name:
                if column not in frame:
                    raise ColumnError(
                        column, "part of the trajectory key but not in the candidate table"
                    )
            missing = frame[list(name)].isna().any(axis=1).to_numpy()
            if missing.any():
                raise ColumnError(
                    f"trajectory key {list(name)}",
                    "must not be missing",
                    labels[missing],
                    table=TABLE,
                )
            if role in frame and role not in name:
                raise ColumnError(
                    role,
                    f"the candidate table's trajectory is the key {list(name)}, but it also "
                    f"has a column named {role!r}: rename or drop it",
                )
            frame = frame.assign(**{role: composite_key(frame[list(name)])})
            continue
        if name not in frame:
            raise ColumnError(
                name,
                f"mapped to the candidate role {role!r} but not in the candidate table "
                f"(columns: {list(frame.columns)})" + did_you_mean(name, frame.columns),
            )
        if role in frame and role != name:
            raise ColumnError(
                role,
                f"the candidate role {role!r} is mapped to column {name!r}, but the candidate "
                f"table also has a column named {role!r}: rename or drop one of them",
            )
        renamed[name] = role
    frame = frame.rename(columns=renamed)
    for role in ("trajectory", "item", "propensity"):
        if role not in frame:
            how = hint(
                f"candidates mapping {{{role!r}: COLUMN}}", f"--candidates-map {role}=COLUMN"
            )
            raise ColumnError(role, f"the candidate table needs this column (map it with {how})")
    for role in ("trajectory", "item"):
        missing = frame[role].isna().to_numpy()
        if missing.any():
            raise ColumnError(role, "must not be missing", labels[missing], table=TABLE)
    return frame


def read_candidates(
    path: str | Path,
    mapping: Mapping | None = None,
    *,
    sep: str | None = None,
    decimal: str | None = None,
) -> pd.DataFrame:
    """A candidate table read from a Parquet, CSV or TSV file whole (:func:`candidate_frame`).

    Its rows are labelled by their lines (a text file) or their row in the file (Parquet).
    """
    frame = read_table(path, sep=sep, decimal=decimal)
    try:
        return candidate_frame(frame, mapping)
    except RowError as exc:
        raise candidates_in_lines(exc, path) from None


def candidates_in_lines(exc: RowError, path: str | Path) -> RowError:
    """An error about candidate rows naming them as ``cands.csv, lines [...]`` (a text
    file), or as ``cands.parquet, candidate rows [...]``; others unchanged."""
    if exc.table != TABLE or not exc.rows:
        return exc
    exc.table = "rows"  # in_lines relabels a table's "rows": this one's, read from ``path``
    named = in_lines(exc, path)
    if named.table == "rows":
        named.in_table(f"{Path(path).name}, {TABLE}")
    return named


def attach_candidates(
    log: InteractionLog,
    table: pd.DataFrame,
    path: str | Path,
    log_path: str | Path,
    mapping: Mapping | None = None,
    log_mapping: Mapping | None = None,
) -> InteractionLog:
    """``log`` with the candidate table read from ``path`` (:func:`read_candidates`).

    A table without positions puts each candidate at position 1, which fits
    a log of one row per trajectory only; its propensities of the logged items must
    be the log's (:func:`check_logged_propensities`). Errors name the user's columns
    (``mapping``, ``log_mapping``) and the rows of either file by their lines.
    """
    try:
        log = log.with_candidates(_positioned(table, log))
    except RowError as exc:
        raise in_users_words(exc, log_path, log_mapping, path, mapping) from None
    return log


def check_logged_propensities(log: InteractionLog) -> None:
    """The candidate propensity of each slot's logged item is the log's propensity for it,
    within a relative :data:`PROPENSITY_RTOL`; else a :class:`~offeval.errors.ColumnError`
    naming the candidate rows that contradict the log (by their labels). A log without
    propensities has nothing to contradict."""
    if "propensity" not in log.frame:
        return
    cands = log.candidates
    slot = cands["slot"].to_numpy()
    logged = cands["item"].to_numpy() == log.frame["item"].to_numpy()[slot]
    given = cands["propensity"].to_numpy()[logged]
    own = log.frame["propensity"].to_numpy()[slot[logged]]
    off = np.abs(given - own) > PROPENSITY_RTOL * own
    if off.any():
        first = np.argmax(off)
        raise ColumnError(
            "propensity",
            "the logged item's candidate propensity differs from the log's propensity by more "
            f"than a relative {PROPENSITY_RTOL:g}, e.g. {given[first]:.15g} where the log has "
            f"{own[first]:.15g}",
            log.candidate_source_rows[logged][off],
            table=TABLE,
        )


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


def in_users_words(
    exc: RowError,
    log_path: str | Path,
    log_mapping: Mapping | None,
    path: str | Path | None = None,
    mapping: Mapping | None = None,
) -> RowError:
    """An error about the log's or the candidate table's rows in the user's words: the
    column names of the file it is about, and its lines (text files)."""
    candidates = exc.table == TABLE
    if isinstance(exc, ColumnError):
        exc = exc.named((mapping if candidates else log_mapping) or {})
    if candidates:
        return exc if path is None else candidates_in_lines(exc, path)
    return in_lines(exc, log_path)


def _keys(frame: pd.DataFrame, trajectory: list) -> np.ndarray:
    """The trajectory key of each row of a raw batch (a composite key for several columns)."""
    if len(trajectory) == 1:
        return frame[trajectory[0]].to_numpy()
    return composite_key(frame[trajectory])


class StreamedCandidates:
    """Logs of a streamed log's batches, each with the candidate rows of its trajectories.

    The candidate file (Parquet) must list trajectories in the log's order,
    each trajectory's candidate rows together; they are read in batches of
    ``batch_rows`` and handed to each log in turn, so that at most a batch and
    one log's candidates are held. A candidate row whose trajectory the log
    has already passed (or never has) is named in the error.
    """

    def __init__(
        self, logs: Iterable[InteractionLog], batches: ParquetBatches, mapping, trajectory: list
    ):
        self._logs, self._batches = logs, batches
        self._mapping, self._trajectory = mapping, trajectory
        self.n_rows = getattr(logs, "n_rows", None)

    def __iter__(self) -> Iterator[InteractionLog]:
        batches = iter(self._batches)
        held = pd.DataFrame()  # candidate rows read but not yet handed to a log
        for log in self._logs:
            ids = pd.Index(log.unit_ids)
            read = [held]
            while not self._past(read[-1], ids):
                batch = next(batches, None)
                if batch is None:
                    break
                read.append(batch.assign(**{_KEY: _keys(batch, self._trajectory)}))
            rows = pd.concat(read) if len(read) > 1 else held
            inside = ids.get_indexer(rows[_KEY].to_numpy()) >= 0 if len(rows) else np.ones(0, bool)
            if not len(rows):
                raise ColumnError(
                    "item",
                    "logged item absent from its slot's candidate set (the candidate file "
                    "ends before the log)",
                    log.source_rows,
                )
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
    def _past(rows: pd.DataFrame, ids: pd.Index) -> bool:
        """Whether ``rows`` (the last read) reach a trajectory after the log's."""
        return bool(len(rows)) and ids.get_indexer(rows[_KEY].to_numpy()[-1:])[0] < 0

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


#: The column holding each streamed candidate row's trajectory key while it is held.
_KEY = "__offeval_key__"


def stream_candidates(
    logs: Iterable[InteractionLog],
    path: str | Path,
    mapping: Mapping | None = None,
    batch_rows: int = 1_000_000,
) -> StreamedCandidates:
    """The streamed ``logs`` (:func:`~offeval.data.log.stream_parquet`), each with its
    trajectories' rows of the candidate table in the Parquet file ``path``, read in
    batches of ``batch_rows`` as the logs go (:class:`StreamedCandidates`)."""
    trajectory = (mapping or {}).get("trajectory", "trajectory")
    parts = list(trajectory) if isinstance(trajectory, (list, tuple)) else [trajectory]
    return StreamedCandidates(logs, parquet_batches(path, batch_rows, parts), mapping, parts)
