"""Agreement of two measures over models: scipy's statistics, brute-force pairs, plain bootstrap."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import offeval_ir.agreement_statistics as agreement_module
from offeval.errors import ConfigurationError
from offeval_ir.agreement_statistics import agreement, pair_statistics


def brute_inversions(a, b) -> tuple[int, int]:
    """Pairs ordered by ``a`` and, of those, pairs ``b`` orders the other way."""
    ordered = inverted = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            if a[i] != a[j]:
                ordered += 1
                if (a[i] - a[j]) * (b[i] - b[j]) < 0:
                    inverted += 1
    return ordered, inverted


def values(users=40, models=9, seed=0):
    rng = np.random.default_rng(seed)
    first = rng.gamma(2.0, size=(users, models)) * rng.random(models)
    second = first / rng.integers(1, 6, size=(users, 1)) + rng.normal(0, 0.2, (users, models))
    return first, second


@pytest.mark.parametrize("seed", range(5))
def test_pearson_and_kendall_tau_b_are_scipys_with_ties(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, 15).astype(float)  # ties under each measure
    b = a + rng.integers(-2, 3, 15)
    got = agreement(a, b)
    assert got.pearson == pytest.approx(stats.pearsonr(a, b).statistic, abs=1e-12)
    assert got.kendall == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
    assert got.kendall == pytest.approx(stats.kendalltau(a, b, variant="b").statistic, abs=1e-12)
    assert got.kendall_p == pytest.approx(stats.kendalltau(a, b).pvalue)
    assert got.pearson_p == pytest.approx(stats.pearsonr(a, b).pvalue)


@pytest.mark.parametrize("seed", range(5))
def test_inverted_share_counts_pairs_by_brute_force(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, 12).astype(float)
    b = rng.integers(0, 5, 12).astype(float)
    ordered, inverted = brute_inversions(a, b)
    got = agreement(a, b)
    assert (got.ordered_pairs, got.inverted_pairs) == (ordered, inverted)
    assert got.inverted_share == pytest.approx(inverted / ordered)
    assert int(got.pairs()["inverted"].sum()) == inverted


def test_rows_of_means_are_independent_computations():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(6, 8)), rng.normal(size=(6, 8))
    x[2, :4] = x[2, 4:]  # ties in one row
    rows = pair_statistics(x, y)
    for r in range(6):
        assert rows["pearson"][r] == pytest.approx(stats.pearsonr(x[r], y[r]).statistic)
        assert rows["kendall"][r] == pytest.approx(stats.kendalltau(x[r], y[r]).statistic)
        ordered, inverted = brute_inversions(x[r], y[r])
        assert rows["inverted_share"][r] == pytest.approx(inverted / ordered)


def quantile(sorted_values: list[float], q: float) -> float:
    """numpy's default (linear, R's type 7) quantile of a sorted list, by hand."""
    h = (len(sorted_values) - 1) * q
    low = math.floor(h)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (h - low) * (sorted_values[high] - sorted_values[low])


def plain_means(matrix, rows, denominator=None):
    """Each model's mean over ``rows`` (users with a value), or with ``denominator`` its sum
    of numerators over the sum of denominators."""
    means = []
    for j in range(len(matrix[0])):
        if denominator is not None:
            top = sum(matrix[u][j] * denominator[u][j] for u in rows)
            means.append(top / sum(denominator[u][j] for u in rows))
            continue
        cells = [matrix[u][j] for u in rows if not math.isnan(matrix[u][j])]
        means.append(sum(cells) / len(cells))
    return means


def plain_statistics(a, b):
    ordered, inverted = brute_inversions(a, b)
    return {
        "pearson": stats.pearsonr(a, b).statistic,
        "kendall": stats.kendalltau(a, b).statistic,
        "inverted_share": inverted / ordered,
    }


def plain_bootstrap(first, second, resamples, seed, level, denominator=None, method="bca"):
    """Resample users with Python loops and compute the intervals by their textbook
    formulas (Efron and Tibshirani 1993, 14.3: BCa's z0 from the share of resamples below
    the point, its acceleration from the jackknife over users); ``denominator`` weights the
    second measure's users (a ratio of sums)."""
    rng = np.random.default_rng(seed)
    n = len(first)
    point = plain_statistics(
        plain_means(first, range(n)), plain_means(second, range(n), denominator)
    )
    draws = {"pearson": [], "kendall": [], "inverted_share": []}
    for _ in range(resamples):
        rows = rng.integers(0, n, n).tolist()
        got = plain_statistics(plain_means(first, rows), plain_means(second, rows, denominator))
        for name in draws:
            draws[name].append(got[name])
    jack = {name: [] for name in draws}
    for u in range(n):
        rows = [v for v in range(n) if v != u]
        got = plain_statistics(plain_means(first, rows), plain_means(second, rows, denominator))
        for name in jack:
            jack[name].append(got[name])
    tail = (1 - level) / 2
    normal = NormalDist()
    out = {}
    for name, d in draws.items():
        levels = [tail, 1 - tail]
        if method == "bca":
            below = sum(x < point[name] for x in d) + sum(x == point[name] for x in d) / 2
            z0 = normal.inv_cdf(below / len(d))
            mean = sum(jack[name]) / n
            top = sum((mean - x) ** 3 for x in jack[name])
            bottom = 6 * sum((mean - x) ** 2 for x in jack[name]) ** 1.5
            accel = top / bottom if bottom else 0.0
            levels = [
                normal.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
                for z in (normal.inv_cdf(tail), normal.inv_cdf(1 - tail))
            ]
        out[name] = (
            quantile(sorted(d), levels[0]),
            quantile(sorted(d), levels[1]),
            sum(d) / len(d) - point[name],
        )
    return out


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_the_bootstrap_is_a_plain_bootstrap_over_users(method):
    first, second = values(users=11, models=5, seed=4)
    first[3, 1] = np.nan  # user 3 has no value for model 1 under the first measure
    got = agreement(first, second, resamples=60, seed=7, level=0.9, interval=method)
    want = plain_bootstrap(first.tolist(), second.tolist(), 60, 7, 0.9, method=method)
    for name, (low, high, bias) in want.items():
        assert got.intervals.loc[name, "low"] == pytest.approx(low, abs=1e-12)
        assert got.intervals.loc[name, "high"] == pytest.approx(high, abs=1e-12)
        assert got.table().loc[name, "bias"] == pytest.approx(bias, abs=1e-12)
    assert got.means.iloc[1, 0] == pytest.approx(np.mean(np.delete(first[:, 1], 3)))


