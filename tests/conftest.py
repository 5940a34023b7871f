"""Shared by every test: the ``slow`` marker, a two-slot bandit log built with numpy,
``no_reading`` (a command must find its mistake before it reads the log) and ``notebook``.

``pytest -m "not slow"`` is the quick run for daily work: it leaves out the
tests marked slow and the book's notebooks (nbval items under ``book/``);
``pytest`` alone runs everything.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from oracles import synthetic_log

import offeval.cli.evaluate_inputs as evaluate_inputs
import offeval.cli.evaluate_run as evaluate_run
import offeval.data.files as files_module
import offeval.data.log as log_module

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


@pytest.fixture()
def no_reading(monkeypatch):
    """Reading the log (or its header) fails the test: the mistake must be found before."""

    def fail(*args, **kwargs):
        pytest.fail("the log was read")

    # each name where it is looked up (a name gone from a module fails here, not silently)
    for module, names in (
        (evaluate_inputs, ("columns_of",)),
        (evaluate_run, ("stream_parquet",)),
        (files_module, ("read_table", "columns_of")),
        (log_module, ("read_table", "stream_parquet")),
    ):
        for name in names:
            monkeypatch.setattr(module, name, fail)
    monkeypatch.setattr(log_module.InteractionLog, "from_file", fail)


class ZMQInteractiveShell:
    """Stands in for the shell of a Jupyter kernel (only its class name is looked at)."""


@pytest.fixture()
def notebook(monkeypatch):
    """The code runs as in a Jupyter notebook (IPython's ``get_ipython`` gives a kernel's shell)."""
    fake = types.ModuleType("IPython")
    fake.get_ipython = ZMQInteractiveShell
    monkeypatch.setitem(sys.modules, "IPython", fake)
