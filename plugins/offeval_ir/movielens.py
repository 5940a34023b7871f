"""MovieLens-100k (Harper and Konstan, 2015), read from the ``recbole`` wheel on the package index.

The ``recbole`` wheel ships MovieLens-100k's ratings as
``recbole/dataset_example/ml-100k/ml-100k.inter`` (100,000 ratings of 1,682
movies by 943 users, tab-separated). :func:`load_movielens_100k` fetches that
one file with :func:`offeval.plugin.package_file` (``pip download --no-deps``;
recbole is not installed) and caches it: only the first call needs a network.
The data's terms are GroupLens's (https://grouplens.org/datasets/movielens/100k/):
for research use, cite Harper and Konstan (2015), do not redistribute.

:func:`implicit_feedback` turns ratings into interactions as RecPack's
MovieLens loaders do by default (after Liang et al., 2018): ratings of 4 and
5 are interactions, and movies need at least 5 users; :func:`split_by_user`
holds out a share of each user's interactions at random, as the evaluation
of Jeunen, Potapov and Ustimenko (2024, Appendix A) holds out 50%.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from offeval import ColumnError
from offeval.plugin import check_number, check_whole
from offeval_ir.public import package_file

#: The recbole release whose wheel is read (pinned: the data never change under a cache).
RECBOLE_VERSION = "1.2.1"
#: The ratings file inside the wheel.
MEMBER = "recbole/dataset_example/ml-100k/ml-100k.inter"
#: Its sha256, checked on download and on every read of the cache.
SHA256 = "4edb74e2a81178c2ba9ff381495f754f996c4aea351b1272ca36b43da0935eff"
#: The columns of :func:`load_movielens_100k`'s frame.
COLUMNS = ("user", "item", "rating", "timestamp")


def load_movielens_100k(*, home: str | os.PathLike | None = None) -> pd.DataFrame:
    """MovieLens-100k's ratings: one row per rating, columns ``user``, ``item``,
    ``rating`` (1 to 5) and ``timestamp`` (seconds since 1970), all integers, in
    the file's order.

    The first call downloads the ``recbole`` wheel (2 MB) and caches the file
    (``home``, else ``$OFFEVAL_DATA``, else the user's cache folder: see
    :func:`offeval.plugin.package_file`); without a network and without the
    cached file it raises :class:`offeval.plugin.DownloadError`, saying where
    to put the file.
    """
    path = package_file("recbole", MEMBER, version=RECBOLE_VERSION, sha256=SHA256, home=home)
    return read_inter(path)


def read_inter(path: str | os.PathLike) -> pd.DataFrame:
    """A RecBole ``.inter`` file of ratings (header ``user_id:token item_id:token
    rating:float timestamp:float``) as the frame :func:`load_movielens_100k` returns."""
    frame = pd.read_csv(path, sep="\t", header=0, names=list(COLUMNS), dtype="int64")
    return frame


def implicit_feedback(
    ratings: pd.DataFrame, *, min_rating: float = 4, min_users: int = 5
) -> pd.DataFrame:
    """The ratings of at least ``min_rating``, of items that at least ``min_users`` users
    rated so (RecPack's default for MovieLens); columns ``user`` and ``item``, and the
    others kept."""
    min_rating = check_number(min_rating, "min_rating")
    min_users = check_whole(min_users, "min_users", low=1)
    for column in ("user", "item", "rating"):
        if column not in ratings:
            raise ColumnError(column, "implicit_feedback needs this column of the ratings")
    liked = ratings[ratings["rating"] >= min_rating]
    users_per_item = liked.groupby("item")["user"].transform("nunique")
    return liked[users_per_item >= min_users].reset_index(drop=True)


def split_by_user(
    interactions: pd.DataFrame, *, test_share: float = 0.5, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, test): ``floor(test_share * n)`` of each user's n interactions, drawn at
    random (``seed``), are held out in test; the rest are train. A user with one
    interaction (at a half) has none held out. Rows keep their order and index.
    """
    test_share = check_number(test_share, "test_share", low=0, high=1, high_open=True)
    seed = check_whole(seed, "seed", low=0)
    if "user" not in interactions:
        raise ColumnError("user", "split_by_user holds out a share of each user's rows")
    rng = np.random.default_rng(seed)
    key = pd.Series(rng.random(len(interactions)), index=interactions.index)
    users = interactions["user"]
    place = key.groupby(users).rank(method="first")  # 1..n in a random order per user
    count = users.map(users.value_counts())
    held = place <= np.floor(test_share * count)
    return interactions[~held], interactions[held]
