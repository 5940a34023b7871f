"""Aliases in the registry (no plugin): another name for a component, with its own parameter
names and defaults, computing what the original computes, left out of the default set."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from oracles import synthetic_log

from offeval import BaseEstimator, Contribution, PolicyView, RegistryError, evaluate, hookimpl
from offeval.engine.declaration import declaration_of
from offeval.plugin import Alias, check_number
from offeval.registry.manager import Registry
from offeval.stats import Linearisation, ratio_of_means

INF = float("inf")


class Capped(BaseEstimator):
    """Capped IS: the per-row mean of r * min(cap, pi/mu)."""

    name = "capped"
    estimand = "reward_per_impression"
    requires = ("propensity",)

    def __init__(self, cap: float = 100.0, note: str = "plain"):
        check_number(cap, "cap", low=0, low_open=True, finite=False)
        self.cap, self.note = cap, note

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * min(cap, w) and 1 per row."""
        capped = np.minimum(view.weights(), self.cap) * view.log.column("reward")
        return Contribution({"rw": capped, "rows": view.log.ones})

    def combine(self, stats) -> Linearisation:
        """Per-row mean."""
        return ratio_of_means(stats, "rw", "rows")


#: obp's spelling of Capped: ``lambda_`` for ``cap``, no cap by default.
LIBRARY_NAME = Alias(
    "capped", rename={"lambda_": "cap"}, defaults={"lambda_": INF}, source="a library's IPW"
)


class AliasPlugin:
    @hookimpl
    def register_estimators(self, register):
        register("capped", Capped)
        register("lib-ipw", LIBRARY_NAME)
        register("same", Alias("capped"))


def _registry() -> Registry:
    reg = Registry(entry_points=False)
    reg.add_plugin(AliasPlugin(), "aliases")
    return reg


def test_an_alias_is_the_original_under_its_own_name_parameters_and_defaults():
    reg = _registry()
    built = reg.create_from_spec("estimator", "lib-ipw:lambda_=5")
    assert isinstance(built, Capped) and built.cap == 5
    assert built.name == "lib-ipw" and built.label == "lib-ipw(lambda_=5)"
    assert built.get_params() == {"lambda_": 5, "note": "plain"}
    at_defaults = reg.create("estimator", "lib-ipw")
    assert at_defaults.cap == INF and at_defaults.label == "lib-ipw"
    assert at_defaults.full_label == "lib-ipw(lambda_=inf, note=plain)"
    assert type(built)(**built.get_params()).get_params() == built.get_params()  # round trip
    copy = pickle.loads(pickle.dumps(built))  # workers and Dask pickle estimators
    assert type(copy) is type(built) and copy.get_params() == built.get_params()
    same = reg.create("estimator", "same")
    assert same.label == "same" and same.get_params() == {"cap": 100.0, "note": "plain"}


def test_an_alias_computes_the_originals_numbers_with_the_mapped_parameters():
    log, policy, _ = synthetic_log(n=3_000, seed=4)
    reg = _registry()
    pairs = [("lib-ipw:lambda_=2", Capped(cap=2.0)), ("lib-ipw", Capped(cap=INF))]
    ours = [reg.create_from_spec("estimator", spec) for spec, _ in pairs]
    ev = evaluate(log, [policy], ours + [original for _, original in pairs])
    # by hand: the per-row mean of r * min(cap, w)
    w = log.column("target") / log.column("propensity")
    r = log.column("reward")
    for alias, (_, original) in zip(ours, pairs, strict=True):
        a, b = ev.estimate(policy.name, alias.label), ev.estimate(policy.name, original.label)
        assert a.value == pytest.approx(b.value, abs=1e-12)
        assert a.se == pytest.approx(b.se, rel=1e-9)
        assert a.value == pytest.approx(np.mean(r * np.minimum(w, original.cap)), abs=1e-12)


def test_the_default_set_leaves_aliases_out():
    assert _registry().distinct("estimator") == ["capped"]


def test_a_parameter_under_the_other_name_is_one_line_naming_both():
    reg = _registry()
    with pytest.raises(RegistryError) as caught:
        reg.create_from_spec("estimator", "lib-ipw:cap=5")
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        "estimator 'lib-ipw' has no parameter cap: lib-ipw (a library's IPW) calls it lambda_, "
        "capped calls it cap: write lib-ipw:lambda_=5 or capped:cap=5"
    )
    with pytest.raises(RegistryError, match=r"'capped' has no parameter lambda_: lib-ipw .* "):
        reg.create_from_spec("estimator", "capped:lambda_=inf")
    with pytest.raises(RegistryError, match=r"write lib-ipw:lambda_=inf or capped:cap=inf$"):
        reg.create_from_spec("estimator", "capped:lambda_=inf")
    with pytest.raises(RegistryError, match="'lib-ipw' has no parameter tau; its parameters: "):
        reg.create("estimator", "lib-ipw", tau=1)


def test_the_listing_and_the_legend_say_what_an_alias_stands_for():
    comp = _registry().get("estimator", "lib-ipw")
    assert comp.alias is LIBRARY_NAME
    assert comp.parameters == "lambda_=inf, note='plain'"
    assert comp.summary == (
        "a library's IPW: offeval's capped (lambda_ is its cap); lambda_ defaults to inf, "
        "where capped's cap defaults to 100."
    )
    built = _registry().create("estimator", "lib-ipw")
    assert declaration_of(built).description == comp.summary


def test_broken_aliases_say_why():
    class Broken:
        @hookimpl
        def register_estimators(self, register):
            register("capped", Capped)
            register("orphan", Alias("missing"))
            register("chain", Alias("lib"))
            register("lib", Alias("capped"))
            register("wrong", Alias("capped", rename={"lambda_": "tau"}))
            register("default", Alias("capped", defaults={"tau": 1}))

    reg = Registry(entry_points=False)
    reg.add_plugin(Broken(), "broken")
    assert reg.distinct("estimator") == ["capped"]
    for name, why in [
        ("orphan", "'orphan' is an alias of 'missing', which is not registered"),
        ("chain", "'chain' is an alias of 'lib', itself an alias: name 'capped'"),
        ("wrong", "alias 'wrong' renames tau, which 'capped' does not take"),
        ("default", "alias 'default' sets defaults of tau, not its own"),
    ]:
        with pytest.raises(RegistryError, match=why):
            reg.create("estimator", name)
    with pytest.raises(RegistryError, match="rename gives two names to one"):
        Alias("capped", rename={"a": "cap", "b": "cap"})
    listed = {c.name: c.summary for c in reg.components("estimator")}
    assert listed["orphan"] == (
        "a broken alias: estimator 'orphan' is an alias of 'missing', which is not registered"
    )
