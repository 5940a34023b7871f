"""Interaction log validation: clear errors naming columns and rows, no silent drops."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offeval import ColumnError, InteractionLog, OffevalError, stream_parquet


def frame(**overrides) -> pd.DataFrame:
    data = {
        "sid": [7, 7, 3, 3, 3],
        "item": ["a", "b", "a", "c", "d"],
        "rank": [2, 1, 1, 3, 2],
        "click": [0.0, 1.0, 0.0, 1.0, 0.0],
        "p": [0.5, 0.2, 0.3, 0.1, 0.9],
    }
    data.update(overrides)
    return pd.DataFrame(data, index=[10, 11, 12, 13, 14])


MAPPING = {"trajectory": "sid", "position": "rank", "reward": "click", "propensity": "p"}


def test_rows_sorted_by_trajectory_then_position_keeping_source_labels():
    log = InteractionLog.from_frame(frame(), MAPPING)
    assert log.frame["trajectory"].tolist() == [7, 7, 3, 3, 3]
    assert log.frame["position"].tolist() == [1, 2, 1, 2, 3]
    assert log.frame["item"].tolist() == ["b", "a", "a", "d", "c"]
    assert log.source_rows.tolist() == [11, 10, 12, 14, 13]
    assert log.unit_starts.tolist() == [0, 2]
    assert log.n_units == 2 and log.n_rows == 5


def test_positions_default_to_row_order_within_trajectory():
    log = InteractionLog.from_frame(
        frame().drop(columns="rank"), {"trajectory": "sid", "reward": "click"}
    )
    assert log.frame["position"].tolist() == [1, 2, 1, 2, 3]


def test_missing_required_column_is_named():
    with pytest.raises(ColumnError, match="'reward'"):
        InteractionLog.from_frame(frame(), {"trajectory": "sid"})


def test_mapped_column_absent_from_data():
    with pytest.raises(ColumnError, match="'clicks'.*not in the data"):
        InteractionLog.from_frame(frame(), {**MAPPING, "reward": "clicks"})


def test_nan_reward_names_the_input_rows():
    with pytest.raises(ColumnError, match=r"'click' \(role reward\).*rows \[12, 14\]"):
        InteractionLog.from_frame(frame(click=[0, 1, np.nan, 1, np.inf]), MAPPING)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, np.nan])
def test_propensity_outside_unit_interval(bad):
    with pytest.raises(ColumnError, match=r"'p' \(role propensity\).*\(0, 1\].*rows \[13\]"):
        InteractionLog.from_frame(frame(p=[0.5, 0.2, 0.3, bad, 0.9]), MAPPING)


def test_duplicate_position_in_a_trajectory():
    with pytest.raises(ColumnError, match=r"duplicate position.*rows \[14\]"):
        InteractionLog.from_frame(frame(rank=[2, 1, 1, 3, 3]), MAPPING)


@pytest.mark.parametrize("bad", [0, 1.5, -2])
def test_positions_are_whole_and_one_based(bad):
    with pytest.raises(ColumnError, match=r"'rank' \(role position\).*whole number"):
        InteractionLog.from_frame(frame(rank=[2, 1, 1, 3, bad]), MAPPING)


def test_errors_are_value_errors():
    assert issubclass(ColumnError, OffevalError) and issubclass(OffevalError, ValueError)


def test_empty_log_and_wrong_type():
    with pytest.raises(OffevalError, match="no rows"):
        InteractionLog.from_frame(frame().iloc[:0], MAPPING)
    with pytest.raises(OffevalError, match="DataFrame"):
        InteractionLog.from_frame({"a": [1]}, MAPPING)


def test_candidates_must_contain_the_logged_item():
    cands = pd.DataFrame(
        {
            "trajectory": [7, 7, 3, 3, 3],
            "position": [1, 2, 1, 2, 3],
            "item": ["b", "a", "a", "d", "zzz"],
            "propensity": [0.2] * 5,
        }
    )
    with pytest.raises(ColumnError, match="absent from its slot's candidate set"):
        InteractionLog.from_frame(frame(), MAPPING, candidates=cands)


def test_candidates_for_unlogged_slot_are_rejected():
    cands = pd.DataFrame(
        {
            "trajectory": [7, 7, 3, 3, 3, 9],
            "position": [1, 2, 1, 2, 3, 1],
            "item": ["b", "a", "a", "d", "c", "a"],
            "propensity": [0.2] * 6,
        }
    )
    with pytest.raises(ColumnError, match=r"not in the log \(candidate rows \[5\]\)"):
        InteractionLog.from_frame(frame(), MAPPING, candidates=cands)


def test_chunks_keep_trajectories_whole(bandit):
    log = bandit[0]
    chunks = list(log.chunks(999))
    assert sum(c.n_rows for c in chunks) == log.n_rows
    assert sum(c.n_units for c in chunks) == log.n_units
    for chunk in chunks:
        assert chunk.frame["position"].iloc[0] == 1 and chunk.frame["position"].iloc[-1] == 2
        slots = chunk.candidates["slot"].to_numpy()
        assert slots.min() == 0 and slots.max() == chunk.n_rows - 1


def test_parquet_stream_equals_whole_file(tmp_path, bandit):
    log = bandit[0]
    path = tmp_path / "log.parquet"
    log.frame.to_parquet(path)
    stream = stream_parquet(path, batch_rows=777)
    parts = list(stream)
    assert len(parts) > 10 and stream.n_rows == log.n_rows  # a total for progress bars
    assert sum(p.n_rows for p in stream) == log.n_rows  # each pass reads the file again
    joined = pd.concat([p.frame for p in parts], ignore_index=True)
    pd.testing.assert_frame_equal(joined, log.frame, check_dtype=False)
    assert sum(p.n_units for p in parts) == log.n_units


def test_csv_round_trip_with_mapping(tmp_path):
    path = tmp_path / "log.csv"
    frame().to_csv(path, index=False)
    log = InteractionLog.from_file(path, MAPPING)
    assert log.n_rows == 5 and log.column("propensity").dtype == float
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(OffevalError, match="unsupported file type"):
        InteractionLog.from_file(tmp_path / "x.json")
    with pytest.raises(OffevalError, match="no such file"):
        InteractionLog.from_file(tmp_path / "missing.csv")


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=12),
    string_ids=st.booleans(),
    with_positions=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_already_grouped_rows_take_the_fast_path_to_the_same_log(
    sizes, string_ids, with_positions, seed
):
    import offeval.data.log as log_module

    rng = np.random.default_rng(seed)
    ids = rng.permutation(len(sizes))
    trajectory = np.repeat(ids, sizes)
    data = pd.DataFrame(
        {
            "trajectory": trajectory.astype(str) if string_ids else trajectory,
            "item": rng.integers(0, 5, trajectory.size),
            "reward": rng.random(trajectory.size),
        }
    )
    if with_positions:
        data["position"] = np.concatenate([np.arange(1, n + 1) * 2 for n in sizes])
    fast = InteractionLog.from_frame(data)
    grouped = log_module._grouped_starts
    log_module._grouped_starts = lambda ids, pos: None  # force the sorting path
    try:
        slow = InteractionLog.from_frame(data)
    finally:
        log_module._grouped_starts = grouped
    pd.testing.assert_frame_equal(fast.frame, slow.frame)
    np.testing.assert_array_equal(fast.unit_starts, slow.unit_starts)
    np.testing.assert_array_equal(fast.source_rows, slow.source_rows)


def test_candidate_table_in_log_order_equals_the_same_table_shuffled():
    """A table listing the log's slots in order (fast path) gives what any order gives."""
    rng = np.random.default_rng(3)
    n_traj, depth, k = 40, 3, 4
    t = np.repeat(np.arange(n_traj), depth)
    pos = np.tile(np.arange(1, depth + 1), n_traj)
    items = np.array([rng.choice(20, size=k, replace=False) for _ in t])
    rows = pd.DataFrame(
        {"sid": t, "rank": pos, "item": items[:, 1], "click": rng.random(len(t)), "p": 0.25}
    )
    cands = pd.DataFrame(
        {
            "trajectory": np.repeat(t, k),
            "position": np.repeat(pos, k),
            "item": items.ravel(),
            "propensity": 0.25,
        }
    )
    ordered = InteractionLog.from_frame(rows, MAPPING, candidates=cands)
    shuffled = InteractionLog.from_frame(
        rows, MAPPING, candidates=cands.sample(frac=1.0, random_state=0)
    )
    key = ["slot", "item"]
    a = ordered.candidates.sort_values(key).reset_index(drop=True)
    b = shuffled.candidates.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert (ordered.candidates["slot"].diff().fillna(0) >= 0).all()
    bad = cands.copy()
    bad.loc[5, "item"] = bad.loc[4, "item"]
    with pytest.raises(ColumnError, match="listed twice"):
        InteractionLog.from_frame(rows, MAPPING, candidates=bad)


