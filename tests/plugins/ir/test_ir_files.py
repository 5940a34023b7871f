"""Reading run and qrels files: TREC, CSV/TSV, Parquet, JSON; format detection; errors."""

from __future__ import annotations

import bz2
import gzip
import json
import re

import numpy as np
import pandas as pd
import pytest

from offeval import ConfigurationError, OffevalError
from offeval_ir import Judgements
from offeval_ir.files import FORMATS, detect_format, read_qrels, read_run

RUN = "q1 Q0 010 1 2.5 bm25\nq1 Q0 9 2 1 bm25\n10 Q0 d-3 1 -0.5 bm25\n"


def frame(index, **columns) -> pd.DataFrame:
    """A frame read from a TREC or delimited file: rows labelled by their line numbers."""
    return pd.DataFrame(columns, index=pd.Index(index, dtype=np.int64, name="line"))


def expected_run(index=(1, 2, 3)) -> pd.DataFrame:
    return frame(
        index,
        user=["q1", "q1", "10"],
        item=["010", "9", "d-3"],
        rank=np.array([1, 2, 1], dtype=np.int64),
        score=[2.5, 1.0, -0.5],
    )


def write(tmp_path, name: str, content: str | bytes):
    path = tmp_path / name
    data = content.encode() if isinstance(content, str) else content
    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix, open)
    with opener(path, "wb") as handle:
        handle.write(data)
    return path


# --- TREC ---------------------------------------------------------------------------------------


def test_trec_run_keeps_ids_as_strings(tmp_path):
    run = read_run(write(tmp_path, "run.trec", RUN))
    pd.testing.assert_frame_equal(run, expected_run())
    assert run["item"].tolist() == ["010", "9", "d-3"]  # not 10, 9: docnos compare as text


@pytest.mark.parametrize(
    ("content", "lines"),
    [
        (RUN.replace(" ", "\t"), (1, 2, 3)),
        (RUN.replace("\n", "\r\n"), (1, 2, 3)),
        (RUN.rstrip("\n"), (1, 2, 3)),
        (RUN.replace(" Q0 ", " \t Q0   ").replace("\n", "  \n"), (1, 2, 3)),
        ("  " + RUN.replace("\n", "\r\n", 1), (1, 2, 3)),
        ("\n   \n" + RUN.replace("\n", "\n\n", 1) + "\n\t\n", (3, 5, 6)),
    ],
    ids=["tabs", "crlf", "no final newline", "runs of spaces and tabs", "indented", "blank"],
)
def test_trec_whitespace_and_blank_lines(tmp_path, content, lines):
    run = read_run(write(tmp_path, "run.trec", content))
    pd.testing.assert_frame_equal(run, expected_run(lines))


def test_trec_qrels_both_layouts(tmp_path):
    four = read_qrels(write(tmp_path, "a.qrels", "q1 0 010 2\nq1 0 9 0\nq2 0 d -1\n"))
    three = read_qrels(write(tmp_path, "b.qrels", "q1 010 2\nq1 9 0\n\nq2 d -1\n"))
    expected = frame(
        [1, 2, 3],
        user=["q1", "q1", "q2"],
        item=["010", "9", "d"],
        relevance=np.array([2, 0, -1], dtype=np.int64),
    )
    pd.testing.assert_frame_equal(four, expected)
    pd.testing.assert_frame_equal(three, expected.set_axis(pd.Index([1, 2, 4], name="line")))


def test_trec_relevance_stays_float_when_not_whole(tmp_path):
    qrels = read_qrels(write(tmp_path, "q.qrels", "q1 0 d1 0.5\nq1 0 d2 1\n"))
    assert qrels["relevance"].dtype == np.float64
    assert qrels["relevance"].tolist() == [0.5, 1.0]


@pytest.mark.parametrize("name", ["run.trec.gz", "run.gz", "run.trec.bz2"])
def test_compressed_trec(tmp_path, name):
    pd.testing.assert_frame_equal(read_run(write(tmp_path, name, RUN)), expected_run())


def test_trec_ids_that_look_like_missing_values_stay_text(tmp_path):
    run = read_run(write(tmp_path, "run.trec", "NA Q0 nan 1 1.5 x\nnull Q0 None 2 1 x\n"))
    assert run["user"].tolist() == ["NA", "null"]
    assert run["item"].tolist() == ["nan", "None"]


