"""Readers for the run and qrels files IR users already have: TREC, CSV/TSV, Parquet, JSON.

A run is read as a long frame with ``user``, ``item`` and ``rank`` and/or
``score``; qrels as ``user``, ``item``, ``relevance``. Query and document ids
are text in every format (``301`` in a CSV file is the id ``'301'``, as in a
TREC file, and ``0012`` keeps its zeros), so a run in one format matches qrels
in another; only an empty cell is a missing id. Rows of TREC and CSV/TSV
files are labelled by the 1-based line number an editor shows for them (the
first line of a record whose quoted field spans lines), in an index named
``line``, and the file's name is in ``frame.attrs["file"]``, so errors about
rows name the file and its lines.

TREC files are read as trec_eval reads them (its get_qrels.c and
get_trec_results.c): a qrels line starting with ``#`` and a run line whose
first non-blank character is ``#`` are comments (a ``#`` inside a field, as in
MS MARCO's ``msmarco_v2.1_doc_50_2286987788#13_3087841662``, is not); a run
line may go on after its tag (the rest is ignored); a qrels grade of -1 (any
negative grade) is kept, trec_eval's "in the pool, not judged" (see
:class:`~offeval_ir.judgements.Judgements`). The run's tag (trec_eval's
``runid``: the tag of its last line) is in ``frame.attrs["run_tag"]``.
"""

from __future__ import annotations

import io
import json
import lzma
import os
import re
from collections.abc import Callable, Iterable, Mapping
from itertools import chain

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from offeval import OffevalError, read_table
from offeval.plugin import (
    check_choice,
    data_suffix,
    header_separator,
    hint,
    line_error,
    opened,
    record_lines,
    separator_named,
)
from offeval_ir.choices import FORMATS
from offeval_ir.judgements import PEER_COLUMNS, role_names, swap_hint

KINDS = ("run", "qrels")

_EXTENSIONS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".json": "json",
}

#: TREC layouts by kind: the fields of a line, in order (a run line may have more: the
#: rest of the line after its tag is ignored, as trec_eval ignores it).
_LAYOUTS = {
    "run": (("qid", "Q0", "docid", "rank", "score", "tag"),),
    "qrels": (("qid", "iter", "docid", "rel"), ("qid", "docid", "rel")),
}
#: Kinds whose lines may go on after the last field of their layout.
_OPEN_ENDED = {"run"}
#: Comment lines of TREC files, as trec_eval skips them: a qrels line starting with ``#``
#: (get_qrels.c), a run line whose first non-blank character is ``#`` (get_trec_results.c).
_COMMENTS = {
    "qrels": re.compile(rb"(?m)^#[^\n]*"),
    "run": re.compile(rb"(?m)^[ \t\x0b\x0c\r]*+#[^\n]*"),
}
#: A comment's start after a line break (a faster search than :data:`_COMMENTS`).
_COMMENT_AFTER_BREAK = {
    "qrels": re.compile(rb"\n#"),
    "run": re.compile(rb"\n[ \t\x0b\x0c\r]*+#"),
}
#: Blank characters before a run's comment mark (trec_eval's isspace, but the newline).
_BLANKS = b" \t\x0b\x0c\r"
#: A normalised run line (one space between fields) past its sixth field, and the rest.
_PAST_TAG = re.compile(rb"(?m)^((?:[^ \n]++ ){5}[^ \n]++) [^\n]*+")
#: Column of each TREC field that is kept.
_ROLES = {"qid": "user", "docid": "item", "rank": "rank", "score": "score", "rel": "relevance"}
#: Tabs, vertical tabs and form feeds separate fields as spaces do.
_SPACES = bytes.maketrans(b"\t\x0b\x0c", b"   ")
#: Types of the numeric TREC fields (values are checked by their converters).
_TYPES = {"rank": pa.int64(), "score": pa.float64(), "rel": pa.float64()}
#: Name of the index of line numbers.
LINE = "line"


