"""Recommender top-n lists: top_n against a brute-force sort, judged top-n matrices against
the frame path and pytrec_eval, prepared qrels against the per-run path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from offeval import ColumnError, ConfigurationError
from offeval_ir import PRESETS, compute_measures, evaluate_runs
from offeval_ir.prepared import prepare_qrels
from offeval_ir.topn import compute_topn, evaluate_topn, top_n


def brute_top_n(scores, n, excluded=None, key=None):
    """Plain Python: each row's candidates sorted by score (down), then by ``key``."""
    out = []
    for u, row in enumerate(scores):
        items = [i for i in range(len(row)) if excluded is None or not excluded[u][i]]
        items.sort(key=lambda i: (-row[i], i if key is None else key[u][i]))
        out.append((items + [-1] * n)[:n])
    return np.array(out)


def scores_and_exclusion(seed, users=30, items=25):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, (users, items)).astype(float)  # many ties
    scores[0, :] = 1.0  # a row of ties only
    excluded = rng.random((users, items)) < 0.4
    excluded[1, :-3] = True  # a user with 3 candidates: a short list
    return scores, excluded


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top_n_is_the_brute_force_sort_with_lower_index_first_on_ties(seed):
    scores, excluded = scores_and_exclusion(seed)
    expected = brute_top_n(scores, 10, excluded)
    assert (expected[1, 3:] == -1).all()
    u, i = np.nonzero(excluded)
    pairs = pd.DataFrame({"user": u, "item": i})
    for exclude in (excluded, sp.csr_matrix(excluded), pairs):
        np.testing.assert_array_equal(top_n(scores, 10, exclude=exclude), expected)
    np.testing.assert_array_equal(top_n(scores, 10), brute_top_n(scores, 10))
    # fewer items than n: every item, then padding
    np.testing.assert_array_equal(top_n(scores, 40), brute_top_n(scores, 40))


def test_top_n_never_recommends_an_excluded_item_even_at_minus_infinity():
    scores = np.array([[-np.inf, 1.0, -np.inf, 0.0]])
    excluded = np.array([[False, False, True, True]])
    got = top_n(scores, 4, exclude=excluded)
    np.testing.assert_array_equal(got, [[1, 0, -1, -1]])


def test_random_ties_follow_the_seed_and_reach_every_order():
    scores = np.ones((400, 3))  # three tied items per user
    first = top_n(scores, 3, ties="random", seed=5)
    np.testing.assert_array_equal(first, top_n(scores, 3, ties="random", seed=5))
    assert (np.sort(first, axis=1) == [0, 1, 2]).all()
    orders = pd.Series([tuple(r) for r in first]).value_counts()
    assert len(orders) == 6  # all 3! orders
    assert orders.min() > 400 / 6 / 2  # roughly uniform (expected 66.7 each)
    # ties only: a strict order of scores is kept whatever the seed
    strict = np.array([[3.0, 1.0, 2.0, 1.0]])
    for seed in range(5):
        got = top_n(strict, 4, ties="random", seed=seed)
        assert list(got[0, :2]) == [0, 2]
        assert set(got[0, 2:]) == {1, 3}


def test_sparse_scores_recommend_only_their_stored_cells():
    rng = np.random.default_rng(3)
    dense = np.where(rng.random((20, 15)) < 0.3, rng.integers(1, 4, (20, 15)), 0).astype(float)
    excluded = rng.random((20, 15)) < 0.2
    stored = dense != 0
    got = top_n(sp.csr_matrix(dense), 5, exclude=sp.csr_matrix(excluded))
    expected = brute_top_n(dense, 5, excluded | ~stored)
    np.testing.assert_array_equal(got, expected)


