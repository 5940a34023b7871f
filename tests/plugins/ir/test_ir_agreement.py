"""measure_agreement: runs judged by two measures, against DCG computed by hand and scipy."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from offeval import ConfigurationError, OffevalWarning
from offeval_ir.agreement import measure_agreement
from offeval_ir.agreement_statistics import agreement

K = 5


def collection(n_users=25, n_items=15, n_models=6, seed=0):
    """Qrels with 1 to 6 graded items per user; each model a top-K list per user."""
    rng = np.random.default_rng(seed)
    users = [f"u{u:02d}" for u in range(n_users)]
    rows = []
    for u in users:
        for i in rng.choice(n_items, rng.integers(1, 7), replace=False):
            rows.append((u, f"d{i}", int(rng.integers(1, 4))))
    qrels = pd.DataFrame(rows, columns=["user", "item", "relevance"])
    runs = {}
    for m in range(n_models):
        taste = rng.normal(size=n_items)
        top = np.array([np.argsort(-(taste + rng.normal(0, 1.5, n_items)))[:K] for _ in users])
        runs[f"model{m}"] = np.array([[f"d{i}" for i in row] for row in top], dtype=object)
    return users, qrels, runs


def dcg_by_hand(users, qrels, topn):
    """Per user: DCG@K (linear gain, 1/log2(rank+1)) and the ideal DCG@K of the user's
    labels, as trec_eval's ndcg_cut."""
    grade = {(u, d): r for u, d, r in qrels.itertuples(index=False)}
    dcg, ideal = [], []
    for u, row in zip(users, topn, strict=True):
        dcg.append(sum(grade.get((u, d), 0) / math.log2(r + 2) for r, d in enumerate(row)))
        best = sorted((r for (v, _), r in grade.items() if v == u), reverse=True)[:K]
        ideal.append(sum(g / math.log2(r + 2) for r, g in enumerate(best)))
    return np.array(dcg), np.array(ideal)


def by_hand(users, qrels, runs):
    dcg, ndcg, ideal = {}, {}, {}
    for name, topn in runs.items():
        d, i = dcg_by_hand(users, qrels, topn)
        dcg[name], ndcg[name], ideal[name] = d, d / i, i
    frame = lambda values: pd.DataFrame(values, index=users)  # noqa: E731
    return frame(ndcg), frame(dcg), frame(ideal)


def inversions(a, b):
    ordered = inverted = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            if a[i] != a[j]:
                ordered += 1
                inverted += (a[i] - a[j]) * (b[i] - b[j]) < 0
    return ordered, inverted


def test_means_and_statistics_are_those_of_dcg_by_hand():
    users, qrels, runs = collection()
    got = measure_agreement(qrels, runs, f"nDCG@{K}", f"DCG@{K}", resamples=100, seed=4)
    ndcg, dcg, _ = by_hand(users, qrels, runs)
    a, b = ndcg.mean().to_numpy(), dcg.mean().to_numpy()
    np.testing.assert_allclose(got.means[f"nDCG@{K}"], a, rtol=1e-12)
    np.testing.assert_allclose(got.means[f"DCG@{K}"], b, rtol=1e-12)
    assert got.models == list(runs)
    assert got.pearson == pytest.approx(stats.pearsonr(a, b).statistic)
    assert got.kendall == pytest.approx(stats.kendalltau(a, b).statistic)
    ordered, inverted = inversions(a, b)
    assert got.inverted_share == pytest.approx(inverted / ordered)
    same = agreement(ndcg, dcg, measures=("x", "y"), resamples=100, seed=4)
    pd.testing.assert_frame_equal(got.intervals, same.intervals, rtol=1e-12)
    assert got.users == len(users) and got.resamples == 100


def test_post_normalised_dcg_is_the_ratio_of_sums_and_agrees_with_dcg():
    users, qrels, runs = collection(seed=1)
    got = measure_agreement(qrels, runs, f"pnDCG@{K}", f"DCG@{K}", resamples=50)
    ndcg, dcg, ideal = by_hand(users, qrels, runs)
    np.testing.assert_allclose(
        got.means[f"pnDCG@{K}"], dcg.sum().to_numpy() / ideal.sum().to_numpy(), rtol=1e-12
    )
    # every model is judged on the same users: pnDCG is DCG over one constant
    assert got.kendall == pytest.approx(1.0) and got.inverted_share == 0
    same = agreement(ndcg, dcg, measures=("x", "y"), weights=(ideal, None), resamples=50)
    pd.testing.assert_frame_equal(got.intervals, same.intervals, rtol=1e-12)


def plain_frame(topn, users) -> pd.DataFrame:
    """A top-n matrix as a predictions frame, by hand: one row per item, rank from 1,
    -1 (padding at the end of a short list) dropped."""
    rows = [
        (u, item, rank)
        for u, row in zip(users, topn.tolist(), strict=True)
        for rank, item in enumerate(row, start=1)
        if item != -1
    ]
    return pd.DataFrame(rows, columns=["user", "item", "rank"])


def test_frames_and_top_n_matrices_give_the_same_agreement():
    users, qrels, runs = collection(seed=2)
    frames = {name: plain_frame(topn, users) for name, topn in runs.items()}
    scored = {
        name: frame.assign(score=-frame["rank"].astype(float)).drop(columns="rank")
        for name, frame in frames.items()
    }
    want = measure_agreement(qrels, runs, resamples=30)
    for other in (frames, scored):
        got = measure_agreement(qrels, other, resamples=30)
        pd.testing.assert_frame_equal(got.table(), want.table())


