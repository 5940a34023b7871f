"""Write ``movielens_sample.json``: MovieLens-100k users and a popularity model's lists.

Run with offeval installed (it reads MovieLens-100k from RecBole's wheel)::

    python tests/plugins/ir/toolkit_reference/make_movielens_sample.py

The ratings of 4 and 5 (items rated so by at least 5 users), half of each
user's held out at random (seed 0), as ``offeval_ir.movielens`` splits them;
for the first ``USERS`` users, the 20 items most often liked in train that the
user has not liked in train, scored by that count (so tied scores are many),
and the held-out items graded by their rating.
"""

from __future__ import annotations

import json
from pathlib import Path

from offeval_ir import movielens

USERS = 60
LENGTH = 20


def main() -> None:
    liked = movielens.implicit_feedback(movielens.load_movielens_100k())
    train, test = movielens.split_by_user(liked, test_share=0.5, seed=0)
    popularity = train.groupby("item")["user"].nunique().sort_values(ascending=False)
    users = sorted(liked["user"].unique())[:USERS]
    seen = train.groupby("user")["item"].agg(set)
    scores, labels = {}, {}
    for u in users:
        unseen = popularity[~popularity.index.isin(seen.get(u, set()))]
        top = unseen.sort_values(ascending=False, kind="stable").head(LENGTH)
        scores[int(u)] = {int(i): float(c) for i, c in top.items()}
        held = test[test["user"] == u]
        labels[int(u)] = {int(i): int(r) for i, r in zip(held["item"], held["rating"], strict=True)}
    items = sorted(int(i) for i in liked["item"].unique())
    sample = {"scores": scores, "labels": labels, "items": items}
    path = Path(__file__).with_name("movielens_sample.json")
    path.write_text(json.dumps(sample, separators=(",", ":")) + "\n")
    print("wrote", path, path.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
