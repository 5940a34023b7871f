"""Bad and awkward inputs of the IR plugin: run and qrels files (TREC, CSV, Parquet, JSON),
``offeval metrics``, ``offeval compare``, :func:`offeval_ir.compute` and measure strings.

Expected values are worked out by hand in the comments (or taken from trec_eval's source),
never copied from offeval's output.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_checks import one_line_error
from scipy import stats

from offeval import ColumnError, ConfigurationError, OffevalError
from offeval.cli.shell import main
from offeval_ir import PRESETS, Conventions, Judgements, compute, compute_measures, evaluate_runs
from offeval_ir.blocks import compute_frames
from offeval_ir.files import read_qrels, read_run
from offeval_ir.prepared import prepare_qrels
from offeval_ir.topn import compute_topn, evaluate_topn


def write(path, text: str):
    path.write_text(text)
    return path


# --- ids are text, whatever the format -------------------------------------------------------


def test_csv_and_parquet_ids_are_text_as_trec_ids_are(tmp_path):
    csv = write(tmp_path / "r.csv", "user,item,score\n301,0012,0.9\n301,7,0.5\n")
    run = read_run(csv)
    assert list(run["user"]) == ["301", "301"] and list(run["item"]) == ["0012", "7"]
    pd.DataFrame({"user": [301], "item": [12], "relevance": [1]}).to_parquet(tmp_path / "q.pq")
    qrels = read_qrels(tmp_path / "q.pq")
    assert list(qrels["user"]) == ["301"] and list(qrels["item"]) == ["12"]
    assert qrels["relevance"].tolist() == [1]  # grades stay numbers


def test_ids_are_text_under_a_column_mapping(tmp_path):
    csv = write(tmp_path / "r.csv", "qid,docid,score\n301,12,0.9\n")
    run = read_run(csv, columns={"user": "qid", "item": "docid"})
    assert run["qid"].tolist() == ["301"] and run["docid"].tolist() == ["12"]


def test_csv_run_with_trec_qrels_is_evaluated(tmp_path, capsys):
    """301: d1001 relevant at rank 1 (P@1 = 1); 302: its top item 1004 is not relevant
    (P@1 = 0): mean 0.5 over 2 queries."""
    run = write(tmp_path / "r.csv", "user,item,score\n301,1001,0.9\n301,1002,0.5\n302,1004,0.4\n")
    qrels = write(tmp_path / "q.txt", "301 0 1001 1\n302 0 1003 1\n")
    out = tmp_path / "t.csv"
    assert main(["metrics", str(run), str(qrels), "-m", "P@1", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert table.loc[0, "mean"] == pytest.approx(0.5) and table.loc[0, "users"] == 2


def test_column_options_name_a_csv_runs_columns_beside_trec_qrels(tmp_path, capsys):
    """--column user=qid names the CSV run's column; the TREC qrels, whose columns are
    named by role, are read as they are (the option told to the user was refused there:
    'the labels need column qid'). 301: rank 1 relevant, 302: not: P@1 = 1/2."""
    run = write(tmp_path / "r.csv", "qid,docid,score\n301,d1,0.9\n301,d2,0.5\n302,d4,0.4\n")
    qrels = write(tmp_path / "q.txt", "301 0 d1 1\n302 0 d3 1\n")
    out = tmp_path / "t.csv"
    argv = ["metrics", run, qrels, "-m", "P@1", "--column", "user=qid", "--column", "item=docid"]
    assert main([*map(str, argv), "--out", str(out)]) == 0, capsys.readouterr().err
    table = pd.read_csv(out)
    assert table.loc[0, "mean"] == pytest.approx(0.5) and table.loc[0, "users"] == 2
    argv[-1] = "doc=nope"  # a column no file has is still named
    err = one_line_error(capsys, argv)
    assert "'nope'" in err and "--column item=NAME" in err


def test_no_query_of_the_run_in_the_qrels_is_refused(tmp_path, capsys):
    run = write(tmp_path / "r.txt", "q1 Q0 d1 1 0.9 x\nq2 Q0 d1 1 0.9 x\n")
    qrels = write(tmp_path / "q.txt", "q7 0 d1 1\nq8 0 d1 1\n")
    err = one_line_error(capsys, ["metrics", run, qrels, "-m", "P@1"])
    assert "no query of the run is in the qrels" in err
    assert "r.txt" in err and "q.txt" in err
    assert "'q1'" in err and "'q7'" in err


def test_no_common_query_is_refused_by_the_python_api():
    run = pd.DataFrame({"user": ["q1"], "item": ["d1"], "score": [1.0]})
    qrels = pd.DataFrame({"user": ["q9"], "item": ["d1"], "relevance": [1]})
    with pytest.raises(OffevalError, match="no query of the run is in the qrels"):
        evaluate_runs({"bm25": run}, qrels, ["P@1"])


@pytest.mark.parametrize(
    ("run_items", "qrels_items", "run_kind", "qrels_kind"),
    [
        ([1, 2], ["1", "2"], "numbers (int64)", "text"),
        (["1", "2"], [1, 2], "text", "numbers (int64)"),
        ([1.0, 2.0], pd.Series(["1", "2"], dtype=object), "numbers (float64)", "text (object)"),
    ],
)
@pytest.mark.parametrize("runs", [1, 2], ids=["one run", "prepared qrels"])
def test_item_ids_of_another_type_than_the_qrels_are_refused(
    run_items, qrels_items, run_kind, qrels_kind, runs
):
    run = pd.DataFrame({"user": "q1", "item": run_items, "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"user": "q1", "item": qrels_items, "relevance": [1, 1]})
    with pytest.raises(ColumnError) as caught:
        if runs == 1:
            compute_measures(run, qrels, ["P@2"])
        else:  # several runs are judged on qrels prepared once
            evaluate_runs({"a": run, "b": run}, qrels, ["P@2"])
    message = str(caught.value)
    assert message.startswith("column 'item': the run's ids are " + run_kind)
    assert f"the qrels' {qrels_kind}" in message and "\n" not in message


def test_item_ids_of_mixed_types_are_judged_where_they_match():
    run = pd.DataFrame({"user": "q1", "item": pd.Series([1, "d2"], dtype=object), "score": [2, 1]})
    qrels = pd.DataFrame({"user": "q1", "item": ["d2", "d3"], "relevance": [1, 1]})
    assert compute_measures(run, qrels, ["P@2"]).per_user["P@2"].tolist() == [0.5]


@pytest.mark.parametrize(
    ("run", "qrels", "message"),
    [
        (
            {"q1": {"d1": 2.0, "d2": math.nan}, "q2": {"d3": 1.0}},
            {"q1": {"d1": 1}},
            "column 'score': score must be a number (the run: query, document [('q1', 'd2')])",
        ),
        (
            {"q1": {"d1": 2.0}},
            {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": math.nan, "d4": math.inf}},
            "column 'relevance': relevance must be a finite number "
            "(the qrels: query, document [('q2', 'd3'), ('q2', 'd4')])",
        ),
    ],
)
def test_nan_in_dict_of_dict_inputs_names_the_query_and_the_document(run, qrels, message):
    with pytest.raises(ColumnError) as caught:
        compute_measures(run, qrels, ["P@2"])
    assert str(caught.value) == message
    with pytest.raises(ColumnError) as caught:
        evaluate_runs({"bm25": run}, qrels, ["P@2"])
    assert str(caught.value) == message.replace("the run:", "run 'bm25':")


def test_infinite_scores_in_dict_of_dict_runs_are_ranked_as_in_frames():
    run = {"q1": {"d1": -math.inf, "d2": math.inf, "d3": 0.0}}
    got = compute_measures(run, {"q1": {"d2": 1}}, ["RR"]).per_user["RR"]
    assert got.tolist() == [1.0]  # d2 first


# --- negative grades -------------------------------------------------------------------------

#: d2 is graded -1 (TREC's "in the pool, unjudged"); the run ranks d2, d1, d3, d5.
NEG_RUN = pd.DataFrame({"user": "q1", "item": ["d2", "d1", "d3", "d5"], "score": [4.0, 3, 2, 1]})
NEG_QRELS = pd.DataFrame(
    {"user": "q1", "item": ["d1", "d2", "d3", "d4"], "relevance": [2, -1, 1, 0]}
)


def test_negative_grades_follow_trec_eval_under_its_preset():
    """trec_eval reads a negative grade as gain 0 and not judged (form_res_rels.c:
    RELVALUE_UNJUDGED; m_ndcg.c sums gains > 0 only). nDCG@10: DCG = 0 + 2/log2(3) +
    1/log2(4), IDCG = 2 + 1/log2(3). bpref: d1 and d3 have no judged non-relevant item
    above them (d2 is not judged), so bpref = 1. P@2 = 1/2 (d2 is not relevant)."""
    values = compute_measures(NEG_RUN, NEG_QRELS, ["nDCG@10", "Bpref", "P@2"])
    dcg, idcg = 2 / math.log2(3) + 1 / 2, 2 + 1 / math.log2(3)
    assert values.per_user.loc["q1", "nDCG@10"] == pytest.approx(dcg / idcg, rel=1e-12)
    assert values.per_user.loc["q1", "Bpref"] == pytest.approx(1.0)
    assert values.per_user.loc["q1", "P@2"] == pytest.approx(0.5)


def test_negative_grades_as_pytrec_eval_reads_them():
    """q2 has only a negative label: trec_eval still evaluates it (it is in the qrels),
    scoring 0; q1 as above. Compared user for user with trec_eval itself."""
    import pytrec_eval

    run = pd.concat([NEG_RUN, pd.DataFrame({"user": "q2", "item": ["x", "y"], "score": [2.0, 1]})])
    qrels = pd.concat([NEG_QRELS, pd.DataFrame({"user": ["q2"], "item": ["x"], "relevance": [-1]})])
    ours = compute_measures(run, qrels, ["nDCG@10", "P@2", "Bpref", "AP", "RR", "Rprec"]).per_user
    names = {"ndcg_cut_10": "nDCG@10", "P_2": "P@2", "bpref": "Bpref", "map": "AP"}
    names.update(recip_rank="RR", Rprec="Rprec")
    run_dict = {u: dict(zip(g["item"], g["score"], strict=True)) for u, g in run.groupby("user")}
    qrels_dict = {
        u: dict(zip(g["item"], map(int, g["relevance"]), strict=True))
        for u, g in qrels.groupby("user")
    }
    theirs = pytrec_eval.RelevanceEvaluator(qrels_dict, set(names)).evaluate(run_dict)
    assert set(theirs) == {"q1", "q2"} and not ours.isna().any().any()
    for user, values in theirs.items():
        for measure, value in values.items():
            assert ours.loc[user, names[measure]] == pytest.approx(value, abs=1e-12), measure


def test_negative_grades_are_refused_elsewhere_naming_the_rows():
    labels = NEG_QRELS.set_axis([11, 12, 13, 14])
    with pytest.raises(ColumnError, match=r"negative.*negative_grades.*rows \[12\]"):
        compute_measures(NEG_RUN, labels, ["nDCG@10"], PRESETS["blog"]())


def test_compute_refuses_negative_grades_in_hand_built_judgements():
    """A Judgements built by hand with a negative grade gave nDCG < 0 (-0.32 and the like)."""
    j = Judgements(
        users=pd.Index(["q1"]),
        grades=np.array([[-1.0, 1.0]]),
        lengths=np.array([2]),
        label_grades=np.array([[1.0, -1.0]]),
        judged=np.array([[True, True]]),
        n_judged=np.array([2]),
    )
    with pytest.raises(ConfigurationError, match="negative_grades"):
        compute(j, ["ndcg"], [2], Conventions())
    zero = compute(j, ["ndcg"], [2], Conventions(negative_grades="zero"))
    # default conventions: gain 2^g - 1, discount 1 / ln(rank + 1), ideal from the list.
    # DCG = 0 + 1 / ln 3; IDCG = 1 / ln 2 (the grade 1 first, the negative one as 0)
    assert zero.per_user.iloc[0, 0] == pytest.approx(math.log(2) / math.log(3), rel=1e-12)


# --- compute's cut-offs ----------------------------------------------------------------------


@pytest.mark.parametrize("ks", [[], [float("nan")], [5, float("nan")], (None, math.inf)])
def test_compute_cut_offs_are_checked(ks):
    j = Judgements.from_lists({"u": ["a", "b"]}, {"u": ["a"]})
    with pytest.raises(ConfigurationError, match="ks"):
        compute(j, ["precision"], ks)


def test_whole_float_cut_offs_name_their_columns_as_integers():
    """5.0 is the cut-off 5: one column precision@5 (not precision@5.0 beside it)."""
    j = Judgements.from_lists({"u": ["a", "b", "c"]}, {"u": ["a"]})
    result = compute(j, ["precision"], [5, 5.0, np.float64(2.0)])
    assert result.per_user.columns.tolist() == ["precision@5", "precision@2"]
    assert result.per_user.loc["u"].tolist() == [pytest.approx(1 / 5), pytest.approx(1 / 2)]


# --- compare ---------------------------------------------------------------------------------


def _runs(tmp_path, missing: int = 2, n: int = 10):
    """Run a ranks the relevant document first for every query; run b ranks it second and
    has no ranking for the last ``missing`` queries."""
    qrels = "".join(f"q{i} 0 rel{i} 1\n" for i in range(n))
    a = "".join(f"q{i} Q0 rel{i} 1 2.0 a\nq{i} Q0 x{i} 2 1.0 a\n" for i in range(n))
    b = "".join(f"q{i} Q0 x{i} 1 2.0 b\nq{i} Q0 rel{i} 2 1.0 b\n" for i in range(n - missing))
    return (
        write(tmp_path / "qrels.txt", qrels),
        write(tmp_path / "a.run", a),
        write(tmp_path / "b.run", b),
    )


def test_compare_is_paired_on_the_common_queries_and_says_what_it_left_out(tmp_path):
    """RR of a is 1 on every query, of b 1/2 on its 8: on the 8 common queries the
    difference is exactly 1/2 (not 1 - 1/2 over 10 and 8 queries alike here, but the
    means must be over the same 8 queries: a's mean over 8 is 1)."""
    qrels, a, b = _runs(tmp_path)
    runs = {"a": read_run(a), "b": read_run(b)}
    evaluation = evaluate_runs(runs, read_qrels(qrels), ["RR"])
    pairs = evaluation.compare(resamples=200)
    row = pairs.iloc[0]
    assert row.users == 8 and row.difference == pytest.approx(0.5)
    assert (row.mean_a, row.mean_b) == pytest.approx((1.0, 0.5))
    assert row.left_out == 2


def test_compare_with_missing_queries_scored_zero(tmp_path):
    """trec_eval -c (--set no_predictions=zero): b's 2 missing queries count as 0, so
    the means are over all 10: a 1, b 8 * 0.5 / 10 = 0.4."""
    qrels, a, b = _runs(tmp_path)
    runs = {"a": read_run(a), "b": read_run(b)}
    conv = PRESETS["trec_eval"](no_predictions="zero")
    row = evaluate_runs(runs, read_qrels(qrels), ["RR"], conv).compare(resamples=200).iloc[0]
    assert row.users == 10 and row.left_out == 0
    assert row.difference == pytest.approx(0.6)


def test_compare_outputs_count_what_is_left_out(tmp_path, capsys):
    qrels, a, b = _runs(tmp_path)
    base = ["compare", str(qrels), str(a), str(b), "-m", "RR", "--resamples", "200"]
    out, tex = tmp_path / "c.csv", tmp_path / "c.tex"
    assert main([*base, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "paired on the 10 queries" not in printed
    assert "8 queries" in printed and "b.run" in printed and "2 left out" in printed
    table = pd.read_csv(out)
    assert table["mean"].dtype.kind == "f" and table["se"].dtype.kind == "f"
    assert set(table.columns) >= {"run", "measure", "mean", "se", "ci_low", "ci_high", "users"}
    assert table.set_index("run").loc["a.run", "mean"] == pytest.approx(1.0)
    assert (table["users"] == 8).all() and table["left_out"].tolist() == [2, 2]
    assert (table["paired_on"] == "queries every run averages").all()  # the rule, in the file
    # a's RR is 1 and b's 1/2 on each of the 8 queries: a difference of 1/2 with no
    # spread, so the paired t-test's p-value is ~0 (and the same from either side)
    assert np.isnan(table["p_vs_a"][0]) and table["p_vs_b"][0] < 1e-6
    assert table["p_vs_a"][1] == table["p_vs_b"][0]
    assert main([*base, "--out", str(tex)]) == 0
    caption = re.search(r"\\caption\{(.*)\}", tex.read_text()).group(1)
    assert "8 queries" in caption
    # the option as typed (LaTeX sets -- as a dash), the heading's lines as sentences
    assert r"-{}-{}set no\_predictions=zero" in caption and "--" not in caption
    assert "overrides none. RR: paired on" in caption


def test_compare_refuses_runs_with_no_common_query(tmp_path, capsys):
    qrels = write(tmp_path / "qrels.txt", "q1 0 d1 1\nq2 0 d1 1\n")
    a = write(tmp_path / "a.run", "q1 Q0 d1 1 1.0 a\n")
    b = write(tmp_path / "b.run", "q2 Q0 d1 1 1.0 b\n")
    err = one_line_error(capsys, ["compare", qrels, a, b, "--test", "randomization"])
    assert "no query" in err and "a.run" in err and "b.run" in err


# --- CSV cells that spreadsheets read as formulas ----------------------------------------------


def test_written_csv_text_cells_cannot_be_formulas(tmp_path):
    run = write(tmp_path / "r.txt", "=1+2 Q0 d1 1 0.9 x\n@q Q0 d1 1 0.9 x\n-3 Q0 d1 1 0.9 x\n")
    qrels = write(tmp_path / "q.txt", "=1+2 0 d1 1\n@q 0 d1 1\n-3 0 d2 1\n")
    out = tmp_path / "u.csv"
    assert (
        main(["metrics", str(run), str(qrels), "-m", "P@1", "--per-user", "--out", str(out)]) == 0
    )
    table = pd.read_csv(out)
    assert sorted(table["user"]) == ["'-3", "'=1+2", "'@q"]
    assert table["P@1"].dtype.kind == "f" and sorted(table["P@1"]) == [0.0, 1.0, 1.0]
    evil = write(tmp_path / "+evil.run", "=1+2 Q0 d1 1 0.9 x\n")
    plain = write(tmp_path / "plain.run", "=1+2 Q0 d2 1 0.9 x\n")
    out, pairs = tmp_path / "c.csv", tmp_path / "p.csv"
    argv = ["compare", qrels, evil, plain, "-m", "P@1", "--resamples", "10"]
    assert main([*map(str, argv), "--out", str(out), "--pairs", str(pairs)]) == 0
    assert "'+evil.run" in pd.read_csv(out)["run"].tolist()
    assert pd.read_csv(pairs)["a"].tolist() == ["'+evil.run"]


# --- separators ------------------------------------------------------------------------------


@pytest.mark.parametrize("separator", [";", "\t", "|"])
def test_csv_separator_is_detected(tmp_path, separator):
    text = "user,item,score\nq1,d1,0.5\n".replace(",", separator)
    run = read_run(write(tmp_path / "r.csv", text))
    assert list(run.columns) == ["user", "item", "score"] and run["score"].tolist() == [0.5]


def test_semicolon_csv_without_extension_and_sep_option(tmp_path, capsys):
    run = write(tmp_path / "run", "user;item;score\nq1;d1;0.5\n")
    assert list(read_run(run).columns) == ["user", "item", "score"]
    qrels = write(tmp_path / "q.csv", "user;item;relevance\nq1;d1;1\n")
    assert main(["metrics", str(run), str(qrels), "-m", "P@1", "--sep", ";"]) == 0
    tsv = write(tmp_path / "t.csv", "user\titem\tscore\nq1\td1\t0.5\n")
    assert read_run(tsv, sep="tab")["item"].tolist() == ["d1"]
    assert read_run(write(tmp_path / "c.csv", "user:item:score\nq1:d1:0.5\n"), sep=":")[
        "score"
    ].tolist() == [0.5]


# --- line numbers ----------------------------------------------------------------------------


def test_csv_errors_name_editor_lines_after_a_quoted_line_break(tmp_path):
    """The first record spans lines 2-3; the bad one is on line 5 (line 4 is blank)."""
    path = write(tmp_path / "r.csv", 'user,item,rank\n"q\n1",d1,1\n\nq2,d2,x\n')
    run = read_run(path)
    assert list(run.index) == [2, 5]
    with pytest.raises(ColumnError, match=r"lines \[5\]"):
        compute_measures(
            run, pd.DataFrame({"user": ["q2"], "item": ["d2"], "relevance": [1]}), ["P@1"]
        )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('user,item\n"q\n1",d1\nq1,d2,3\n', 4),  # pandas says record 3
        ("\nuser,item\n\nq1,d1\nq1,d2,3\n", 5),
        ("user,item\r\nq1,d1\r\nq1,d2,3\r\n", 3),
    ],
)
def test_csv_record_with_too_many_fields_names_the_editor_line(tmp_path, text, line):
    path = write(tmp_path / "r.csv", text)
    expected = f"{path}, line {line}: expected 2 fields (as the header has), found 3: 'q1,d2,3'"
    with pytest.raises(OffevalError, match=re.escape(expected)):
        read_run(path)


def test_trec_and_csv_rows_are_named_as_lines(tmp_path, capsys):
    run = write(tmp_path / "r.txt", "q1 Q0 d1 1 0.9 x\n\nq1 Q0 d1 2 0.8 x\n")
    qrels = write(tmp_path / "q.txt", "q1 0 d1 1\n")
    err = one_line_error(capsys, ["metrics", run, qrels, "-m", "P@1"])
    assert "r.txt, lines [3])" in err


# --- measure names ---------------------------------------------------------------------------


def test_mistyped_measure_suggests_the_closest_names_before_reading(tmp_path, capsys):
    err = one_line_error(
        capsys, ["metrics", tmp_path / "nope.run", tmp_path / "q", "-m", "nDGC@10"]
    )
    assert "did you mean nDCG@10?" in err and "no such file" not in err
    err = one_line_error(
        capsys, ["metrics", tmp_path / "nope.run", tmp_path / "q", "-m", "recip_rnak"]
    )
    assert "did you mean recip_rank?" in err
    err = one_line_error(capsys, ["metrics", tmp_path / "nope.run", tmp_path / "q", "-m", "nDCG10"])
    assert "did you mean nDCG@10?" in err
    # a trec_eval name keeps trec_eval's spelling, its cut-off after _ (not ndcg_cut@10)
    for typed, meant in [("ndcg_cut10", "ndcg_cut_10"), ("ndgc_cut10", "ndcg_cut_10")]:
        argv = ["metrics", tmp_path / "nope.run", tmp_path / "q", "-m", typed]
        err = one_line_error(capsys, argv)
        assert f"did you mean {meant}?" in err, err


def test_mistyped_convention_switch_suggests_the_closest(tmp_path, capsys):
    err = one_line_error(capsys, ["metrics", "a.run", "q", "--set", "tie=expected"])
    assert "unknown convention switches ['tie'] (did you mean ties?)" in err


# --- hints name command-line options at the command line ---------------------------------------


def test_cli_hints_name_options(tmp_path, capsys):
    qrels = write(tmp_path / "q.txt", "q1 0 d1 1\n")
    run = write(tmp_path / "r.txt", "qid docid score\n")
    err = one_line_error(capsys, ["metrics", run, qrels])
    assert "--run-format" in err and "format=" not in err
    with pytest.raises(OffevalError, match="format="):
        read_run(run)
    run = write(tmp_path / "r.csv", "qid,docid,score\nq1,d1,0.5\n")
    err = one_line_error(capsys, ["metrics", run, qrels])
    assert "--column user=" in err and "columns=" not in err
    with pytest.raises(OffevalError, match=re.escape("columns={'user': ...}")):
        compute_measures(read_run(run), read_qrels(qrels), ["P@1"])
    run = write(tmp_path / "n.csv", "user,item,points\nq1,d1,0.5\n")
    err = one_line_error(capsys, ["metrics", run, qrels])
    assert "--column score=NAME" in err and "points" in err
    err = one_line_error(capsys, ["metrics", run, qrels, "--sep", "::"])
    assert "--sep must be one character" in err
    err = one_line_error(
        capsys,
        [
            "metrics",
            write(tmp_path / "t.txt", "q1 Q0 d1 1 0.5 x\nq1 Q0 d2 1 0.5 x\n"),
            qrels,
            "-m",
            "AP",
            "--set",
            "ties=expected",
        ],
    )
    assert "--set ties=" in err and "Conventions(" not in err


# --- output files: checked first, written whole ---------------------------------------------


@pytest.mark.parametrize("option", ["--out", "--pairs"])
def test_an_unwritable_output_file_is_refused_before_any_file_is_read(tmp_path, capsys, option):
    qrels, a, b = _runs(tmp_path)
    (tmp_path / "blocker").write_text("a file, not a folder")
    missing_run = tmp_path / "never-read.run"  # reading it would be the first error
    (tmp_path / "folder.csv").mkdir()
    for target, problem in [
        (tmp_path / "blocker" / "t.csv", "is a file, not a folder"),
        (tmp_path / "folder.csv", "is a folder"),
        (qrels.with_suffix(".csv"), None),
    ]:
        if problem is None:  # the qrels file itself, as an output
            qrels_csv = write(qrels.with_suffix(".csv"), "query,doc,relevance\nq0,rel0,1\n")
            argv = ["compare", qrels_csv, a, b, option, qrels_csv]
            assert "one of the inputs" in one_line_error(capsys, argv)
            continue
        argv = ["compare", qrels, a, missing_run, option, target]
        err = one_line_error(capsys, argv)
        assert option in err and problem in err, err


def test_an_output_file_is_replaced_whole_or_not_at_all(tmp_path, capsys, monkeypatch):
    qrels, a, b = _runs(tmp_path)
    out = write(tmp_path / "table.csv", "the earlier table\n")

    def full_disk(frame, path, index=False):
        Path(path).write_text("half a ta")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("offeval_ir.command_run.write_csv", full_disk)
    assert main([str(x) for x in ["compare", qrels, a, b, "--out", out]]) != 0
    assert out.read_text() == "the earlier table\n"  # untouched
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left
    monkeypatch.undo()
    assert main([str(x) for x in ["compare", qrels, a, b, "--out", out]]) == 0
    assert pd.read_csv(out)["mean"].notna().all()


# --- issue 19's new-user trial of the command line ---------------------------------------------


@pytest.mark.parametrize("command", ["metrics", "compare-out", "compare-pairs"])
def test_latex_files_need_no_jinja2(tmp_path, capsys, monkeypatch, command):
    """pandas' to_latex imports jinja2, which offeval does not depend on: every .tex it
    writes is its own LaTeX, with or without jinja2 installed."""
    monkeypatch.setitem(__import__("sys").modules, "jinja2", None)  # as if not installed
    qrels, a, b = _runs(tmp_path)
    tex = tmp_path / "t.tex"
    argv = {
        "metrics": ["metrics", a, qrels, "-m", "RR", "--out", tex],
        "compare-out": ["compare", qrels, a, b, "-m", "RR", "--resamples", "200", "--out", tex],
        "compare-pairs": ["compare", qrels, a, b, "-m", "RR", "--resamples", "200", "--pairs", tex],
    }[command]
    assert main([str(x) for x in argv]) == 0, capsys.readouterr().err
    text = tex.read_text()
    assert r"\begin{tabular}" in text and r"\end{tabular}" in text
    body = text.split(r"\midrule")[1].split(r"\bottomrule")[0]
    # RR of a is 1 on every query: its mean is written as a number
    assert "1.0000" in body
    if command == "compare-pairs":  # one row: a.run against b.run, difference 1 - 1/2
        assert "a.run" in body and "b.run" in body and "0.5000" in body


def test_compare_counts_queries_no_run_can_average(tmp_path, capsys):
    """extra.run answers q10, which has no qrels: no run averages it; compare says so in its
    printed heading, its pairs table and its CSV, as metrics reports it excluded_no_labels."""
    qrels, a, b = _runs(tmp_path, missing=0)
    extra = write(tmp_path / "extra.run", a.read_text() + "q10 Q0 d1 1 1.0 a\n")
    pairs, out = tmp_path / "p.csv", tmp_path / "o.csv"
    argv = ["compare", qrels, extra, b, "-m", "RR", "--resamples", "200"]
    assert main([str(x) for x in [*argv, "--pairs", pairs, "--out", out]]) == 0
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if "paired on" in x)
    assert "paired on the 10 queries" in line and "1 averaged by no run (no qrels: 1)" in line
    assert pd.read_csv(pairs)["not_averaged"].tolist() == [1]
    assert pd.read_csv(out)["not_averaged"].tolist() == [1, 1]


