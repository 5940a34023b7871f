"""nbval runs the book's chapters; a chapter whose public data cannot be had is skipped.

``movielens.ipynb`` reads MovieLens-100k from the ``recbole`` wheel on the
package index (downloaded once, then cached: see ``offeval_ir.movielens``).
Before the chapter's first cell, the data are loaded once: from the cache, or
downloaded, with :data:`DOWNLOAD_SECONDS` for pip rather than the library's
five minutes, so that an unreachable index costs the suite a minute at most.
A fresh CI machine with the package index (``.ci/run``) downloads the 2 MB
wheel in seconds and runs the chapter. Where neither the cache nor the
network has it, every cell of that chapter is skipped, with the download's
one-line error as the reason, and the outputs stored in the chapter stand.
Everywhere else the chapter runs and nbval compares its outputs as for any
chapter.
"""

from __future__ import annotations

import pytest

#: Chapters that read MovieLens-100k.
NEEDS_MOVIELENS = frozenset({"movielens.ipynb"})
#: Seconds pip may take to download MovieLens-100k's wheel during the tests.
DOWNLOAD_SECONDS = 60
_missing: dict[str, str | None] = {}


def movielens_missing() -> str | None:
    """Why MovieLens-100k cannot be read here (None when it can), found out once."""
    if "movielens" not in _missing:
        from offeval_ir import DownloadError, public
        from offeval_ir.movielens import load_movielens_100k

        library = public.DOWNLOAD_SECONDS
        public.DOWNLOAD_SECONDS = min(library, DOWNLOAD_SECONDS)
        try:
            load_movielens_100k()
            _missing["movielens"] = None
        except DownloadError as error:
            _missing["movielens"] = str(error)
        finally:
            public.DOWNLOAD_SECONDS = library
    return _missing["movielens"]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip the cells of a chapter whose data cannot be had, saying why."""
    if item.path.name in NEEDS_MOVIELENS:
        missing = movielens_missing()
        if missing:
            pytest.skip(f"MovieLens-100k is not available ({missing}); the stored outputs stand")
