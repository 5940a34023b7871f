"""IR metrics: properties, tie handling against brute force, clear errors, the CLI."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offeval import ColumnError, ConfigurationError
from offeval.cli.shell import main
from offeval_ir import METRICS, PRESETS, Conventions, Judgements, compute, compute_frames
from offeval_ir.conventions import CHOICES
from offeval_ir.measure.registry import DECLARATIONS


@st.composite
def judgement_lists(draw):
    n_users = draw(st.integers(1, 6))
    items = list(range(12))
    predictions, labels = {}, {}
    for u in range(n_users):
        predictions[u] = draw(st.permutations(items))[: draw(st.integers(0, 8))]
        chosen = draw(st.permutations(items))[: draw(st.integers(0, 6))]
        labels[u] = {i: draw(st.integers(1, 3)) for i in chosen}
    return predictions, labels


conventions = st.builds(
    Conventions,
    **{field: st.sampled_from(choices) for field, choices in CHOICES.items() if field != "ties"},
    log_base=st.sampled_from([2.0, np.e, 10.0]),
    relevance_threshold=st.sampled_from([1.0, 2.0]),
)


@settings(max_examples=150, deadline=None)
@given(judgement_lists(), conventions)
def test_bounded_metrics_lie_in_the_unit_interval(data, conv):
    result = compute(
        Judgements.from_lists(*data),
        [m for m in METRICS if DECLARATIONS[m].value_range == (0.0, 1.0)],
        (1, 3, 5, None),
        conv,
    )
    values = result.per_user.to_numpy()
    finite = values[~np.isnan(values)]
    assert ((finite >= -1e-12) & (finite <= 1 + 1e-12)).all()


@settings(max_examples=100, deadline=None)
@given(judgement_lists())
def test_ideal_ranking_has_ndcg_one(data):
    _, labels = data
    ideal = {u: sorted(d, key=lambda i: -d[i]) for u, d in labels.items()}
    for name in ("trec_eval", "blog", "spark_mllib"):
        result = compute(
            Judgements.from_lists(ideal, labels), ["ndcg"], (1, 3, 10), PRESETS[name]()
        )
        has = [u for u, d in labels.items() if d]
        np.testing.assert_allclose(result.per_user.loc[has].to_numpy(), 1.0, rtol=1e-12)


@settings(max_examples=100, deadline=None)
@given(judgement_lists())
def test_log_base_cancels_in_ndcg(data):
    j = Judgements.from_lists(*data)
    a = compute(j, ["ndcg"], (3, 10), PRESETS["trec_eval"](log_base=2.0)).per_user
    b = compute(j, ["ndcg"], (3, 10), PRESETS["trec_eval"](log_base=np.e)).per_user
    pd.testing.assert_frame_equal(a, b, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(judgement_lists(), st.randoms())
def test_permuting_users_does_not_change_means(data, rnd):
    predictions, labels = data
    users = list(predictions)
    rnd.shuffle(users)
    a = compute(Judgements.from_lists(predictions, labels), ks=(1, 5)).mean
    b = compute(Judgements.from_lists({u: predictions[u] for u in users}, labels), ks=(1, 5)).mean
    pd.testing.assert_series_equal(a, b, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(judgement_lists())
def test_rank_input_equals_untied_score_input(data):
    predictions, labels = data
    rows = [(u, i, -r) for u, lst in predictions.items() for r, i in enumerate(lst)]
    pred = pd.DataFrame(rows, columns=["user", "item", "score"])
    lab = pd.DataFrame(
        [(u, i, g) for u, d in labels.items() for i, g in d.items()],
        columns=["user", "item", "relevance"],
    )
    by_score = Judgements.from_frames(pred, lab, users=list(predictions))
    by_rank = Judgements.from_lists(predictions, labels)
    a = compute(by_score, ks=(1, 3, 7), conventions=PRESETS["trec_eval"]()).per_user
    b = compute(by_rank, ks=(1, 3, 7), conventions=PRESETS["trec_eval"]()).per_user
    pd.testing.assert_frame_equal(a, b.loc[a.index], rtol=1e-12)


def test_expected_ties_equal_the_average_over_every_order():
    scores = {"u": {"a": 3.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 0.0}}
    labels = {"u": {"b": 2, "d": 1, "e": 3}}
    pred = pd.DataFrame(
        [("u", i, s) for i, s in scores["u"].items()], columns=["user", "item", "score"]
    )
    lab = pd.DataFrame(
        [("u", i, g) for i, g in labels["u"].items()], columns=["user", "item", "relevance"]
    )
    conv = PRESETS["sklearn"]()
    metrics = ["precision", "recall", "dcg", "ndcg"]
    expected = compute(
        Judgements.from_frames(pred, lab), metrics, (1, 2, 3, 4), conv
    ).per_user.iloc[0]
    orders = [["a", *mid, "e"] for mid in permutations(["b", "c", "d"])]
    each = [
        compute(Judgements.from_lists({"u": o}, labels), metrics, (1, 2, 3, 4), conv).per_user.iloc[
            0
        ]
        for o in orders
    ]
    pd.testing.assert_series_equal(
        expected, pd.concat(each, axis=1).mean(axis=1), check_names=False, rtol=1e-12
    )


def test_tie_policies_are_deterministic_and_named():
    pred = pd.DataFrame({"user": [1, 1, 1], "item": ["x", "y", "z"], "score": [1.0, 1.0, 0.5]})
    lab = pd.DataFrame({"user": [1], "item": ["x"], "relevance": [1]})
    first = {
        ties: compute(Judgements.from_frames(pred, lab), ["rr"], [3], Conventions(ties=ties)).mean[
            "rr@3"
        ]
        for ties in ("item_desc", "item_asc", "input_order")
    }
    assert first == {"item_desc": 0.5, "item_asc": 1.0, "input_order": 1.0}
    with pytest.raises(ConfigurationError, match="deterministic tie policy"):
        compute(Judgements.from_frames(pred, lab), ["ap"], [3], PRESETS["sklearn"]())


def test_edge_case_switches():
    j = Judgements.from_lists(
        {1: [1, 2], 2: [], 3: [4]}, {1: [2], 2: [1], 3: []}, users=[1, 2, 3, 4]
    )
    nan = compute(j, ["precision"], [2], Conventions(empty_labels="nan", no_predictions="nan"))
    zero = compute(j, ["precision"], [2], Conventions(empty_labels="zero", no_predictions="zero"))
    assert nan.per_user["precision@2"].tolist()[0] == 0.5 and nan.mean["precision@2"] == 0.5
    assert zero.mean["precision@2"] == pytest.approx(0.5 / 4)
    counts = nan.counts.loc["precision@2"]
    assert (counts["users"], counts["excluded_no_labels"], counts["excluded_no_predictions"]) == (
        1,
        2,
        1,
    )


def test_relevance_threshold_for_binary_metrics_on_graded_labels():
    j = Judgements.from_lists({1: [1, 2, 3]}, {1: {1: 1, 2: 3, 3: 2}})
    high = compute(j, ["precision", "ndcg"], [3], PRESETS["trec_eval"](relevance_threshold=2))
    assert high.mean["precision@3"] == pytest.approx(2 / 3)
    low = compute(j, ["precision", "ndcg"], [3], PRESETS["trec_eval"]())
    assert low.mean["precision@3"] == 1.0 and high.mean["ndcg@3"] == low.mean["ndcg@3"]


@pytest.mark.parametrize(
    ("predictions", "labels", "message"),
    [
        (
            pd.DataFrame({"user": [1, 1], "item": [5, 5], "rank": [1, 2]}),
            pd.DataFrame({"user": [1], "item": [5], "relevance": [1]}),
            "appears twice",
        ),
        (
            pd.DataFrame({"user": [1], "item": [5], "rank": [1]}),
            pd.DataFrame({"user": [1], "item": [5], "relevance": [-1]}),
            "must not be negative",
        ),
        (
            pd.DataFrame({"user": [1], "item": [5]}),
            pd.DataFrame({"user": [1], "item": [5], "relevance": [1]}),
            "rank or a score",
        ),
        (
            pd.DataFrame({"user": [1], "item": [5], "rank": [1]}),
            pd.DataFrame({"user": [1], "item": [5]}),
            "'relevance'",
        ),
    ],
)
def test_bad_input_raises_a_column_error(predictions, labels, message):
    with pytest.raises(ColumnError, match=message):
        Judgements.from_frames(predictions, labels)


def test_duplicate_rows_are_named():
    pred = pd.DataFrame({"user": [1, 1, 2], "item": [5, 5, 5], "rank": [1, 2, 1]}, index=[7, 8, 9])
    lab = pd.DataFrame({"user": [1], "item": [5], "relevance": [1]})
    with pytest.raises(ColumnError, match=r"rows \[8\]"):
        Judgements.from_frames(pred, lab)


def test_mismatched_users_and_bad_settings():
    pred = pd.DataFrame({"user": [1, 2], "item": [5, 5], "rank": [1, 1]})
    lab = pd.DataFrame({"user": [1, 3], "item": [5, 5], "relevance": [1, 1]})
    with pytest.raises(ColumnError, match=r"only in predictions \['2'\], only in labels \['3'\]"):
        Judgements.from_frames(pred, lab, strict_users=True)
    with pytest.raises(ColumnError, match="not in the given user list"):
        Judgements.from_frames(pred, lab, users=[1, 2])
    j = Judgements.from_frames(pred, lab)
    with pytest.raises(ConfigurationError, match="k must be a whole number >= 1"):
        compute(j, ks=[0])
    with pytest.raises(ConfigurationError, match="unknown metrics"):
        compute(j, ["auc"])
    with pytest.raises(ConfigurationError, match="ap_denominator must be one of"):
        Conventions(ap_denominator="queries")
    with pytest.raises(
        ConfigurationError, match=r"^log_base must be a finite number > 1, got inf$"
    ):
        Conventions(log_base=float("inf"))  # every discount would be infinite
    with pytest.raises(ConfigurationError, match="^relevance_threshold must be a finite positive"):
        Conventions(relevance_threshold=0)
    with pytest.raises(ConfigurationError, match=r"^rbp_persistence must be a number in \(0, 1\)"):
        Conventions(rbp_persistence=1)
    override = r"^per_metric override ndcg\.ties must be one of \('expected', "
    with pytest.raises(ConfigurationError, match=override):
        Conventions(per_metric=(("ndcg", "ties", "random"),))
    with pytest.raises(ConfigurationError, match="unknown convention switches"):
        PRESETS["blog"](gains="linear")


def test_offeval_metrics_command(tmp_path, capsys):
    pred = pd.DataFrame(
        [
            (u, i, r)
            for u, lst in {1: [1, 6, 8], 2: [1, 2, 3, 4, 5]}.items()
            for r, i in enumerate(lst, start=1)
        ],
        columns=["uid", "item", "rank"],
    )
    lab = pd.DataFrame(
        [(u, i, 1) for u, lst in {1: [1, 2, 3, 4, 5, 6], 2: [2, 4, 6]}.items() for i in lst],
        columns=["uid", "item", "relevance"],
    )
    pred.to_csv(tmp_path / "pred.csv", index=False)
    lab.to_parquet(tmp_path / "labels.parquet")
    out = tmp_path / "table.csv"
    code = main(
        [
            "metrics",
            str(tmp_path / "pred.csv"),
            str(tmp_path / "labels.parquet"),
            "--preset",
            "trec_eval",
            "--set",
            "ap_denominator=hits",
            "-m",
            "ap@3",
            "-m",
            "ndcg@3",
            "--column",
            "user=uid",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    table = pd.read_csv(out, index_col="measure")
    assert table.loc["ap@3", "mean"] == pytest.approx((1 + 0.5) / 2)
    assert "preset trec_eval, overrides ap_denominator=hits" in capsys.readouterr().out


def _long_frames(predictions, labels, rnd=None):
    rows = [(u, i, 100 - r) for u, lst in predictions.items() for r, i in enumerate(lst)]
    if rnd is not None:
        rnd.shuffle(rows)
    pred = pd.DataFrame(rows, columns=["user", "item", "score"])
    lab = pd.DataFrame(
        [(u, i, g) for u, d in labels.items() for i, g in d.items()],
        columns=["user", "item", "relevance"],
    )
    return pred, lab


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(judgement_lists(), st.randoms(), st.integers(1, 12), st.sampled_from(sorted(PRESETS)))
def test_grouped_shuffled_and_blocked_frames_give_the_same_values(data, rnd, chunk, preset):
    """Users grouped (codes from runs) or shuffled (hashed), whole or a few users at a time."""
    predictions, labels = data
    conv = PRESETS[preset]()
    metrics = ["precision", "recall", "dcg", "ndcg"] if conv.ties == "expected" else METRICS
    ks = (1, 3, None)
    reference = compute(Judgements.from_lists(*data), metrics, ks, conv)
    grouped, lab = _long_frames(predictions, labels)
    shuffled, _ = _long_frames(predictions, labels, rnd)
    results = [
        compute(Judgements.from_frames(grouped, lab), metrics, ks, conv),
        compute(Judgements.from_frames(shuffled, lab), metrics, ks, conv),
        compute_frames(grouped, lab, metrics, ks, conv, chunk_rows=chunk),
        compute_frames(shuffled, lab, metrics, ks, conv, chunk_rows=chunk),
    ]
    present = [u for u in reference.per_user.index if predictions[u] or labels[u]]
    for result in results:
        got = result.per_user
        assert list(got.index) == sorted(got.index, key=list(got.index).index)  # no repeats
        expected = reference.per_user.loc[present]
        pd.testing.assert_frame_equal(
            got.loc[present], expected, rtol=1e-12, check_index_type=False
        )
        assert set(got.index) == set(present)
    first_seen = list(dict.fromkeys([u for u in grouped["user"]] + [u for u in lab["user"]]))
    assert list(results[2].per_user.index) == first_seen
    counts = results[3].counts
    pd.testing.assert_frame_equal(counts, results[1].counts)


def test_no_cut_off_means_each_users_own_list_against_all_its_labels():
    """k=None: a user's values do not depend on other users' list lengths."""
    predictions = {"a": [1, 2], "b": [5, 6, 7, 8, 9]}
    labels = {"a": {1: 1, 2: 1, 3: 1, 4: 1}, "b": {5: 1}}
    conv = PRESETS["blog"](precision_denominator="k", ideal="labels")
    got = compute(Judgements.from_lists(predictions, labels), ["precision", "ndcg"], [None], conv)
    discount = 1 / np.log2(np.arange(2, 6))
    assert got.per_user.loc["a", "precision"] == 1.0  # 2 hits / a list of 2, not / 5
    ndcg_a = discount[:2].sum() / discount[:4].sum()  # ideal: all four labels
    assert got.per_user.loc["a", "ndcg"] == pytest.approx(ndcg_a, rel=1e-12)
    assert got.per_user.loc["b", "precision"] == pytest.approx(1 / 5)


TREC_SAMPLE = ["infAP", "relative_P", "iprec_at_recall:0.5", "Rndcg", "unj", "num_rel_ret"]


@settings(max_examples=60, deadline=None)
@given(judgement_lists(), st.sampled_from(sorted(PRESETS)), st.data())
def test_cut_offs_per_metric_give_the_columns_of_the_full_grid(data, preset, draw):
    """ks as {metric: its cut-offs}: exactly those columns, each equal to the column of
    the same metric at the same cut-off when every metric is computed at every cut-off
    (offeval's metrics and trec_eval's, per-metric conventions included)."""
    conv = PRESETS[preset](per_metric=(("ndcg", "gain", "exponential"),))
    metrics = ["precision", "recall", "dcg", "ndcg"] if conv.ties == "expected" else METRICS
    if conv.ties != "expected":
        metrics = [*metrics, *TREC_SAMPLE]
    choices = [1, 3, 5, None]
    ks = {
        m: draw.draw(st.lists(st.sampled_from(choices), min_size=1, max_size=3, unique=True))
        for m in metrics
    }
    judgements = Judgements.from_lists(*data)
    full = compute(judgements, metrics, choices, conv)
    got = compute(judgements, metrics, ks, conv)
    columns = {f"{m}{'' if k is None else f'@{k}'}" for m in metrics for k in ks[m]}
    assert set(got.per_user.columns) == columns
    for column in columns:
        np.testing.assert_array_equal(got.per_user[column], full.per_user[column])
    pd.testing.assert_frame_equal(got.counts, full.counts.loc[got.per_user.columns])


def test_cut_offs_per_metric_must_name_the_metrics():
    judgements = Judgements.from_lists({"u": [1, 2]}, {"u": {1: 1}})
    with pytest.raises(ConfigurationError, match=r"no cut-offs for \['ap'\]"):
        compute(judgements, ["ndcg", "ap"], {"ndcg": [5]})
    with pytest.raises(ConfigurationError, match=r"cut-offs for \['rr'\], not in metrics"):
        compute(judgements, ["ndcg"], {"ndcg": [5], "rr": [1]})
    with pytest.raises(ConfigurationError, match="ks is empty"):
        compute(judgements, ["ndcg"], {"ndcg": []})


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from([-np.inf, -1.0, 0.0, 0.5, 0.5, 2.0, np.inf]), min_size=1, max_size=7
        ),
        min_size=1,
        max_size=6,
    ),
    st.booleans(),
)
def test_lists_sorted_within_grouped_users_as_by_a_stable_sort(scores, by_rank):
    """Rows grouped by user (lists of several lengths, scores tied and infinite, in no
    order): the judgements of a frame already put in order by a plain-Python stable sort
    (score descending, or rank ascending; ties in input order)."""
    rows = [
        (f"u{u}", f"d{u}_{i}", i + 1, s)
        for u, list_ in enumerate(scores)
        for i, s in enumerate(list_)
    ]
    frame = pd.DataFrame(rows, columns=["user", "item", "rank", "score"])
    if by_rank:  # ranks that disagree with the row order: the negated scores, finite
        frame["rank"] = np.nan_to_num(-frame["score"], posinf=9.0, neginf=-9.0)
    key = frame["rank"] if by_rank else -frame["score"]
    position = {u: p for p, u in enumerate(dict.fromkeys(frame["user"]))}
    ordered = sorted(range(len(frame)), key=lambda r: (position[frame["user"][r]], key[r], r))
    reference = frame.iloc[ordered].reset_index(drop=True)
    labels = pd.DataFrame(
        {"user": frame["user"][::2], "item": frame["item"][::2], "relevance": 1.0}
    )
    order_by = "rank" if by_rank else "score"
    got = Judgements.from_frames(frame, labels, order_by=order_by)
    expected = Judgements.from_frames(reference, labels, order_by=order_by)
    for field in ("grades", "judged", "lengths", "label_grades", "positive"):
        np.testing.assert_array_equal(getattr(got, field), getattr(expected, field))
    assert (got.tie_group is None) == (expected.tie_group is None)
    if got.tie_group is not None:
        np.testing.assert_array_equal(got.tie_group, expected.tie_group)
        np.testing.assert_array_equal(got.tie_item, expected.tie_item)