def read_run(
    path: str | os.PathLike,
    format: str | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    sep: str | None = None,
) -> pd.DataFrame:
    """A run file as a frame with ``user``, ``item`` and ``rank`` and/or ``score``.

    The format comes from the extension, or the first line (see
    :func:`detect_format`), unless ``format`` (one of :data:`FORMATS`) is given.
    ``columns`` names the columns of the roles in CSV/TSV and Parquet files
    (as in :func:`~offeval_ir.compute_measures`): the user and item columns
    are read as text, and so are the peers' id columns (``query_id``,
    ``doc_id``, ``user_id``, ``item_id``, ...:
    :data:`~offeval_ir.judgements.PEER_COLUMNS`). A CSV file's separator is
    read off its header as for a log
    (:func:`offeval.data.files.header_separator`), unless ``sep`` is given (one
    character, or ``tab``, ``\\t``, ``comma``, ``semicolon``, ``pipe``); a TSV
    file's is a tab.
    """
    return _read(path, "run", format, columns, sep)


def read_qrels(
    path: str | os.PathLike,
    format: str | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    sep: str | None = None,
) -> pd.DataFrame:
    """A qrels file as a frame with ``user``, ``item``, ``relevance`` (see :func:`read_run`)."""
    return _read(path, "qrels", format, columns, sep)


def detect_format(path: str | os.PathLike, kind: str) -> str:
    """The format of a ``kind`` (``"run"`` or ``"qrels"``) file.

    ``.parquet``/``.pq``, ``.csv``, ``.tsv`` and ``.json`` (before any ``.gz``,
    ``.bz2`` or ``.xz``) name their format; any other file is ``trec`` when its
    first non-blank line that is no TREC comment of that kind is a TREC line
    of that kind, ``tsv`` or ``csv`` when its first non-blank line is a header
    of names separated by tabs (``tsv``) or by another of
    :data:`offeval.data.files.SEPARATORS` (``csv``). A TREC line of the other
    kind (a run where qrels are expected, or qrels where a run is) is an error
    asking whether the run and the qrels were swapped.
    """
    check_choice(kind, "kind", KINDS)
    name = _check_file(path)
    extension = data_suffix(path)
    if extension in _EXTENSIONS:
        return _EXTENSIONS[extension]
    with opened(path) as handle:
        lines = _lines(handle)
        number, line = _first_line(lines, name)
        data = (number, line)
        if _is_comment(line, kind):
            data = next(((n, t) for n, t in lines if not _is_comment(t, kind)), data)
    fields = data[1].decode(errors="replace").split()
    if _is_trec(fields, kind):
        return "trec"
    text = line.decode(errors="replace")
    separator = _separator(text)
    if separator is not None:
        return "tsv" if separator == "\t" else "csv"
    other = _trec_kind(fields)
    if other is not None:
        raise _swapped(name, *data, kind, other)
    formats = "|".join(FORMATS)
    how = hint(f"pass format= ({formats})", f"pass --{kind}-format ({formats})")
    raise line_error(
        name,
        data[0],
        f"cannot tell the format: expected a TREC {kind} line of {_expected(_LAYOUTS[kind])}"
        f" or a CSV/TSV header of column names; {how}",
        data[1],
    )


def _separator(header: str) -> str | None:
    """The separator of a header line of column names (:func:`header_separator`'s rule);
    None if it is no such header."""
    found = header_separator(header)
    return found if found is not None and _is_header(header.split(found)) else None


def _read(
    path: str | os.PathLike,
    kind: str,
    format: str | None,
    columns: Mapping[str, str] | None,
    sep: str | None,
) -> pd.DataFrame:
    """Check the path and the format, read the file, refuse an empty result, ids as text."""
    if format is not None:
        check_choice(format, "format", FORMATS)
    sep = separator_named(sep)
    names = role_names(columns)
    ids = tuple(dict.fromkeys((names["user"], names["item"], *chain(*PEER_COLUMNS.values()))))
    name = _check_file(path)
    try:
        format = format or detect_format(path, kind)
        frame = _READERS[format](path, name, kind, ids, sep)
    except (OSError, EOFError, lzma.LZMAError) as error:
        raise OffevalError(f"{name}: cannot read the file: {error}") from None
    if frame.empty:
        raise OffevalError(f"{name}: the file holds no {kind} rows")
    for column in ids:
        if column in frame:
            frame[column] = _as_text(frame[column])
    if frame.index.name == LINE:
        frame.attrs["file"] = name  # errors about rows name the file's lines
    return frame