def test_a_ratio_of_sums_is_its_ratio_weighted_by_the_denominator():
    first, second = values(users=13, models=5, seed=5)
    denominator = np.random.default_rng(1).uniform(0.5, 3.0, second.shape)
    got = agreement(first, second, weights=(None, denominator), resamples=40, seed=3)
    ratio = (second * denominator).sum(axis=0) / denominator.sum(axis=0)
    np.testing.assert_allclose(got.means["second"], ratio, rtol=1e-12)
    want = plain_bootstrap(first.tolist(), second.tolist(), 40, 3, 0.95, denominator.tolist())
    for name, want_row in want.items():
        assert got.intervals.loc[name].tolist() == pytest.approx(list(want_row), abs=1e-12)


def test_blocks_do_not_change_the_resamples(monkeypatch):
    first, second = values()
    whole = agreement(first, second, resamples=50, seed=2)
    monkeypatch.setattr(agreement_module, "BLOCK_CELLS", 100)  # one resample per block
    assert agreement(first, second, resamples=50, seed=2).intervals.equals(whole.intervals)


def test_intervals_cover_the_true_models_statistics_most_times():
    """Six models with known true means, measured with noise: the 95% intervals are not
    degenerate and cover the statistics of the true means in at least 80% of 60 studies
    (Pearson's r of noisy means is pulled towards 0, so its interval covers less than
    95%: in 300 studies, 91% with BCa and 89% with percentile intervals)."""
    rng = np.random.default_rng(0)
    truth_a = np.linspace(1.0, 2.0, 6)
    truth_b = truth_a + np.array([0.0, 0.3, -0.2, 0.25, -0.1, 0.05])
    true = pair_statistics(truth_a, truth_b)
    covered = {name: 0 for name in ("pearson", "kendall", "inverted_share")}
    runs = 60
    for _ in range(runs):
        users = rng.normal(0, 1.0, (300, 1))  # users differ, under both measures alike
        a = truth_a + users + rng.normal(0, 1.5, (300, 6))
        b = truth_b + users + rng.normal(0, 1.5, (300, 6))
        got = agreement(a, b, resamples=200, seed=int(rng.integers(1 << 30)))
        for name in covered:
            low, high = got.intervals.loc[name, ["low", "high"]]
            assert low < high
            covered[name] += low <= true[name][0] <= high
    assert all(count >= 0.8 * runs for count in covered.values()), covered


