"""trec_eval's own test folder (tests/plugins/ir/trec_eval_test/) read as trec_eval reads it.

Every run and qrels file there is read as it is: qrels with ``#`` comment lines
(get_qrels.c skips a line starting with ``#``), runs whose lines go on after the
tag (get_trec_results.c ignores the rest), MS MARCO docids with a ``#`` inside,
qrels of grade -1 (form_res_rels.c: in the pool, not judged). Where reading
them changes the numbers, offeval's are checked against trec_eval's stored
outputs (``measure<blanks>\\tqid\\tvalue``, four decimals), under the command
lines NOTICE.md lists. Expected counts come from the files, read in plain Python.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_checks import one_line_error

from offeval import ColumnError, OffevalError
from offeval_ir import PRESETS, Judgements, compute_measures
from offeval_ir.files import detect_format, read_qrels, read_run

FOLDER = Path(__file__).parent / "trec_eval_test"
QRELS = ["qrels.test", "qrels.test.with-comments", "qrels.comment.test", "qrels.rel_level"]
RUNS = ["results.test", "results.trunc", "results.comment.test.gz"]

#: The trec_eval measures offeval computes, by their trec_eval names.
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
MEASURES = [
    "map",
    "Rprec",
    "bpref",
    "recip_rank",
    "ndcg",
    "set_P",
    "set_recall",
    "set_F",
    *(f"{name}_{k}" for name in ("P", "recall", "ndcg_cut", "map_cut") for k in CUTS),
    *(f"success_{k}" for k in (1, 5, 10)),
]


def text_lines(name: str) -> list[str]:
    """The file's lines, decompressed, without their line ends."""
    path = FOLDER / name
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        return handle.read().splitlines()


def data_lines(name: str, kind: str) -> list[tuple[int, list[str]]]:
    """(line number, fields) of each line trec_eval reads as data: not blank and not a
    comment (qrels: '#' first on the line; runs: '#' first after blanks)."""
    out = []
    for number, line in enumerate(text_lines(name), start=1):
        start = line.lstrip(" \t") if kind == "run" else line
        if line.strip() and not start.startswith("#"):
            out.append((number, line.split()))
    return out


def stored(name: str) -> pd.DataFrame:
    """trec_eval's stored output: one row per line, (measure, qid, value as text)."""
    rows = [line.split("\t") for line in text_lines(name)]
    return pd.DataFrame(
        [(m.strip(), q, v.strip()) for m, q, v in rows], columns=["measure", "qid", "value"]
    )


def check_against(out: str, values: pd.DataFrame, minimum: int) -> None:
    """Every per-query and ``all`` value of ``out`` for a measure of :data:`MEASURES` equals
    offeval's (``values``: per-user columns and an ``all`` row) to trec_eval's 4 decimals."""
    expected = stored(out)
    expected = expected[expected["measure"].isin(MEASURES)]
    assert len(expected) >= minimum  # the measures are there to be checked
    for measure, qid, value in expected.itertuples(index=False):
        ours = values.loc[qid, measure]
        assert abs(ours - float(value)) <= 5e-5 + 1e-12, (out, measure, qid, ours, value)


def offeval_values(run: pd.DataFrame, qrels: pd.DataFrame, conventions) -> pd.DataFrame:
    """offeval's per-user values of :data:`MEASURES` and their means as the row ``all``."""
    result = compute_measures(run, qrels, MEASURES, conventions)
    per_user = result.per_user.dropna(how="all")
    return pd.concat([per_user, result.mean.to_frame("all").T])


# --- every file read as it is -------------------------------------------------------------------


@pytest.mark.parametrize("name", QRELS)
def test_every_qrels_file_is_read_with_its_lines(name):
    expected = data_lines(name, "qrels")
    assert detect_format(FOLDER / name, "qrels") == "trec"
    qrels = read_qrels(FOLDER / name)
    assert qrels.index.tolist() == [n for n, _ in expected]  # comment lines skipped, numbered
    assert qrels["user"].tolist() == [f[0] for _, f in expected]
    assert qrels["item"].tolist() == [f[2] for _, f in expected]
    assert qrels["relevance"].tolist() == [int(f[3]) for _, f in expected]


