"""offeval_ir.measure.registry: one declaration per measure, read by every catalogue, each
measure module mirrored by its test here, the declarations read without numpy."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import offeval_ir.measure
from offeval_ir import parse_measure
from offeval_ir.measure.registry import _MACHINERY, DECLARATIONS
from offeval_ir.metrics import METRICS, TREC_METRICS
from offeval_ir.trec_catalogue import SUPPORTED

HERE = Path(__file__).parent


def _measure_modules() -> list[str]:
    found = pkgutil.walk_packages(offeval_ir.measure.__path__, "")
    return sorted(m.name for m in found if not m.ispkg and m.name.split(".")[-1] not in _MACHINERY)


@pytest.mark.parametrize("module", _measure_modules())
def test_every_measure_module_has_its_test(module):
    package, _, name = module.rpartition(".")
    test = f"test_trec_{name}.py" if package == "trec_eval" else f"test_measure_{name}.py"
    assert (HERE / test).exists(), test


def test_the_declarations_are_read_without_numpy():
    code = (
        "import sys; import offeval_ir.measure.registry as r; "
        "print(len(r.DECLARATIONS), 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, numpy = out.stdout.split()
    assert int(count) == len(DECLARATIONS) and numpy == "False"


def test_compute_takes_every_declared_measure():
    assert set(METRICS) | set(TREC_METRICS) == set(DECLARATIONS)


def test_the_trec_eval_catalogue_prints_what_the_registry_spells():
    spelled = {s.text for d in DECLARATIONS.values() for s in d.trec_eval}
    assert set(SUPPORTED) == spelled | {"runid", "relstring"}


@pytest.mark.parametrize("name", sorted(DECLARATIONS))
def test_every_spelling_parses_to_its_measure(name):
    declared = DECLARATIONS[name]
    for spelling in (*declared.ir_measures, *declared.aliases):
        text = spelling.text + ("@5" if spelling.cutoff == "required" else "")
        assert parse_measure(text).metric == name, text
        assert parse_measure(text).aggregate == spelling.aggregate
    if declared.cutoff is not None:  # bare rbp is trec_eval's: offeval's takes a cut-off
        assert parse_measure(name + ("@5" if declared.cutoff != "none" else "")).metric == name
    free = {
        "utility": "1,-1,0,0",
        "11pt_avg": "0.5",
        "trec_rbp": "p=0.5",
        "trec_set_F": "0.5",
    }.get(name, "1=2")
    for spelling in declared.trec_eval:
        text = {
            "cut": f"{spelling.text}_5",
            "level": f"{spelling.text}_0.5",
            "free": f"{spelling.text}.{free}",
        }.get(spelling.form, spelling.text + ("_5" if spelling.cutoff == "required" else ""))
        assert parse_measure(text).metric.partition(":")[0] == name, text


def test_the_ir_measures_provider_supports_what_the_registry_spells():
    pytest.importorskip("ir_measures")
    from offeval_ir.provider_measures import SUPPORTED as PROVIDED

    spelled = {s.text for d in DECLARATIONS.values() for s in d.ir_measures}
    assert {m.NAME for m in PROVIDED} == spelled - {"MAP", "MRR", "NDCG", "RPrec", "BPref"}


def test_trec_eval_s_labels_of_measures_with_parameters_parse_back():
    """trec_eval prints ``-m utility.2,-1,0,0 -m 11pt_avg..25,.5,.75`` as
    ``utility_2,-1,0,0`` and ``11pt_avg_.25,.5,.75`` (out.test.meas_params): a free
    spelling's ``underscore`` reads such a label back as its measure; 11pt_avg's levels
    (``sorted_levels``) name one measure in any order, as trec_eval averages them sorted."""
    printed = HERE.parent / "trec_eval_test" / "out.test.meas_params"
    labels = {line.split()[0] for line in printed.read_text().splitlines()}
    assert {"utility_2,-1,0,0", "11pt_avg_.25,.5,.75"} <= labels
    for label in labels:
        assert parse_measure(label).name == label
    assert parse_measure("utility_2,-1,0,0").metric == parse_measure("utility.2,-1,0,0").metric
    levels = {parse_measure(text).metric for text in ("11pt_avg_.75,.25,.5", "11pt_avg..25,.5,.75")}
    assert levels == {parse_measure("11pt_avg_.25,.5,.75").metric}
