"""``offeval metrics`` and ``offeval compare`` on standard TREC files."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

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