def test_pairs_csv_keeps_p_values_unrounded(tmp_path):
    """b's RR is 1/2 on all 40 queries, c's 1 but on one: b's p-value against c is far
    below 1e-8 and must not be written as 0."""
    qrels, a, b = _runs(tmp_path, missing=0, n=40)
    swapped = ("q0 Q0 rel0 1 2.0 a\nq0 Q0 x0 2 1.0 a", "q0 Q0 x0 1 2.0 a\nq0 Q0 rel0 2 1.0 a")
    c_text = a.read_text().replace(*swapped)
    c = write(tmp_path / "c.run", c_text)
    pairs = tmp_path / "p.csv"
    argv = ["compare", qrels, a, b, c, "-m", "RR", "--resamples", "200", "--pairs", pairs]
    assert main([str(x) for x in argv]) == 0
    table = pd.read_csv(pairs)
    # b vs c: differences 0 on q0 and -1/2 on the 39 others: t = mean / (sd / sqrt(40))
    diff = np.array([0.0] + [-0.5] * 39)
    t = diff.mean() / (diff.std(ddof=1) / np.sqrt(40))
    expected = 2 * stats.t.sf(abs(t), df=39)
    row = table[(table.a == "b.run") & (table.b == "c.run")].iloc[0]
    assert 0 < expected < 1e-8
    assert row.p_value == pytest.approx(expected, rel=1e-6, abs=0)


