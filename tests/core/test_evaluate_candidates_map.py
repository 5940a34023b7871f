"""``offeval evaluate --candidates``: a candidate file whose columns have the log's names
needs no ``--candidates-map`` (the roles ``--map`` names are taken from it), a mistake about
the candidate file's columns reads as a sentence, and the README documents the file."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_evaluate_candidates as base
from cli_checks import one_line_error

from offeval.data.candidates import CANDIDATE_ROLES

#: The two-slot bandit's tables and the registry with ``cdm`` (the candidates' direct method).
tables, registry = base.tables, base.registry
CAND_MAP, N, estimates, options, write = (
    base.CAND_MAP,
    base.N,
    base.estimates,
    base.options,
    base.write,
)
README = Path(__file__).parents[2] / "README.md"
#: The candidates' columns under the log's names (LOG_MAP's columns).
SAME_NAMES = {"sess": "session", "prod": "product", "slot": "rank", "p_log": "mu"}


def test_a_candidate_file_with_the_logs_column_names_takes_the_roles_from_map(tables, tmp_path):
    user, cands, truth = tables
    log = write(user, tmp_path / "log.csv")
    cand = write(cands.rename(columns=SAME_NAMES), tmp_path / "cands.csv")
    table = estimates(options(log, cand, cand_map=[]), tmp_path / "out")
    assert table.loc["cdm(reward_model=q)", "value"] == pytest.approx(truth, abs=1e-12)
    assert table.loc["cdm(reward_model=q)", "n_units"] == N


def test_candidates_map_overrides_map_and_a_column_absent_is_still_named(tables, tmp_path, capsys):
    user, cands, truth = tables
    log = write(user, tmp_path / "log.csv")
    renamed = cands.rename(columns={**SAME_NAMES, "p_log": "p_cand"}).assign(mu=0.5)
    cand = write(renamed, tmp_path / "cands.csv")
    argv = options(log, cand, cand_map=["propensity=p_cand"])  # not the candidates' mu
    table = estimates(argv, tmp_path / "out")
    assert table.loc["cdm(reward_model=q)", "value"] == pytest.approx(truth, abs=1e-12)
    cand = write(cands.rename(columns={"sess": "session"}), tmp_path / "cands.csv")
    one_line_error(
        capsys,
        options(log, cand, cand_map=CAND_MAP[2:]),  # trajectory from --map; item: no column
        r"--candidates cands\.csv: no column 'item', a candidate item of the slot: map yours "
        r"with --candidates-map item=COLUMN",
    )


def test_the_readme_documents_the_candidate_files_columns():
    text = README.read_text()
    section = text[text.index("## The candidate file") :]
    section = section[: section.find("\n## ", 1)]
    for role in CANDIDATE_ROLES:
        assert f"`{role}`" in section, role
    for option in ("--candidates-map", "--map", "--policy", "--reward-model", "--stream"):
        assert option in section, option
