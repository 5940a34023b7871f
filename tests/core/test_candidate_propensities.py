"""A candidate table whose propensity for the logged item contradicts the log's own propensity
is refused, on every path a candidate file comes in by (read whole, streamed, from Python),
naming the candidate rows by the user's lines; float round trips within the stated relative
tolerance (1e-9) pass."""

from __future__ import annotations

import pandas as pd
import pytest
from cli_checks import one_line_error
from reference_estimators import ReferencePlugin

import offeval.registry.manager as manager
from offeval import ColumnError, InteractionLog
from offeval.cli.shell import main
from offeval.data.log import stream_parquet

#: Two trajectories of two slots; the logging policy shows a or b with (0.6, 0.4) at
#: position 1 and (0.5, 0.5) at position 2.
LOG = pd.DataFrame(
    {
        "session": [10, 10, 11, 11],
        "product": ["a", "b", "b", "a"],
        "rank": [1, 2, 1, 2],
        "click": [1.0, 0.0, 1.0, 1.0],
        "mu": [0.6, 0.5, 0.4, 0.5],
        "target": [0.5, 0.5, 0.5, 0.5],
    }
)
#: Each slot's two candidates (file lines 2..9); lines 2, 5, 6 and 9 hold the logged items.
CANDIDATES = pd.DataFrame(
    {
        "sess": [10, 10, 10, 10, 11, 11, 11, 11],
        "slot": [1, 1, 2, 2, 1, 1, 2, 2],
        "prod": ["a", "b", "a", "b", "a", "b", "a", "b"],
        "p_log": [0.6, 0.4, 0.5, 0.5, 0.6, 0.4, 0.5, 0.5],
        "target": [0.5] * 8,
    }
)
LOGGED = [0, 3, 5, 6]  # CANDIDATES' rows of the logged items
MAPPING = {"trajectory": "session", "item": "product", "position": "rank", "reward": "click"}
MAPPING["propensity"] = "mu"
CAND_MAPPING = {"trajectory": "sess", "item": "prod", "position": "slot", "propensity": "p_log"}
PROBLEM = (
    r"column 'p_log' \(role propensity\): the logged item's candidate propensity differs from "
    r"the log's propensity by more than a relative 1e-09"
)


@pytest.fixture(autouse=True)
def registry(monkeypatch):
    """The core and the reference estimators."""
    registry = manager.Registry(entry_points=False)
    registry.add_plugin(ReferencePlugin(), "reference")
    monkeypatch.setattr(manager, "_default", registry)
    return registry


def argv(log, cands, *extra) -> list:
    """``offeval evaluate`` of ``log`` with ``cands``, in the user's column names."""
    args = ["evaluate", log, "--candidates", cands, "--quiet", "--policy", "t=target"]
    args += [a for role, col in MAPPING.items() for a in ("--map", f"{role}={col}")]
    args += [a for role, col in CAND_MAPPING.items() for a in ("--candidates-map", f"{role}={col}")]
    return [*args, "--estimator", "is", *extra]


def write(frame: pd.DataFrame, path, **kw):
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False, **kw)
    return path


def scaled(rows: list, factor: float) -> pd.DataFrame:
    """The candidate table with the propensities of ``rows`` times ``factor``."""
    p = CANDIDATES["p_log"].copy()
    p.iloc[rows] *= factor
    return CANDIDATES.assign(p_log=p)


def test_halved_propensities_read_whole_are_one_line_naming_the_candidate_lines(tmp_path, capsys):
    log = write(LOG, tmp_path / "log.csv")
    cands = write(scaled(list(range(8)), 0.5), tmp_path / "cands.csv")
    one_line_error(
        capsys,
        argv(log, cands),
        PROBLEM + r", e\.g\. 0\.3 where the log has 0\.6 \(cands\.csv, lines \[2, 5, 7, 8\]\)$",
    )


def test_one_contradicting_row_is_named_and_other_candidates_are_not_checked(tmp_path, capsys):
    log = write(LOG, tmp_path / "log.csv")
    # line 7 (trajectory 11, position 1, item b, logged): 0.4 becomes 0.2; line 3 (item b
    # at trajectory 10, position 1, not logged) is the log's business only through its slot
    cands = write(scaled([5, 1], 0.5), tmp_path / "cands.csv")
    one_line_error(capsys, argv(log, cands), PROBLEM, r"\(cands\.csv, lines \[7\]\)$")


def test_a_streamed_candidate_file_is_checked_too(tmp_path, capsys):
    log = write(LOG, tmp_path / "log.parquet")
    cands = write(scaled([6], 0.5), tmp_path / "cands.parquet")
    line = one_line_error(capsys, argv(log, cands, "--stream", "--chunk-rows", "2"), PROBLEM)
    assert "cands.parquet, candidate rows [6]" in line
    assert "in the log's order" not in line  # not a question of order


def test_the_python_readers_refuse_it_naming_the_users_column_and_rows(tmp_path):
    log = write(LOG, tmp_path / "log.csv")
    cands = write(scaled([3], 2.0), tmp_path / "cands.csv")
    with pytest.raises(ColumnError, match=PROBLEM + r".*\(cands\.csv, lines \[5\]\)"):
        InteractionLog.from_file(log, MAPPING, candidates=cands, candidates_mapping=CAND_MAPPING)
    log = write(LOG, tmp_path / "log.parquet")
    cands = write(scaled([3], 2.0), tmp_path / "cands.parquet")
    stream = stream_parquet(
        log, MAPPING, batch_rows=2, candidates=cands, candidates_mapping=CAND_MAPPING
    )
    with pytest.raises(ColumnError, match=PROBLEM + r".*candidate rows \[3\]"):
        list(stream)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_float_round_trips_within_the_tolerance_pass_and_beyond_it_fail(tmp_path, capsys, suffix):
    log = write(LOG, tmp_path / f"log{suffix}")
    # 15 significant digits (what many tools write) and a relative 1e-10: the same numbers
    kw = {"float_format": "%.15g"} if suffix == ".csv" else {}
    near = write(scaled(LOGGED, 1 + 1e-10), tmp_path / f"near{suffix}", **kw)
    assert main([str(a) for a in argv(log, near, "--out", tmp_path / "out")]) == 0
    far = write(scaled([0], 1 + 1e-8), tmp_path / f"far{suffix}")
    one_line_error(capsys, argv(log, far), PROBLEM)


def test_a_candidate_frame_from_python_is_checked_too():
    """from_frame(candidates=...) and with_candidates(...) name the frame's own index labels."""
    frame = LOG.rename(columns={v: k for k, v in MAPPING.items()})
    table = CANDIDATES.rename(columns={v: k for k, v in CAND_MAPPING.items()})
    table.index = [f"c{i}" for i in range(len(table))]
    halved = table.assign(propensity=table["propensity"] / 2)
    match = r"candidate propensity differs .* rows \['c0', 'c3', 'c5', 'c6'\]"
    with pytest.raises(ColumnError, match=match):
        InteractionLog.from_frame(frame, candidates=halved)
    log = InteractionLog.from_frame(frame, candidates=table)
    with pytest.raises(ColumnError, match=match):
        log.with_candidates(halved)