def _swapped(name: str, number: int, line: bytes, kind: str, found: str) -> OffevalError:
    """The error for a TREC line of the ``found`` kind where a ``kind`` file is read."""
    layout = " ".join(_LAYOUTS[found][0])
    expected = "a run is" if kind == "run" else "qrels are"
    how = swap_hint(f"read it with read_{found}()")
    problem = f"a TREC {found} line ({layout}) where {expected} expected: {how}"
    return line_error(name, number, problem, line)


def _as_text(ids: pd.Series) -> pd.Series:
    """Ids as text (whole floats without their ``.0``), missing ones kept missing; integers
    are written by pyarrow (ten times faster than Python's ``str``, the same digits)."""
    if pd.api.types.infer_dtype(ids, skipna=True) == "string":
        return ids
    if ids.dtype.kind == "f" and np.array_equal(ids.dropna(), np.trunc(ids.dropna())):
        ids = ids.astype("Int64")
    if pd.api.types.is_integer_dtype(ids.dtype):
        text = pc.cast(pa.array(ids, from_pandas=True), pa.string()).to_pandas()
        return text.set_axis(ids.index).rename(ids.name)
    missing = ids.isna().to_numpy()
    text = ids.astype(str).astype(object)
    text[missing] = None
    return text


def _check_file(path: str | os.PathLike) -> str:
    """The file's name as given; an error if it is missing or a directory."""
    name = os.fspath(path)
    if os.path.isdir(path):
        raise OffevalError(f"{name}: is a directory, not a file")
    if not os.path.exists(path):
        raise OffevalError(f"{name}: no such file")
    return name


def _lines(handle: Iterable[bytes]) -> Iterable[tuple[int, bytes]]:
    """The 1-based number and text (without its line end) of each non-blank line."""
    return ((n, line.rstrip(b"\r\n")) for n, line in enumerate(handle, start=1) if line.strip())


def _first_line(lines: Iterable[bytes | tuple[int, bytes]], name: str) -> tuple[int, bytes]:
    """The 1-based number and text of the first non-blank line (of ``lines``, or of the
    numbered lines of :func:`_lines`); an error if there is none."""
    for number, line in enumerate(lines, start=1):
        if isinstance(line, tuple):
            return line
        if line.strip():
            return number, line.rstrip(b"\r\n")
    raise OffevalError(f"{name}: the file is empty")


def _is_comment(line: bytes, kind: str) -> bool:
    """Whether ``line`` is a comment of a TREC ``kind`` file (see :data:`_COMMENTS`)."""
    return (line.lstrip(_BLANKS) if kind == "run" else line).startswith(b"#")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_trec(fields: list[str], kind: str) -> bool:
    """Whether ``fields`` make a TREC line of ``kind``, numbers where numbers belong."""
    return any(
        _fits(len(fields), layout, kind)
        and all(
            _is_number(v)
            for v, f in zip(fields[: len(layout)], layout, strict=True)
            if f in _CONVERTERS
        )
        for layout in _LAYOUTS[kind]
    )


def _trec_kind(fields: list[str]) -> str | None:
    """The kind of TREC line ``fields`` make, if any."""
    return next((kind for kind in KINDS if _is_trec(fields, kind)), None)


def _fits(count: int, layout: tuple[str, ...], kind: str) -> bool:
    """Whether a line of ``count`` fields is a line of ``layout`` (a run's may go on)."""
    return count == len(layout) or (kind in _OPEN_ENDED and count > len(layout))


def _is_header(fields: list[str]) -> bool:
    """Whether ``fields`` look like column names: none empty, none a number."""
    names = [f.strip() for f in fields]
    return len(names) > 1 and all(names) and not any(map(_is_number, names))


def _expected(layouts: tuple[tuple[str, ...], ...]) -> str:
    return " or ".join(f"{len(layout)} fields ({' '.join(layout)})" for layout in layouts)


def _line(raw: bytes, number: int) -> bytes:
    """Line ``number`` (1-based) of ``raw``."""
    return raw.split(b"\n", number)[number - 1]


