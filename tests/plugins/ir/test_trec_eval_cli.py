"""``offeval trec_eval``: trec_eval's command line, and its output byte for byte.

The oracle is trec_eval 10.0's own stored output for each command line of its
Makefile's quicktest (trec_eval_test/NOTICE.md lists them; the out.* files hold
what trec_eval printed). offeval runs each command line and must print exactly
the stored lines of every measure it computes, in trec_eval's order: the
comparison covers more lines as offeval computes more of trec_eval's measures,
and a minimum set of measures per file keeps it from passing on nothing.
"""

from __future__ import annotations

import gzip
import math
import re
import shlex
import warnings
from pathlib import Path

import pytest
from cli_checks import one_line_error

from offeval.cli.shell import main
from offeval_ir import trec_command_run
from offeval_ir.trec_catalogue import GROUPS, SUPPORTED
from offeval_ir.trec_command_run import expand, supported_measures

DATA = Path(__file__).parent / "trec_eval_test"


def _cases() -> list[tuple[str, str, list[str]]]:
    """(id, stored output, arguments) for each command line NOTICE.md lists."""
    rows = re.findall(
        r"^\| (out\.\S+) \| `trec_eval ([^`]*)`(.*)\|$",
        (DATA / "NOTICE.md").read_text(),
        flags=re.M,
    )
    cases = []
    for out, command, note in rows:
        argv = [_stored(arg) for arg in shlex.split(command)]
        cases.append((out, out, argv))
        also = re.search(r"also with (\S+?)\)", note)
        if also:  # the same output from another qrels file
            other = [also[1] if arg == argv[-2] else arg for arg in argv]
            cases.append((f"{out}-{also[1]}", out, other))
    return cases


def _stored(arg: str) -> str:
    """A file of the command line as stored here (results.comment.test is gzipped)."""
    if not arg.startswith("-") and not (DATA / arg).exists() and (DATA / f"{arg}.gz").exists():
        return f"{arg}.gz"
    return arg


CASES = _cases()


def _measure_args(argv: list[str]) -> list[tuple[int, int, str]]:
    """(first index, last index, argument) of each ``-m`` in ``argv`` (glued or not)."""
    found, i = [], 0
    while i < len(argv):
        if argv[i] in ("-m", "--measure"):
            found.append((i, i + 1, argv[i + 1]))
            i += 1
        elif argv[i].startswith("--measure="):
            found.append((i, i, argv[i].partition("=")[2]))
        elif argv[i].startswith("-m"):
            found.append((i, i, argv[i][2:]))
        i += 1
    return found


def _runnable(argv: list[str]) -> list[str]:
    """``argv`` without the ``-m`` arguments naming a measure offeval does not compute
    (naming one is an error; a group leaves them out itself)."""
    dropped: set[int] = set()
    for first, last, arg in _measure_args(argv):
        name = arg.partition(".")[0]
        if name not in GROUPS and not all(r.supported for r in expand([arg])):
            dropped.update(range(first, last + 1))
    return [arg for i, arg in enumerate(argv) if i not in dropped]


def _label(line: bytes) -> str:
    return line.split(b"\t")[0].decode().rstrip(" ")


#: Lines every stored file must have compared (so the comparison cannot pass on nothing).
_OFFICIAL = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec"}
_OFFICIAL |= {"bpref", "recip_rank", "iprec_at_recall_0.00", "P_5", "P_1000"}
_ALL_TREC = _OFFICIAL | {"recall_5", "recall_1000", "gm_bpref", "ndcg", "ndcg_cut_10"}
_ALL_TREC |= {"map_cut_1000", "success_1", "success_10", "set_P", "set_recall", "set_F"}
MINIMUM = {
    "out.test": _OFFICIAL,
    "out.comment.test": _OFFICIAL,
    "out.test.a": _ALL_TREC,
    "out.test.aq": _ALL_TREC | {"relstring"},
    "out.test.aqc": _ALL_TREC | {"relstring"},
    "out.test.aqcM": _ALL_TREC | {"relstring"},
    "out.test.aql": _ALL_TREC | {"relstring_20"},
    "out.test.meas_params": {"P_3", "P_7", "recall_2000", "ndcg_cut_23", "success_2"},
}
#: Measures of the stored outputs offeval does not compute yet (their lines are not compared).
NOT_YET: set[str] = set()


