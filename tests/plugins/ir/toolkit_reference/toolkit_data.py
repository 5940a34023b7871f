"""The inputs every recommender toolkit is checked on.

``five_users`` and ``random`` are the ranked lists of ``ir_reference/data.py``
(grades 1-3, users with no labels, empty lists, lists shorter than k);
``tied`` gives scores with many ties, for the toolkits that order a list
themselves; ``movielens`` is 60 MovieLens-100k users with a popularity
model's top 20 (tied counts) and their held-out ratings of 4 and 5
(``movielens_sample.json``, written by ``make_movielens_sample.py``).

Every dataset is ``(scores, labels, items)``: ``scores[u]`` maps each
recommended item to its score (the lists of ``ir_reference`` as
``length - position``, so tie-free), ``labels[u]`` maps held-out items to
grades, ``items`` is the catalogue.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1] / "ir_reference"))
from data import DATASETS as LIST_DATASETS  # noqa: E402
from data import KS  # noqa: E402

__all__ = ["DATASETS", "KS", "ranked", "universe"]


def _scored(predictions):
    return {
        u: {i: float(len(lst) - r) for r, i in enumerate(lst)} for u, lst in predictions.items()
    }


def tied_data(seed: int = 3, users: int = 40, items: int = 20):
    """Lists of 0-14 items scored 1-4 (so most scores are tied), 0-7 held-out items
    graded 1-2 per user (some users have none), and a user whose whole list is one tie."""
    rng = np.random.default_rng(seed)
    scores, labels = {}, {}
    for u in range(1, users + 1):
        chosen = rng.permutation(items)[: rng.integers(0, 15)] + 1
        scores[u] = {int(i): float(rng.integers(1, 5)) for i in chosen}
        held_out = rng.permutation(items)[: rng.integers(0, 8)] + 1
        labels[u] = {int(i): int(rng.integers(1, 3)) for i in held_out}
    scores[users + 1] = {i: 1.0 for i in range(1, 11)}
    labels[users + 1] = {3: 1, 7: 1, 12: 1}
    return scores, labels, list(range(1, items + 1))


def movielens_sample():
    """The MovieLens-100k sample, ids as ints."""
    sample = json.loads(Path(__file__).with_name("movielens_sample.json").read_text())

    def ints(by_user):
        return {int(u): {int(i): v for i, v in d.items()} for u, d in by_user.items()}

    return ints(sample["scores"]), ints(sample["labels"]), sample["items"]


DATASETS = {
    **{name: (_scored(p), labels, items) for name, (p, labels, items) in LIST_DATASETS.items()},
    "tied": tied_data(),
    "movielens": movielens_sample(),
}


def ranked(scores: dict) -> list:
    """A user's items, highest score first, tied items by item id ascending."""
    return sorted(scores, key=lambda i: (-scores[i], i))


def universe(scores: dict, items: list, rest: float | None = None) -> dict:
    """Scores over the whole catalogue: the recommended items keep theirs (shifted above
    everything else), the others get ``rest`` (one tie) or, when None, ``-item`` (ordered
    by item id ascending, below the list)."""
    top = {i: s + 2 * len(items) for i, s in scores.items()}
    return {i: top.get(i, -float(i) if rest is None else rest) for i in items}