@pytest.mark.parametrize("name", RUNS)
def test_every_run_file_is_read_with_its_lines(name):
    expected = data_lines(name, "run")
    assert detect_format(FOLDER / name, "run") == "trec"
    run = read_run(FOLDER / name)
    assert run.index.tolist() == [n for n, _ in expected]
    assert run["user"].tolist() == [f[0] for _, f in expected]
    assert run["item"].tolist() == [f[2] for _, f in expected]
    assert run["rank"].tolist() == [int(f[3]) for _, f in expected]
    assert run["score"].tolist() == [float(f[4]) for _, f in expected]
    assert run.attrs["run_tag"] == expected[-1][1][5]  # trec_eval's runid: the last tag


def test_qrels_with_comments_read_as_the_same_qrels():
    """qrels.test.with-comments is qrels.test with three comment lines and one docid
    written CR#93E-1860 (a '#' inside a field is no comment)."""
    plain = read_qrels(FOLDER / "qrels.test")
    commented = read_qrels(FOLDER / "qrels.test.with-comments")
    assert "CR#93E-1860" in commented["item"].tolist()
    commented["item"] = commented["item"].replace("CR#93E-1860", "CR93E-1860")
    pd.testing.assert_frame_equal(
        commented.reset_index(drop=True), plain.reset_index(drop=True), check_index_type=False
    )
    assert sorted(set(range(1, 3685)) - set(commented.index)) == [1, 4, 7]


def test_hashes_inside_ms_marco_docids_stay_in_the_docids():
    run = read_run(FOLDER / "results.comment.test.gz")
    qrels = read_qrels(FOLDER / "qrels.comment.test")
    assert run["item"].iloc[0] == "msmarco_v2.1_doc_50_2286987788#13_3087841662"
    assert run["item"].str.contains("#").sum() == sum(
        "#" in f[2] for _, f in data_lines("results.comment.test.gz", "run")
    )
    assert qrels["item"].str.contains("#").sum() == sum(
        "#" in f[2] for _, f in data_lines("qrels.comment.test", "qrels")
    )
    assert run["item"].str.contains("#").mean() > 0.9


def test_run_lines_going_on_after_the_tag_are_read_to_the_tag():
    """results.trunc's lines end with 'more junk at', 'end of lines.' after the tag."""
    assert any(len(f) > 6 for _, f in data_lines("results.trunc", "run"))
    run = read_run(FOLDER / "results.trunc")
    assert list(run.columns) == ["user", "item", "rank", "score"]
    assert len(run) == len(text_lines("results.trunc"))


def test_grades_of_minus_one_are_kept():
    qrels = read_qrels(FOLDER / "qrels.rel_level")
    minus = [n for n, f in data_lines("qrels.rel_level", "qrels") if f[3] == "-1"]
    assert len(minus) == 304
    assert qrels.index[qrels["relevance"] == -1].tolist() == minus
    assert qrels["relevance"].dtype.kind == "i"


# --- numbers against trec_eval's stored outputs -------------------------------------------------


@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.test.with-comments"])
def test_out_test_from_either_qrels(qrels):
    """``trec_eval qrels.test results.test`` (the Makefile runs it on both qrels)."""
    values = offeval_values(
        read_run(FOLDER / "results.test"), read_qrels(FOLDER / qrels), PRESETS["trec_eval"]()
    )
    check_against("out.test", values, minimum=13)


def test_out_comment_test():
    """``trec_eval qrels.comment.test results.comment.test``: MS MARCO docids with '#'."""
    values = offeval_values(
        read_run(FOLDER / "results.comment.test.gz"),
        read_qrels(FOLDER / "qrels.comment.test"),
        PRESETS["trec_eval"](),
    )
    assert values["map"].notna().sum() == 31 + 1  # the 31 judged queries and 'all'
    check_against("out.comment.test", values, minimum=13)