def test_notice_lists_every_stored_output():
    assert {out for _, out, _ in CASES} == {p.name for p in DATA.glob("out.*")}
    assert len(CASES) == 9


@pytest.mark.filterwarnings("ignore:-m .*left out:UserWarning")
@pytest.mark.parametrize("chunk_rows", [None, 400], ids=["whole", "blocks"])
@pytest.mark.parametrize(("out", "argv"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_output_is_trec_eval_s_byte_for_byte(out, argv, chunk_rows, monkeypatch, capsys):
    """Every line of every measure offeval computes, as trec_eval printed it, in its order
    (the run judged whole, or a block of queries at a time)."""
    monkeypatch.chdir(DATA)
    if chunk_rows is not None:
        monkeypatch.setattr(trec_command_run, "CHUNK_ROWS", chunk_rows)
    runnable = _runnable(argv)
    asked = [arg for *_, arg in _measure_args(runnable)] or ["official"]
    printed = {r.label for r in expand(asked) if r.supported}
    stored = (DATA / out).read_bytes().splitlines(keepends=True)
    expected = [line for line in stored if _label(line) in printed]
    assert main(["trec_eval", *runnable]) == 0
    assert capsys.readouterr().out.encode() == b"".join(expected)
    compared = {_label(line) for line in expected}
    assert MINIMUM[out] <= compared, sorted(MINIMUM[out] - compared)
    left_out = {_label(line) for line in stored} - compared
    assert {r.measure.name for r in expand(asked) if r.label in left_out} <= NOT_YET


@pytest.mark.parametrize(("out", "argv"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_measures_expand_to_trec_eval_s_labels_in_its_order(out, argv):
    """``-m`` arguments give trec_eval's labels and order, measures offeval does not compute
    included: per query (the first query's lines) and in the summary."""
    requested = expand([a for *_, a in _measure_args(argv)] or ["official"])
    stored = (DATA / out).read_bytes().splitlines()
    summary = [_label(line) for line in stored if line.split(b"\t")[1] == b"all"]
    assert summary == [r.label for r in requested if r.measure.summary]
    first = stored[0].split(b"\t")[1]
    if "-q" in argv and first != b"all":
        per_query = [_label(line) for line in stored if line.split(b"\t")[1] == first]
        assert per_query == [r.label for r in requested if r.measure.per_query]


def _stored_lines(out: str, argv: list[str]) -> bytes:
    """The stored lines of ``out`` that offeval prints for ``argv``'s measures."""
    asked = [arg for *_, arg in _measure_args(argv)] or ["official"]
    printed = {r.label for r in expand(asked) if r.supported}
    stored = (DATA / out).read_bytes().splitlines(keepends=True)
    return b"".join(line for line in stored if _label(line) in printed)


#: The quicktest command lines respelled as getopt (and getopt_long) also reads them.
RESPELLED = [
    ("out.test.aqcM", "-m all_trec -q -c -M 100 qrels.test results.trunc"),
    ("out.test.aqcM", "-qc -mall_trec -M100 qrels.test results.trunc"),
    ("out.test.aqcM", "qrels.test results.trunc -m all_trec -qc --Max_retrieved_per_topic=100"),
    (
        "out.test.aqcM",
        "--measure=all_trec --query_eval_wanted --complete_rel_info_wanted "
        "--Max_retrieved_per_topic 100 qrels.test results.trunc",
    ),
    ("out.test.aql", "-m all_trec -m relstring.20 -q -l 2 qrels.rel_level results.test"),
    (
        "out.test.aql",
        "-q -l2 -mrelstring.20 -m all_trec --level_for_rel=2 qrels.rel_level results.test",
    ),
    (
        "out.test.meas_params",
        "-q -mP.5,7,3 -m ndcg_cut.10,20,23.4 -m success.2,5,20 "
        "-mrecall.20,2000 -m P.100 qrels.test results.test",
    ),
]


@pytest.mark.filterwarnings("ignore:-m .*left out:UserWarning")
@pytest.mark.parametrize(("out", "command"), RESPELLED)
def test_glued_long_and_reordered_options_read_as_trec_eval_reads_them(
    out, command, monkeypatch, capsys
):
    """``-M100``, ``-qc``, ``--measure=``, options after the files; a measure's parameters
    come from its first ``-m`` (``-m P.100`` after ``-mP.5,7,3`` changes nothing)."""
    monkeypatch.chdir(DATA)
    argv = shlex.split(command)
    assert main(["trec_eval", *argv]) == 0
    assert capsys.readouterr().out.encode() == _stored_lines(out, argv)


@pytest.mark.filterwarnings("ignore:-m .*left out:UserWarning")
def test_nosummary_prints_only_the_per_query_lines(monkeypatch, capsys):
    monkeypatch.chdir(DATA)
    argv = ["-m", "all_trec", "-q", "-n", "qrels.test", "results.test"]
    assert main(["trec_eval", *argv]) == 0
    per_query = [
        line
        for line in _stored_lines("out.test.aq", argv).splitlines(keepends=True)
        if line.split(b"\t")[1] != b"all"
    ]
    assert capsys.readouterr().out.encode() == b"".join(per_query)
    assert main(["trec_eval", "-n", "-m", "map", "qrels.test", "results.test"]) == 0
    assert capsys.readouterr().out == ""


def _trec_file(path: Path) -> list[list[str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        return [line.split() for line in handle if line.strip() and not line.startswith("#")]


def test_without_c_the_queries_of_both_files_are_averaged(monkeypatch, capsys):
    """results.trunc has no line for query 302: without -c it is left out (trec_eval's
    help; pytrec_eval's per-query values, averaged over 301 and 303, are the oracle)."""
    import pytrec_eval

    monkeypatch.chdir(DATA)
    qrels: dict = {}
    for qid, _, doc, rel in _trec_file(DATA / "qrels.test"):
        qrels.setdefault(qid, {})[doc] = int(rel)
    run: dict = {}
    for fields in _trec_file(DATA / "results.trunc"):
        run.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    assert sorted(run) == ["301", "303"] and "302" in qrels
    names = {"map", "P_10", "ndcg_cut_10", "recip_rank"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    argv = ["-q", "-m", "map", "-m", "P.10", "-m", "ndcg_cut.10", "-m", "recip_rank"]
    assert main(["trec_eval", *argv, "qrels.test", "results.trunc"]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = [
        f"{name:<22}\t{qid}\t{theirs[qid][name]:6.4f}"
        for qid in ("301", "303")
        for name in ("map", "recip_rank", "P_10", "ndcg_cut_10")
    ]
    expected += [
        f"{name:<22}\tall\t{(theirs['301'][name] + theirs['303'][name]) / 2:6.4f}"
        for name in ("map", "recip_rank", "P_10", "ndcg_cut_10")
    ]
    assert lines == expected


def test_c_in_blocks_scores_the_query_missing_from_the_run_as_whole(monkeypatch, capsys):
    """Judged a block of queries at a time, the query the run lacks (302 in results.trunc)
    comes in a last block of its own under -c: every line as when judged whole, 302's
    precision, AP and relstring those of an empty list."""
    monkeypatch.chdir(DATA)
    argv = ["trec_eval", "-q", "-c", "-m", "all_trec", "qrels.test", "results.trunc"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(argv) == 0
        whole = capsys.readouterr().out
        monkeypatch.setattr(trec_command_run, "CHUNK_ROWS", 50)
        assert main(argv) == 0
    assert capsys.readouterr().out == whole
    lines = whole.splitlines()
    for name, value in (("map", "0.0000"), ("P_10", "0.0000"), ("relstring", "''")):
        assert f"{name:<22}\t302\t{value}" in lines


def _write(path: Path, rows: list[str]) -> str:
    path.write_text("".join(f"{row}\n" for row in rows))
    return str(path)


def test_query_order_geometric_mean_counts_and_runid(tmp_path, capsys):
    """Queries in text order (10 before 9); a query judged only non-relevant scores 0; a run
    query without qrels is ignored; gm_map floors 0 at 0.00001; runid is the tag of the
    last line that is no comment."""
    qrels = _write(tmp_path / "qrels", ["9 0 a 1", "9 0 b 0", "10 0 c 1", "10 0 d 0", "7 0 e 0"])
    run = _write(
        tmp_path / "run",
        [
            "9 Q0 a 1 3.0 first",
            "9 Q0 b 2 2.0 first",
            "10 Q0 d 1 5.0 first",
            "7 Q0 e 1 1.0 first",
            "8 Q0 z 1 1.0 first",
            "10 Q0 x 2 4.0 last extra words",
            "# 10 Q0 y 3 1.0 commented",
            "",
        ],
    )
    measures = ["-m", "map", "-m", "gm_map", "-m", "runid", "-m", "num_q"]
    assert main(["trec_eval", "-q", *measures, qrels, run]) == 0
    # AP: query 10 retrieves c nowhere (0), query 7 has no relevant document (0), query 9
    # finds a at rank 1 (1)
    gm = math.exp((math.log(1e-5) + math.log(1e-5) + math.log(1.0)) / 3)
    assert capsys.readouterr().out.splitlines() == [
        f"{'map':<22}\t10\t0.0000",
        f"{'map':<22}\t7\t0.0000",
        f"{'map':<22}\t9\t1.0000",
        f"{'runid':<22}\tall\tlast",
        f"{'num_q':<22}\tall\t3",
        f"{'map':<22}\tall\t{1 / 3:6.4f}",
        f"{'gm_map':<22}\tall\t{gm:6.4f}",
    ]


@pytest.mark.parametrize(
    ("argv", "patterns"),
    [
        (["-x"], [r"unrecognized arguments: -x"]),
        (["-R", "bogus"], [r"^offeval: error: -R: trec_eval: Illegal rel_format 'bogus'$"]),
        (["-Rprefs"], [r"^offeval: error: -R prefs: .*reads the rel_info format qrels only"]),
        (["-T", "trec"], [r"-T: trec_eval: Illegal retrieval results format 'trec'$"]),
        (["-N", "many"], [r"-N takes a whole number, got 'many'"]),
        (["-D", "x.301"], [r"-D takes a whole number, got 'x'"]),
        (["--Zscore", "zscores_file"], [r"^offeval: error: --Zscore: .*-Z/--Zscore is not"]),
        (["-l", "-1"], [r"-l must be at least 0, got -1"]),
        (["-l", "two"], [r"-l takes a whole number, got 'two'"]),
        (["-M", "-1"], [r"-M must be at least 0"]),
        (["-m", "nDCG"], [r"-m nDCG: trec_eval has no measure 'nDCG' \(did you mean ndcg\?\)"]),
        (["-m", "P."], [r"-m P\.: no parameters after the dot"]),
        (["-mP.5,10,5"], [r"-m P\.5,10,5: a cut-off is given twice"]),
        (["-m", "P.0"], [r"-m P\.0: cut-offs must be positive"]),
        (["-m", "iprec_at_recall.x"], [r"'x' is not a number"]),
        (["-m", "prefs_simp"], [r"offeval does not compute trec_eval's prefs_simp; it computes "]),
        # trec_eval takes each of these and prints a number (-1.8e+151 for rbp.p=2)
        (["-m", "ndcg.1=x"], [r"^offeval: error: 'ndcg\.1=x': ndcg: bad parameter '1=x'"]),
        (["-m", "utility.1,2"], [r"'utility\.1,2': .*bad parameter '1,2' .*four coefficients"]),
        (["-m", "rbp.p=2"], [r"'rbp\.p=2': rbp: RBP's persistence p must be in \(0, 1\)"]),
        (["-m", "rbp.p=0"], [r"persistence p must be in \(0, 1\), got 0\.0 \(trec_eval acc"]),
        (["-m", "rbp.p=nan"], [r"'rbp\.p=nan': rbp: bad parameter 'p=nan'"]),
        (["-m", "rbp_resid.p=1"], [r"'rbp_resid\.p=1': rbp_resid: RBP's persistence p must be"]),
        (["-m", "set_F.-1"], [r"'set_F\.-1': set_F: the weight x of .* must be >= 0, got -1\.0"]),
        (["-m", "set_F.0.5,2"], [r"bad parameter '0\.5,2' \(expected one number x >= 0\)"]),
        (["-m", "iprec_at_recall.1.5"], [r"a recall level must be in \[0, 1\], got 1\.5"]),
        (["-m", "11pt_avg.0.5,-0.1"], [r"a recall level must be in \[0, 1\], got -0\.1"]),
        (["-m", "Rprec_mult.-1"], [r"'Rprec_mult\.-1': .*multiple of R must be > 0, got -1"]),
        (["-m", "Rprec_mult.0"], [r"the multiple of R must be > 0, got 0\.0"]),
        (["-m", "relstring.-3"], [r"^offeval: error: -m relstring\.-3: .*length.* >= 0, got -3"]),
        (["-m", "relstring.3,5"], [r"-m relstring\.3,5: .*one whole number"]),
    ],
)
def test_a_mistake_is_one_line_naming_the_option(argv, patterns, monkeypatch, capsys):
    monkeypatch.chdir(DATA)
    one_line_error(capsys, ["trec_eval", *argv, "qrels.test", "results.test"], *patterns)


@pytest.mark.parametrize(
    ("files", "pattern"),
    [
        (["missing.qrels", "results.test"], r"^offeval: error: qrels file missing.qrels: no such"),
        (["qrels.test", "missing.run"], r"^offeval: error: run file missing.run: no such file"),
        (["qrels.test", "."], r"run file \.: is a directory"),
        (["-", "results.test"], r"qrels '-': trec_eval reads only the run from standard input"),
        (["qrels.test"], r"the following arguments are required: run"),
        (["results.test", "qrels.test"], r"swapped"),
    ],
)
def test_a_missing_or_swapped_file_is_one_line(files, pattern, monkeypatch, capsys):
    """One line and no warning before it (the default group leaves measures out)."""
    monkeypatch.chdir(DATA)
    one_line_error(capsys, ["trec_eval", *files], pattern)


def test_no_query_with_both_results_and_qrels_is_one_line(tmp_path, capsys):
    qrels = _write(tmp_path / "qrels", ["1 0 a 1"])
    run = _write(tmp_path / "run", ["2 Q0 a 1 1.0 tag"])
    one_line_error(capsys, ["trec_eval", qrels, run], r"no query has both results")


def test_a_group_leaves_out_what_offeval_does_not_compute_in_one_warning(monkeypatch, capsys):
    """qrels_jg's measures need judgement groups (trec_eval's -R qrels_jg): runid and num_q
    are printed, the rest left out in one warning."""
    monkeypatch.chdir(DATA)
    with pytest.warns(UserWarning) as record:
        assert main(["trec_eval", "-m", "qrels_jg", "qrels.test", "results.test"]) == 0
    assert [str(w.message) for w in record] == [
        "-m qrels_jg: left out 3 measures offeval does not compute: map_avgjg, P_avgjg, "
        "Rprec_mult_avgjg"
    ]
    runid_and_num_q = (DATA / "out.test").read_text().splitlines(keepends=True)[:2]
    assert capsys.readouterr().out == "".join(runid_and_num_q)


def test_every_measure_of_all_trec_is_computed_without_a_warning(monkeypatch, capsys):
    monkeypatch.chdir(DATA)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["trec_eval", "-m", "all_trec", "-m", "set", "qrels.test", "results.test"]) == 0
    assert capsys.readouterr().out.encode() == (DATA / "out.test.a").read_bytes()


def test_help_names_the_groups_and_the_measures_offeval_computes(capsys):
    assert main(["trec_eval", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "all_trec" in text and "official" in text
    assert f"measures {', '.join(supported_measures())}" in text
    assert {"map", "P", "recall", "ndcg", "ndcg_cut", "Rprec", "bpref"} <= set(supported_measures())


def test_the_help_s_list_of_measures_is_the_computed_one():
    """The light module's list (named by ``--help`` without computing) is what offeval
    computes under trec_eval's default parameters."""
    assert SUPPORTED == tuple(supported_measures())


def test_max_retrieved_keeps_trec_eval_s_first_documents(tmp_path, capsys):
    """-M2 keeps z (score 2) and, of a and b tied at 1, b (trec_eval breaks ties by document
    id descending, form_res_rels.c): a relevant document past the cut counts for nothing."""
    qrels = _write(tmp_path / "qrels", ["q 0 a 1", "q 0 b 0", "q 0 c 2"])
    rows = ["q Q0 a 1 1.0 t", "q Q0 b 2 1.0 t", "q Q0 c 3 0.5 t", "q Q0 z 4 2.0 t"]
    run = _write(tmp_path / "run", rows)
    argv = ["-q", "-M2", "-m", "P.1,2", "-m", "relstring", "-m", "num_ret", qrels, run]
    assert main(["trec_eval", *argv]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{'num_ret':<22}\tq\t2",
        f"{'P_1':<22}\tq\t0.0000",
        f"{'P_2':<22}\tq\t0.0000",
        f"{'relstring':<22}\tq\t'-0'",
        f"{'num_ret':<22}\tall\t2",
        f"{'P_1':<22}\tall\t0.0000",
        f"{'P_2':<22}\tall\t0.0000",
    ]


def test_version_says_which_trec_eval_is_reproduced(capsys):
    assert main(["trec_eval", "-v"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "trec_eval version 10.0" in captured.err