def test_short_lists_are_padded_and_rows_name_their_users():
    """-1 pads a short list (the top-n matrices' rule, prepared.topn_judgements'), rows are
    the users named: the agreement of the frames without the padding."""
    rng = np.random.default_rng(4)
    users = ["c", "a", "b", "d"]
    qrels = pd.DataFrame(
        [(u, i, int(rng.integers(1, 3))) for u in users for i in rng.choice(6, 3, replace=False)],
        columns=["user", "item", "relevance"],
    )
    runs = {}
    for m in range(4):
        top = np.array([rng.permutation(6)[:4] for _ in users])
        top[rng.random(top.shape) < 0.3] = -1
        runs[f"m{m}"] = -np.sort(-np.where(top < 0, -1, top), axis=1)  # padding at the end
    want = measure_agreement(
        qrels, {n: plain_frame(t, users) for n, t in runs.items()}, "nDCG@4", "P@4", resamples=0
    )
    got = measure_agreement(qrels, runs, "nDCG@4", "P@4", users=users, resamples=0)
    pd.testing.assert_frame_equal(got.means, want.means)


def test_bad_inputs_name_the_argument():
    users, qrels, runs = collection(n_models=3)
    with pytest.raises(ConfigurationError, match="runs: give at least 3 runs"):
        measure_agreement(qrels, dict(list(runs.items())[:2]))
    with pytest.raises(ConfigurationError, match="given twice"):
        measure_agreement(qrels, runs, "nDCG@5", "nDCG@5")
    with pytest.raises(ConfigurationError, match="users has 3 entries and topn 25 rows"):
        measure_agreement(qrels, runs, users=users[:3])
    with pytest.raises(ConfigurationError, match="resamples must be a whole number"):
        measure_agreement(qrels, runs, resamples=-5)


def test_a_relevance_matrix_and_item_indices_give_the_same_agreement():
    users, qrels, runs = collection(seed=3)
    matrix = np.zeros((len(users), 15))
    rows = [users.index(u) for u in qrels["user"]]
    matrix[rows, [int(d[1:]) for d in qrels["item"]]] = qrels["relevance"]
    indices = {name: np.vectorize(lambda d: int(d[1:]))(topn) for name, topn in runs.items()}
    want = measure_agreement(qrels, runs, resamples=30, users=users)
    got = measure_agreement(matrix, indices, resamples=30)
    pd.testing.assert_frame_equal(got.table(), want.table())


def readme_models(seed, users=50, items=120, models=4):
    """The README's top-n snippet on random data: models with equal expected quality."""
    import scipy.sparse as sp

    from offeval_ir import prepare_qrels, top_n

    rng = np.random.default_rng(seed)
    held_out = sp.csr_matrix((rng.random((users, items)) < 0.05).astype(float))
    train = sp.csr_matrix((rng.random((users, items)) < 0.1).astype(float))
    scores = {f"m{i}": rng.random((users, items)) for i in range(models)}
    qrels = prepare_qrels(held_out)
    return qrels, {n: top_n(s, 100, exclude=train) for n, s in scores.items()}


@pytest.mark.parametrize("seed", range(6))
def test_near_tied_models_never_get_an_interval_that_excludes_the_point(seed):
    """Percentile intervals of near-tied models excluded their point (README: pearson 0.409
    [0.523, 0.997]). Now each interval holds its point, or, where the point lies outside
    the central 95% of the resamples (a plain numpy resampling of the per-user values
    decides), it is NaN and a warning names the statistic."""
    from offeval_ir import compute_topn

    qrels, lists = readme_models(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = measure_agreement(qrels, lists, a="nDCG@100", b="DCG@100", resamples=500)
    a, b = (
        np.column_stack(
            [compute_topn(t, qrels, [m]).per_user[m].to_numpy() for t in lists.values()]
        )
        for m in ("nDCG@100", "DCG@100")
    )
    rng = np.random.default_rng(0)
    draws = {s: [] for s in ("pearson", "kendall", "inverted_share")}
    for _ in range(500):
        rows = rng.integers(0, len(a), len(a))
        x, y = np.nanmean(a[rows], axis=0), np.nanmean(b[rows], axis=0)
        draws["pearson"].append(stats.pearsonr(x, y).statistic)
        draws["kendall"].append(stats.kendalltau(x, y).statistic)
        i, j = np.triu_indices(len(x), 1)
        sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        draws["inverted_share"].append(np.sum(sx * sy < 0) / np.count_nonzero(sx))
    messages = " ".join(str(w.message) for w in caught if w.category is OffevalWarning)
    for name, d in draws.items():
        d = np.asarray(d)
        point = getattr(got, name)
        low, high, bias = got.intervals.loc[name, ["low", "high", "bias"]]
        assert bias == pytest.approx(d.mean() - point, abs=1e-9)
        below = (np.sum(d < point) + np.sum(d == point) / 2) / d.size
        if 0.025 < below < 0.975:
            assert low <= point <= high, (name, point, low, high)
        else:
            assert math.isnan(low) and math.isnan(high)
            assert f"{name} {point:.3g}" in messages


def test_the_readme_case_warns_and_gives_no_interval_for_pearson():
    qrels, lists = readme_models(0)
    with pytest.warns(OffevalWarning, match=r"no bootstrap interval for pearson 0\.409"):
        got = measure_agreement(qrels, lists, a="nDCG@100", b="DCG@100")
    assert math.isnan(got.intervals.loc["pearson", "low"])
    assert "pearson=0.409 [no interval: biased bootstrap]" in repr(got)