def test_out_test_aqc_on_the_run_with_text_after_its_tags():
    """``trec_eval -m all_trec -q -c qrels.test results.trunc``."""
    values = offeval_values(
        read_run(FOLDER / "results.trunc"),
        read_qrels(FOLDER / "qrels.test"),
        PRESETS["trec_eval"](no_predictions="zero"),
    )
    check_against("out.test.aqc", values, minimum=4 * len(MEASURES))


def test_out_test_aqcm_on_the_run_with_text_after_its_tags():
    """``trec_eval -m all_trec -q -c -M100 qrels.test results.trunc``: -M100 keeps each
    query's first 100 documents in trec_eval's order (score descending, then docno
    descending: form_res_rels.c's comp_sim_docno), done here by hand."""
    run = read_run(FOLDER / "results.trunc")
    run = run.sort_values(["user", "score", "item"], ascending=False, kind="stable")
    run = run.groupby("user", sort=False).head(100)
    values = offeval_values(
        run, read_qrels(FOLDER / "qrels.test"), PRESETS["trec_eval"](no_predictions="zero")
    )
    check_against("out.test.aqcM", values, minimum=4 * len(MEASURES))


def test_out_test_aql_with_grades_of_minus_one():
    """``trec_eval -m all_trec -q -l2 qrels.rel_level results.test``: 304 qrels of grade -1
    (in the pool, not judged), relevant from grade 2."""
    values = offeval_values(
        read_run(FOLDER / "results.test"),
        read_qrels(FOLDER / "qrels.rel_level"),
        PRESETS["trec_eval"](relevance_threshold=2),
    )
    check_against("out.test.aql", values, minimum=4 * len(MEASURES))


def test_grades_of_minus_one_are_refused_under_other_presets_naming_the_lines(capsys):
    run, qrels = FOLDER / "results.test", FOLDER / "qrels.rel_level"
    first = data_lines("qrels.rel_level", "qrels")
    first = next(n for n, f in first if f[3] == "-1")
    line = one_line_error(
        capsys, ["metrics", run, qrels, "--preset", "blog", "-m", "P@5"], "negative_grades=zero"
    )
    assert f"qrels.rel_level, lines [{first}, " in line
    with pytest.raises(ColumnError, match="negative"):
        compute_measures(read_run(run), read_qrels(qrels), ["P@5"], PRESETS["blog"]())


# --- the representation of grade -1 -----------------------------------------------------------


def test_judgements_tell_the_four_states_of_a_rank_apart():
    """Random qrels with grades -1..2 against random runs: each rank's state as trec_eval's
    form_res_rels.c gives it, worked out item by item in plain Python."""
    rng = np.random.default_rng(21)
    items = [f"d{i}" for i in range(12)]
    pred_rows, label_rows = [], []
    for user in ("q1", "q2", "q3"):
        for rank, item in enumerate(rng.permutation(items)[: rng.integers(1, 12)], start=1):
            pred_rows.append((user, item, rank))
        for item in rng.permutation(items)[: rng.integers(0, 10)]:
            label_rows.append((user, item, int(rng.integers(-1, 3))))
    pred = pd.DataFrame(pred_rows, columns=["user", "item", "rank"])
    labels = pd.DataFrame(label_rows, columns=["user", "item", "relevance"])
    j = Judgements.from_frames(pred, labels, negative_grades="zero")
    grade_of = {(u, i): g for u, i, g in label_rows}
    for row, user in enumerate(j.users):
        ranked = pred.loc[pred["user"] == user, "item"].tolist()
        states = [grade_of.get((user, item)) for item in ranked]
        width = len(ranked)
        assert j.judged[row, :width].tolist() == [g is not None for g in states]
        assert j.unjudged_in_pool[row, :width].tolist() == [g == -1 for g in states]
        assert j.grades[row, :width].tolist() == [0 if g is None else g for g in states]
        own = [g for (u, _), g in grade_of.items() if u == user]
        assert j.n_judged[row] == len(own)
        assert j.n_unjudged_in_pool[row] == sum(g < 0 for g in own)
        assert j.n_graded[row] == sum(g >= 0 for g in own)
        assert j.n_relevant(2)[row] == sum(g >= 2 for g in own)
    assert not j.unjudged_in_pool[:, j.lengths.max() :].any()
    with pytest.raises(ColumnError, match="must not be negative"):
        Judgements.from_frames(pred, labels)  # kept only when asked to


