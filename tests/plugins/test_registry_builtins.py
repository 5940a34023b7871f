"""The plugin registry with the built-in plugins: discovery, plugin-brought hooks and kinds,
trust, isolation, errors (the core's own registry tests are in tests/core/test_registry.py)."""

from __future__ import annotations

import textwrap
from importlib.metadata import EntryPoint

import pytest

import offeval.registry.manager as registry_module
from offeval import OffevalError, RegistryError, hookimpl, hookspec
from offeval.cli.shell import main
from offeval.registry.manager import Registry
from offeval.specs import parse_spec
from offeval_importance import NCIS
from offeval_ranking import DCG


def test_builtin_plugins_come_through_entry_points():
    reg = Registry()
    assert reg.plugins[:1] == ["offeval"]  # the core is a plugin of itself
    builtins = {"importance", "simulation", "ranking", "decision", "disagreement", "ir"}
    assert builtins <= set(reg.plugins)
    assert all(reg.is_builtin(p) for p in reg.plugins)
    assert {"is", "cis", "ncis", "piecewise_ncis", "pointwise_ncis", "beta_ips"} <= set(
        reg.names("estimator")
    )
    assert reg.get("estimator", "ncis").plugin == "importance"
    assert reg.get("environment", "default").plugin == "simulation"
    assert reg.failures == []
    reg.check_pending()


def test_kinds_are_declared_by_the_plugins_that_bring_them():
    reg = Registry()
    owners = {name: kind.plugin for name, kind in reg.kinds.items()}
    assert owners == {
        "estimator": "offeval",
        "environment": "offeval",
        "command": "offeval",
        "report": "offeval",
        "reward_model": "offeval",
        "interval": "offeval",
        "policy": "offeval",
        "examination": "ranking",
        "conventions": "ir",
        "measure": "ir",
    }
    assert {"logarithmic", "exponential", "cutoff", "pbm"} <= set(reg.names("examination"))
    assert {"blog", "trec_eval", "ranx", "sklearn"} <= set(reg.names("conventions"))
    assert {"ndcg", "ap", "rr", "bpref"} <= set(reg.names("measure"))
    assert reg.get("command", "metrics").plugin == "ir"
    with pytest.raises(RegistryError, match="unknown component kind 'metric'"):
        reg.names("metric")


def test_create_and_spec_strings():
    reg = Registry()
    est = reg.create_from_spec("estimator", "ncis:cap=inf")
    assert isinstance(est, NCIS) and est.cap == float("inf")
    assert parse_spec("x:a=1, b=2.5,c=true,d=none,e=word") == (
        "x",
        {"a": 1, "b": 2.5, "c": True, "d": None, "e": "word"},
    )
    assert parse_spec("x(m=f(a=1,b=[1, 2]),n=2)") == ("x", {"m": "f(a=1,b=[1, 2])", "n": 2})
    with pytest.raises(RegistryError, match="no estimator named 'nope'; registered: .*ncis"):
        reg.create("estimator", "nope")
    with pytest.raises(
        RegistryError, match=r"no parameter capp \(did you mean cap\?\); its parameters: cap"
    ):
        reg.create("estimator", "ncis", capp=3)
    with pytest.raises(RegistryError, match="not key=value"):
        parse_spec("ncis:cap")
    with pytest.raises(RegistryError, match="'cap' is given twice"):
        parse_spec("ncis:cap=1,cap=2")
    with pytest.raises(RegistryError, match="unbalanced brackets"):
        parse_spec("dcg:examination=exponential(gamma=0.7")


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
        register("flat", Flat)


class Flat:
    """e(i) = 1 at every rank."""

    spec = "flat"

    def __call__(self, ranks):
        return ranks * 0 + 1.0


def test_plugins_added_in_tests_and_removed():
    reg = Registry()
    reg.add_plugin(GoodPlugin(), "good")
    assert reg.get("estimator", "my_ncis").plugin == "good" and not reg.is_builtin("good")
    reg.remove_plugin("good")
    assert "my_ncis" not in reg.names("estimator")
    with pytest.raises(RegistryError, match="already registered"):
        reg.add_plugin(GoodPlugin(), "importance")


def test_a_third_party_cannot_take_a_builtin_name():
    reg = Registry()
    reg.add_plugin(ClashingPlugin(), "clashing")
    assert reg.get("estimator", "ncis").plugin == "importance"
    assert reg.get("estimator", "other_ncis").plugin == "clashing"
    (failure,) = reg.failures
    assert failure.plugin == "clashing"
    assert "clashes with the one from plugin 'importance' (built-in), which keeps the name" in (
        failure.reason
    )
    with pytest.raises(RegistryError, match="clashes"):
        reg.register("estimator", "is", NCIS)