BAD_TREC = [
    (
        "run",
        RUN + "q2 Q0 d1 1 0.5\n",
        4,
        "expected 6 fields (qid Q0 docid rank score tag), found 5",
    ),
    ("run", RUN + "q2 Q0 d1 1 0.5 \n", 4, "found 5"),  # a trailing space is no 6th field
    ("run", RUN + "q2  d1 1 0.5 x\n", 4, "found 5"),
    ("run", RUN + "q2 Q0 d1 1 0.5 x\n" + "q2\n", 5, "found 1"),  # a 7th field is no excuse
    ("qrels", " # note\nq1 0 d1 1\n", 1, "found 2"),  # qrels comments start the line
    ("run", RUN + "q2 Q0 d1 1.5 0.5 x\n", 4, "rank '1.5' is not an integer"),
    ("run", RUN + "q2 Q0 d1 1 high x\n", 4, "score 'high' is not a number"),
    ("run", RUN + "q2 Q0 d1 1 nan x\n", 4, "score 'nan' is not a finite number"),
    ("run", RUN.replace("-0.5", "inf"), 3, "score 'inf' is not a finite number"),
    ("qrels", "q1 0 d1 1\nq1 d2 1\n", 2, "expected 4 fields (qid iter docid rel), found 3"),
    ("qrels", "q1 d1 1\nq1 d2 yes\n", 2, "rel 'yes' is not a number"),
    ("qrels", "q1 d1 1 2 3\n", 1, "expected 4 fields (qid iter docid rel) or 3 fields"),
]


@pytest.mark.parametrize(("kind", "content", "line", "problem"), BAD_TREC)
@pytest.mark.parametrize("layout", ["plain", "messy"])
def test_trec_errors_name_file_line_and_text(tmp_path, kind, content, line, problem, layout):
    if layout == "messy":  # blank lines and tab runs take the normalising path
        content = "\n" + content.replace(" ", " \t", 1)
        line += 1
    path = write(tmp_path, "bad.trec", content)
    text = content.split("\n")[line - 1]
    with pytest.raises(OffevalError) as error:
        (read_run if kind == "run" else read_qrels)(path, format="trec")
    message = str(error.value)
    assert message.startswith(f"{path}, line {line}: ")
    assert problem in message
    assert message.endswith(repr(text))
    assert "\n" not in message


def test_trec_bad_value_found_far_into_a_long_file(tmp_path):
    lines = [f"q{i // 100} Q0 d{i} {i % 100 + 1} {1 / (i + 1)} x" for i in range(5000)]
    lines[3776] = lines[3776].rsplit(" ", 1)[0]  # 5 fields
    lines[4000] = "q40 Q0 d4000 one 0.5 x"
    path = write(tmp_path, "long.trec", "\n".join(lines) + "\n")
    with pytest.raises(OffevalError, match=re.escape(f"{path}, line 3777: expected 6 fields")):
        read_run(path)
    lines[3776] = lines[3775].replace("d3775", "d3776")
    path = write(tmp_path, "long.trec", "\n\n".join(lines) + "\n")  # lines 1, 3, 5, ...
    with pytest.raises(OffevalError, match=re.escape(f"{path}, line 8001: rank 'one' is not")):
        read_run(path)


def test_trec_long_line_is_shortened(tmp_path):
    path = write(tmp_path, "qrels.trec", "q1 0 d1 1\n" + "q " * 100 + "\n")
    with pytest.raises(OffevalError, match=r"found 100: 'q q q[ q]*\.\.\.'$") as error:
        read_qrels(path)
    assert len(str(error.value).split(": ")[-1]) == 82  # 80 characters and quotes


def test_trec_not_utf8(tmp_path):
    path = write(tmp_path, "run.trec", RUN.encode() + b"q2 Q0 d\xff 1 0.5 x\n")
    with pytest.raises(OffevalError, match=re.escape(f"{path}, line 4: is not UTF-8 text")):
        read_run(path)


# --- files, formats -----------------------------------------------------------------------------


def test_missing_file_directory_and_empty_file(tmp_path):
    with pytest.raises(OffevalError, match=re.escape(f"{tmp_path / 'nope.trec'}: no such file")):
        read_run(tmp_path / "nope.trec")
    with pytest.raises(OffevalError, match=re.escape(f"{tmp_path}: is a directory")):
        read_qrels(tmp_path, format="parquet")
    for content in ["", "\n \n\t\n"]:
        path = write(tmp_path, "empty.txt", content)
        with pytest.raises(OffevalError, match=re.escape(f"{path}: the file is empty")):
            read_run(path)
        with pytest.raises(OffevalError, match=re.escape(f"{path}: the file is empty")):
            read_qrels(path, format="trec")


def test_unknown_format_and_kind(tmp_path):
    path = write(tmp_path, "run.trec", RUN)
    with pytest.raises(
        ConfigurationError, match=r"format must be one of \('trec', 'csv', 'tsv', .*got 'xml'"
    ):
        read_run(path, format="xml")
    assert issubclass(ConfigurationError, OffevalError)
    with pytest.raises(ConfigurationError, match="kind must be one of"):
        detect_format(path, "runs")