def test_randomization_resamples_too_few_for_alpha_are_refused(tmp_path, capsys):
    """With 10 resamples the smallest p-value is 1/11 = 0.09 > 0.05: nothing can be
    significant, so the comparison is refused naming --resamples; with 19, p >= 1/20 = alpha
    is still never below it; 20 resamples (1/21) pass."""
    qrels, a, b = _runs(tmp_path, missing=0)
    base = ["compare", qrels, a, b, "-m", "RR", "--test", "randomization"]
    err = one_line_error(capsys, [*base, "--resamples", "10"])
    assert "--resamples" in err and "0.05" in err and "--resamples 20 at least" in err
    one_line_error(capsys, [*base, "--resamples", "19"], "--resamples")
    assert main([str(x) for x in [*base, "--resamples", "20"]]) == 0
    # the t-test decides: the randomisation p-value is only reported, any count is fine
    assert main([str(x) for x in ["compare", qrels, a, b, "-m", "RR", "--resamples", "10"]]) == 0
    one_line_error(
        capsys,
        [*base, "--resamples", "0"],
        r"^offeval: error: argument --resamples: 0 is not >= 1 ",
    )
    one_line_error(
        capsys, [*base, "--resamples", "1.5"], "--resamples: '1.5' is not a whole number"
    )