# --- TREC -------------------------------------------------------------------------------------


class _BadValue(Exception):
    """A value of a TREC column (at ``row``) that is not what the column holds."""

    def __init__(self, row: int, problem: str):
        super().__init__(row, problem)
        self.row, self.problem = row, problem


def _read_trec(path, name: str, kind: str, ids: tuple[str, ...], sep: str | None) -> pd.DataFrame:
    """A TREC run or qrels file: parsed by pyarrow as it is when every field is separated
    by one space or tab, no line is blank or a comment and no run line goes on after its
    tag, else once comments are blanked, whitespace normalised and run lines cut after
    their tag."""
    with opened(path) as handle:
        raw = handle.read()
    text = _blank_comments(raw, kind)
    number, line = _first_line(io.BytesIO(text), name)
    layouts = _LAYOUTS[kind]
    count = len(line.split())
    layout = next((lay for lay in layouts if _fits(count, lay, kind)), None)
    if layout is None:
        other = _trec_kind(line.decode(errors="replace").split())
        if other is not None and other != kind:
            raise _swapped(name, number, line, kind, other)
        raise line_error(name, number, f"expected {_expected(layouts)}, found {count}", line)
    if any(c in text for c in (b"\t", b"\x0b", b"\x0c")):
        text = text.translate(_SPACES)
    table = _parse_plain(text, layout)
    if table is not None:
        return _trec_frame(table, pd.RangeIndex(1, table.num_rows + 1), raw, name)
    text, numbers = _normalise(text)
    if kind in _OPEN_ENDED and text.count(b" ") > (len(layout) - 1) * len(numbers):
        text = _PAST_TAG.sub(rb"\1", text)  # some line goes on after its tag
    try:
        table = _parse(text, layout, typed=True, skip_blank=True)
    except pa.ArrowInvalid:  # a bad number (its converter names it) or a bad line
        try:
            table = _parse(text, layout, typed=False, skip_blank=True)
        except pa.ArrowInvalid as error:
            raise _structure_error(raw, layout, name, error, kind) from None
    return _trec_frame(table, numbers, raw, name)


def _blank_comments(raw: bytes, kind: str) -> bytes:
    """``raw`` with each comment line of a TREC ``kind`` file emptied (its line end kept,
    so lines keep their numbers); ``raw`` itself when it has none (found by a search that
    starts at line ends, so a ``#`` inside every docid costs little)."""
    if not (_is_comment(raw.partition(b"\n")[0], kind) or _COMMENT_AFTER_BREAK[kind].search(raw)):
        return raw
    return _COMMENTS[kind].sub(b"", raw)


def _parse(text: bytes, layout: tuple[str, ...], typed: bool, skip_blank: bool) -> pa.Table:
    """Space-separated ``text`` as columns named by ``layout``: strings, and numbers if
    ``typed``; a blank line is skipped or an error."""
    types = {f: _TYPES[f] if typed and f in _TYPES else pa.string() for f in layout}

    def parsed(block_size: int | None = None) -> pa.Table:
        read = pacsv.ReadOptions(column_names=layout)
        if block_size is not None:
            read.block_size = block_size
        return pacsv.read_csv(
            pa.BufferReader(text),
            read_options=read,
            parse_options=pacsv.ParseOptions(
                delimiter=" ", quote_char=False, ignore_empty_lines=skip_blank
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=types, null_values=[], strings_can_be_null=False
            ),
        )

    try:
        return parsed()
    except pa.ArrowInvalid as error:
        if "straddl" not in str(error):
            raise
    return parsed(_block_size(text))  # a line longer than a block (a 10 MB docno)


def _block_size(text: bytes) -> int:
    """A block size for pyarrow's csv reader that holds the longest line of ``text``
    twice over (a line must fit in one block)."""
    ends = np.flatnonzero(np.frombuffer(text, np.uint8) == ord("\n"))
    longest = int(np.diff(np.r_[-1, ends, len(text)]).max())
    return min(2 * longest, 2**31 - 1)