def test_top_n_refuses_what_it_cannot_rank():
    with pytest.raises(ConfigurationError, match=r"NaN in the rows of users \[1\]"):
        top_n(np.array([[1.0, 2.0], [np.nan, 1.0]]), 1)
    with pytest.raises(ConfigurationError, match="exclude has shape"):
        top_n(np.ones((2, 3)), 1, exclude=np.ones((3, 2)))
    pairs = pd.DataFrame({"user": [0, 5], "item": [1, 1]}, index=["a", "b"])
    with pytest.raises(ColumnError, match=r"user.*\[0, 2\).*'b'"):
        top_n(np.ones((2, 3)), 1, exclude=pairs)
    with pytest.raises(ConfigurationError, match="ties"):
        top_n(np.ones((2, 3)), 1, ties="first")


def relevance(seed, users=40, items=30):
    rng = np.random.default_rng(seed)
    grades = np.where(rng.random((users, items)) < 0.2, rng.integers(1, 4, (users, items)), 0)
    grades[3] = 0  # a user without labels
    u, i = np.nonzero(grades)
    qrels = pd.DataFrame({"user": u, "item": i, "relevance": grades[u, i]})
    return grades, qrels


def as_run_frame(topn):
    r, c = np.nonzero(topn >= 0)
    return pd.DataFrame({"user": r, "item": topn[r, c], "rank": c + 1})


MEASURES = ["nDCG@10", "DCG@10", "pnDCG@10", "P@5", "AP@10", "RR", "Rprec", "iDCG@10"]


@pytest.mark.parametrize("seed", [0, 1])
def test_a_top_n_matrix_is_judged_as_its_run_frame_whatever_the_qrels_form(seed):
    grades, qrels = relevance(seed)
    scores, excluded = scores_and_exclusion(seed, users=40, items=30)
    topn = top_n(scores, 12, exclude=excluded)
    conv = PRESETS["trec_eval"](order_by="rank")
    expected = compute_measures(as_run_frame(topn), qrels, MEASURES, conv)
    for form in (qrels, grades, sp.csr_matrix(grades), prepare_qrels(qrels, conv)):
        got = compute_topn(topn, form, MEASURES, conv)
        for name in MEASURES:  # users in another order: align on the user
            pd.testing.assert_series_equal(
                got.per_user[name].sort_index(),
                expected.per_user[name].sort_index(),
                check_index_type=False,
                check_names=False,
            )
        for name in ("pnDCG@10",):
            pd.testing.assert_frame_equal(
                got.parts[name].sort_index(),
                expected.parts[name].sort_index(),
                check_index_type=False,
            )


def test_top_n_matrices_agree_with_pytrec_eval():
    import pytrec_eval

    grades, qrels = relevance(4)
    scores, excluded = scores_and_exclusion(4, users=40, items=30)
    topn = top_n(scores, 10, exclude=excluded)
    qrel_dict = {
        str(u): {str(i): int(g) for i, g in zip(f["item"], f["relevance"], strict=True)}
        for u, f in qrels.groupby("user")
    }
    run_dict = {
        str(u): {str(i): float(10 - r) for r, i in enumerate(row) if i >= 0}
        for u, row in enumerate(topn)
    }
    theirs = pytrec_eval.RelevanceEvaluator(qrel_dict, {"ndcg_cut_10", "P_5", "map_cut_10"})
    theirs = theirs.evaluate(run_dict)
    ours = compute_topn(topn, grades, ["ndcg_cut_10", "P_5", "map_cut_10"]).per_user
    assert sorted(map(str, ours.dropna().index)) == sorted(theirs)
    for user, values in theirs.items():
        for name, value in values.items():
            assert ours.loc[int(user), name] == pytest.approx(value, abs=1e-12)


def test_evaluate_topn_is_evaluate_runs_on_the_frames():
    grades, qrels = relevance(5)
    models = {
        f"m{s}": top_n(np.random.default_rng(s).random((40, 30)) + grades * 0.3 * s, 10)
        for s in range(3)
    }
    conv = PRESETS["trec_eval"](order_by="rank")
    got = evaluate_topn(models, grades, MEASURES, conv)
    frames = {name: as_run_frame(t) for name, t in models.items()}
    expected = evaluate_runs(frames, qrels, MEASURES, conv)
    pd.testing.assert_frame_equal(got.table(), expected.table(), rtol=1e-12)
    pd.testing.assert_frame_equal(got.compare(), expected.compare(), rtol=1e-10)


