"""Reading data files: Parquet, and delimited text (CSV, TSV: separators, decimal marks,
the lines its rows start on), whole into a frame or a Parquet file in batches."""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from offeval.data.choices import DECIMALS
from offeval.errors import DECIMAL_COMMA, ColumnError, OffevalError, OffevalWarning, RowError, hint
from offeval.validation import check_choice

#: File suffixes read as Parquet, and as delimited text with their default separator.
PARQUET_SUFFIXES = (".parquet", ".pq")
TEXT_SUFFIXES = {".csv": ",", ".gz": ",", ".txt": ",", ".tsv": "\t"}
#: Compression suffixes and their openers: the suffix under one names the format.
COMPRESSIONS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
#: Separators a delimited text file is sniffed for.
SEPARATORS = ",;\t|"
#: Separators by name, as a command line may write them (``--sep tab``).
SEPARATOR_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
#: How much of a text file, and how many of its lines, the separator is read off.
SNIFF_BYTES, SNIFF_LINES = 64 * 1024, 50
_QUOTED = re.compile(r'"[^"]*"')


def data_suffix(path: str | Path) -> str:
    """The lower-case suffix naming a file's format, under a compression's (``a.csv.gz``: .csv)."""
    path = Path(path)
    inner = Path(path.stem).suffix.lower() if path.suffix.lower() in COMPRESSIONS else ""
    return inner or path.suffix.lower()


def opened(path: str | Path) -> BinaryIO:
    """The file opened for reading bytes, decompressed by its suffix."""
    return COMPRESSIONS.get(Path(path).suffix.lower(), open)(path, "rb")


def _checked_path(path: str | Path, any_suffix: bool = False) -> Path:
    """A readable data file's path (of a known suffix unless ``any_suffix``), or an OffevalError."""
    path = Path(path)
    if not path.exists():
        raise OffevalError(f"{path}: no such file")
    if path.is_dir():
        raise OffevalError(f"{path}: is a directory, not a data file")
    if not any_suffix and data_suffix(path) not in (*PARQUET_SUFFIXES, *TEXT_SUFFIXES):
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
    default = TEXT_SUFFIXES.get(data_suffix(path), ",")
    try:
        with opened(path) as file:
            text = file.read(SNIFF_BYTES).decode(errors="ignore")  # a cut last character
            lines = [line for line in text.splitlines() if line.strip()]
    except (OSError, EOFError, lzma.LZMAError):
        return default  # the reader then reports what is wrong with the file
    return (lines and header_separator(lines[0], lines[1:SNIFF_LINES], default)) or default


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
        if data_suffix(path) in PARQUET_SUFFIXES:
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        return list(pd.read_csv(path, sep=separator_named(sep) or separator(path), nrows=0).columns)
    except pd.errors.EmptyDataError:
        raise OffevalError(f"{path}: the file is empty") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise OffevalError(f"{path}: cannot read its columns ({_first_line(exc)})") from None


def in_lines(exc: RowError, path: str | Path, table: str = "rows") -> RowError:
    """The error about rows of ``table`` read from ``path``, a text file's named by the lines they
    start on (``log.csv, lines [...]``, the file read again: an error's cost, not every read's)."""
    path, labels = Path(path), exc.rows
    if exc.table != table or not labels:
        return exc
    exc.table = "rows"  # the table :meth:`RowError.in_table` names anew
    if data_suffix(path) in PARQUET_SUFFIXES:
        return exc if table == "rows" else exc.in_table(f"{path.name}, {table}")
    if all(isinstance(x, int) and x >= 2 for x in labels):
        try:
            starts = record_lines(path)
        except (OSError, EOFError, lzma.LZMAError):  # the file changed: the labels as read
            return exc.in_table(f"{path.name}, lines", labels)
        labels = [int(starts[x - 2]) if x - 2 < len(starts) else x for x in labels]
    return exc.in_table(f"{path.name}, lines", labels)