def broken_parquet(path, data: pd.DataFrame, metadata: bytes) -> None:
    """A Parquet file whose pandas metadata is ``metadata`` (not JSON, keys missing)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(data, preserve_index=False)
    pq.write_table(table.replace_schema_metadata({b"pandas": metadata}), path)


@pytest.mark.parametrize(
    "metadata",
    [b"{not json", b'{"columns": []}', b'{"index_columns": ["x"], "columns": []}'],
    ids=["not JSON", "keys missing", "index absent"],
)
def test_broken_pandas_metadata_is_ignored_with_a_warning_read_whole_or_streamed(
    tmp_path, metadata
):
    from offeval import OffevalWarning, read_table

    path = tmp_path / "log.parquet"
    broken_parquet(path, frame(), metadata)
    with pytest.warns(OffevalWarning, match=r"log.parquet: its pandas metadata is broken"):
        whole = read_table(path)
    pd.testing.assert_frame_equal(whole, frame().reset_index(drop=True))
    with pytest.warns(OffevalWarning, match=r"log.parquet: its pandas metadata is broken"):
        stream = stream_parquet(path, MAPPING, batch_rows=2)
    streamed = pd.concat([log.frame for log in stream], ignore_index=True)
    expected = InteractionLog.from_frame(frame(), MAPPING).frame
    pd.testing.assert_frame_equal(streamed, expected, check_dtype=False)


def test_csv_rows_are_named_by_the_lines_an_editor_shows(tmp_path):
    path = tmp_path / "log.csv"
    frame(p=[0.5, 0.2, 0.0, 0.1, 0.9]).to_csv(path, index=False)  # third data row: line 4
    assert path.read_text().splitlines()[3].endswith(",0.0")
    with pytest.raises(ColumnError, match=r"'p' \(role propensity\).*\(log.csv, lines \[4\]\)"):
        InteractionLog.from_file(path, MAPPING)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_the_separator_of_a_csv_file_is_sniffed_or_given(tmp_path, sep):
    from offeval import read_table

    path = tmp_path / "log.csv"
    frame().to_csv(path, index=False, sep=sep)
    log = InteractionLog.from_file(path, MAPPING)
    assert log.column("propensity").tolist() == [0.2, 0.5, 0.3, 0.9, 0.1]
    assert list(read_table(path, sep=sep).columns) == list(frame().columns)
    assert len(read_table(path, sep=",").columns) == 1  # as asked, though wrong


# -- decimal commas: the rule of read_table ---------------------------------------------------


def _semicolon_file(tmp_path, text: str):
    path = tmp_path / "log.csv"
    path.write_text(text)
    return path


def test_a_semicolon_file_with_decimal_commas_reads_as_numbers(tmp_path):
    from offeval.data.files import read_table

    path = _semicolon_file(tmp_path, "t;n;p;w\n1;3;0,5;-2,25\n2;4;1;3,5e-05\n3;;0,25;\n")
    frame = read_table(path)
    assert frame["p"].tolist() == [0.5, 1.0, 0.25]
    np.testing.assert_allclose(frame["w"], [-2.25, 3.5e-05, np.nan])
    assert frame["t"].dtype.kind == "i" and frame["n"].tolist()[:2] == [3.0, 4.0]


@pytest.mark.parametrize(
    "text",
    [
        "t;p;q\n1;0,5;0.5\n2;0,25;0.75\n",  # both marks: left as read
        "t;p\n1;0,5\n2;abc\n",  # a column of text
        't,p\n1,"0,5"\n2,"0,25"\n',  # a comma file
    ],
    ids=["mixed marks", "text", "comma separated"],
)
def test_decimal_commas_are_read_only_where_the_rule_says(tmp_path, text):
    from offeval.data.files import read_table

    frame = read_table(_semicolon_file(tmp_path, text))
    assert frame["p"].tolist()[0] == "0,5"


def test_a_decimal_comma_column_that_fails_says_to_give_the_decimal_mark(tmp_path):
    path = _semicolon_file(
        tmp_path, "trajectory;item;reward;p\n1;1;0,5;0.5\n2;1;1;0.25\n"
    )  # both marks: the file's mark must be given
    with pytest.raises(ColumnError, match=r"'reward'.*decimal commas \(0,5\); read the file "):
        InteractionLog.from_file(path)
    log = InteractionLog.from_file(path, decimal=",")
    assert log.frame["reward"].tolist() == [0.5, 1.0] and log.frame["p"].tolist()[0] == "0.5"


# -- text columns and compressed files: what read_table gives every family -------------------


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".csv.bz2", ".csv.xz"])
def test_text_columns_are_read_as_typed_whatever_the_compression(tmp_path, suffix):
    import bz2
    import gzip
    import lzma

    from offeval import read_table

    content = b"policy;n;p\n007;1;0,5\nNA;;0,25\n1,5;3;1\n"
    path = tmp_path / f"a{suffix}"
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix, open)
    with opener(path, "wb") as file:
        file.write(content)
    frame = read_table(path, text=("policy",))
    assert frame["policy"].tolist() == ["007", "NA", "1,5"]  # as typed: not 7, NaN nor 1.5
    assert frame["p"].tolist() == [0.5, 0.25, 1.0]  # the decimal commas of the other columns
    assert frame["n"].tolist()[::2] == [1, 3] and pd.isna(frame["n"].iloc[1])
    assert frame.index.tolist() == [2, 3, 4]
    typed = read_table(path)  # without text columns, pandas' own reading
    assert typed["policy"].tolist()[0] == 7 and pd.isna(typed["policy"].iloc[1])