def test_comma_between_two_measures_asks_for_one_per_option(tmp_path, capsys):
    err = one_line_error(capsys, ["metrics", "a.run", "q", "-m", "nDCG@10,P@5"])
    assert "-m nDCG@10 -m P@5" in err and "whole number" not in err
    with pytest.raises(ConfigurationError, match=r"\['nDCG@10', 'P@5'\]"):
        compute_measures(pd.DataFrame(), pd.DataFrame(), ["nDCG@10,P@5"])
    # trec_eval's cut-off lists keep their commas
    from offeval_ir.measures import parse_measures

    assert [m.name for m in parse_measures(["ndcg_cut.10,20"])] == ["ndcg_cut_10", "ndcg_cut_20"]


def test_randomization_resamples_are_checked_after_the_correction(tmp_path, capsys):
    """Three runs make three pairs: Holm multiplies the smallest p-value 1/(resamples+1) by 3,
    so 20 resamples (3/21 = 0.14) cannot reach alpha 0.05 and 60 is the least count that can
    (3/61 < 0.05 <= 3/60); Benjamini-Hochberg leaves equal smallest p-values as they are."""
    qrels, a, b = _runs(tmp_path, missing=0)
    c = write(tmp_path / "c.run", b.read_text().replace(" b\n", " c\n"))
    base = ["compare", qrels, a, b, c, "-m", "RR", "--test", "randomization"]
    err = one_line_error(capsys, [*base, "--resamples", "20"])
    assert "corrected by holm over 3 pairs" in err and "--resamples 60 at least" in err, err
    assert main([str(x) for x in [*base, "--resamples", "60"]]) == 0
    assert main([str(x) for x in [*base, "--resamples", "20", "--correction", "fdr_bh"]]) == 0
    runs = {name: read_run(path) for name, path in (("a", a), ("b", b), ("c", c))}
    evaluation = evaluate_runs(runs, read_qrels(qrels), ["RR"])
    with pytest.raises(ConfigurationError, match=r"resamples 20: .* resamples 60 at least"):
        evaluation.compare(test="randomization", resamples=20)
    with pytest.raises(ConfigurationError, match="whole number"):
        evaluation.compare(test="randomization", resamples=2.5)


