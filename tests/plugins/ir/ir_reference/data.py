"""The data every peer library is checked on: the seed's five users and a random set."""

from __future__ import annotations

import numpy as np

KS = (1, 3, 5, 10)

FIVE_PREDICTIONS = {1: [1, 6, 8], 2: [1, 2, 3, 4, 5], 3: [], 4: [1, 2, 3, 4], 5: []}
FIVE_LABELS = {
    1: {i: 1 for i in (1, 2, 3, 4, 5, 6)},
    2: {2: 1, 4: 1, 6: 1},
    3: {2: 1, 4: 1, 6: 1},
    4: {},
    5: {},
}
FIVE_ITEMS = list(range(1, 9))


def random_data(seed: int = 7, users: int = 40, items: int = 25):
    """Ranked lists of 0-12 items and 0-7 labels graded 1-3 per user (some users empty)."""
    rng = np.random.default_rng(seed)
    predictions, labels = {}, {}
    for u in range(1, users + 1):
        predictions[u] = [int(i) + 1 for i in rng.permutation(items)[: rng.integers(0, 13)]]
        chosen = rng.permutation(items)[: rng.integers(0, 8)]
        labels[u] = {int(i) + 1: int(rng.integers(1, 4)) for i in chosen}
    return predictions, labels, list(range(1, items + 1))


DATASETS = {"five_users": (FIVE_PREDICTIONS, FIVE_LABELS, FIVE_ITEMS), "random": random_data()}


def universe_scores(predictions, items, tie_free: bool):
    """Scores over every candidate item: the list on top in order, the rest below.

    ``tie_free``: the rest ordered by item id (ascending); otherwise all 0 (tied).
    """
    scores = {}
    for u, ranked in predictions.items():
        top = {item: float(2 * len(items) - r) for r, item in enumerate(ranked)}
        scores[u] = {i: top.get(i, -float(i) if tie_free else 0.0) for i in items}
    return scores
