"""MovieLens-100k from a recbole wheel (built here: no network), implicit feedback, the split."""

from __future__ import annotations

import hashlib
import math
import os
import zipfile

import numpy as np
import pandas as pd
import pytest

from offeval import ColumnError, ConfigurationError
from offeval_ir import DownloadError, movielens

INTER = (
    b"user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
    b"196\t242\t3\t881250949\n186\t302\t3\t891717742\n22\t377\t1\t878887116\n"
)


def fake_recbole_wheel(folder):
    info = f"recbole-{movielens.RECBOLE_VERSION}.dist-info"
    files = {
        movielens.MEMBER: INTER,
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: recbole\nVersion: {movielens.RECBOLE_VERSION}\n"
        ).encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/RECORD": b"",
    }
    name = folder / f"recbole-{movielens.RECBOLE_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(name, "w") as wheel:
        for member, data in files.items():
            wheel.writestr(member, data)


def test_the_ratings_are_read_from_the_wheel_and_then_from_the_cache(tmp_path, monkeypatch):
    links = tmp_path / "links"
    links.mkdir()
    fake_recbole_wheel(links)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setattr(movielens, "SHA256", hashlib.sha256(INTER).hexdigest())
    frame = movielens.load_movielens_100k(home=tmp_path / "cache")
    assert list(frame.columns) == ["user", "item", "rating", "timestamp"]
    assert frame.values.tolist() == [
        [196, 242, 3, 881250949],
        [186, 302, 3, 891717742],
        [22, 377, 1, 878887116],
    ]
    assert all(dtype == np.int64 for dtype in frame.dtypes)
    (links / f"recbole-{movielens.RECBOLE_VERSION}-py3-none-any.whl").unlink()
    assert movielens.load_movielens_100k(home=tmp_path / "cache").equals(frame)
    monkeypatch.setattr(movielens, "SHA256", "0" * 64)  # a changed cache is refused
    with pytest.raises(DownloadError, match="expected 0000"):
        movielens.load_movielens_100k(home=tmp_path / "cache")


def test_implicit_feedback_keeps_liked_items_of_enough_users():
    ratings = pd.DataFrame(
        {
            "user": [1, 2, 3, 1, 2, 3, 4],
            "item": [10, 10, 10, 20, 20, 30, 30],
            "rating": [5, 4, 3, 4, 5, 5, 4],
        }
    )
    kept = movielens.implicit_feedback(ratings, min_users=2)
    # item 10: two users rated it >= 4; item 20: two; item 30: two
    assert kept[["user", "item"]].values.tolist() == [
        [1, 10],
        [2, 10],
        [1, 20],
        [2, 20],
        [3, 30],
        [4, 30],
    ]
    only = movielens.implicit_feedback(ratings.assign(rating=[5, 4, 3, 4, 1, 5, 4]), min_users=2)
    assert sorted(set(only["item"])) == [10, 30]
    with pytest.raises(ColumnError, match="rating"):
        movielens.implicit_feedback(ratings.drop(columns="rating"))


def test_the_split_holds_out_the_floor_of_each_users_share_at_random():
    rng = np.random.default_rng(0)
    counts = {u: int(rng.integers(1, 12)) for u in range(30)}
    frame = pd.DataFrame(
        [(u, i) for u, n in counts.items() for i in range(n)], columns=["user", "item"]
    ).sample(frac=1.0, random_state=1)
    train, test = movielens.split_by_user(frame, test_share=0.3, seed=4)
    assert sorted([*train.index, *test.index]) == sorted(frame.index)
    held = test.groupby("user").size().reindex(list(counts), fill_value=0)
    assert held.to_dict() == {u: math.floor(0.3 * n) for u, n in counts.items()}
    again = movielens.split_by_user(frame, test_share=0.3, seed=4)[1]
    other = movielens.split_by_user(frame, test_share=0.3, seed=5)[1]
    assert again.equals(test) and not other.index.equals(test.index)
    assert list(test.index) == [i for i in frame.index if i in set(test.index)]  # order kept
    with pytest.raises(ConfigurationError, match="test_share"):
        movielens.split_by_user(frame, test_share=1.0)


def test_the_books_tests_give_pip_a_minute_once_and_skip_with_the_reason(monkeypatch, tmp_path):
    """book/conftest.py loads MovieLens-100k before the chapter: an empty cache downloads
    with a 60 s limit (the library's 300 s stalled a suite on a blackholed index for five
    minutes), once; the skip reason is the download's one-line error."""
    import importlib.util
    import subprocess
    from pathlib import Path

    from offeval_ir import public

    spec = importlib.util.spec_from_file_location(
        "book_conftest", Path(__file__).parents[3] / "book" / "conftest.py"
    )
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    monkeypatch.setenv("OFFEVAL_DATA", str(tmp_path))  # an empty cache
    calls = []

    def blackholed(command, *, timeout, **kwargs):
        calls.append(timeout)
        raise subprocess.TimeoutExpired(command[:5], timeout)

    monkeypatch.setattr(public.subprocess, "run", blackholed)
    first, again = conftest.movielens_missing(), conftest.movielens_missing()
    assert calls == [60] and public.DOWNLOAD_SECONDS == 300
    assert first == again and "timed out after 60 seconds" in first and "\n" not in first
