"""Bad inputs at the command line's edges, without plugins (the reference estimators only):
``offeval evaluate`` on the logs users give (CSV with any separator, Parquet, streamed) and
the output folders they name; each mistake one line on stderr, in the user's own words (with
the built-in plugins: tests/plugins/test_bad_inputs_cli_builtins.py)."""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_checks import MAPPING, USER_NAMES, evaluate_args, one_line_error, write_csv
from oracles import synthetic_log
from reference_estimators import IS

import offeval.data.files as files_module
import offeval.data.log as log_module
import offeval.registry.manager as registry_module
from offeval import ColumnError, InteractionLog, OffevalError, Registry, hookimpl
from offeval.cli.shell import main
from offeval.data import output as output_module
from offeval.data.output import MARKER, OutputFile, OutputFolder


@pytest.fixture()
def user_log(tmp_path, frame):
    return write_csv(frame, tmp_path / "log.csv")


@pytest.fixture(scope="module")
def frame():
    """The two-slot bandit log of :func:`oracles.synthetic_log` as a user's table: session,
    stream, mu, and pi_p01 (the target) and pi_p02 (uniform) policy columns."""
    log, _, _ = synthetic_log(3_000, seed=2)
    out = log.frame.drop(columns=["target", "target_score"]).rename(columns=USER_NAMES)
    out["pi_p01"] = log.frame["target"].to_numpy()
    out["pi_p02"] = 0.25
    return out


@pytest.fixture(autouse=True)
def estimators(reference_registry):
    """The command line finds the reference estimators (``is``, ``snis``) only."""


# -- output folders ---------------------------------------------------------------------------