def record_lines(path: str | Path, rows: int | None = None) -> np.ndarray:
    """The line each record after a text file's header starts on (blank ones skipped, a quoted
    line break ends none); with ``rows``, of the ``rows`` records read: 2, 3, ... if the file
    has as many lines and no quote (a block in memory), else by record, or by line."""
    count, quoted, end = 0, False, b"\n"
    with opened(path) as file:
        while block := file.read(1 << 24):
            count, quoted, end = count + block.count(b"\n"), quoted or b'"' in block, block[-1:]
    if rows == count + (end != b"\n") - 1 and not quoted:
        return np.arange(2, rows + 2)
    with opened(path) as file:
        data = np.frombuffer(file.read(), np.uint8)
    lines = filled_records(data, *text_records(data))[1:]
    if rows is not None and len(lines) != rows:
        starts = np.r_[0, np.flatnonzero(data == ord("\n")) + 1]
        lines = filled_records(data, starts, np.arange(1, len(starts) + 1))[1:]
    return lines if rows is None or len(lines) == rows else np.arange(2, rows + 2)


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
    path: str | Path,
    *,
    sep: str | None = None,
    decimal: str | None = None,
    text: Sequence[str] = (),
    parquet: bool | None = None,
) -> pd.DataFrame:
    """Read a Parquet, CSV or TSV file (or one compressed) into a DataFrame; an unreadable one is
    an OffevalError. Parquet by its suffix (:func:`data_suffix`), or ``parquet`` (any suffix).

    A text file's separator is ``sep``, else sniffed (:func:`separator`); its decimal mark
    ``decimal`` (``","`` or ``"."``), else found by :func:`decimal_commas`; its rows are labelled
    2, 3, ... (:func:`in_lines`); its ``text`` columns are read as typed (``007``), and then only
    an empty cell is missing (``NA`` too is text). Broken pandas metadata is ignored, warned."""
    path = _checked_path(path, any_suffix=parquet is not None)
    parquet = data_suffix(path) in PARQUET_SUFFIXES if parquet is None else parquet
    option = hint("decimal", "--decimal")
    if parquet and decimal is not None:
        raise OffevalError(f"{path}: {option} is for CSV and TSV files, not Parquet")
    sep = None if parquet else separator_named(sep) or separator(path)
    if decimal is not None:
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
            frame = _read_text(path, {"sep": sep, "decimal": decimal or "."}, text)
            frame.index = pd.RangeIndex(2, len(frame) + 2)
            if decimal is None and sep == ";":
                frame = decimal_commas(frame, keep=text)
    except pd.errors.EmptyDataError:
        raise OffevalError(f"{path}: the file is empty") from None
    except pd.errors.ParserError as exc:
        raise _fields_error(path, exc) from None
    except UnicodeDecodeError:
        raise OffevalError(f"{path}: not a text file (cannot decode it as UTF-8)") from None
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:  # ArrowInvalid: ValueError
        kind = "parquet" if parquet else "text"
        raise OffevalError(f"{path}: cannot read it as {kind} ({_first_line(exc)})") from None
    if len(frame) == 0:
        raise OffevalError(f"{path}: the file has no rows")
    return frame


def _read_text(path: Path, options: dict, text: Sequence[str]) -> pd.DataFrame:
    """A delimited file read by pandas' C parser; with ``text`` columns, by pyarrow's first
    (3x faster on text, slower on numbers alone; the C parser names the line of an error)."""
    if text:
        options |= {"dtype": dict.fromkeys(text, str), "keep_default_na": False, "na_values": [""]}
        try:
            return pd.read_csv(path, engine="pyarrow", **options)
        except (pd.errors.ParserError, ValueError):
            pass
    return pd.read_csv(path, **options)


#: pandas' error for a record with too many fields, and the characters of a line an error shows.
_FIELDS_ERROR, SHOWN = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)"), 80


def _fields_error(path: Path, exc: pd.errors.ParserError) -> OffevalError:
    """pandas' parser error naming the line an editor shows, and its text."""
    found = _FIELDS_ERROR.search(str(exc))
    if found is None:
        detail = str(exc).strip().splitlines()[-1]
        return OffevalError(f"{path}: not a well-formed delimited file ({detail})")
    expected, record, count = map(int, found.groups())
    with opened(path) as file:
        raw = file.read()
    _, lines = text_records(np.frombuffer(raw, np.uint8))
    number = int(lines[record - 1]) if record <= len(lines) else record
    problem = f"expected {expected} fields (as the header has), found {count}"
    return line_error(path, number, problem, raw.split(b"\n", number)[number - 1])


def line_error(name: str | Path, number: int, problem: str, line: bytes) -> OffevalError:
    """An error naming a file's line, the problem and the line's first :data:`SHOWN` characters."""
    shown = line.decode(errors="replace").rstrip("\r")
    shown = shown if len(shown) <= SHOWN else shown[: SHOWN - 3] + "..."
    return OffevalError(f"{name}, line {number}: {problem}: {shown!r}")


def decimal_commas(frame: pd.DataFrame, keep: Sequence[str] = ()) -> pd.DataFrame:
    """The frame of a semicolon-separated file, its numbers with decimal commas read as numbers.

    Unless a column holds fractional numbers read with a decimal point, each text column of
    whole numbers and numbers with a decimal comma (``0,5``, ``3,2e-05``; one at least) is read
    as numbers, ids like ``12,3`` too (``decimal="."`` keeps them as text), but those of ``keep``.
    """
    floats = [c for c in frame if frame[c].dtype.kind == "f"]
    if any((frame[c].dropna() % 1 != 0).any() for c in floats):
        return frame
    converted = {}
    for column in frame.columns:
        if column in keep or not pd.api.types.is_string_dtype(frame[column].dtype):
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