def test_bad_top_n_matrices_name_the_users():
    grades, _ = relevance(0)
    topn = np.tile(np.arange(5), (40, 1))
    topn[7, 3] = 1
    with pytest.raises(ConfigurationError, match=r"twice in the list of users \[7\]"):
        compute_topn(topn, grades, ["P@5"])
    topn = np.tile(np.arange(5), (40, 1))
    topn[2, 1] = -1
    with pytest.raises(ConfigurationError, match=r"padding .* users \[2\]"):
        compute_topn(topn, grades, ["P@5"])
    with pytest.raises(ConfigurationError, match="users has 3 entries"):
        compute_topn(topn, grades, ["P@5"], users=[0, 1, 2])
    with pytest.raises(ConfigurationError, match="run names must be text"):
        evaluate_topn({0: np.tile(np.arange(5), (40, 1))}, grades, ["P@5"])


def test_a_top_n_matrix_of_ids_names_its_users():
    qrels = pd.DataFrame(
        {
            "user": ["u1", "u1", "u2", "u3"],
            "item": ["d7", "d10", "d2", "d7"],
            "relevance": [2, 1, 1, 1],
        }
    )
    topn = np.array([["d10", "d3", "d7"], ["d7", "d2", None]], dtype=object)
    got = compute_topn(topn, qrels, ["P@2", "RR", "nDCG@3"], users=["u1", "u2"]).per_user
    # u1: d10 (1) at rank 1, d7 (2) at rank 3; u2: d2 at rank 2; u3: no list
    assert got.loc["u1", "P@2"] == 0.5
    assert got.loc["u2", "RR"] == 0.5
    ideal = 2 + 1 / np.log2(3)
    assert got.loc["u1", "nDCG@3"] == pytest.approx((1 + 2 / np.log2(4)) / ideal)
    assert np.isnan(got.loc["u3", "P@2"])  # judged, no list: left out (trec_eval)
    assert list(got.index) == ["u1", "u2", "u3"]
    twice = np.array([["d10", "d10", "d7"], ["d7", "d2", None]], dtype=object)
    with pytest.raises(ConfigurationError, match=r"twice in the list of users \['u1'\]"):
        compute_topn(twice, qrels, ["P@2"], users=["u1", "u2"])


@pytest.mark.parametrize("form", [np.array, sp.csr_matrix], ids=["dense", "sparse"])
@pytest.mark.parametrize(
    ("scores", "n", "expected"),
    [
        ([[2**53, 2**53 + 1, 1]], 2, [1, 0]),  # equal as float64
        ([[2**53 + 1, 2**53, 2**53 + 1, 1]], 2, [0, 2]),  # a tie at the boundary
        ([[-(2**63), 2**63 - 1, -(2**63) + 1]], 3, [1, 2, 0]),  # the int64 extremes
    ],
)
def test_integer_scores_keep_their_exact_order(form, scores, n, expected):
    assert top_n(form(np.array(scores, dtype=np.int64)), n).tolist() == [expected]


def test_unsigned_and_boolean_scores_keep_their_order():
    assert top_n(np.array([[2**64 - 2, 2**64 - 1, 1]], dtype=np.uint64), 2).tolist() == [[1, 0]]
    assert top_n(np.array([[False, True, True, False]]), 3).tolist() == [[1, 2, 0]]


def test_exact_ties_at_the_boundary_go_to_the_lower_item_index():
    scores = np.array([[5, 7, 7, 7, 1], [3, 3, 3, 3, 3]])
    assert top_n(scores, 2).tolist() == [[1, 2], [0, 1]]
    assert top_n(scores.astype(float), 2).tolist() == [[1, 2], [0, 1]]
    # the lowest int64 score is still a candidate, ranked above an excluded item
    low = np.array([[-(2**63), -(2**63), 0]])
    assert top_n(low, 3, exclude=np.array([[1, 0, 0]])).tolist() == [[2, 1, -1]]
