"""``offeval metrics`` and ``offeval compare`` on standard TREC files."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_checks import one_line_error
from scipy import stats

from offeval.cli.shell import main

sys.path.insert(0, str(Path(__file__).parent))
from test_ir_trec import pytrec_eval_values, trec_data  # noqa: E402


@pytest.fixture()
def trec_files(tmp_path):
    run, qrels = trec_data(5)
    paths = {"run": tmp_path / "bm25.run", "other": tmp_path / "dense.run"}
    run.to_csv(paths["run"], sep=" ", header=False, index=False)
    other = run.assign(score=run["score"].to_numpy()[::-1])
    other.to_csv(paths["other"], sep="\t", header=False, index=False)
    paths["qrels"] = tmp_path / "qrels.txt"
    qrels.to_csv(paths["qrels"], sep=" ", header=False, index=False)
    return paths, run, qrels


def test_metrics_on_trec_files_equals_pytrec_eval_user_for_user(trec_files, tmp_path, capsys):
    paths, run, qrels = trec_files
    out = tmp_path / "per_user.csv"
    args = ["metrics", str(paths["run"]), str(paths["qrels"]), "-m", "nDCG@10", "-m", "P@5"]
    assert main([*args, "-m", "AP", "--per-user", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("conventions: preset trec_eval, overrides none")
    ours = pd.read_csv(out, index_col="user")
    theirs = pytrec_eval_values(run, qrels)
    assert set(ours.dropna().index) == set(theirs)
    for user, values in theirs.items():
        assert ours.loc[user, "nDCG@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-12)
        assert ours.loc[user, "P@5"] == pytest.approx(values["P_5"], abs=1e-12)
        assert ours.loc[user, "AP"] == pytest.approx(values["map"], abs=1e-12)


def test_metrics_table_states_conventions_and_switches(trec_files, tmp_path, capsys):
    paths, _, _ = trec_files
    out = tmp_path / "table.md"
    args = ["metrics", str(paths["run"]), str(paths["qrels"]), "-m", "P(rel=2)@5"]
    assert main([*args, "--set", "no_predictions=zero", "--out", str(out)]) == 0
    text = out.read_text()
    assert "overrides no_predictions=zero" in text and "relevance_threshold=2" in text
    assert "| measure | mean | se | ci_low | ci_high | users |" in text


def test_compare_writes_markdown_csv_and_latex(trec_files, tmp_path, capsys):
    paths, _, _ = trec_files
    base = ["compare", str(paths["qrels"]), str(paths["run"]), str(paths["other"])]
    for suffix in (".md", ".csv", ".tex"):
        out = tmp_path / f"cmp{suffix}"
        pairs = tmp_path / "pairs.csv"
        measures = ["-m", "nDCG@10", "-m", "AP"]
        assert main([*base, *measures, "--out", str(out), "--pairs", str(pairs)]) == 0
        assert out.stat().st_size > 100
    latex = (tmp_path / "cmp.tex").read_text()
    assert r"\begin{tabular}{lrr}" in latex and "bm25.run" in latex
    pair_rows = pd.read_csv(pairs)
    assert set(pair_rows["measure"]) == {"nDCG@10", "AP"} and len(pair_rows) == 2
    assert pair_rows["p_adjusted"].between(0, 1).all()
    table = pd.read_csv(tmp_path / "cmp.csv")
    assert list(table["run"]) == ["bm25.run"] * 2 + ["dense.run"] * 2
    assert list(table["letter"]) == ["a", "a", "b", "b"]
    assert table["mean"].dtype.kind == "f" and table["ci_low"].le(table["mean"]).all()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-m", "nDGC@10"], "unknown measure 'nDGC@10'"),
        (["--preset", "nope"], "'nope'"),
        (["--set", "ties=random"], "ties must be one of"),
        (["--out", "x.xlsx"], "--out must end in"),
    ],
)
def test_mistakes_are_one_line(trec_files, capsys, extra, message):
    paths, _, _ = trec_files
    code = main(["metrics", str(paths["run"]), str(paths["qrels"]), *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def _caption_sentences(latex: str) -> list[str]:
    caption = re.search(r"\\caption\{(.*)\}\n", latex).group(1)
    caption = caption.replace("-{}", "-")  # LaTeX's escape of a hyphen (-- is a dash)
    return [s.strip() for s in re.split(r"(?<=\.)\s+(?=[A-Za-z])", caption) if s.strip()]


def test_compare_latex_has_label_caption_sentences_and_decimals(trec_files, tmp_path, capsys):
    """ranx's report: a \\label, a caption in sentences (what the superscripts mean, the
    test, its correction, alpha, the queries), the decimals asked for."""
    paths, _, _ = trec_files
    tex = tmp_path / "cmp.tex"
    argv = ["compare", paths["qrels"], paths["run"], paths["other"], "-m", "nDCG@10", "-m", "AP"]
    extra = ["--decimals", "2", "--label", "tab:trec-runs", "--alpha", "0.01", "--out", tex]
    assert main([*map(str, argv), *map(str, extra)]) == 0
    latex = tex.read_text()
    lines = latex.splitlines()
    assert lines[lines.index(r"\end{table}") - 1] == r"\label{tab:trec-runs}"
    assert lines[lines.index(r"\end{table}") - 2].startswith(r"\caption{")
    rows = [line for line in lines if line.startswith("(a) ") or line.startswith("(b) ")]
    cells = [
        re.sub(r"\\textbf\{(.*?)\}|\$\^\{\w+\}\$", r"\1", c).strip()
        for row in rows
        for c in row.rstrip(" \\").split(" & ")[1:]
    ]
    assert len(cells) == 4 and all(re.fullmatch(r"\d\.\d\d", c) for c in cells), cells
    sentences = _caption_sentences(latex)
    assert all(s[0].isupper() or s[0] in "n" and s.startswith("nDCG") for s in sentences)
    assert all(s.endswith(".") for s in sentences)
    assert (
        sentences[0] == "Means of 2 runs on each measure, over the 30 queries every run averages."
    )
    marks = sentences[1]
    assert marks.startswith("A superscript letter marks a run whose mean is significantly higher")
    assert "paired t-test" in marks and "holm correction" in marks and "alpha 0.01" in marks
    assert sentences[2] == "The highest mean of each measure is in bold."
    assert sentences[3].startswith("Conventions: preset trec")
    printed = capsys.readouterr().out
    assert re.search(r"\b0\.\d\d \[0\.\d\d, 0\.\d\d\]", printed)  # decimals in the terminal too
    assert not re.search(r"\b0\.\d{3} \[", printed)


def test_compare_tukey_and_win_tie_loss(trec_files, tmp_path, capsys):
    """--test tukey decides significance by Tukey's HSD (scipy's, on the per-query values
    pytrec_eval gives), and the win/tie/loss counts equal a count of those values."""
    paths, run, qrels = trec_files
    pairs = tmp_path / "pairs.csv"
    tex = tmp_path / "t.tex"
    argv = ["compare", paths["qrels"], paths["run"], paths["other"], "-m", "nDCG@10"]
    assert main([*map(str, argv), "--test", "tukey", "--pairs", str(pairs), "--out", str(tex)]) == 0
    printed = capsys.readouterr().out
    row = pd.read_csv(pairs).iloc[0]
    other = run.assign(score=run["score"].to_numpy()[::-1])
    a, b = pytrec_eval_values(run, qrels), pytrec_eval_values(other, qrels)
    common = sorted(set(a) & set(b))
    va = np.array([a[q]["ndcg_cut_10"] for q in common])
    vb = np.array([b[q]["ndcg_cut_10"] for q in common])
    assert row["p_tukey"] == pytest.approx(stats.tukey_hsd(va, vb).pvalue[0, 1], abs=1e-12)
    assert row["significant"] == (row["p_tukey"] < 0.05)
    wins, ties, losses = (va > vb).sum(), (va == vb).sum(), (va < vb).sum()
    assert (row["wins"], row["ties"], row["losses"]) == (wins, ties, losses)
    assert f"{wins}/{ties}/{losses}" in printed and "win/tie/loss" in printed
    assert "Tukey's HSD test over the pairs of each measure" in printed
    assert "Tukey's HSD test" in _caption_sentences(tex.read_text())[1]
    csv = tmp_path / "t.csv"
    assert main([*map(str, argv), "--test", "tukey", "--out", str(csv)]) == 0
    numbers = pd.read_csv(csv)
    assert numbers["p_vs_b"][0] == pytest.approx(row["p_tukey"], abs=1e-12)  # the test chosen
    md = tmp_path / "t.md"
    assert main([*map(str, argv), "--out", str(md)]) == 0
    assert f"| (a) bm25.run vs (b) dense.run | {wins}/{ties}/{losses} |" in md.read_text()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--label", "tab: results"], r"--label 'tab: results': a LaTeX label is text without"),
        (["--label", "tab_{x}"], r"--label 'tab_\{x\}'"),
        (["--decimals", "-1"], r"--decimals: -1 is not >= 0"),
        (["--test", "tukeys"], r"--test: invalid choice: 'tukeys'"),
    ],
)
def test_compare_report_option_mistakes_are_one_line(trec_files, capsys, extra, message):
    paths, _, _ = trec_files
    argv = ["compare", paths["qrels"], paths["run"], paths["other"], *extra]
    one_line_error(capsys, argv, message)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--alpha", "2"], "--alpha: 2 is not in (0, 1)"),
        (["--alpha", "0"], "--alpha: 0 is not in (0, 1)"),
        (["--alpha", "nan"], "--alpha: nan is not in (0, 1)"),
        (["--alpha", "x"], "--alpha: 'x' is not a number"),
        (["--decimals", "16"], "--decimals: 16 is not <= 15"),
        (["--decimals", "-1"], "--decimals: -1 is not >= 0"),
    ],
)
def test_compare_refuses_alpha_outside_0_1_and_decimals_past_15(trec_files, capsys, extra, message):
    """An alpha of 2 made every pair significant; 40 decimals printed noise digits."""
    paths, _, _ = trec_files
    code = main(["compare", str(paths["qrels"]), str(paths["run"]), str(paths["other"]), *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("alpha", [2, 0, 1, -0.5, float("nan"), "0.05"])
def test_run_evaluation_compare_and_grid_refuse_alpha_outside_0_1(trec_files, alpha):
    from offeval import ConfigurationError
    from offeval_ir import evaluate_runs

    _, run, qrels = trec_files
    other = run.assign(score=run["score"].to_numpy()[::-1])
    evaluation = evaluate_runs({"a": run, "b": other}, qrels, ["AP"])
    with pytest.raises(ConfigurationError, match=r"alpha must be a number in \(0, 1\)"):
        evaluation.compare(alpha=alpha)
    with pytest.raises(ConfigurationError, match=r"alpha must be a number in \(0, 1\)"):
        evaluation.grid("AP", alpha=alpha)


def test_compare_names_runs_as_name_equals_file(trec_files, tmp_path, capsys):
    paths, _, _ = trec_files
    equals = tmp_path / "k=1.run"  # an existing file whose name holds '=' is a file
    equals.write_text(paths["other"].read_text())
    out = tmp_path / "cmp.csv"
    argv = ["compare", paths["qrels"], f"BM25={paths['run']}", equals, "dense=" + str(equals)]
    assert main([*map(str, argv), "-m", "AP", "--resamples", "200", "--out", str(out)]) == 0
    assert "(a) BM25" in capsys.readouterr().out
    assert list(pd.read_csv(out)["run"]) == ["BM25", "k=1.run", "dense"]


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        (["a={run}", "a={other}"], r"runs need distinct file names .*, got \['a', 'a'\]"),
        (["={run}", "{other}"], r"'={run}': a run's name \(NAME=FILE\) must not be empty"),
        (["{run}", "x={missing}"], r"{missing}: no such file"),
    ],
)
def test_compare_run_name_mistakes_are_one_line(trec_files, tmp_path, capsys, runs, message):
    paths, _, _ = trec_files
    files = {"run": paths["run"], "other": paths["other"], "missing": tmp_path / "none.run"}
    argv = ["compare", paths["qrels"], *(r.format(**files) for r in runs)]
    pattern = message.format(**{k: re.escape(str(v)) for k, v in files.items()})
    one_line_error(capsys, argv, pattern)


@pytest.mark.parametrize("pairs", ["same.csv", "./same.csv", "sub/../same.csv"])
def test_compare_refuses_one_file_for_two_outputs(trec_files, tmp_path, capsys, monkeypatch, pairs):
    paths, _, _ = trec_files
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    argv = ["compare", paths["qrels"], paths["run"], paths["other"], "--out", "same.csv"]
    err = one_line_error(capsys, [*map(str, argv), "--pairs", pairs])
    assert "--out and --pairs name the same file" in err
    assert not (tmp_path / "same.csv").exists()


def test_compare_help_says_latex_needs_booktabs_and_names_runs(capsys):
    assert main(["compare", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "booktabs" in text and "NAME=FILE" in text


@pytest.mark.parametrize("command", ["MetricsCommand", "CompareCommand"])
def test_every_option_says_what_it_does_and_its_default(command):
    import argparse

    from offeval_ir import command as commands

    parser = argparse.ArgumentParser()
    getattr(commands, command)().add_arguments(parser)
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        assert action.help, action.option_strings
        if action.default not in (None, False, []):
            assert "default" in action.help, (action.option_strings, action.help)
            shown = f"{action.default:g}" if isinstance(action.default, float) else action.default
            assert str(shown) in action.help, (action.option_strings, action.help)
