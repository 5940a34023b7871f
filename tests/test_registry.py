"""The plugin registry: discovery, isolation of broken plugins, clear errors."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pluggy
import pytest

import offeval.registry as registry_module
from offeval import RegistryError, hookimpl
from offeval.registry import Registry, parse_spec
from offeval_ncis import NCIS


def test_builtin_plugins_come_through_entry_points():
    reg = Registry()
    assert {"ncis", "simulation"} <= set(reg.plugins)
    assert {"is", "cis", "ncis", "piecewise_ncis", "pointwise_ncis", "beta_ips"} <= set(
        reg.names("estimator")
    )
    assert reg.get("estimator", "ncis").plugin == "ncis"
    assert reg.get("environment", "default").plugin == "simulation"
    assert reg.failures == []
    reg.check_pending()


def test_create_and_spec_strings():
    reg = Registry()
    est = reg.create_from_spec("estimator", "ncis:cap=inf")
    assert isinstance(est, NCIS) and est.cap == float("inf")
    assert parse_spec("x:a=1, b=2.5,c=true,d=none,e=word") == (
        "x",
        {"a": 1, "b": 2.5, "c": True, "d": None, "e": "word"},
    )
    with pytest.raises(RegistryError, match="no estimator named 'snips'; registered: .*ncis"):
        reg.create("estimator", "snips")
    with pytest.raises(RegistryError, match="cannot configure estimator 'ncis'"):
        reg.create("estimator", "ncis", capp=3)
    with pytest.raises(RegistryError, match="not key=value"):
        parse_spec("ncis:cap")
    with pytest.raises(RegistryError, match="unknown component kind"):
        reg.names("metric")


class GoodPlugin:
    @hookimpl
    def register_estimators(self, register):
        register("my_ncis", NCIS)


class ClashingPlugin:
    @hookimpl
    def register_estimators(self, register):
        register("ncis", NCIS)
        register("other_ncis", NCIS)


class RaisingPlugin:
    @hookimpl
    def register_estimators(self, register):
        register("half_done", NCIS)
        raise RuntimeError("boom")

    @hookimpl
    def register_examination_models(self, register):
        register("flat", lambda: lambda ranks: ranks * 0 + 1.0)


def test_plugins_added_in_tests_and_removed():
    reg = Registry()
    reg.add_plugin(GoodPlugin(), "good")
    assert reg.get("estimator", "my_ncis").plugin == "good"
    reg.remove_plugin("good")
    assert "my_ncis" not in reg.names("estimator")


def test_name_clash_is_reported_and_the_rest_registered():
    reg = Registry()
    reg.add_plugin(ClashingPlugin(), "clashing")
    assert reg.get("estimator", "ncis").plugin == "ncis"
    assert reg.get("estimator", "other_ncis").plugin == "clashing"
    (failure,) = reg.failures
    assert (
        failure.plugin == "clashing" and "clashes with the one from plugin 'ncis'" in failure.reason
    )
    with pytest.raises(RegistryError, match="clashes"):
        reg.register("estimator", "is", NCIS)


def test_a_raising_hook_is_reported_without_stopping_other_hooks():
    reg = Registry()
    reg.add_plugin(RaisingPlugin(), "raising")
    assert "half_done" not in reg.names("estimator")
    assert "flat" in reg.names("examination")
    (failure,) = reg.failures
    assert (failure.plugin, failure.stage) == ("raising", "register_estimators")
    assert "RuntimeError: boom" in failure.reason


def test_broken_plugin_import_is_reported_and_others_load(monkeypatch):
    real = list(registry_module.entry_points(group="offeval"))
    broken = EntryPoint("broken", "offeval_does_not_exist_xyz", "offeval")
    monkeypatch.setattr(registry_module, "entry_points", lambda group: [*real, broken])
    reg = Registry()
    assert "ncis" in reg.names("estimator")
    (failure,) = reg.failures
    assert failure.plugin == "broken" and failure.stage == "import"
    assert "ModuleNotFoundError" in failure.reason


def test_allow_list_environment_variable(monkeypatch):
    monkeypatch.setenv("OFFEVAL_PLUGINS", "ncis")
    reg = Registry()
    assert reg.plugins == ["ncis"] and reg.names("environment") == []


def test_invalid_components_are_rejected():
    reg = Registry()
    with pytest.raises(RegistryError, match="not a valid name"):
        reg.register("estimator", "has space", NCIS)
    with pytest.raises(RegistryError, match="lacks"):
        reg.register("estimator", "notone", dict)
    with pytest.raises(RegistryError, match="not callable"):
        reg.register("examination", "x", 3)


def test_check_pending_catches_a_misspelled_hook():
    class Typo:
        @hookimpl
        def register_estimator(self, register):  # singular: no such hook
            register("x", NCIS)

    reg = Registry()
    reg.add_plugin(Typo(), "typo")
    with pytest.raises(pluggy.PluginValidationError, match="register_estimator"):
        reg.check_pending()


def test_every_hook_is_a_documented_component_kind():
    import inspect

    from offeval import hookspecs
    from offeval.registry import KINDS

    specs = {
        name
        for name, _ in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("register_")
    }
    assert specs == set(KINDS.values())
    for name in specs:
        function = getattr(hookspecs, name)
        assert list(inspect.signature(function).parameters) == ["register"], name
        assert "register(name," in inspect.getdoc(function), f"{name} must document its callback"


def test_ir_plugin_registers_presets_and_the_metrics_command():
    reg = Registry()
    assert {
        "blog",
        "trec_eval",
        "ranx",
        "sklearn",
        "torchmetrics",
        "spark_mllib",
        "recbole",
        "recommenders",
    } <= set(reg.names("conventions"))
    assert reg.get("command", "metrics").plugin == "ir"