def test_a_latex_table_says_it_needs_booktabs_and_bolds_the_first_of_tied_bests(tmp_path, capsys):
    """Both runs score RR 1 on the queries they share: a tie, the first run named is bold."""
    qrels, a, _ = _runs(tmp_path)
    tex = tmp_path / "t.tex"
    argv = ["compare", qrels, f"first={a}", f"second={a}", "-m", "RR", "--resamples", "200"]
    assert main([str(x) for x in [*argv, "--out", tex]]) == 0, capsys.readouterr().err
    lines = tex.read_text().splitlines()
    assert lines[0] == r"% needs \usepackage{booktabs} in the preamble"
    bold = [line for line in lines if r"\textbf" in line]
    assert len(bold) == 1 and "first" in bold[0]


# --- top-n matrices and runs against long-frame qrels ----------------------------------------

# held-out items per user: {3, 5}, {2}, {4, 0}
HELD_OUT_FRAME = pd.DataFrame(
    {"user": [0, 0, 1, 2, 2], "item": [3, 5, 2, 4, 0], "relevance": [1, 1, 1, 1, 1]}
)


@pytest.mark.parametrize(
    ("topn", "users", "bad", "named"),
    [
        ([[3, 5], [2.5], [4]], None, "[2.5]", "[1]"),
        (np.array([[3, 5], [2.5, 1], [4, 0]]), None, "[2.5]", "[1]"),
        (np.array([[3, 5.5], [2, 1], [4, 0.25]]), None, "[5.5, 0.25]", "[0, 2]"),
        (np.array([[3, 5], [2.5, 1], [4, 0]]), [2, 0, 1], "[2.5]", "[0]"),
    ],
)
def test_fractional_item_ids_against_integer_frame_qrels_are_refused_naming_the_users(
    topn, users, bad, named
):
    # before: every id became "no item" and every user scored P@2 = 0, user 0 included
    for evaluate in (compute_topn, evaluate_topn):
        with pytest.raises(ConfigurationError) as caught:
            evaluate(topn, HELD_OUT_FRAME, ["P@2"], users=users)
        message = str(caught.value)
        assert message.startswith("topn: item ids must be whole numbers")
        assert f"got {bad}" in message and message.endswith(f"the rows of users {named}")


