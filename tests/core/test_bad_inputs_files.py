"""Bad files: missing, empty, ragged, binary, garbage Parquet, and streams that are not
Parquet or lose the file's own row labels."""

from __future__ import annotations

import numpy as np
from bad_input_logs import MAP, cases, fails, frame, long_frame

from offeval import ColumnError, InteractionLog, OffevalError, read_table, stream_parquet


# -- files ------------------------------------------------------------------------------
def write(path, content: bytes):
    path.write_bytes(content)
    return path


FILE_CASES = {
    "missing": (lambda d: d / "nope.csv", "nope.csv: no such file"),
    "directory": (lambda d: d, "is a directory"),
    "wrong extension": (lambda d: write(d / "log.json", b"{}"), "unsupported file type '.json'"),
    "empty": (lambda d: write(d / "empty.csv", b""), "empty.csv: the file is empty"),
    "header only": (lambda d: write(d / "head.csv", b"a,b\n"), "head.csv: the file has no rows"),
    "ragged": (
        lambda d: write(d / "ragged.csv", b"a,b\n1,2\n3,4,5\n"),
        r"ragged.csv, line 3: expected 2 fields \(as the header has\), found 3: '3,4,5'",
    ),
    "binary csv": (
        lambda d: write(d / "bin.csv", bytes(range(256)) * 4),
        "bin.csv: not a (text file|well-formed)",
    ),
    "garbage parquet": (
        lambda d: write(d / "bad.parquet", b"not parquet at all"),
        "bad.parquet: cannot read it as parquet",
    ),
    "empty parquet": (lambda d: write(d / "zero.parquet", b""), "zero.parquet: cannot read it"),
}


@cases(FILE_CASES)
def test_bad_files(tmp_path, case):
    make, pattern = case
    path = make(tmp_path)
    fails(lambda: read_table(path), OffevalError, pattern)
    fails(lambda: InteractionLog.from_file(path, MAP), OffevalError, pattern)


def test_bad_streams(tmp_path):
    csv = write(tmp_path / "log.csv", b"a\n1\n")
    fails(lambda: stream_parquet(csv), OffevalError, "only Parquet files can be streamed")
    path = tmp_path / "log.parquet"
    frame().to_parquet(path)
    fails(lambda: stream_parquet(path), ColumnError, "'trajectory'", "log.parquet")
    fails(lambda: stream_parquet(path, MAP, batch_rows=0), OffevalError, "batch_rows")
    garbage = write(tmp_path / "x.parquet", b"PAR1garbage")
    fails(lambda: stream_parquet(garbage, MAP), OffevalError, "x.parquet: cannot read")


def test_a_stream_keeps_the_files_own_row_labels(tmp_path):
    path = tmp_path / "labelled.parquet"
    data = long_frame(30)
    data.loc["r33", "click"] = np.nan
    data.to_parquet(path)
    fails(lambda: list(stream_parquet(path, MAP, batch_rows=10)), ColumnError, r"\['r33'\]")
