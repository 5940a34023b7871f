"""Candidate tables: for every slot (trajectory, position) of a log, every item the logging
policy could have shown there with its ``propensity``, named by their own mapping (checked
against a log's slots in :mod:`offeval.data.log`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from offeval.data.files import in_lines, read_table
from offeval.data.keys import COMPOSITE_ROLES, composite_column, refuse
from offeval.errors import ColumnError, OffevalError, RowError, did_you_mean, hint

#: The roles a candidate table's mapping may name, with what each holds.
CANDIDATE_ROLES: dict[str, str] = {
    "trajectory": "session or banner id, as in the log (may be several columns)",
    "position": "1-based position of the slot (defaults to 1: one slot per trajectory)",
    "item": "a candidate item of the slot",
    "propensity": "logging probability of showing the item at the slot's position",
}
#: What errors call the candidate table's rows (:class:`~offeval.errors.RowError`'s table).
TABLE = "candidate rows"


def check_candidate_roles(mapping: Mapping, option: str = "--candidates-map") -> None:
    """Every role of a candidate mapping is one of :data:`CANDIDATE_ROLES`."""
    for role, column in mapping.items():
        if role not in CANDIDATE_ROLES:
            raise OffevalError(
                f"{option} {role}={column}: no candidate role {role!r}"
                f"{did_you_mean(role, CANDIDATE_ROLES)}; the roles: {', '.join(CANDIDATE_ROLES)}"
            )


def candidate_frame(frame: pd.DataFrame, mapping: Mapping | None = None) -> pd.DataFrame:
    """A candidate table with canonical role names (its index, the row labels, kept); a list
    of columns for the trajectory becomes one key, as in the log."""
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
            key = composite_column(frame, role, list(name), labels, "the candidate table", TABLE)
            if role in frame and role not in name:
                raise ColumnError(
                    role,
                    f"the candidate table's trajectory is the key {list(name)}, but it also "
                    f"has a column named {role!r}: rename or drop it",
                )
            frame = frame.assign(**{role: key})
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
        refuse(frame[role].isna().to_numpy(), role, "must not be missing", labels, TABLE)
    return frame


def read_candidates(
    path: str | Path,
    mapping: Mapping | None = None,
    *,
    sep: str | None = None,
    decimal: str | None = None,
) -> pd.DataFrame:
    """A candidate table read from a Parquet, CSV or TSV file whole (:func:`candidate_frame`),
    its rows labelled by their lines (a text file) or their row in the file (Parquet)."""
    frame = read_table(path, sep=sep, decimal=decimal)
    try:
        return candidate_frame(frame, mapping)
    except RowError as exc:
        raise in_lines(exc, path, TABLE) from None


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
        return exc if path is None else in_lines(exc, path, TABLE)
    return in_lines(exc, log_path)
