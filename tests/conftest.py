"""Shared by every test: the ``slow`` marker and a two-slot bandit log built with numpy.

``pytest -m "not slow"`` is the quick run for daily work: it leaves out the
tests marked slow and the book's notebooks (nbval items under ``book/``);
``pytest`` alone runs everything.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from oracles import synthetic_log

BOOK = Path(__file__).resolve().parents[1] / "book"


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``slow`` marker (the suite runs with --strict-markers)."""
    config.addinivalue_line(
        "markers", "slow: takes seconds; left out by the daily run pytest -m 'not slow'"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The book's notebooks (executed cell by cell by nbval) are slow."""
    for item in items:
        if BOOK in item.path.parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def bandit():
    """A two-slot bandit log with candidates, its target policy and true value."""
    return synthetic_log(20_000, seed=3)
