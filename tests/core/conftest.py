"""Core tests run without any plugin: importing an ``offeval_*`` package fails in them.

Every core test module runs with the plugins hidden: the ``offeval_*``
modules already imported are taken out of ``sys.modules`` (put back after),
a meta path finder refuses to import any of them,
``OFFEVAL_PLUGINS`` is an empty allow-list (the registry, subprocesses
included, loads no plugin) and the process-wide registry is reset before and
after. A core test that needs "some estimator" uses
:mod:`reference_estimators`; a test of the core together with plugins
belongs under ``tests/plugins``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from cli_checks import USER_NAMES, write_csv
from oracles import synthetic_log
from reference_estimators import ReferencePlugin

import offeval.registry.manager as manager


def is_plugin_module(name: str) -> bool:
    """Whether a module name belongs to an ``offeval_*`` package (a plugin)."""
    return name.split(".", 1)[0].startswith("offeval_")


class NoPlugins:
    """A meta path finder that refuses every ``offeval_*`` module."""

    def find_spec(self, name, path=None, target=None):
        """Refuse a plugin's module; leave every other module to the other finders."""
        if is_plugin_module(name):
            raise ModuleNotFoundError(
                f"core tests run without plugins, but this one imports {name!r}: "
                "use tests/core/reference_estimators.py or move the test under tests/plugins",
                name=name,
            )
        return None


@contextmanager
def hidden_plugins() -> Iterator[None]:
    """Within the block, no plugin can be imported or loaded (see the module docstring)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in sys.modules if is_plugin_module(n)]:
            patch.delitem(sys.modules, name)  # imported again: the finder refuses it
        patch.setenv(manager.ALLOW_ENV, "")
        finder = NoPlugins()  # in the list itself: a finder added meanwhile stays (dask adds one)
        sys.meta_path.insert(0, finder)
        manager.reset_registry()
        try:
            yield
        finally:
            sys.meta_path.remove(finder)
            manager.reset_registry()


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """A core test module is imported with the plugins hidden: a plugin import fails there."""
    if isinstance(collector, pytest.Module):
        with hidden_plugins():
            return (yield)
    return (yield)


@pytest.fixture(scope="module", autouse=True)
def no_plugins() -> Iterator[None]:
    """The tests of a core module run with the plugins hidden."""
    with hidden_plugins():
        yield


@pytest.fixture()
def reference_registry(monkeypatch) -> manager.Registry:
    """The process-wide registry holding the core and the reference estimators only."""
    registry = manager.Registry(entry_points=False)
    registry.add_plugin(ReferencePlugin(), "reference")
    monkeypatch.setattr(manager, "_default", registry)
    return registry


@pytest.fixture(scope="session")
def small_bandit():
    """A small two-slot bandit log (2,000 trajectories), its target policy and true value."""
    return synthetic_log(2_000, seed=5)


@pytest.fixture()
def user_log(tmp_path, small_bandit):
    """A CSV log as a user has one: session, stream, mu and pi_p01..pi_p03 columns.

    The two-slot bandit log of :func:`oracles.synthetic_log`: pi_p01 is its
    target, pi_p02 the logging policy, pi_p03 uniform over the four items.
    """
    log, _, _ = small_bandit
    frame = log.frame[["trajectory", "item", "position", "reward", "propensity"]].rename(
        columns=USER_NAMES
    )
    frame["pi_p01"] = log.frame["target"].to_numpy()
    frame["pi_p02"] = frame["mu"]
    frame["pi_p03"] = 0.25
    return write_csv(frame, tmp_path / "log.csv")
