"""The lazy names of the package: ``offeval.X`` is imported on first use, as if eagerly."""

from __future__ import annotations

from importlib import import_module

import pytest

import offeval


def test_dir_lists_each_public_name_once_and_no_helper_of_the_package():
    offeval.evaluate  # noqa: B018 - imported now: a global of the package from here on
    names = dir(offeval)
    assert sorted(set(names)) == names
    assert set(offeval.__all__) <= set(names)
    assert {"__version__", "engine"} <= set(names)  # a dunder and a loaded subpackage
    assert not {"Any", "TYPE_CHECKING", "annotations", "import_module"} & set(names)


def test_each_public_name_is_the_object_of_its_module():
    for module, names in offeval._WHERE.items():
        for name in names:
            assert getattr(offeval, name) is getattr(import_module(module), name)


def test_a_misspelled_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="module 'offeval' has no attribute 'evalaute'"):
        offeval.evalaute  # noqa: B018


def test_star_import_gives_exactly_the_public_names():
    namespace: dict = {}
    exec("from offeval import *", namespace)
    assert sorted(set(namespace) - {"__builtins__"}) == sorted(offeval.__all__)