@pytest.mark.parametrize(
    ("topn", "qrels_items", "run_kind", "qrels_kind"),
    [
        (np.array([[10, 11], [20, 21]]), ["10", "11", "20"], "numbers (int64)", "text"),
        (np.array([[10.0, 11.0], [20.0, 21.0]]), ["10", "11", "20"], "numbers (float64)", "text"),
        (np.array([["10", "11"], ["20", "21"]]), [10, 11, 20], "text (<U2)", "numbers (int64)"),
    ],
)
def test_top_n_ids_of_another_type_than_the_frame_qrels_items_are_refused(
    topn, qrels_items, run_kind, qrels_kind
):
    qrels = pd.DataFrame({"user": [1, 1, 2], "doc": qrels_items, "relevance": [1, 1, 1]})
    with pytest.raises(ColumnError) as caught:
        compute_topn(topn, qrels, ["P@2"], users=[1, 2], columns={"item": "doc"})
    message = str(caught.value)
    assert message.startswith(f"column 'doc': the run's ids are {run_kind}")
    assert f"the qrels' {qrels_kind}" in message


def _int_run_text_qrels():
    run = pd.DataFrame({"user": [1, 1, 2], "item": [10, 11, 20], "rank": [1, 2, 1]})
    qrels = pd.DataFrame({"user": ["1", "1", "2"], "item": [10, 11, 20], "relevance": [1, 1, 1]})
    return run, qrels