@pytest.mark.parametrize(
    ("name", "format"),
    [
        ("a.parquet", "parquet"),
        ("a.PQ", "parquet"),
        ("a.csv", "csv"),
        ("a.csv.gz", "csv"),
        ("a.tsv", "tsv"),
        ("a.json", "json"),
        ("a.json.gz", "json"),
    ],
)
def test_format_by_extension(tmp_path, name, format):
    assert detect_format(write(tmp_path, name, "anything"), "run") == format


@pytest.mark.parametrize(
    ("name", "content", "kind", "format"),
    [
        ("run.txt", RUN, "run", "trec"),
        ("run", "\n" + RUN, "run", "trec"),
        ("run.res.gz", RUN, "run", "trec"),
        ("qrels.txt", "q1 0 d1 1\n", "qrels", "trec"),
        ("qrels.txt", "q1\td1\t1\n", "qrels", "trec"),
        ("run.txt", "user,item,score\nq1,d1,0.5\n", "run", "csv"),
        ("run.txt", "qid\tdocid\trel\nq1\td1\t1\n", "qrels", "tsv"),
        ("run.bm25.k1", RUN, "run", "trec"),
    ],
)
def test_format_sniffed(tmp_path, name, content, kind, format):
    assert detect_format(write(tmp_path, name, content), kind) == format


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("q1,d1,0.5\n", "run"),  # no header
        ("q1 Q0 d1 first 0.5 x\n", "run"),
    ],
)
def test_format_unknown_says_how_to_pass_it(tmp_path, content, kind):
    path = write(tmp_path, "file.txt", content)
    with pytest.raises(OffevalError, match=re.escape(f"{path}, line 1: cannot tell the format")):
        detect_format(path, kind)
    with pytest.raises(OffevalError, match=f"TREC {kind} line .*format=") as error:
        (read_run if kind == "run" else read_qrels)(path)
    assert "|".join(FORMATS) in str(error.value)


def test_format_override(tmp_path):
    path = write(tmp_path, "run.csv", RUN)
    pd.testing.assert_frame_equal(read_run(path, format="trec"), expected_run())
    path = write(tmp_path, "run.txt", "qid,docid,score\nq1,7,0.5\n")
    pd.testing.assert_frame_equal(
        read_run(path, format="csv"), frame([2], qid=["q1"], docid=[7], score=[0.5])
    )


# --- CSV/TSV, Parquet, JSON ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "separator"), [("r.csv", ","), ("r.tsv", "\t"), ("r.csv.gz", ",")]
)
def test_delimited_keeps_header_names_and_values(tmp_path, name, separator):
    content = "\nuser,item,rank\nq1,10,1\n\nq1,9,2\n".replace(",", separator)
    run = read_run(write(tmp_path, name, content))
    expected = frame([3, 5], user=["q1", "q1"], item=["10", "9"], rank=[1, 2])
    pd.testing.assert_frame_equal(run, expected, check_dtype=False)


@pytest.mark.parametrize(
    "content",
    [
        "\ufeffuser,item,score,tag\r\n0301,0012,0.5,bm25\r\n301,12,-1e-3,bm25\r\n",
        'user,item,rank\n"q,1","d""2",1\n"q\n2",,2\n\nq3,d3,\n',
        "user,item,relevance,note\nq1,007,2,\nq1,7,0,x\n",
    ],
)
def test_delimited_reads_as_pandas_does_with_ids_as_text(tmp_path, content):
    """Whichever parser reads it (pyarrow's, fast, or pandas'), a file gives pandas'
    reading with the id columns as text: zeros kept, only an empty cell missing."""
    path = write(tmp_path, "r.csv", content)
    ids = {"user": str, "item": str}
    expected = pd.read_csv(path, dtype=ids, keep_default_na=False, na_values=[""])
    run = read_run(path)
    assert run["user"].tolist() == expected["user"].tolist()
    pd.testing.assert_frame_equal(
        run.reset_index(drop=True), expected, check_dtype=False, check_index_type=False
    )


def test_delimited_errors_name_the_file(tmp_path):
    path = write(tmp_path, "r.csv", "user,item\nq1,d1\nq1,d2,3\n")
    with pytest.raises(OffevalError, match=re.escape(f"{path}, line 3: expected 2 fields")):
        read_run(path)
    path = write(tmp_path, "h.csv", "user,item\n")
    with pytest.raises(OffevalError, match=re.escape(f"{path}: the file has no rows")):
        read_qrels(path)


