"""``offeval.testing.declared_plugins``: the plugins named and all they build on, followed
through their REQUIRES, on installed plugins the test makes up."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import offeval.testing as testing
from offeval import RegistryError
from offeval.testing import declared_plugins


@dataclass
class FakeEntryPoint:
    """An installed plugin: its entry-point name and the object its module would give."""

    name: str
    plugin: object

    def load(self) -> object:
        return self.plugin


class Plugin:
    """A plugin building on the plugins it is given."""

    def __init__(self, *requires):
        self.REQUIRES = requires


@pytest.fixture
def installed(monkeypatch):
    """base; user and other on base; chain on user and other (a diamond); odd's REQUIRES a
    string; lost on nosuch; loner declaring nothing."""
    plugins = {
        "base": Plugin(),
        "user": Plugin("base"),
        "other": Plugin("base"),
        "chain": Plugin("user", "other"),
        "odd": Plugin(),
        "lost": Plugin("nosuch"),
        "loner": object(),
    }
    plugins["odd"].REQUIRES = "base"
    eps = [FakeEntryPoint(name, plugin) for name, plugin in plugins.items()]
    monkeypatch.setattr(testing, "entry_points", lambda group: eps if group == "offeval" else [])


def test_a_plugin_comes_with_all_it_builds_on_sorted(installed):
    assert declared_plugins("base") == ["base"]
    assert declared_plugins("loner") == ["loner"]
    assert declared_plugins("user") == ["base", "user"]
    assert declared_plugins("chain") == ["base", "chain", "other", "user"]


def test_several_plugins_give_the_union_of_what_they_build_on(installed):
    assert declared_plugins("user", "loner", "user") == ["base", "loner", "user"]
    assert declared_plugins() == []


def test_a_name_no_installed_plugin_has_is_an_error_naming_what_is_installed(installed):
    installed_names = "base, chain, loner, lost, odd, other, user"
    with pytest.raises(RegistryError) as given:
        declared_plugins("user", "nosuch")
    assert str(given.value) == (
        f"no plugin named 'nosuch' is installed (installed: {installed_names})"
    )
    with pytest.raises(RegistryError) as required:
        declared_plugins("lost")
    assert str(required.value) == (
        "plugin 'lost' builds on 'nosuch', but no plugin named 'nosuch' is installed "
        f"(installed: {installed_names})"
    )


def test_a_requires_that_is_not_a_tuple_of_names_is_an_error(installed):
    with pytest.raises(RegistryError, match=r"plugin 'odd': REQUIRES must be a tuple of plugin"):
        declared_plugins("odd")


def test_the_core_alone_has_no_plugin_installed_to_declare(monkeypatch):
    monkeypatch.setattr(testing, "entry_points", lambda group: [])
    with pytest.raises(RegistryError, match=r"\(installed: none\)"):
        declared_plugins("importance")