def test_the_folder_is_replaced_only_when_complete(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / MARKER).write_text("")
    (dest / "old.csv").write_text("old")
    with pytest.raises(RuntimeError), OutputFolder(dest, quiet=True) as tmp:
        (tmp / "new.csv").write_text("new")
        assert tmp.parent == tmp_path and not (dest / "new.csv").exists()
        raise RuntimeError("cut short")
    assert sorted(p.name for p in dest.iterdir()) == [MARKER, "old.csv"]
    folder = OutputFolder(dest, quiet=True)
    with folder as tmp:
        (tmp / "new.csv").write_text("new")
    assert folder.replaced and sorted(p.name for p in dest.iterdir()) == [MARKER, "new.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def offeval_folder(path, *names):
    path.mkdir(parents=True)
    for name in (MARKER, *names):
        (path / name).write_text(name)
    return path


def test_two_runs_committing_one_folder_at_once_both_succeed_last_one_wins(tmp_path, monkeypatch):
    dest = offeval_folder(tmp_path / "out", "old.csv")
    first, second = OutputFolder(dest, quiet=True), OutputFolder(dest, quiet=True)
    replace = os.replace

    def the_other_run_commits_in_between(src, dst):  # after the first moved the old aside
        monkeypatch.setattr(output_module.os, "replace", replace)
        replace(src, dst)
        with second as tmp:
            (tmp / "second.csv").write_text("second")

    with first as tmp:
        (tmp / "first.csv").write_text("first")
        monkeypatch.setattr(output_module.os, "replace", the_other_run_commits_in_between)
    assert sorted(p.name for p in dest.iterdir()) == [MARKER, "first.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing left aside


def test_an_interrupt_between_the_two_renames_puts_the_earlier_folder_back(tmp_path, monkeypatch):
    dest = offeval_folder(tmp_path / "out", "old.csv")
    replace, calls = os.replace, []

    def interrupted_second(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # the earlier folder is aside, the new one not yet in place
            raise KeyboardInterrupt
        replace(src, dst)

    with pytest.raises(KeyboardInterrupt), OutputFolder(dest, quiet=True) as tmp:
        (tmp / "new.csv").write_text("new")
        monkeypatch.setattr(output_module.os, "replace", interrupted_second)
    monkeypatch.undo()
    assert sorted(p.name for p in dest.iterdir()) == [MARKER, "old.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_symlinked_destination_is_written_through_the_link(tmp_path):
    real = offeval_folder(tmp_path / "disk" / "results", "old.csv")
    link = tmp_path / "results"
    link.symlink_to(real, target_is_directory=True)
    folder = OutputFolder(link, quiet=True)
    with folder as tmp:
        (tmp / "new.csv").write_text("new")
    assert link.is_symlink() and link.resolve() == real
    assert folder.replaced and sorted(p.name for p in real.iterdir()) == [MARKER, "new.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disk", "results"]


def test_a_link_to_the_current_folder_is_never_replaced(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(OffevalError, match="the current folder"):
        OutputFolder("here")


def test_a_relative_destination_stays_where_it_was_named(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    folder, file = OutputFolder("results", quiet=True), OutputFile("table.csv")
    monkeypatch.chdir(tmp_path / "elsewhere")  # a plugin changes folder during the work
    with folder as tmp:
        (tmp / "a.csv").write_text("a")
    with file as tmp:
        tmp.write_text("t")
    assert (tmp_path / "results" / "a.csv").is_file() and (tmp_path / "table.csv").is_file()
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_symlinked_output_file_is_written_through_the_link(tmp_path):
    real = tmp_path / "disk" / "table.csv"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "table.csv"
    link.symlink_to(real)
    with OutputFile(link) as tmp:
        tmp.write_text("new")
    assert link.is_symlink() and real.read_text() == "new"


def test_an_unwritable_destination_is_found_before_the_log_is_read(
    user_log, tmp_path, capsys, no_reading
):
    (tmp_path / "notes.txt").write_text("a file")
    for option in ("--out", "--report"):
        argv = evaluate_args(user_log, option, str(tmp_path / "notes.txt" / "results"))
        one_line_error(capsys, argv, f"{option} .*notes.txt is a file, not a folder")


def test_a_folder_without_write_permission_is_found_before_the_log_is_read(
    user_log, tmp_path, capsys, no_reading
):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        probe = locked / "probe"
        try:
            probe.mkdir()
        except PermissionError:
            pass
        else:
            pytest.skip("this user (root?) writes into a read-only folder")
        argv = evaluate_args(user_log, "--out", str(locked / "results"))
        one_line_error(capsys, argv, "--out .*cannot write in .*locked")
    finally:
        locked.chmod(0o700)


def test_a_folder_that_offeval_did_not_write_is_replaced_only_with_force(
    user_log, tmp_path, capsys
):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("months of work")
    argv = evaluate_args(user_log, "--estimator", "is", "--out", str(mine))
    one_line_error(capsys, argv, "--out .*mine: a non-empty folder that offeval did not write")
    assert (mine / "thesis.tex").is_file()
    assert main([*argv, "--force"]) == 0
    assert not (mine / "thesis.tex").exists() and (mine / "estimates.csv").is_file()


def test_a_folder_holding_the_log_is_never_replaced(user_log, tmp_path, capsys):
    argv = evaluate_args(user_log, "--out", str(tmp_path), "--force")
    one_line_error(capsys, argv, "holds the input .*log.csv")
    assert user_log.is_file()


def test_the_current_folder_is_never_replaced(user_log, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path / "..")
    for folder in (".", ".."):
        argv = evaluate_args(user_log, "--out", folder, "--force")
        one_line_error(capsys, argv, "the current folder .* cannot be replaced")
    assert user_log.is_file()


# -- mistyped names, columns, separators ----------------------------------------------------


def test_a_mistyped_column_is_refused_from_the_header_with_the_closest_names(
    user_log, capsys, monkeypatch
):
    monkeypatch.setattr(log_module, "read_table", lambda *a, **k: pytest.fail("rows read"))
    argv = [*evaluate_args(user_log), "--policy", "c=pi_p3"]
    one_line_error(capsys, argv, r"--policy c=pi_p3: no column 'pi_p3' in log.csv", "pi_p01")
    argv = evaluate_args(user_log, "--map", "position=posiiton")
    one_line_error(capsys, argv, "--map position=posiiton: .*did you mean position")
    one_line_error(capsys, evaluate_args(user_log, "--baseline", "aa"), "did you mean a\\?")


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_a_csv_with_another_separator_is_read_as_such(frame, tmp_path, sep):
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False, sep=sep)
    read = files_module.read_table(path)
    assert list(read.columns) == list(frame.columns)
    np.testing.assert_allclose(read["mu"], frame["mu"])


def test_a_comma_csv_is_read_with_commas_whatever_its_text_holds(tmp_path):
    path = tmp_path / "log.csv"
    texts = {"t0": ["|'b", ",b..\ta;"], "t1": ["", ".;.'|,"]}  # csv.Sniffer said '|'
    pd.DataFrame({"session": [0, 1], **texts, "reward": [0, 1]}).to_csv(path, index=False)
    assert files_module.separator(path) == ","
    assert list(files_module.read_table(path)["t1"].fillna("")) == texts["t1"]


def test_a_header_decides_between_separators(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text('"a,b";session;reward\n0,5;1;0\n')  # a quoted name holding a comma
    assert files_module.separator(path) == ";"
    path.write_text("session|reward|note\n1|0|a;b;c\n2|1|d;e\n")
    assert files_module.separator(path) == "|"
    path.write_text("reward\n1\n0\n")  # one column: the suffix's separator
    assert files_module.separator(path) == ","
    tsv = tmp_path / "log.tsv"
    tsv.write_text("session,reward\n1,0\n")  # a .tsv that holds commas
    assert files_module.separator(tsv) == ","


def test_a_stray_quote_in_the_text_costs_no_time_to_sniff(tmp_path):
    path = tmp_path / "log.csv"
    rows = "".join(f'{i},a "b;c,1\n' for i in range(8_000))  # csv.Sniffer: 4 s on 64 KB
    path.write_text("session,title,reward\n" + rows)
    start = time.perf_counter()
    assert files_module.separator(path) == ","
    assert time.perf_counter() - start < 0.5  # about 10 ms


def test_a_semicolon_csv_is_evaluated_as_the_comma_csv(frame, tmp_path):
    comma, semicolon = tmp_path / "comma.csv", tmp_path / "semicolon.csv"
    frame.to_csv(comma, index=False)
    frame.to_csv(semicolon, index=False, sep=";")
    tables = []
    for path in (comma, semicolon):
        out = tmp_path / f"out_{path.stem}"
        assert main(evaluate_args(path, "--estimator", "is", "--out", str(out))) == 0
        tables.append(pd.read_csv(out / "estimates.csv"))
    np.testing.assert_allclose(tables[1]["value"], tables[0]["value"], rtol=1e-12)
    np.testing.assert_allclose(tables[1]["se"], tables[0]["se"], rtol=1e-12)


def test_sep_overrides_the_sniffed_separator(frame, tmp_path, capsys):
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False, sep=";")
    one_line_error(capsys, evaluate_args(path, "--sep", ","), "no column 'session'")
    assert main(evaluate_args(path, "--sep", ";", "--estimator", "is")) == 0
    one_line_error(capsys, evaluate_args(path, "--sep", ";;"), "--sep must be one character")


# -- the user's words: options, their column names, their file's lines ----------------------


def test_errors_name_the_users_column_and_the_lines_an_editor_shows(frame, tmp_path, capsys):
    broken = frame.copy()
    broken.loc[[3, 17], "mu"] = 0.0  # data rows 3 and 17: lines 5 and 19 under the header
    path = tmp_path / "log.csv"
    broken.to_csv(path, index=False)
    one_line_error(
        capsys,
        evaluate_args(path),
        r"column 'mu' \(role propensity\): must lie in \(0, 1\] \(log.csv, lines \[5, 19\]\)",
    )
    lines = path.read_text().splitlines()
    assert lines[4].split(",")[list(frame.columns).index("mu")] == "0.0"  # line 5, 1-based


def test_lines_are_counted_past_values_holding_line_breaks_and_blank_lines(frame, tmp_path, capsys):
    broken = frame.copy()
    broken.insert(1, "note", "plain")
    broken.loc[1, "note"] = "a note\non three\nlines"  # quoted: one row, three lines
    broken.loc[[10, 12], "mu"] = 0.0
    broken.loc[[10, 12], "note"] = ["first bad", "second bad"]
    path = tmp_path / "log.csv"
    text = broken.to_csv(index=False, lineterminator="\n").split("\n")
    text.insert(8, "")  # a blank line, which readers skip
    path.write_text("\n".join(text))
    lines = [next(n for n, t in enumerate(text, 1) if bad in t) for bad in ("first", "second")]
    assert lines[0] != 10 + 2  # the naive count (one line per row) would be wrong
    one_line_error(capsys, evaluate_args(path), rf"\(log.csv, lines \[{lines[0]}, {lines[1]}\]\)")
    semicolons = tmp_path / "semi.csv"
    semicolons.write_text("\n".join(text).replace(",", ";"))  # the same lines, sniffed
    one_line_error(capsys, evaluate_args(semicolons), rf"lines \[{lines[0]}, {lines[1]}\]\)")


class NeedsBinaryRewards(IS):
    """Refuses rewards other than 0 and 1, naming the rows by their input labels."""

    name = "binary_only"

    def contribute(self, view):
        reward = view.log.column("reward")
        bad = np.flatnonzero((reward != 0) & (reward != 1))
        if bad.size:
            raise ColumnError("reward", "must be 0 or 1", view.log.source_rows[bad])
        return super().contribute(view)


class BinaryPlugin:
    @hookimpl
    def register_estimators(self, register):
        register("binary_only", NeedsBinaryRewards)


def test_a_named_estimators_error_names_the_users_column_and_lines(
    frame, tmp_path, capsys, monkeypatch
):
    broken = frame.copy()
    broken.loc[[4], "stream"] = 2.0  # data row 4: line 6
    path = tmp_path / "log.csv"
    broken.to_csv(path, index=False)
    registry = Registry()
    registry.add_plugin(BinaryPlugin(), "binary")
    monkeypatch.setattr(registry_module, "_default", registry)
    one_line_error(
        capsys,
        evaluate_args(path, "--estimator", "binary_only"),
        r"--estimator binary_only: column 'stream' \(role reward\): must be 0 or 1 "
        r"\(log.csv, lines \[6\]\)",
    )


def test_a_policys_error_names_the_lines_too(frame, tmp_path, capsys):
    broken = frame.copy()
    broken.loc[[0, 10], "pi_p01"] = 1.5
    path = tmp_path / "log.csv"
    broken.to_csv(path, index=False)
    one_line_error(capsys, evaluate_args(path), r"policy 'a'.*\(log.csv, lines \[2, 12\]\)")


def test_workers_with_stream_are_refused_in_command_line_words(frame, tmp_path, capsys):
    path = tmp_path / "log.parquet"
    frame.to_parquet(path, index=False)
    line = one_line_error(capsys, evaluate_args(path, "--stream", "--workers", "2"), "--workers 2")
    assert "workers=1" not in line


# -- default estimators -----------------------------------------------------------------------


# -- Parquet, whole and streamed ------------------------------------------------------------


@pytest.mark.parametrize(
    "metadata", [b"{not json", b'{"columns": []}'], ids=["not JSON", "keys missing"]
)
def test_a_parquet_file_with_broken_pandas_metadata_is_read_without_it(
    frame, tmp_path, metadata, capsys
):
    path = tmp_path / "log.parquet"
    table = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table.replace_schema_metadata({b"pandas": metadata}), path)
    for stream in ([], ["--stream"]):
        out = tmp_path / f"out{len(stream)}"
        argv = evaluate_args(path, "--estimator", "is", "--out", str(out), *stream)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert main(argv) == 0
        said = [str(w.message) for w in caught if "pandas metadata" in str(w.message)]
        assert len(said) == 1 and said[0].startswith(f"{path}: its pandas metadata is broken")
        got = pd.read_csv(out / "estimates.csv")
        assert got["n_units"].tolist() == [3_000, 3_000]


# -- warnings -------------------------------------------------------------------------------


def test_other_warnings_are_shown_as_python_shows_them(monkeypatch, capsys):
    """Only OffevalWarnings are reworded, and only within the command."""
    from offeval.cli import shell as cli

    def run(args):
        warnings.warn("a library's own warning", DeprecationWarning, stacklevel=1)
        warnings.warn("doubtful data", cli.OffevalWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(cli.PluginsCommand, "run", lambda self, args: run(args))
    shown = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        monkeypatch.setattr(
            warnings, "showwarning", lambda *a, **k: shown.append(warnings.formatwarning(*a[:4]))
        )
        assert main(["plugins"]) == 0
        after = warnings.formatwarning("later", cli.OffevalWarning, "x.py", 1)
    assert shown[0].startswith(f"{__file__}:") and "DeprecationWarning: a library's" in shown[0]
    assert shown[1] == "offeval: warning: doubtful data\n"
    assert after.startswith("x.py:1: OffevalWarning: later")


@pytest.mark.parametrize("option, kind", [("--policy", "policy"), ("--rerank", "score")])
def test_a_policy_column_mapped_to_a_role_is_refused_as_such(user_log, capsys, option, kind):
    argv = ["evaluate", user_log, "--quiet", *MAPPING, option, "new=stream"]
    line = one_line_error(
        capsys,
        argv,
        rf"{option} new=stream: column 'stream' is mapped as the reward \(--map reward=stream\)",
        f"so a {kind} column must be another one",
    )
    assert "absent" not in line


@pytest.mark.parametrize("role", ["propensity", "exposure", "logging_score", "day", "shuffled"])
def test_every_role_an_estimator_asks_for_says_which_map_to_add(frame, role):
    from offeval.errors import command_line

    log = InteractionLog.from_frame(
        frame.drop(columns=[c for c in ("logging_score", "day", "shuffled") if c in frame]),
        {"trajectory": "session", "reward": "stream"},
    )
    with command_line(), pytest.raises(ColumnError, match=rf"--map {role}=COLUMN\)$"):
        log.column(role)


def test_the_python_hint_for_an_unmapped_role_names_the_mapping(frame):
    log = InteractionLog.from_frame(frame, {"trajectory": "session", "reward": "stream"})
    with pytest.raises(ColumnError, match=r"mapping=\{'propensity': COLUMN\}"):
        log.column("propensity")


def test_an_unsorted_streamed_file_says_to_drop_stream_or_sort_by_the_users_column(
    frame, tmp_path, capsys
):
    path = tmp_path / "log.parquet"
    frame.sample(frac=1, random_state=0).to_parquet(path, index=False)
    argv = evaluate_args(path, "--estimator", "is", "--stream", "--chunk-rows", "500")
    line = one_line_error(
        capsys, argv, "more than one chunk", r"drop --stream, or sort the file by session$"
    )
    assert "pq.write_table" not in line and "from_file" not in line


def test_a_mistyped_role_gets_the_closest_role_and_the_roles_in_plain_words(
    user_log, capsys, no_reading
):
    argv = [*evaluate_args(user_log), "--map", "rewrd=click"]
    line = one_line_error(
        capsys, argv, r"--map rewrd=click: no role 'rewrd' \(did you mean reward\?\)"
    )
    assert "roles: trajectory, context, item, position, reward, propensity," in line
    assert "[" not in line


def test_a_mistyped_role_in_python_gets_the_closest_role(frame):
    with pytest.raises(OffevalError, match=r"\['rewrd'\] \(did you mean reward\?\); the roles: "):
        InteractionLog.from_frame(frame, {"trajectory": "session", "rewrd": "stream"})


# -- what the outputs say -------------------------------------------------------------------


def test_force_names_the_users_files_it_deleted(tmp_path, capsys):
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("my notes")
    with OutputFolder(dest, force=True) as tmp:
        (tmp / "estimates.csv").write_text("x\n")
    assert capsys.readouterr().err.strip() == (
        f"replaced the earlier files in {dest}/; deleted files offeval did not write: notes.txt"
    )
    (dest / "sub").mkdir()
    for k in range(12):  # added to offeval's folder since: not its files either
        (dest / "sub" / f"n{k:02}.txt").write_text("")
    with OutputFolder(dest) as tmp:
        (tmp / "estimates.csv").write_text("y\n")
    line = capsys.readouterr().err.strip()
    named = ", ".join(f"sub/n{k:02}.txt" for k in range(10))
    assert line.endswith(f"did not write: {named} and 2 more")
    assert "estimates.csv" not in line


def test_a_rerun_names_no_file_that_offeval_wrote(tmp_path, capsys):
    dest = tmp_path / "out"
    for _ in range(2):
        with OutputFolder(dest) as tmp:
            (tmp / "figures").mkdir()
            (tmp / "figures" / "a.png").write_text("")
    assert capsys.readouterr().err.strip() == f"replaced the earlier files in {dest}/"


def test_an_output_file_says_it_replaced_an_earlier_file(tmp_path, capsys):
    path = tmp_path / "table.md"
    for text in ("first", "second"):
        with OutputFile(path) as tmp:
            tmp.write_text(text)
    assert capsys.readouterr().err.strip() == f"replaced the earlier {path}"
    assert path.read_text() == "second"


# -- decimal commas -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options", [[], ["--sep", ";"], ["--decimal", ","], ["--sep", ";", "--decimal", ","]]
)
def test_a_european_csv_is_evaluated_as_the_comma_csv(frame, tmp_path, options):
    comma, european = tmp_path / "comma.csv", tmp_path / "european.csv"
    frame.to_csv(comma, index=False)
    frame.to_csv(european, index=False, sep=";", decimal=",")
    assert "0,5" in european.read_text() or "," in european.read_text().splitlines()[1]
    tables = []
    for path, extra in ((comma, []), (european, options)):
        out = tmp_path / f"out_{path.stem}"
        assert main(evaluate_args(path, "--estimator", "is", "--out", str(out), *extra)) == 0
        tables.append(pd.read_csv(out / "estimates.csv"))
    np.testing.assert_allclose(tables[1]["value"], tables[0]["value"], rtol=1e-12)
    np.testing.assert_allclose(tables[1]["se"], tables[0]["se"], rtol=1e-12)


def test_decimal_commas_read_with_points_say_to_give_decimal(frame, tmp_path, capsys):
    path = tmp_path / "european.csv"
    frame.to_csv(path, index=False, sep=";", decimal=",")
    one_line_error(
        capsys,
        evaluate_args(path, "--decimal", "."),
        r"column 'stream' \(role reward\): must be numeric",
        "decimal commas",
        "use --decimal ,",
    )


@pytest.mark.parametrize("option", ["--policy"])  # --rerank's: the ranking family's tests
def test_a_policy_column_of_decimal_commas_says_to_give_decimal(frame, tmp_path, capsys, option):
    path = tmp_path / "european.csv"
    mixed = frame.assign(pi_p01=frame["pi_p01"].map(lambda p: f"{p:.6f}".replace(".", ",")))
    mixed.to_csv(path, index=False, sep=";")  # its other numbers with decimal points
    one_line_error(
        capsys,
        ["evaluate", path, "--quiet", *MAPPING, option, "a=pi_p01", "--estimator", "is"],
        "column 'pi_p01'",
        r"decimal commas \(0,\d+\); use --decimal ,",
    )


def test_decimal_is_checked_against_the_file(frame, tmp_path, capsys):
    csv_path, parquet = tmp_path / "log.csv", tmp_path / "log.parquet"
    frame.to_csv(csv_path, index=False)
    frame.to_parquet(parquet, index=False)
    one_line_error(
        capsys, evaluate_args(csv_path, "--decimal", ","), "',' separates the file's columns"
    )
    one_line_error(capsys, evaluate_args(parquet, "--decimal", ","), "drop --decimal")
    one_line_error(capsys, evaluate_args(csv_path, "--decimal", ";"), "invalid choice")