def _swapped_kinds(run, qrels):
    """A run whose users are text (the qrels' users) and qrels whose users are numbers."""
    return qrels.assign(rank=1), run.drop(columns="rank").assign(relevance=1)


@pytest.mark.parametrize(
    "judge",
    [
        lambda run, qrels: compute_frames(run, qrels, ["precision"], [2]),
        lambda run, qrels: compute_frames(run, qrels, ["precision"], [2], chunk_rows=1),
        lambda run, qrels: compute_frames(run, qrels, ["precision"], [2], users=[1, 2]),
        lambda run, qrels: compute_measures(run, qrels, ["P@2"]),
        lambda run, qrels: Judgements.from_frames(run, qrels),
        lambda run, qrels: prepare_qrels(qrels).measures(run, ["P@2"]),
        lambda run, qrels: compute_frames(*_swapped_kinds(run, qrels), ["precision"], [1]),
    ],
    ids=["whole", "blocks", "users", "measures", "judgements", "prepared", "text run"],
)
def test_user_ids_of_another_type_than_the_qrels_users_are_refused(judge):
    # before: every user without labels, the mean 0.0 (or the users NaN), no error
    run, qrels = _int_run_text_qrels()
    with pytest.raises(ColumnError) as caught:
        judge(run, qrels)
    message = str(caught.value)
    assert message.startswith("column 'user': the run's ids are ")
    assert "numbers (int64)" in message and "text (" in message  # (str, or object)


