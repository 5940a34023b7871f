"""The measures as components: ``offeval plugins`` lists every declaration of the registry
with its parameters, a declaration builds the measure its string names, and a plugin's
measure (``register_measures``) is computed by name."""

from __future__ import annotations

import pandas as pd
import pytest

import offeval.registry.manager as registry_module
import offeval_ir.measures
from offeval import ConfigurationError, Registry, hookimpl
from offeval.cli.shell import main
from offeval_ir import Judgements, compute, compute_measures, evaluate_runs, parse_measure
from offeval_ir.measure.declaration import Declaration, Spelling, TrecSpelling
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
        summary = "non-relevant items in the top k"
        register("misses", Declaration("misses", misses, summary, value_range=None))


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


def _mine() -> Registry:
    reg = Registry()
    reg.add_plugin(MissesPlugin(), "mine")
    return reg


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """PREDICTIONS as a run (scores falling down each list) and LABELS as qrels."""
    run = [
        (u, f"d{i}", len(items) - r)
        for u, items in PREDICTIONS.items()
        for r, i in enumerate(items)
    ]
    qrels = [(u, f"d{i}", grade) for u, labels in LABELS.items() for i, grade in labels.items()]
    return (
        pd.DataFrame(run, columns=["user", "item", "score"]),
        pd.DataFrame(qrels, columns=["user", "item", "relevance"]),
    )


def test_a_plugins_measure_is_a_measure_string_with_a_cutoff():
    run, qrels = _frames()
    with _mine().activated():
        assert (parse_measure("misses@5").metric, parse_measure("misses@5").k) == ("misses", 5)
        result = compute_measures(run, qrels, ["misses@2", "P@2", "misses@3"])
        evaluation = evaluate_runs({"run": run}, qrels, measures=["misses@3"])
    for k in (2, 3):
        assert result.per_user[f"misses@{k}"].to_dict() == _brute_misses(k)
    assert result.per_user["P@2"].to_dict() == {"a": 0.5, "b": 0.5, "c": 0.0}
    brute = _brute_misses(3)
    assert evaluation.results["run"].value["misses@3"] == pytest.approx(sum(brute.values()) / 3)


def test_offeval_metrics_computes_a_plugins_measure_by_its_string(tmp_path, monkeypatch, capsys):
    run, qrels = _frames()
    run_file, qrels_file, out = tmp_path / "run.txt", tmp_path / "qrels.txt", tmp_path / "u.csv"
    trec_run = run.assign(q0="Q0", rank=run.groupby("user").cumcount() + 1, tag="mine")
    columns = ["user", "q0", "item", "rank", "score", "tag"]
    trec_run[columns].to_csv(run_file, sep=" ", header=False, index=False)
    qrels.assign(iteration=0)[["user", "iteration", "item", "relevance"]].to_csv(
        qrels_file, sep=" ", header=False, index=False
    )
    monkeypatch.setattr(registry_module, "_default", _mine())
    argv = ["metrics", str(run_file), str(qrels_file), "-m", "misses@2", "-m", "misses@3"]
    assert main([*argv, "--per-user", "--out", str(out)]) == 0
    table = pd.read_csv(out, index_col="user")
    for k in (2, 3):
        assert table[f"misses@{k}"].to_dict() == _brute_misses(k)
    assert "misses@3" in capsys.readouterr().out


def test_an_unknown_measure_string_is_refused_as_before_with_a_plugin_registered():
    with pytest.raises(ConfigurationError) as default:
        parse_measure("nDGC@10")
    with pytest.raises(ConfigurationError, match="unknown measure 'misses@5'; known: "):
        parse_measure("misses@5")  # the default registry has no such plugin
    with _mine().activated():
        with pytest.raises(ConfigurationError) as mine:
            parse_measure("nDGC@10")
        with pytest.raises(ConfigurationError, match=r"did you mean misses@5\? Known: "):
            parse_measure("missez@5")
    before, after = str(default.value), str(mine.value)
    assert before.startswith("unknown measure 'nDGC@10': did you mean nDCG@10? (or pnDCG@10)")
    known = before.partition(" Known: ")[2]
    assert after == before.replace(known, after.partition(" Known: ")[2])
    assert "misses[@k]" in after and "misses" not in before


class Clashing:
    @hookimpl
    def register_measures(self, register):
        register("ndcg", Declaration("ndcg", misses, "not nDCG"))
        register("other", Declaration("misses", misses, "named otherwise"))
        register("graded", Declaration("graded", misses, "trec_eval's?", provider="trec_eval"))
        trec = (TrecSpelling("trecish", "cut"),)
        register("trecish", Declaration("trecish", misses, "trec_eval's too?", trec_eval=trec))


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
        with pytest.raises(ConfigurationError, match="has trec_eval spellings"):
            compute(j, ["trecish"], [2])  # trec_eval's spellings are its own measures'
        with pytest.raises(ConfigurationError, match="must be a Declaration named 'other'"):
            parse_measure("other@2")  # a measure string naming it says why, as compute does
        assert parse_measure("nDCG@5").metric == "ndcg"


class Shadowing:
    @hookimpl
    def register_measures(self, register):
        spellings = (Spelling("nDCG"), Spelling("Map"), Spelling("Shade"))
        register("shadow", Declaration("shadow", misses, "spelled as nDCG", aliases=spellings))


def test_a_plugins_spellings_leave_every_builtin_name_its_measure():
    with pytest.raises(ConfigurationError) as default:
        parse_measure("nDCG(p=0.5)@5")  # nDCG's own parameters are named
    reg = Registry()
    reg.add_plugin(Shadowing(), "shadowing")
    with reg.activated():
        assert [parse_measure(text).metric for text in ("nDCG@5", "NDCG@5", "Map", "map")] == [
            "ndcg",
            "ndcg",
            "ap",
            "ap",
        ]
        assert [parse_measure(text).metric for text in ("shadow@5", "shade@5")] == ["shadow"] * 2
        with pytest.raises(ConfigurationError) as plugged:
            parse_measure("nDCG(p=0.5)@5")
        known = offeval_ir.measures.KNOWN
    assert str(plugged.value) == str(default.value)
    assert "Shade[@k]" in known and "Map" not in known.split(", ")
    reg.remove_plugin("shadowing")
    with reg.activated(), pytest.raises(ConfigurationError, match="unknown measure 'shade'"):
        parse_measure("shade")  # the tables follow the registry's measures
