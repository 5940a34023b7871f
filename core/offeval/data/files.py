"""Reading data files: Parquet, and delimited text (CSV, TSV: separators, decimal marks,
the lines its rows start on), whole into a frame or a Parquet file in batches."""

from __future__ import annotations

import gzip
import re
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from offeval.data.choices import DECIMALS
from offeval.errors import (
    DECIMAL_COMMA,
    ColumnError,
    OffevalError,
    OffevalWarning,
    RowError,
    hint,
)
from offeval.validation import check_choice

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
    """The separator of a delimited text file, read off its header (:func:`header_separator`;
    the suffix's default when it holds none). ``csv.Sniffer`` misread ``|``, ``;`` and quotes."""
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
    """The separator of a delimited file with this header line: of the :data:`SEPARATORS` it
    holds outside quoted names, ``default`` if one, else the one found as often on most of
    the ``rows`` that follow; None if it holds none (one column, or no header)."""
    header = _QUOTED.sub("", header)
    found = [sep for sep in SEPARATORS if sep in header]
    if not found or default in found:
        return default if found else None
    count = [_QUOTED.sub("", row) for row in rows]
    return max(found, key=lambda sep: sum(row.count(sep) == header.count(sep) for row in count))


def separator_named(sep: str | None) -> str | None:
    """A separator given by the user: one character or a name of :data:`SEPARATOR_NAMES`
    (None: found from the file); an OffevalError otherwise."""
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


def columns_of(path: str | Path, sep: str | None = None) -> list:
    """The column names of a data file, from its header or schema (no row is read)."""
    path = _checked_path(path)
    try:
        if path.suffix.lower() in PARQUET_SUFFIXES:
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        return list(pd.read_csv(path, sep=separator_named(sep) or separator(path), nrows=0).columns)
    except pd.errors.EmptyDataError:
        raise OffevalError(f"{path}: the file is empty") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise OffevalError(f"{path}: cannot read its columns ({_first_line(exc)})") from None


def in_lines(exc: RowError, path: str | Path) -> RowError:
    """The error naming a text file's rows (labelled by :func:`read_table`) by the lines they
    start on, ``log.csv, lines [...]`` (the file read again: an error's cost, not every read's)."""
    path, labels = Path(path), exc.rows
    if path.suffix.lower() in PARQUET_SUFFIXES or exc.table != "rows" or not labels:
        return exc
    if all(isinstance(x, int) and x >= 2 for x in labels):
        opener = gzip.open if path.suffix.lower() == ".gz" else open
        try:
            with opener(path, "rb") as file:
                data = np.frombuffer(file.read(), np.uint8)
        except (OSError, EOFError):  # the file changed or reads otherwise: the labels as read
            return exc.in_table(f"{path.name}, lines", labels)
        starts = filled_records(data, *text_records(data))[1:]  # the header is no row
        labels = [int(starts[x - 2]) if x - 2 < len(starts) else x for x in labels]
    return exc.in_table(f"{path.name}, lines", labels)


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

    A text file's separator is ``sep``, else sniffed (:func:`separator`); its decimal mark
    ``decimal`` (``","`` or ``"."``), else found by :func:`decimal_commas`; its rows are
    labelled 2, 3, ... (:func:`in_lines`). Broken pandas metadata is ignored, with a warning.
    """
    path = _checked_path(path)
    suffix = path.suffix.lower()
    parquet = suffix in PARQUET_SUFFIXES
    option = hint("decimal", "--decimal")
    if parquet and decimal is not None:
        raise OffevalError(f"{path}: {option} is for CSV and TSV files, not Parquet")
    if not parquet:
        sep = separator_named(sep) or separator(path)
    if not parquet and decimal is not None:
        decimal = check_choice(decimal, option, DECIMALS, rule="',' or '.'", error=OffevalError)
        if decimal == sep:
            raise OffevalError(
                f"{option} {decimal!r}: {sep!r} separates the file's columns; if another "
                "character does, say which with " + hint("sep=';'", "--sep ';'")
            )
    try:
        if parquet:
            import pyarrow.parquet as pq

            if _broken_metadata(path, pq.read_schema(path), stacklevel=2):
                frame = _without_pandas_metadata(pq.read_table(path)).to_pandas()
            else:
                frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, sep=sep, decimal=decimal or ".")
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


def decimal_commas(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame of a semicolon-separated file, its numbers with decimal commas read as numbers.

    Unless a column holds fractional numbers read with a decimal point, each text column of
    whole numbers and numbers with a decimal comma (``0,5``, ``3,2e-05``; one at least) is read
    as numbers, ids like ``12,3`` too (``decimal="."`` keeps them as text).
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


def _broken_metadata(path: Path, schema, stacklevel: int) -> bool:
    """Whether a Parquet schema's pandas metadata is present but unusable (converting an
    empty table with it fails), said in a warning."""
    if b"pandas" not in (schema.metadata or {}):
        return False
    try:
        schema.empty_table().to_pandas()
    except Exception as exc:  # noqa: BLE001 - whatever pandas makes of it, the metadata is unusable
        warnings.warn(
            f"{path}: its pandas metadata is broken ({type(exc).__name__}: {_first_line(exc)}): "
            "read without it (the index and column types pandas stored there are lost)",
            OffevalWarning,
            stacklevel=stacklevel + 1,
        )
        return True
    return False


def _without_pandas_metadata(data):
    """A pyarrow table or batch without its pandas metadata."""
    metadata = {k: v for k, v in (data.schema.metadata or {}).items() if k != b"pandas"}
    return data.replace_schema_metadata(metadata)


class ParquetBatches:
    """A Parquet file's rows as frames of ``batch_rows`` rows (labelled by their row in the file
    unless it stores an index), read again on each pass; the file checked first: it exists,
    opens and holds the columns of ``trajectory`` (``batch_rows``: a whole number >= 1, as
    :func:`~offeval.data.log.stream_parquet` checked it)."""

    def __init__(self, path: str | Path, batch_rows: int, trajectory: Sequence[str]):
        import pyarrow.parquet as pq

        path = _checked_path(path)
        if path.suffix.lower() not in PARQUET_SUFFIXES:
            raise OffevalError(f"{path}: only Parquet files can be streamed")
        self._batch_rows = batch_rows
        try:
            # pre_buffer keeps every row group read until the file closes (apache/arrow#39808)
            self._source = pq.ParquetFile(path, pre_buffer=False)
        except (OSError, ValueError) as exc:
            raise OffevalError(f"{path}: cannot read it as parquet ({_first_line(exc)})") from None
        for column in trajectory:
            if column not in self._source.schema_arrow.names:
                raise ColumnError(column, f"the trajectory column is not in {path}")
        self._plain = _broken_metadata(path, self._source.schema_arrow, stacklevel=3)
        self.n_rows = int(self._source.metadata.num_rows)

    def __iter__(self) -> Iterator[pd.DataFrame]:
        offset = 0
        for batch in self._source.iter_batches(batch_size=self._batch_rows):
            frame = (_without_pandas_metadata(batch) if self._plain else batch).to_pandas()
            if isinstance(frame.index, pd.RangeIndex):  # no stored index: label rows by file row
                frame.index = pd.RangeIndex(offset, offset + len(frame))
            offset += len(frame)
            yield frame