def test_top_n_rows_of_another_type_of_user_than_the_frame_qrels_are_refused():
    _, qrels = _int_run_text_qrels()
    topn = np.array([[10, 11], [20, 21]])
    with pytest.raises(ColumnError) as caught:
        compute_topn(topn, qrels, ["P@2"], users=[1, 2])
    assert str(caught.value).startswith(
        "column 'user': the run's ids are numbers (int64) and the qrels' text ("
    )
    with pytest.raises(ColumnError) as caught:  # rows are users 0, 1, ... unless named
        compute_topn(topn, qrels, ["P@2"])
    message = str(caught.value)
    assert message.startswith("column 'user': the top-n matrix's rows are users 0 ... 1")
    assert "text (" in message and "users=" in message


@pytest.mark.parametrize(
    ("topn", "bad", "rows"),
    [
        ([[3, [5]], [2]], "[[5]]", "[0]"),
        ([[3, [5]], [2, (1, 4)]], "[[5], (1, 4)]", "[0, 1]"),
        (np.array([[3, None], [2, [1]]], dtype=object), "[[1]]", "[1]"),
    ],
)
def test_a_list_inside_a_top_n_list_is_refused_naming_the_rows(topn, bad, rows):
    # before: TypeError: unhashable type: 'list' (or numpy's inhomogeneous shape)
    with pytest.raises(ConfigurationError) as caught:
        compute_topn(topn, HELD_OUT_FRAME, ["P@2"], users=[0, 1])
    message = str(caught.value)
    assert message.startswith("topn: an item id is one value (a number or a text)")
    assert f"got {bad} in rows {rows}" in message