# --- TREC lines of the other kind: swapped arguments ------------------------------------------


def test_swapped_run_and_qrels_say_so_in_one_line(capsys):
    run, qrels = FOLDER / "results.test", FOLDER / "qrels.test"
    line = one_line_error(capsys, ["metrics", qrels, run], r"results\.test, line 1: ")
    assert "a TREC run line (qid Q0 docid rank score tag) where qrels are expected" in line
    assert "are the run and the qrels swapped? offeval metrics takes RUN QRELS" in line
    line = one_line_error(capsys, ["metrics", qrels, qrels], r"qrels\.test, line 1: ")
    assert "a TREC qrels line (qid iter docid rel) where a run is expected" in line
    line = one_line_error(capsys, ["compare", run, qrels, run], r"results\.test, line 1: ")
    assert "offeval compare and trec_eval take QRELS RUN" in line


def test_swapped_files_in_python_name_the_other_reader():
    with pytest.raises(OffevalError, match=r"line 1: a TREC run line .*read it with read_run"):
        read_qrels(FOLDER / "results.test")
    with pytest.raises(OffevalError, match=r"line 2: a TREC qrels line .*read_qrels"):
        read_run(FOLDER / "qrels.test.with-comments", format="trec")  # line 1: a comment


def test_swapped_csv_frames_say_so(tmp_path, capsys):
    run = tmp_path / "run.csv"
    run.write_text("user,item,score\nq1,d1,0.5\n")
    qrels = tmp_path / "qrels.csv"
    qrels.write_text("user,item,relevance\nq1,d1,1\n")
    line = one_line_error(capsys, ["metrics", qrels, run], "swapped")
    assert "the predictions have the qrels' column (relevance)" in line
    with pytest.raises(ColumnError, match="the predictions .* come first"):
        compute_measures(read_run(qrels), read_run(run), ["P@1"])


# --- comment lines and text after the tag, line by line -----------------------------------------


def write(tmp_path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_comment_does_not_decide_the_qrels_layout(tmp_path):
    """Before, the comment's 4 words made the layout 4 fields and line 2 was blamed."""
    path = write(tmp_path, "q.txt", "# qid docid rel\nq1 d1 1\nq1 d2 0\n")
    for format in (None, "trec"):
        qrels = read_qrels(path, format=format)
        assert qrels.index.tolist() == [2, 3]
        assert qrels["item"].tolist() == ["d1", "d2"]


def test_comment_lines_keep_the_line_numbers_of_errors(tmp_path):
    path = write(tmp_path, "q.txt", "# judged by\n#  two assessors\nq1 0 d1 1\nq1 0 d2 yes\n")
    with pytest.raises(OffevalError, match=r"q\.txt, line 4: rel 'yes' is not a number"):
        read_qrels(path)


def test_run_comments_may_follow_blanks_and_lines_may_go_on(tmp_path):
    """get_trec_results.c skips blanks before a '#', and the rest of a line after the tag."""
    text = (
        "# run bm25\n"
        "q1 Q0 d1 1 2.5 bm25 k1=0.9 b=0.4\n"
        "  \t# second stage\n"
        "q1 Q0 d#2 2 1.5 bm25\n"
        "q2\tQ0\td3\t1\t0.5\tbm25\t# a note\n"
    )
    run = read_run(write(tmp_path, "r.txt", text))
    assert run.index.tolist() == [2, 4, 5]
    assert run["item"].tolist() == ["d1", "d#2", "d3"]
    assert run["score"].tolist() == [2.5, 1.5, 0.5]
    assert run.attrs["run_tag"] == "bm25"
    short = write(tmp_path, "s.txt", text + "q2 Q0 d4 2 0.1\n")
    with pytest.raises(OffevalError, match=r"line 6: expected 6 fields .*found 5"):
        read_run(short)
