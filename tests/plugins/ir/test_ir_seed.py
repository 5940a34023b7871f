"""Every value of the seed blog post's five-user tables (P, R, F1, AP, RR, nDCG at 1, 3, 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from offeval_ir import PRESETS, Judgements, compute

PREDICTIONS = {1: [1, 6, 8], 2: [1, 2, 3, 4, 5], 3: [], 4: [1, 2, 3, 4], 5: []}
LABELS = {1: [1, 2, 3, 4, 5, 6], 2: [2, 4, 6], 3: [2, 4, 6], 4: [], 5: []}
NAN = float("nan")
ln = math.log

# (metric, k): per-user values for users 1-5, then the mean; fractions as the blog writes them.
TABLES = {
    ("precision", 1): ([1, 0, 0, NAN, NAN], 1 / 3),
    ("precision", 3): ([2 / 3, 1 / 3, 0, NAN, NAN], 1 / 3),
    ("precision", 5): ([2 / 5, 2 / 5, 0, NAN, NAN], 4 / 15),
    ("recall", 1): ([1 / 6, 0, 0, NAN, NAN], 1 / 18),
    ("recall", 3): ([1 / 3, 1 / 3, 0, NAN, NAN], 2 / 9),
    ("recall", 5): ([1 / 3, 2 / 3, 0, NAN, NAN], 1 / 3),
    ("f1", 1): ([2 / 7, 0, 0, NAN, NAN], 2 / 21),
    ("f1", 3): ([4 / 9, 1 / 3, 0, NAN, NAN], 7 / 27),
    ("f1", 5): ([4 / 11, 1 / 2, 0, NAN, NAN], 19 / 66),
    ("ap", 1): ([1, 0, 0, NAN, NAN], 1 / 3),
    ("ap", 3): ([1, 1 / 2, 0, NAN, NAN], 1 / 2),
    ("ap", 5): ([1, 1 / 2, 0, NAN, NAN], 1 / 2),
    ("rr", 1): ([1, 0, 0, NAN, NAN], 1 / 3),
    # The blog's MRR@3 and MRR@5 rows write "(1+1/2+0)/3 = 1/3 = 0.333": the per-user
    # values are right and their mean is 1/2, which is what we assert.
    ("rr", 3): ([1, 1 / 2, 0, NAN, NAN], 1 / 2),
    ("rr", 5): ([1, 1 / 2, 0, NAN, NAN], 1 / 2),
    ("ndcg", 1): ([1, 0, 0, NAN, NAN], 1 / 3),
    ("ndcg", 3): ([1, (1 / ln(3)) / (1 / ln(2)), 0, NAN, NAN], (1 + ln(2) / ln(3)) / 3),
    ("ndcg", 5): (
        [1, (1 / ln(3) + 1 / ln(5)) / (1 / ln(2) + 1 / ln(3)), 0, NAN, NAN],
        (1 + (1 / ln(3) + 1 / ln(5)) / (1 / ln(2) + 1 / ln(3))) / 3,
    ),
}


@pytest.fixture(scope="module")
def blog():
    return compute(
        Judgements.from_lists(PREDICTIONS, LABELS), ks=(1, 3, 5), conventions=PRESETS["blog"]()
    )


@pytest.mark.parametrize(("metric", "k"), TABLES)
def test_seed_table(blog, metric, k):
    per_user, mean = TABLES[metric, k]
    column = f"{metric}@{k}"
    np.testing.assert_allclose(blog.per_user[column].to_numpy(), per_user, rtol=1e-12)
    assert blog.mean[column] == pytest.approx(mean, rel=1e-12)


def test_quoted_values(blog):
    assert blog.per_user.loc[2, "ndcg@3"] == pytest.approx(0.6309297536, abs=1e-10)
    assert blog.per_user.loc[2, "ndcg@5"] == pytest.approx(0.6509209298, abs=1e-10)
    assert round(blog.mean["ndcg@3"], 3) == 0.544 and blog.mean["ap@3"] == 0.5


def test_users_without_labels_are_counted_not_dropped(blog):
    counts = blog.counts.loc["ndcg@5"]
    assert counts["users"] == 3 and counts["excluded_no_labels"] == 2
