"""Top-n matrices against a users x items qrels matrix: ids that cannot be items are
refused, naming the users; a float matrix pads with -1.0 (as an int one with -1) or NaN,
and NaN cells of a held-out matrix are no labels."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from offeval import ConfigurationError, OffevalWarning
from offeval_ir.prepared import prepare_qrels
from offeval_ir.runs import compute_measures
from offeval_ir.topn import compute_topn, evaluate_topn

QRELS = np.array([[1, 0, 2, 0, 0, 1], [0, 0, 1, 0, 0, 0], [0, 3, 0, 0, 1, 0]], dtype=float)


def _brute(topn_rows: list[list[int]], k: int) -> tuple[list[float], list[float]]:
    """num_ret and P@k of rows of item ids (padding dropped) in plain Python."""
    num_ret = [float(len(row)) for row in topn_rows]
    precision = [sum(QRELS[u][i] >= 1 for i in row[:k]) / k for u, row in enumerate(topn_rows)]
    return num_ret, precision


@pytest.mark.parametrize("qrels", [QRELS, sp.csr_matrix(QRELS)], ids=["dense", "sparse"])
@pytest.mark.parametrize(
    ("topn", "bad", "users"),
    [
        ([[0, 1, 2, 99], [0, 1, 2, 3], [0, 1, -1, -1]], "[99]", "[0]"),
        ([[0, 1, 2, 3], [0, 6, -1, -1], [1, 2, 7, -1]], "[6, 7]", "[1, 2]"),
        ([[0, 1.5, 2, -1], [0, 1, 2, 3], [0, 1, 2, 3]], "[1.5]", "[0]"),
        ([[0, 1, 2, -0.5], [0, 1, 2, 3], [0, 1, 2, 3]], "[-0.5]", "[0]"),
    ],
)
def test_ids_outside_the_qrels_matrix_are_refused_naming_the_users(qrels, topn, bad, users):
    with pytest.raises(ConfigurationError) as caught:
        compute_topn(np.array(topn), qrels, ["P@4"])
    message = str(caught.value)
    assert "[0, 6)" in message and f"got {bad}" in message
    assert message.endswith(f"the rows of users {users}")


def test_text_ids_against_a_qrels_matrix_are_refused():
    with pytest.raises(ConfigurationError, match=r"whole numbers in \[0, 6\)"):
        compute_topn(np.array([["a", "b"], ["c", "d"], ["e", "f"]]), QRELS, ["P@2"])


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64, np.float32])
def test_a_float_matrix_pads_with_minus_one_as_an_int_matrix(dtype):
    rows = [[1, 2, 3], [2], [4, 1, 0, 5]]
    topn = np.array([row + [-1] * (4 - len(row)) for row in rows], dtype=dtype)
    result = compute_topn(topn, QRELS, ["num_ret", "P@4", "P@2"])
    num_ret, p4 = _brute(rows, 4)
    _, p2 = _brute(rows, 2)
    assert result.per_user["num_ret"].tolist() == num_ret
    assert result.per_user["P@4"].to_numpy() == pytest.approx(p4)
    assert result.per_user["P@2"].to_numpy() == pytest.approx(p2)


# held-out items per user: {3, 5}, {2}, {4, 0}; the lists below put them first
HELD_OUT = {0: [3, 5], 1: [2], 2: [4, 0]}
HELD_OUT_FRAME = pd.DataFrame(
    [(u, i, 1) for u, items in HELD_OUT.items() for i in items],
    columns=["user", "item", "relevance"],
)
HELD_OUT_MATRIX = np.zeros((3, 6))
HELD_OUT_MATRIX[HELD_OUT_FRAME["user"], HELD_OUT_FRAME["item"]] = 1
NAN_PADDED = np.array([[3.0, 5.0, np.nan], [2.0, np.nan, np.nan], [4.0, 0.0, 1.0]])


@pytest.mark.parametrize(
    "qrels",
    [HELD_OUT_FRAME, HELD_OUT_MATRIX, sp.csr_matrix(HELD_OUT_MATRIX)],
    ids=["frame", "dense", "sparse"],
)
def test_nan_in_a_float_top_n_matrix_is_padding(qrels):
    got = compute_topn(NAN_PADDED, qrels, ["P@2", "num_ret", "num_rel_ret"]).per_user
    # P@2: 2/2, 1/2 (one item in a list of one), 2/2
    assert got["P@2"].tolist() == [1.0, 0.5, 1.0]
    assert got["num_ret"].tolist() == [2.0, 1.0, 3.0]
    assert got["num_rel_ret"].tolist() == [2.0, 1.0, 2.0]


def test_nan_cells_of_a_held_out_matrix_are_no_labels():
    padded = np.where(HELD_OUT_MATRIX > 0, 1.0, np.nan)  # a pivot's missing cells
    got = compute_topn(NAN_PADDED, padded, ["P@2", "num_rel"]).per_user
    assert got["P@2"].tolist() == [1.0, 0.5, 1.0]
    assert got["num_rel"].tolist() == [2.0, 1.0, 2.0]


@pytest.mark.parametrize("qrels", [HELD_OUT_FRAME, HELD_OUT_MATRIX], ids=["frame", "matrix"])
def test_a_ragged_list_of_lists_is_variable_length_lists(qrels):
    got = compute_topn([[3, 5], [2], (4, 0, 1)], qrels, ["P@2", "num_ret"]).per_user
    assert got["P@2"].tolist() == [1.0, 0.5, 1.0]
    assert got["num_ret"].tolist() == [2.0, 1.0, 3.0]


def test_ragged_lists_of_text_ids_name_their_users():
    qrels = pd.DataFrame({"user": ["u1", "u2"], "item": ["d2", "d9"], "relevance": [1, 1]})
    got = compute_topn([["d1", "d2", "d3"], ["d9"]], qrels, ["P@2"], users=["u1", "u2"])
    assert got.per_user["P@2"].to_dict() == {"u1": 0.5, "u2": 0.5}


@pytest.mark.parametrize(("topn", "row"), [([[1, 2], 3], "row 1"), ([[1], [2, 3], None], "row 2")])
def test_a_list_whose_rows_are_not_lists_is_refused_naming_the_row(topn, row):
    with pytest.raises(ConfigurationError, match=rf"^topn: {row} is not a list of item ids"):
        compute_topn(topn, HELD_OUT_MATRIX, ["P@2"])


@pytest.mark.parametrize("form", [np.asarray, sp.csr_matrix], ids=["dense", "sparse"])
@pytest.mark.parametrize("rows", [2, 4])
def test_a_top_n_matrix_of_another_number_of_users_than_the_qrels_matrix_is_refused(form, rows):
    topn = np.tile([0, 1], (rows, 1))
    with pytest.raises(ConfigurationError, match=rf"^topn has {rows} rows .* qrels matrix 3 rows"):
        compute_topn(topn, form(HELD_OUT_MATRIX), ["P@2"])
    with pytest.raises(ConfigurationError, match=rf"^topn has {rows} rows"):
        evaluate_topn({"a": topn}, form(HELD_OUT_MATRIX), ["P@2"])


def test_rows_named_by_users_may_be_fewer_than_the_qrels_matrix_s():
    got = compute_topn([[4, 0]], HELD_OUT_MATRIX, ["P@2"], users=[2]).per_user["P@2"]
    assert got.loc[2] == 1.0 and got.index.tolist() == [2, 0, 1]


def test_a_cut_off_beyond_every_list_warns_once():
    lists = {"a": NAN_PADDED, "b": NAN_PADDED[:, :2]}  # the longest list holds 3 items
    with pytest.warns(OffevalWarning) as caught:
        evaluate_topn(lists, HELD_OUT_FRAME, ["nDCG@50", "P@4", "P@3", "RR"])
    # (every user scores alike under nDCG@50 and RR: their zero-width intervals warn apart)
    caught = [w for w in caught if "exceeds" in str(w.message)]
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "nDCG@50, P@4" in message and "P@3" not in message and "holds 3" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compute_topn(NAN_PADDED, HELD_OUT_FRAME, ["nDCG@3", "P@1"])
    with pytest.warns(OffevalWarning, match="P@3"):
        compute_topn(NAN_PADDED[:, :2], HELD_OUT_FRAME, ["P@3"])


@pytest.mark.parametrize(
    "topn",
    [
        [[3, 5], ["a"], [4]],
        np.array([[3, 5], ["a", None], [4, None]], dtype=object),
        np.array([[3.0, 5.0], [7.0, np.nan], [4.0, np.nan]], dtype=object),
    ],
    ids=["ragged", "object matrix", "object floats"],
)
def test_ids_of_mixed_types_against_frame_qrels_are_compared_as_ids(topn):
    # before: every id became "no item", P@2 = 0 for every user
    got = compute_topn(topn, HELD_OUT_FRAME, ["P@2", "num_ret"]).per_user
    # user 0: 3 and 5 held out (2/2); user 1: "a" (or 7) is not 2 (0/2); user 2: 4 (1/2)
    assert got["P@2"].tolist() == [1.0, 0.0, 0.5]
    assert got["num_ret"].tolist() == [2.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "items",
    [pd.Series([3, "a", 2], dtype=object), pd.Series([3.0, 2.5, 2.0])],
    ids=["mixed", "floats"],
)
def test_runs_judged_on_prepared_integer_qrels_match_ids_as_unprepared(items):
    # before: on prepared qrels (several runs) every id missed: P@2 = 0 for both users
    run = pd.DataFrame({"user": [0, 0, 1], "item": items, "rank": [1, 2, 1]})
    # user 0: 3 relevant, "a" / 2.5 not (1/2); user 1: 2 relevant (1/2); user 2: no list
    # (NaN: trec_eval averages no query without a ranking)
    expected = [0.5, 0.5, np.nan]
    unprepared = compute_measures(run, HELD_OUT_FRAME, ["P@2"]).per_user["P@2"]
    np.testing.assert_array_equal(unprepared.to_numpy(), expected)
    got = prepare_qrels(HELD_OUT_FRAME).measures(run, ["P@2"]).per_user["P@2"]
    np.testing.assert_array_equal(got.to_numpy(), expected)
