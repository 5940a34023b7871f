"""A plugin that builds on another declares it (REQUIRES); the registry reports a missing one."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from reference_estimators import ReferencePlugin

import offeval.registry.manager as manager
from offeval import Registry, hookimpl, hookspec


class Base:
    """A plugin others build on: it brings a component kind and one component."""

    @hookimpl
    def register_hookspecs(self, register):
        register(BaseSpecs)

    @hookimpl
    def register_component_kinds(self, register):
        register("scorer", "register_scorers")

    @hookimpl
    def register_scorers(self, register):
        register("flat", lambda: 1.0)


class BaseSpecs:
    """The hook the base plugin brings."""

    @hookspec
    def register_scorers(self, register):
        """Register scorers."""


class User:
    """Builds on ``base``: registers a scorer of the kind that plugin brings."""

    REQUIRES = ("base",)

    @hookimpl
    def register_scorers(self, register):
        register("popular", lambda: 2.0)


def failures(registry: Registry, plugin: str) -> list[manager.PluginFailure]:
    return [f for f in registry.failures if f.plugin == plugin]


def test_a_plugin_whose_dependency_is_not_registered_stays_out_with_the_reason():
    registry = Registry(entry_points=False)
    registry.add_plugin(User(), "user")
    assert "user" not in registry.plugins
    [failure] = failures(registry, "user")
    assert failure.stage == "requires"
    assert failure.reason == (
        "builds on plugin 'base', which is not loaded: "
        "register it first (add_plugin(..., name='base'))"
    )


def test_a_plugin_left_out_for_its_dependency_loads_once_the_dependency_is_added():
    registry = Registry(entry_points=False)
    registry.add_plugin(User(), "user")
    registry.add_plugin(Base(), "base")
    registry.add_plugin(User(), "user")
    assert registry.names("scorer") == ["flat", "popular"]


def test_a_plugin_whose_dependency_is_registered_first_loads():
    registry = Registry(entry_points=False)
    registry.add_plugin(Base(), "base")
    registry.add_plugin(User(), "user")
    assert {"base", "user"} <= set(registry.plugins)
    assert registry.names("scorer") == ["flat", "popular"]
    assert registry.failures == []


@pytest.mark.parametrize("requires", ["base", ("base", 3), ("",), None])
def test_requires_must_be_a_tuple_of_plugin_names(requires):
    class Odd:
        REQUIRES = requires

    registry = Registry(entry_points=False)
    registry.add_plugin(Base(), "base")
    registry.add_plugin(Odd(), "odd")
    assert "odd" not in registry.plugins
    [failure] = failures(registry, "odd")
    assert failure.reason == f"REQUIRES must be a tuple of plugin names, got {requires!r}"


@dataclass
class FakeEntryPoint:
    """An installed plugin: its entry-point name and the object its module would give."""

    name: str
    plugin: object
    dist = None

    def load(self) -> object:
        return self.plugin


@pytest.fixture
def installed(monkeypatch):
    """Installed plugins: base, user (needs base), chain (needs user), lost (needs nosuch)."""

    class Chain:
        REQUIRES = ["user"]

    class Lost:
        REQUIRES = ("nosuch",)

    eps = [
        FakeEntryPoint("base", Base()),
        FakeEntryPoint("user", User()),
        FakeEntryPoint("chain", Chain()),
        FakeEntryPoint("lost", Lost()),
        FakeEntryPoint("reference", ReferencePlugin()),
    ]
    monkeypatch.setattr(manager, "entry_points", lambda group: eps if group == "offeval" else [])


def test_the_allow_list_leaving_the_dependency_out_says_to_add_it(installed, monkeypatch):
    monkeypatch.setenv(manager.ALLOW_ENV, "user,chain")
    registry = Registry()
    assert not {"user", "chain"} & set(registry.plugins)
    assert [(f.plugin, f.reason) for f in registry.failures] == [
        ("user", "builds on plugin 'base', which is not loaded: add base to OFFEVAL_PLUGINS"),
        (
            "chain",
            "builds on plugin 'user', which is not loaded: it failed to load (see its own failure)",
        ),
    ]


def test_a_dependency_nobody_installed_is_to_be_installed(installed, monkeypatch):
    monkeypatch.setenv(manager.ALLOW_ENV, "lost,reference")
    registry = Registry()
    assert "lost" not in registry.plugins and "reference" in registry.plugins
    [failure] = registry.failures
    assert failure.plugin == "lost"
    assert failure.reason == (
        "builds on plugin 'nosuch', which is not loaded: install the package that provides "
        "it (an 'offeval' entry point named 'nosuch')"
    )


def test_every_dependency_loaded_every_plugin_loads(installed, monkeypatch):
    monkeypatch.delenv(manager.ALLOW_ENV, raising=False)
    registry = Registry()
    assert {"base", "user", "chain", "reference"} <= set(registry.plugins)
    assert [f.plugin for f in registry.failures] == ["lost"]
    assert registry.names("scorer") == ["flat", "popular"]


def test_an_installed_plugin_named_offeval_neither_blocks_nor_replaces_the_core(monkeypatch):
    eps = [FakeEntryPoint("offeval", Base()), FakeEntryPoint("reference", ReferencePlugin())]
    monkeypatch.setattr(manager, "entry_points", lambda group: eps)
    monkeypatch.setenv(manager.ALLOW_ENV, "reference")
    registry = Registry()
    assert registry.plugins == ["offeval", "reference"] and "estimator" in registry.kinds
    [failure] = registry.failures
    assert failure.plugin == "offeval" and "taken by the built-in plugin" in failure.reason
