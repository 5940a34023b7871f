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
from pathlib import Path

import pytest
from cli_checks import one_line_error

from offeval.cli.shell import main
from offeval_ir.trec_command import GROUPS, expand, supported_measures

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
_OFFICIAL = {"runid", "num_q", "map", "gm_map", "Rprec", "bpref", "recip_rank", "P_5", "P_1000"}
_ALL_TREC = _OFFICIAL | {
    "recall_5",
    "recall_1000",
    "gm_bpref",
    "ndcg",
    "ndcg_cut_10",
    "map_cut_1000",
    "success_1",
    "success_10",
    "set_P",
    "set_recall",
    "set_F",
}
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


def test_notice_lists_every_stored_output():
    assert {out for _, out, _ in CASES} == {p.name for p in DATA.glob("out.*")}
    assert len(CASES) == 9


@pytest.mark.filterwarnings("ignore:-m .*left out:UserWarning")
@pytest.mark.parametrize(("out", "argv"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_output_is_trec_eval_s_byte_for_byte(out, argv, monkeypatch, capsys):
    """Every line of every measure offeval computes, as trec_eval printed it, in its order."""
    monkeypatch.chdir(DATA)
    runnable = _runnable(argv)
    asked = [arg for *_, arg in _measure_args(runnable)] or ["official"]
    printed = {r.label for r in expand(asked) if r.supported}
    stored = (DATA / out).read_bytes().splitlines(keepends=True)
    expected = [line for line in stored if _label(line) in printed]
    assert main(["trec_eval", *runnable]) == 0
    assert capsys.readouterr().out.encode() == b"".join(expected)
    compared = {_label(line) for line in expected}
    assert MINIMUM[out] <= compared, sorted(MINIMUM[out] - compared)


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