def test_parquet(tmp_path):
    stored = pd.DataFrame({"qid": ["q1", "q2"], "docid": ["d1", "d2"], "rel": [1, 0]})
    stored.to_parquet(tmp_path / "q.parquet")
    pd.testing.assert_frame_equal(read_qrels(tmp_path / "q.parquet"), stored)
    path = write(tmp_path, "bad.pq", "not parquet")
    with pytest.raises(OffevalError, match=re.escape(f"{path}: cannot read it as parquet")):
        read_qrels(path)


def test_parquet_integer_ids_become_text_on_their_own_rows(tmp_path):
    """Integer ids (a stored index of its own, whole floats, a missing id) are written as
    their digits, each on its row: 12 is '12', 3.0 is '3', a missing id stays missing."""
    stored = pd.DataFrame(
        {"user": [301, 302, 2**62], "item": [12.0, np.nan, 3.0], "score": [1.0, 2, 3]},
        index=pd.Index([7, 8, 9], name="row"),
    )
    stored.to_parquet(tmp_path / "r.parquet")
    run = read_run(tmp_path / "r.parquet")
    assert run.index.tolist() == [7, 8, 9]
    assert run["user"].tolist() == ["301", "302", "4611686018427387904"]
    assert run["item"].tolist()[::2] == ["12", "3"] and pd.isna(run["item"].iloc[1])


def test_json_run_and_qrels(tmp_path):
    path = write(tmp_path, "run.json", json.dumps({"q1": {"010": 2.5, "9": 1}, "q2": {"d": -1}}))
    pd.testing.assert_frame_equal(
        read_run(path),
        pd.DataFrame(
            {"user": ["q1", "q1", "q2"], "item": ["010", "9", "d"], "score": [2.5, 1, -1.0]}
        ),
    )
    path = write(
        tmp_path, "qrels.json", json.dumps({"1": {"d1": 1, "d2": 0}, "2": {}, "3": {"d": 2}})
    )
    pd.testing.assert_frame_equal(
        read_qrels(path),
        pd.DataFrame({"user": ["1", "1", "3"], "item": ["d1", "d2", "d"], "relevance": [1, 0, 2]}),
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[1, 2]", "expected {qid: {docid: score}}, got a JSON list"),
        (
            '{"q1": {"d": 1}, "q2": [1]}',
            "query 'q2' maps to a list; expected {qid: {docid: score}}",
        ),
        ('{"q1": {"d": 1}, "q2": {"d": "1"}}', "query 'q2', document 'd': score must be a number"),
        ('{"q1": {"d": true}}', "query 'q1', document 'd': score must be a number, got True"),
        ('{"q1": {"d": 1, "e": NaN}}', "query 'q1', document 'e': score must be a finite number"),
        ('{"q1": {"d": 1}}\n{', "line 2: not valid JSON"),
        ("{}", "the file holds no run rows"),
    ],
)
def test_json_errors(tmp_path, content, problem):
    path = write(tmp_path, "run.json", content)
    with pytest.raises(OffevalError, match=re.escape(f"{path}") + ".*" + re.escape(problem)):
        read_run(path)


# --- with the metrics ---------------------------------------------------------------------------


def test_trec_files_feed_judgements(tmp_path):
    run = read_run(write(tmp_path, "run.trec", RUN))
    qrels = read_qrels(write(tmp_path, "q.qrels", "q1 0 9 2\nq1 0 010 1\n10 0 x 1\n"))
    judgements = Judgements.from_frames(run, qrels)
    assert list(judgements.users) == ["q1", "10"]
    assert judgements.grades.tolist() == [[1.0, 2.0], [0.0, 0.0]]


#: A docno of 10 MB: longer than a block of pyarrow's csv reader (1 MB by default).
LONG_DOCNO = "d" * 10_000_000


@pytest.mark.parametrize("gap", [" ", "  "], ids=["one space", "two spaces"])
@pytest.mark.parametrize("at", [0, 1], ids=["first line", "second line"])
def test_a_docno_longer_than_a_parser_block_is_read(tmp_path, gap, at):
    docnos = ["d2", "d3"]
    docnos[at] = LONG_DOCNO
    run = write(
        tmp_path,
        "run.txt",
        f"q1 Q0 {docnos[0]} 1 0.9 tag\nq1{gap}Q0 {docnos[1]} 2 0.5 tag\n",
    )
    got = read_run(run)
    assert got["item"].tolist() == docnos and got["score"].tolist() == [0.9, 0.5]
    qrels = write(tmp_path, "qrels.txt", f"q1 0 {docnos[0]} 1\nq1{gap}0 {docnos[1]} 2\n")
    got = read_qrels(qrels)
    assert got["item"].tolist() == docnos and got["relevance"].tolist() == [1, 2]