@pytest.fixture()
def third_party(tmp_path, monkeypatch):
    """Install fake third-party entry points (modules written to a temporary folder)."""

    def install(**modules: str) -> None:
        for name, code in modules.items():
            (tmp_path / f"{name}.py").write_text(textwrap.dedent(code))
        monkeypatch.syspath_prepend(str(tmp_path))
        real = list(registry_module.entry_points(group="offeval"))
        fake = [EntryPoint(name.removeprefix("tp_"), name, "offeval") for name in modules]
        monkeypatch.setattr(registry_module, "entry_points", lambda group: [*fake, *real])

    return install


def test_a_third_party_found_first_still_cannot_take_a_builtin_name(third_party):
    third_party(
        tp_aaa="""
        from offeval import hookimpl
        from offeval_importance import IS

        @hookimpl
        def register_estimators(register):
            register("ncis", IS)
            register("aaa_is", IS)
        """
    )
    reg = Registry()
    assert reg.plugins[-1] == "aaa"  # loaded after the built-ins despite sorting first
    assert reg.get("estimator", "ncis").plugin == "importance"
    assert reg.get("estimator", "aaa_is").plugin == "aaa"
    (failure,) = reg.failures
    assert failure.plugin == "aaa" and "'ncis'" in failure.reason


def test_a_third_party_plugin_named_like_a_builtin_is_reported(third_party):
    third_party(tp_importance="x = 1\n")
    reg = Registry()
    assert reg.get("estimator", "ncis").plugin == "importance"
    (failure,) = reg.failures
    assert failure.plugin == "importance" and "taken by the built-in plugin" in failure.reason


def test_a_misspelled_hook_is_reported_at_load_and_by_offeval_plugins(third_party, capsys):
    third_party(
        tp_typo="""
        from offeval import hookimpl
        from offeval_importance import IS

        @hookimpl
        def register_estimator(register):  # singular: no such hook
            register("typo_is", IS)
        """
    )
    reg = Registry()
    (failure,) = reg.failures
    assert (failure.plugin, failure.stage) == ("typo", "register_estimator")
    assert "no plugin specifies" in failure.reason
    with pytest.raises(RegistryError, match="typo"):
        reg.check_pending()
    monkey_default = Registry()
    registry_module._default = monkey_default
    try:
        assert main(["plugins"]) == 0
    finally:
        registry_module.reset_registry()
    assert "typo (register_estimator): implements a hook that no plugin specifies" in (
        capsys.readouterr().out
    )


def test_a_hook_implementation_with_unknown_arguments_is_reported():
    class WrongArguments:
        @hookimpl
        def register_estimators(self, registrar):
            registrar("x", NCIS)

    reg = Registry()
    reg.add_plugin(WrongArguments(), "wrong")
    assert "wrong" not in reg.plugins
    (failure,) = reg.failures
    assert failure.plugin == "wrong" and "registrar" in failure.reason


class ScorerSpecs:
    @hookspec
    def register_scorers(self, register):
        """register(name, factory)."""


class BringsAKind:
    @hookimpl
    def register_hookspecs(self, register):
        register(ScorerSpecs)

    @hookimpl
    def register_component_kinds(self, register):
        register("scorer", "register_scorers", required=("score",))


class UsesTheKind:
    @hookimpl
    def register_scorers(self, register):
        register("good_scorer", type("Good", (), {"score": 1}))
        register("bad_scorer", type("Bad", (), {}))


def test_plugins_bring_hooks_and_kinds_that_other_plugins_use():
    reg = Registry()
    reg.add_plugin(UsesTheKind(), "user")  # before the kind exists: pending
    reg.add_plugin(BringsAKind(), "bringer")
    assert reg.kinds["scorer"].plugin == "bringer"
    assert reg.names("scorer") == ["good_scorer"]
    assert reg.get("scorer", "good_scorer").plugin == "user"
    reasons = [f.reason for f in reg.failures if f.plugin == "user"]
    assert any("lacks ['score']" in r for r in reasons)


def test_a_kind_whose_hook_has_no_specification_is_reported():
    class Dangling:
        @hookimpl
        def register_component_kinds(self, register):
            register("widget", "register_widgets")

    reg = Registry()
    reg.add_plugin(Dangling(), "dangling")
    assert "widget" not in reg.kinds
    (failure,) = reg.failures
    assert failure.plugin == "dangling" and "has no specification" in failure.reason


def test_a_raising_hook_is_reported_without_stopping_other_hooks():
    reg = Registry()
    reg.add_plugin(RaisingPlugin(), "raising")
    assert "half_done" not in reg.names("estimator")
    assert "flat" in reg.names("examination")
    (failure,) = reg.failures
    assert (failure.plugin, failure.stage) == ("raising", "register_estimators")
    assert "RuntimeError: boom" in failure.reason


