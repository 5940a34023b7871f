"""The measures as components: ``offeval plugins`` lists every declaration of the registry
with its parameters, a declaration builds the measure its string names, and a plugin's
measure (``register_measures``) is computed by name."""

from __future__ import annotations

import pytest

import offeval.registry.manager as registry_module
from offeval import ConfigurationError, Registry, hookimpl
from offeval.cli.shell import main
from offeval_ir import Judgements, compute, parse_measure
from offeval_ir.measure.declaration import Declaration
from offeval_ir.measure.registry import DECLARATIONS, component_name


def _listed(capsys) -> dict[str, list[str]]:
    """``offeval plugins measure``: per measure listed, its line and the lines after it."""
    assert main(["plugins", "measure"]) == 0
    listed: dict[str, list[str]] = {}
    for line in capsys.readouterr().out.splitlines():
        words = line.split()
        if words[:1] == ["measure"]:
            listed[words[1]] = [line]
        elif words and listed:
            listed[list(listed)[-1]].append(line)
    return listed


def test_offeval_plugins_lists_every_declared_measure_with_its_parameters(capsys):
    listed = _listed(capsys)
    assert set(listed) == {component_name(name) for name in DECLARATIONS}
    for name, declared in DECLARATIONS.items():
        line, *rest = listed[component_name(name)]
        assert declared.summary in line and "from ir" in line, name
        assert all(s.text in line for s in (*declared.ir_measures, *declared.trec_eval)), name
    assert listed["rbp"][1].split() == ["parameters:", "k=None,", "p=0.8,", "rel=1.0"]
    assert listed["bpref"][1].split() == ["parameters:", "rel=1.0"]  # bpref takes no cut-off


@pytest.mark.parametrize(
    ("name", "params", "text"),
    [
        ("ndcg", {"k": 10, "dcg": "exp-log2"}, "nDCG(dcg='exp-log2')@10"),
        ("rbp", {"k": 5, "p": 0.9, "rel": 2}, "RBP(p=0.9,rel=2)@5"),
        ("ap", {}, "map"),
        ("bpref", {"rel": 2}, "Bpref(rel=2)"),
    ],
)
def test_a_declaration_builds_the_measure_its_string_names(name, params, text):
    built = Registry().create("measure", name, **params)
    parsed = parse_measure(text)
    assert (built.metric, built.k, built.overrides, built.params) == (
        parsed.metric,
        parsed.k,
        parsed.overrides,
        parsed.params,
    )


def test_a_trec_eval_declaration_takes_its_parameter_text():
    built = Registry().create("measure", "utility", param="2,-1,0,0")
    assert built.metric == parse_measure("utility.2,-1,0,0").metric
    with pytest.raises(ConfigurationError, match="utility"):
        Registry().create("measure", "utility", param="2,-1")


def misses(lists, k):
    """Items of the top k that are not relevant."""
    return lists.in_list(k) - lists.hits(k)


class MissesPlugin:
    """A third party's measure."""

    @hookimpl
    def register_measures(self, register):
        register("misses", Declaration("misses", misses, "non-relevant items in the top k"))


PREDICTIONS = {"a": [1, 2, 3, 4], "b": [5, 6], "c": [7, 8, 9]}
LABELS = {"a": {2: 1, 4: 2}, "b": {6: 1, 9: 1}, "c": {1: 1}}


def _brute_misses(k: int) -> dict[str, int]:
    return {
        u: sum(LABELS[u].get(item, 0) < 1 for item in items[:k]) for u, items in PREDICTIONS.items()
    }


def test_a_plugins_measure_is_listed_and_computed_by_name(capsys, monkeypatch):
    reg = Registry()
    reg.add_plugin(MissesPlugin(), "mine")
    assert reg.get("measure", "misses").plugin == "mine" and not reg.failures
    with reg.activated():
        result = compute(Judgements.from_lists(PREDICTIONS, LABELS), ["misses", "hits"], [2, 3])
    for k in (2, 3):
        assert result.per_user[f"misses@{k}"].to_dict() == _brute_misses(k)
    monkeypatch.setattr(registry_module, "_default", reg)
    assert "non-relevant items in the top k" in _listed(capsys)["misses"][0]


class Clashing:
    @hookimpl
    def register_measures(self, register):
        register("ndcg", Declaration("ndcg", misses, "not nDCG"))
        register("other", Declaration("misses", misses, "named otherwise"))
        register("graded", Declaration("graded", misses, "trec_eval's?", provider="trec_eval"))


def test_a_plugins_measure_cannot_take_a_builtin_name_nor_another_provider():
    reg = Registry()
    reg.add_plugin(Clashing(), "clashing")
    (failure,) = reg.failures
    assert "which keeps the name" in failure.reason and reg.get("measure", "ndcg").plugin == "ir"
    j = Judgements.from_lists(PREDICTIONS, LABELS)
    with reg.activated():
        with pytest.raises(ConfigurationError, match="must be a Declaration named 'other'"):
            compute(j, ["other"], [2])
        with pytest.raises(ConfigurationError, match="provider 'trec_eval'"):
            compute(j, ["graded"], [2])
        with pytest.raises(ConfigurationError, match="unknown metrics"):
            compute(j, ["nothing"], [2])