def test_frames_are_aligned_on_their_labels():
    first, second = values(users=20, models=4)
    a = pd.DataFrame(first, columns=list("wxyz"), index=[f"u{i}" for i in range(20)])
    b = pd.DataFrame(second, columns=list("wxyz"), index=a.index)
    shuffled = b.iloc[::-1, [2, 0, 3, 1]]
    got = agreement(a, shuffled, measures=("A", "B"), resamples=30)
    want = agreement(a, b, measures=("A", "B"), resamples=30)
    assert got.intervals.equals(want.intervals) and got.means.equals(want.means)
    assert got.models == list("wxyz") and list(got.means.columns) == ["A", "B"]


def test_a_constant_measure_has_no_statistics():
    got = agreement(np.ones(4), np.arange(4.0))
    assert math.isnan(got.pearson) and math.isnan(got.kendall)
    assert math.isnan(got.inverted_share) and got.ordered_pairs == 0


def test_bad_inputs_name_the_argument():
    first, second = values(users=5, models=4)
    with pytest.raises(ConfigurationError, match="at least 3 models"):
        agreement([1.0, 2.0], [2.0, 1.0])
    with pytest.raises(ConfigurationError, match="second: shape"):
        agreement(first, second[:, :3])
    with pytest.raises(ConfigurationError, match="resamples: per-model means give no interval"):
        agreement([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], resamples=10)
    a = pd.DataFrame(first, columns=["m1", "m2", "m3", "m4"])
    with pytest.raises(ConfigurationError, match=r"differing: \['m4', 'other'\]"):
        agreement(a, a.rename(columns={"m4": "other"}))
    gaps = a.copy()
    gaps["m3"] = np.nan
    with pytest.raises(
        ConfigurationError, match=r"first: models \['m3'\] have infinite values or no"
    ):
        agreement(gaps, a)
    with pytest.raises(ConfigurationError, match="resamples must be a whole number >= 0"):
        agreement(first, second, resamples=-1)
    with pytest.raises(ConfigurationError, match=r"weights of second: models \['m2'\] have neg"):
        agreement(a, a, weights=(None, a.assign(m2=-1.0)))
    with pytest.raises(ConfigurationError, match="confidence level"):
        agreement(first, second, level=95)


def test_rounding_noise_neither_orders_nor_inverts_a_pair():
    """Two models equal under the first measure up to rounding (a sum in another order) are a
    tie, not an ordered pair that the second measure may invert."""
    values = np.array([0.1, 0.2, 0.3])
    first = np.array([[values.sum(), values[::-1].sum(), 0.2]])  # 0.6 and 0.6000000000000001
    assert first[0, 0] != first[0, 1]
    second = np.array([[0.5, 0.7, 0.1]])
    stats = pair_statistics(first, second)
    assert stats["ordered_pairs"][0] == 2  # (0, 2) and (1, 2); (0, 1) is tied
    assert stats["inverted_pairs"][0] == 0
    assert stats["inverted_share"][0] == 0.0