def _parse_plain(text: bytes, layout: tuple[str, ...]) -> pa.Table | None:
    """``text`` parsed when each of its lines is a valid row whose fields are separated by
    one space (no blank line, no empty field, no carriage return but before a newline);
    None otherwise."""
    if b"\r" in text and text.count(b"\r") != text.count(b"\r\n"):
        return None
    try:
        table = _parse(text, layout, typed=True, skip_blank=False)
    except pa.ArrowInvalid:
        return None
    text_columns = [table[f] for f in layout if f not in _TYPES]
    if any(pc.min(pc.binary_length(column)).as_py() == 0 for column in text_columns):
        return None
    return table


def _normalise(text: bytes) -> tuple[bytes, pd.Index]:
    """``text`` (fields separated by spaces) with one space between fields and none around
    them, and the line number of each non-blank line."""
    if b"\r" in text:
        text = text.replace(b"\r", b" ")
    while b"  " in text:
        text = text.replace(b"  ", b" ")
    text = text.replace(b"\n ", b"\n").replace(b" \n", b"\n").strip(b" ")
    breaks = np.flatnonzero(np.frombuffer(text, np.uint8) == ord("\n"))
    lengths = np.r_[breaks, len(text)] - np.r_[0, breaks + 1]
    return text, pd.Index(np.flatnonzero(lengths > 0) + 1)


def _structure_error(
    raw: bytes, layout: tuple[str, ...], name: str, error: Exception, kind: str
) -> OffevalError:
    """The first line that is not UTF-8 or has the wrong number of fields (the slow path)."""
    try:
        raw.decode()
    except UnicodeDecodeError as bad:
        number = raw.count(b"\n", 0, bad.start) + 1
        return line_error(name, number, "is not UTF-8 text", _line(raw, number))
    for number, line in enumerate(raw.split(b"\n"), start=1):
        count = len(line.split())
        if count and not _is_comment(line, kind) and not _fits(count, layout, kind):
            return line_error(name, number, f"expected {_expected((layout,))}, found {count}", line)
    return OffevalError(f"{name}: cannot read the file as TREC: {error}")


def _trec_frame(table: pa.Table, numbers: pd.Index, raw: bytes, name: str) -> pd.DataFrame:
    """The kept columns, numbers converted, indexed by line number."""
    columns = {}
    for field in table.column_names:
        if field in _CONVERTERS:
            try:
                columns[_ROLES[field]] = _CONVERTERS[field](table[field])
            except _BadValue as bad:
                number = int(numbers[bad.row])
                line = _line(raw, number)
                value = line.split()[table.column_names.index(field)].decode(errors="replace")
                raise line_error(name, number, f"{field} {value!r} {bad.problem}", line) from None
        elif field in _ROLES:
            columns[_ROLES[field]] = table[field]
    frame = pa.table(columns).to_pandas(split_blocks=True)
    frame.index = numbers.rename(LINE)
    if "tag" in table.column_names and table.num_rows:
        frame.attrs["run_tag"] = table["tag"][-1].as_py()  # trec_eval's runid: the last tag
    return frame


def _cast(column: pa.ChunkedArray, type_: pa.DataType, problem: str) -> np.ndarray:
    """``column`` cast to ``type_``; the first value that does not cast is a :class:`_BadValue`."""
    try:
        return pc.cast(column, type_).to_numpy()
    except pa.ArrowInvalid:
        raise _BadValue(_first_uncastable(column, type_), problem) from None


def _first_uncastable(column: pa.ChunkedArray, type_: pa.DataType) -> int:
    """Position of the first value that does not cast, by bisection (about one more cast)."""
    low, high = 0, len(column)  # the first failure is in [low, high)
    while high - low > 1:
        middle = (low + high) // 2
        try:
            pc.cast(column.slice(low, middle - low), type_)
        except pa.ArrowInvalid:
            high = middle
        else:
            low = middle
    return low


def _integers(column: pa.ChunkedArray) -> np.ndarray:
    return _cast(column, pa.int64(), "is not an integer")


def _floats(column: pa.ChunkedArray) -> np.ndarray:
    return _finite(_cast(column, pa.float64(), "is not a number"))