def test_components_resolve_names_through_the_registry_that_built_them():
    reg = Registry()
    reg.add_plugin(RaisingPlugin(), "raising")  # brings the examination model "flat"
    dcg = reg.create("estimator", "dcg", examination="flat")
    assert dcg._model.spec == "flat"
    with pytest.raises(RegistryError, match="no examination named 'flat'"):
        DCG(examination="flat")  # built outside it: the process-wide registry has no "flat"


def test_demo_configurations_come_from_the_plugins_and_failures_are_isolated():
    class Broken:
        @hookimpl
        def register_demo_estimators(self, register):
            raise RuntimeError("demo boom")

    reg = Registry()
    reg.add_plugin(Broken(), "broken")
    configured = reg.call("register_demo_estimators", environment=None)
    plugins = {plugin for plugin, _ in configured}
    assert {"importance", "ranking", "disagreement"} <= plugins and "broken" not in plugins
    assert ("importance", NCIS(cap=10)) not in configured  # objects, compared by label below
    assert "ncis(cap=10)" in {getattr(e, "label", e) for _, e in configured}
    (failure,) = reg.failures
    assert failure.plugin == "broken" and "demo boom" in failure.reason


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
    monkeypatch.setenv("OFFEVAL_PLUGINS", "importance, nosuch")
    reg = Registry()
    assert reg.plugins == ["offeval", "importance"] and reg.names("environment") == []
    (failure,) = reg.failures
    assert (failure.plugin, failure.stage) == ("nosuch", "allow-list")
    assert "no plugin is installed under that name" in failure.reason


def test_invalid_components_are_rejected():
    reg = Registry()
    with pytest.raises(RegistryError, match="not a valid name"):
        reg.register("estimator", "has space", NCIS)
    with pytest.raises(RegistryError, match="lacks"):
        reg.register("estimator", "notone", dict)
    with pytest.raises(RegistryError, match="not callable"):
        reg.register("examination", "x", 3)


def test_a_mistyped_name_gets_the_closest_registered_names():
    reg = Registry()
    with pytest.raises(RegistryError, match=r"'snipz' \(did you mean snipw or snips\?\)"):
        reg.get("estimator", "snipz")
    with pytest.raises(
        RegistryError, match=r"no environment named 'defualt' \(did you mean default"
    ):
        reg.create("environment", "defualt")
    with pytest.raises(RegistryError, match="no estimator named 'zzzzzz'; registered"):
        reg.get("estimator", "zzzzzz")  # nothing close: no suggestion
    from offeval.specs import find_label

    known = {"ncis": ("ncis", {"cap": 100.0}), "is": ("is", {})}
    with pytest.raises(OffevalError, match=r"unknown estimator 'nics' \(did you mean ncis"):
        find_label("nics", known)


def test_suggestions_ignore_case_and_skip_single_letters():
    reg = Registry()
    with pytest.raises(RegistryError, match=r"no estimator named 'IPS' \(did you mean ips\?\);"):
        reg.get("estimator", "IPS")  # said nothing: difflib compares case
    with pytest.raises(RegistryError, match=r"'Snips' \(did you mean snips\?\);"):
        reg.get("estimator", "Snips")  # said "snips or ips or rips"
    with pytest.raises(RegistryError, match="no estimator named 'd'; registered"):
        reg.get("estimator", "d")  # said "pd or dr or dm": any name holding a d


def test_the_default_set_runs_each_estimator_once_whatever_its_names():
    """Another name is an Alias, left out of the default set; every other name is a class
    of its own (a subclass that only renames another would run the same estimator twice)."""
    reg = Registry()
    defaults = reg.distinct("estimator")
    assert {"is", "cis", "ncis", "snips"} <= set(defaults)  # snips is ncis(cap=inf), not ncis
    aliases = {"ips", "clipped_ips", "ipw", "clipped_ipw", "snipw", "switch-dr", "dr-os"}
    assert set(reg.names("estimator")) - set(defaults) >= aliases
    assert all(reg.get("estimator", name).alias is not None for name in aliases)
    classes = {name: reg.get("estimator", name).factory for name in defaults}
    assert len(set(classes.values())) == len(classes)
    own = {"name", "__doc__", "__module__", "__qualname__", "__firstlineno__"}
    for name, cls in classes.items():
        renames = [n for n, c in classes.items() if cls.__bases__ == (c,)]
        if renames and set(vars(cls)) <= own | {"__static_attributes__", "__annotations__"}:
            raise AssertionError(f"{name} only renames {renames}: register it as an Alias")
