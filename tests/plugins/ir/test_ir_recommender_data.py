"""Recommender users' data as they have it: held-out interactions without grades are
relevance 1 (said once per call), ``user_id``/``item_id`` columns are read as ``query_id``/
``doc_id`` are, and top-n lists that name their users (a frame's index, a Series of lists,
a dict) give results indexed by those users. Checked against a brute-force oracle and
pytrec_eval."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from offeval import ColumnError, ConfigurationError, OffevalWarning
from offeval_ir import compute_measures, compute_topn, evaluate_runs, evaluate_topn

#: Each user's held-out items (implicit feedback: no grade) and a model's top-3 lists.
HELD_OUT = {"u7": ["i1", "i4"], "u2": ["i3"], "u9": ["i2", "i5", "i6"]}
LISTS = {"u9": ["i5", "i1", "i6"], "u7": ["i4", "i2", "i1"], "u2": ["i8", "i9", "i3"]}


def held_out_frame(user: str = "user_id", item: str = "item_id") -> pd.DataFrame:
    rows = [(u, i) for u, items in HELD_OUT.items() for i in items]
    return pd.DataFrame(rows, columns=[user, item])


def run_frame() -> pd.DataFrame:
    rows = [(u, i, 3 - r) for u, items in LISTS.items() for r, i in enumerate(items)]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "score"])


def oracle(k: int) -> pd.DataFrame:
    """P@k, R@k and nDCG@k of binary relevance, in plain Python."""
    rows = {}
    for user, ranked in LISTS.items():
        hits = [item in HELD_OUT[user] for item in ranked[:k]]
        dcg = sum(1 / math.log2(j + 2) for j, hit in enumerate(hits) if hit)
        ideal = sum(1 / math.log2(j + 2) for j in range(min(k, len(HELD_OUT[user]))))
        rows[user] = {
            f"P@{k}": sum(hits) / k,
            f"R@{k}": sum(hits) / len(HELD_OUT[user]),
            f"nDCG@{k}": dcg / ideal,
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def implicit_warnings(caught: list) -> list:
    return [w for w in caught if "implicit feedback" in str(w.message)]


def test_held_out_interactions_without_grades_are_relevance_one_said_once():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compute_measures(run_frame(), held_out_frame(), ["P@2", "R@2", "nDCG@2"])
    said = implicit_warnings(caught)
    assert len(said) == 1 and said[0].category is OffevalWarning
    assert said[0].filename == __file__  # names the user's line
    expected = oracle(2)
    pd.testing.assert_frame_equal(
        got.per_user.loc[expected.index], expected, check_names=False, rtol=1e-12, atol=0
    )


def test_implicit_feedback_agrees_with_pytrec_eval_on_grade_one_qrels():
    import pytrec_eval

    qrels = {u: dict.fromkeys(items, 1) for u, items in HELD_OUT.items()}
    run = {u: {i: float(3 - r) for r, i in enumerate(items)} for u, items in LISTS.items()}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_3", "P_3", "recip_rank"})
    theirs = pd.DataFrame(theirs.evaluate(run)).T
    with pytest.warns(OffevalWarning, match="implicit feedback"):
        ours = compute_measures(run_frame(), held_out_frame(), ["nDCG@3", "P@3", "RR"])
    for mine, peer in [("nDCG@3", "ndcg_cut_3"), ("P@3", "P_3"), ("RR", "recip_rank")]:
        np.testing.assert_allclose(
            ours.per_user.loc[theirs.index, mine], theirs[peer], rtol=1e-12, atol=0
        )


@pytest.mark.parametrize(
    "held", [dict, lambda h: {u: set(i) for u, i in h.items()}], ids=["lists", "sets"]
)
def test_held_out_items_by_user_are_implicit_qrels(held):
    with pytest.warns(OffevalWarning, match="implicit feedback") as caught:
        got = compute_topn(LISTS, held(HELD_OUT), ["P@2", "R@2", "nDCG@2"]).per_user
    assert len(implicit_warnings(caught.list)) == 1
    expected = oracle(2).loc[list(LISTS)]
    pd.testing.assert_frame_equal(got, expected, check_names=False, rtol=1e-12, atol=0)
    with pytest.warns(OffevalWarning, match="implicit feedback"):
        frames = compute_measures(run_frame(), held(HELD_OUT), ["P@2", "R@2", "nDCG@2"])
    pd.testing.assert_frame_equal(frames.per_user.loc[list(LISTS)], got)


def test_many_runs_and_many_models_say_it_once_per_call():
    runs = {"a": run_frame(), "b": run_frame().iloc[::-1]}
    topn = {name: dict(LISTS) for name in ("a", "b", "c")}
    topn = {name: pd.Series(lists) for name, lists in topn.items()}
    for call in (
        lambda: evaluate_runs(runs, held_out_frame(), ["P@2", "nDCG@3"]),
        lambda: evaluate_topn(topn, held_out_frame(), ["P@2", "nDCG@3"]),
        lambda: compute_topn(LISTS, held_out_frame(), ["P@2"]),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert len(implicit_warnings(caught)) == 1


def test_a_grade_column_or_a_run_given_as_qrels_is_never_read_as_implicit():
    graded = held_out_frame().assign(relevance=[2, 1, 1, 1, 1, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = compute_measures(run_frame(), graded, ["P@3"]).per_user
    assert got.loc["u9", "P@3"] == 1 / 3  # i6 graded 0: not relevant
    # a run where the qrels belong has a score: still refused, not taken as interactions
    with pytest.raises(ColumnError, match="relevance"):
        compute_measures(run_frame(), run_frame(), ["P@3"])
    # a column named like grades (PyTerrier's label, MovieLens' rating): asked to name it
    for grades in ("label", "rating"):
        with pytest.raises(ColumnError, match=r"relevance.*columns=\{'relevance': \.\.\.\}"):
            compute_measures(run_frame(), graded.rename(columns={"relevance": grades}), ["P@3"])
    # a grade column named, and missing: refused, not taken as implicit
    with pytest.raises(ColumnError, match="grade"):
        compute_measures(
            run_frame().rename(columns={"user_id": "user", "item_id": "item"}),
            held_out_frame("user", "item"),
            ["P@3"],
            columns={"relevance": "grade"},
        )


def test_user_id_and_item_id_are_read_as_query_id_and_doc_id():
    with pytest.warns(OffevalWarning, match="implicit feedback"):
        recommender = compute_measures(run_frame(), held_out_frame(), ["P@3", "RR"])
    peers = run_frame().rename(columns={"user_id": "query_id", "item_id": "doc_id"})
    qrels = held_out_frame("query_id", "doc_id").assign(relevance=1)
    pd.testing.assert_frame_equal(
        recommender.per_user, compute_measures(peers, qrels, ["P@3", "RR"]).per_user
    )


@pytest.mark.parametrize(
    "form",
    [
        lambda lists: pd.DataFrame(list(lists.values()), index=list(lists)),
        lambda lists: pd.Series(lists),
        dict,
    ],
    ids=["frame", "series", "dict"],
)
def test_top_n_lists_that_name_their_users_are_judged_and_indexed_by_them(form):
    qrels = held_out_frame("user", "item").assign(relevance=1)
    got = compute_topn(form(LISTS), qrels, ["P@2", "R@2", "nDCG@2"]).per_user
    assert list(got.index) == list(LISTS)  # the users' own ids, in the lists' order
    expected = oracle(2).loc[list(LISTS)]
    pd.testing.assert_frame_equal(got, expected, check_names=False, rtol=1e-12, atol=0)
    evaluation = evaluate_topn({"m": form(LISTS)}, qrels, ["P@2"])
    assert evaluation.results["m"].per_user["P@2"].to_dict() == expected["P@2"].to_dict()


def test_a_dict_of_lists_is_one_model_and_users_named_twice_must_agree():
    qrels = held_out_frame("user", "item").assign(relevance=1)
    evaluation = evaluate_topn(LISTS, qrels, ["P@3"])
    assert list(evaluation.results) == ["run"]
    frame = pd.DataFrame(list(LISTS.values()), index=list(LISTS))
    same = compute_topn(frame, qrels, ["P@3"], users=list(LISTS)).per_user
    assert same["P@3"].to_dict() == oracle(3)["P@3"].to_dict()
    with pytest.raises(ConfigurationError, match="users= names others"):
        compute_topn(frame, qrels, ["P@3"], users=["u2", "u7", "u9"])
    with pytest.raises(ConfigurationError, match="a long frame .* is a run"):
        compute_topn(run_frame().rename(columns=lambda c: c[:4]), qrels, ["P@3"])


def test_offeval_metrics_reads_held_out_interactions_and_says_so_once(tmp_path):
    from offeval.cli.shell import main

    run, held, out = tmp_path / "run.csv", tmp_path / "held.csv", tmp_path / "t.csv"
    run_frame().to_csv(run, index=False)
    held_out_frame().to_csv(held, index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["metrics", str(run), str(held), "-m", "nDCG@2", "--out", str(out)]) == 0
    said = implicit_warnings(caught)
    assert len(said) == 1 and "--column relevance=NAME" in str(said[0].message)
    table = pd.read_csv(out)
    assert table.loc[0, "mean"] == pytest.approx(oracle(2)["nDCG@2"].mean(), rel=1e-12)
    assert table.loc[0, "users"] == 3


def test_files_read_the_peers_id_columns_as_text_as_trec_files_do(tmp_path):
    from offeval_ir.files import read_qrels, read_run

    run = tmp_path / "run.csv"
    run.write_text("user_id,item_id,score\n301,0012,0.9\n301,12,0.5\n302,7,0.4\n")
    qrels = tmp_path / "qrels.trec"
    qrels.write_text("301 0 0012 1\n302 0 7 1\n")
    frame = read_run(run)
    assert frame["user_id"].tolist() == ["301", "301", "302"]
    assert frame["item_id"].tolist() == ["0012", "12", "7"]  # zeros kept: 0012 is not 12
    got = compute_measures(frame, read_qrels(qrels), ["P@1", "P@2"]).per_user
    assert got.loc["301"].tolist() == [1.0, 0.5] and got.loc["302"].tolist() == [1.0, 0.5]