def _grades(column: pa.ChunkedArray) -> np.ndarray:
    return _whole_as_int(_floats(column))


def _finite(values: np.ndarray) -> np.ndarray:
    bad = ~np.isfinite(values)
    if bad.any():
        raise _BadValue(int(np.argmax(bad)), "is not a finite number")
    return values


def _whole_as_int(values: np.ndarray) -> np.ndarray:
    """``values`` as integers when they all are whole numbers (and exact as floats)."""
    whole = np.array_equal(values, np.trunc(values)) and np.abs(values).max(initial=0) < 2**53
    return values.astype(np.int64) if whole else values


#: Conversion of each numeric TREC field.
_CONVERTERS = {"rank": _integers, "score": _floats, "rel": _grades}


# --- CSV/TSV, Parquet, JSON -------------------------------------------------------------------


def _read_delimited(
    path: str | os.PathLike, separator: str | None, ids: tuple[str, ...], parquet: bool = False
) -> pd.DataFrame:
    """A delimited file with a header row (blank lines skipped), its rows labelled by the
    lines they start on, or a Parquet file; ids read as text (:func:`offeval.read_table`)."""
    frame = read_table(path, sep=separator, text=ids, parquet=parquet)
    if not parquet:
        frame.index = pd.Index(record_lines(path, len(frame)), name=LINE)
    return frame


def _read_csv(path, name: str, kind: str, ids: tuple[str, ...], sep: str | None) -> pd.DataFrame:
    return _read_delimited(path, sep, ids)


def _read_tsv(path, name: str, kind: str, ids: tuple[str, ...], sep: str | None) -> pd.DataFrame:
    return _read_delimited(path, sep or "\t", ids)


def _read_parquet(
    path, name: str, kind: str, ids: tuple[str, ...], sep: str | None
) -> pd.DataFrame:
    return _read_delimited(path, None, ids, parquet=True)


def _read_json(path, name: str, kind: str, ids: tuple[str, ...], sep: str | None) -> pd.DataFrame:
    """ranx's ``{qid: {docid: value}}``; a query mapping to ``{}`` has no rows."""
    value = "score" if kind == "run" else "relevance"
    with opened(path) as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as error:
            raise OffevalError(
                f"{name}, line {error.lineno}: not valid JSON: {error.msg}"
            ) from None
        except UnicodeDecodeError:
            raise OffevalError(f"{name}: is not UTF-8 text") from None
    shape = f"{{qid: {{docid: {value}}}}}"
    if not isinstance(data, dict):
        raise OffevalError(f"{name}: expected {shape}, got a JSON {type(data).__name__}")
    for qid, docs in data.items():
        if not isinstance(docs, dict):
            kind_of = type(docs).__name__
            raise OffevalError(f"{name}: query {qid!r} maps to a {kind_of}; expected {shape}")
    docs = list(data.values())
    values = list(chain.from_iterable(map(dict.values, docs)))
    if not set(map(type, values)) <= {int, float}:
        raise _json_error(name, data, value, lambda v: type(v) not in (int, float), "a number")
    numbers = np.array(values, dtype=np.float64)
    if not np.isfinite(numbers).all():
        raise _json_error(name, data, value, lambda v: not np.isfinite(v), "a finite number")
    lengths = np.fromiter(map(len, docs), np.int64, len(docs))
    users = np.repeat(np.array(list(data), dtype=object), lengths)
    return pd.DataFrame(
        {
            "user": users,
            "item": list(chain.from_iterable(docs)),
            value: numbers if kind == "run" else _whole_as_int(numbers),
        }
    )


def _json_error(
    name: str, data: dict, value: str, bad: Callable[[object], bool], expected: str
) -> OffevalError:
    """An error naming the first query and document whose value is ``bad``."""
    qid, docid, found = next(
        (q, d, v) for q, docs in data.items() for d, v in docs.items() if bad(v)
    )
    return OffevalError(
        f"{name}: query {qid!r}, document {docid!r}: {value} must be {expected}, got {found!r}"
    )


_READERS = {
    "trec": _read_trec,
    "csv": _read_csv,
    "tsv": _read_tsv,
    "parquet": _read_parquet,
    "json": _read_json,
}
