"""offeval as an ir-measures provider: ir-measures' own providers' numbers, query by query.

The reference numbers come from ir-measures' default pipeline in the test
(pytrec_eval, its judged, msmarco and gdeval providers) on trec_eval's test
collection, and from cwl-eval as ir-measures' own test suite pins them.
"""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pandas as pd
import pytest

import offeval_ir.provider as provider
from offeval import ConfigurationError

HERE = Path(__file__).parent / "trec_eval_test"
M = ir_measures

#: Measures pytrec_eval, ir-measures' judged provider and msmarco compute (exact numbers).
EXACT = [
    M.P @ 5,
    M.P @ 10,
    M.P(rel=2) @ 5,
    M.R @ 100,
    M.R(rel=2) @ 1000,
    M.AP,
    M.AP @ 100,
    M.AP(rel=2),
    M.RR,
    M.RR(rel=2),
    M.RR @ 10,
    M.nDCG,
    M.nDCG @ 10,
    M.Rprec,
    M.Rprec(rel=2),
    M.Bpref,
    M.Bpref(rel=2),
    M.Success @ 10,
    M.Success(rel=3) @ 5,
    M.Judged @ 10,
    M.Judged @ 100,
    M.SetP,
    M.SetP(rel=2),
    M.SetR,
    M.SetF,
]
#: Measures ir-measures computes with gdeval, which prints five decimals.
GDEVAL = [M.ERR @ 10, M.ERR @ 20, M.nDCG(dcg="exp-log2") @ 10]


def _collection(qrels: str, run: str = "results.test"):
    return (
        list(M.read_trec_qrels(str(HERE / qrels))),
        list(M.read_trec_run(str(HERE / run))),
    )


def _by_query(metrics) -> dict:
    return {(m.query_id, str(m.measure)): m.value for m in metrics}


def _agree(ours: dict, theirs: dict, tolerance: float) -> None:
    assert ours.keys() == theirs.keys()
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=tolerance), key


@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.rel_level"])
def test_per_query_values_equal_ir_measures_default_providers(qrels):
    """Every query, every measure: the offeval provider's value is the one ir-measures'
    default pipeline gives (qrels.rel_level has grades -1 to 4)."""
    qrels_rows, run = _collection(qrels)
    for measure in EXACT:
        assert provider.PROVIDER.supports(measure), measure
    theirs = _by_query(M.iter_calc(EXACT, qrels_rows, run))
    ours = _by_query(provider.PROVIDER.iter_calc(EXACT, qrels_rows, run))
    assert len(theirs) == 3 * len(EXACT)
    _agree(ours, theirs, 1e-12)
    spread = pd.Series(theirs).groupby(lambda key: key[1]).nunique()
    assert (spread > 1).sum() > len(EXACT) // 2  # queries differ: a swapped query would show


def test_gdeval_measures_agree_to_its_five_decimals():
    qrels_rows, run = _collection("qrels.rel_level")
    try:
        theirs = _by_query(M.iter_calc(GDEVAL, qrels_rows, run))
    except Exception as error:  # gdeval needs perl
        pytest.skip(f"ir-measures cannot run gdeval here: {error}")
    ours = _by_query(provider.PROVIDER.iter_calc(GDEVAL, qrels_rows, run))
    _agree(ours, theirs, 5.1e-6)
    assert sum(v > 0 for v in theirs.values()) >= 6  # not all zero


def test_a_query_the_run_misses_scores_the_default_and_one_without_qrels_is_left_out():
    """As pytrec_eval through ir-measures: query 302 dropped from the run scores 0, query
    303 renamed 999 (no qrels) gets no value, query 301 cut to its first 40 lines."""
    qrels_rows, run = _collection("qrels.test")
    first = [d for d in run if d.query_id == "301"][:40]
    renamed = [d._replace(query_id="999") for d in run if d.query_id == "303"]
    run = first + renamed
    measures = [M.P @ 10, M.AP, M.nDCG @ 10, M.Bpref]
    theirs = _by_query(M.pytrec_eval.iter_calc(measures, qrels_rows, run))
    ours = _by_query(provider.PROVIDER.iter_calc(measures, qrels_rows, run))
    _agree(ours, theirs, 1e-12)
    assert {q for q, _ in ours} == {"301", "302", "303"}
    assert all(ours[(q, str(m))] == 0 for m in measures for q in ("302", "303"))


def test_calc_aggregate_through_the_registry_equals_pytrec_eval():
    qrels_rows, run = _collection("qrels.rel_level")
    measures = [M.nDCG @ 10, M.P(rel=2) @ 5, M.AP, M.RR, M.R @ 100, M.Rprec, M.Bpref]
    offeval = M.providers.registry["offeval"]
    assert offeval is provider.PROVIDER
    ours = offeval.calc_aggregate(measures, qrels_rows, run)
    theirs = M.pytrec_eval.calc_aggregate(measures, qrels_rows, run)
    assert ours.keys() == theirs.keys()
    for measure in measures:
        assert ours[measure] == pytest.approx(theirs[measure], abs=1e-12), measure


def test_one_evaluator_serves_many_runs_and_other_input_layouts():
    """The evaluator is built once per qrels; runs as tuples, a frame or a dict-of-dict."""
    qrels_rows, run = _collection("qrels.test")
    measures = [M.nDCG @ 10, M.AP]
    evaluator = provider.PROVIDER.evaluator(measures, qrels_rows)
    frame = pd.DataFrame(run)
    flipped = frame.assign(score=-frame["score"])
    nested = {}
    for row in flipped.itertuples(index=False):
        nested.setdefault(row.query_id, {})[row.doc_id] = row.score
    reference = M.pytrec_eval.evaluator(measures, qrels_rows)
    for given, expected in [(run, run), (frame, run), (nested, flipped), (flipped, flipped)]:
        ours = evaluator.calc_aggregate(given)
        theirs = reference.calc_aggregate(expected)
        for measure in measures:
            assert ours[measure] == pytest.approx(theirs[measure], abs=1e-12)
    assert evaluator.calc_aggregate(run)[M.AP] != evaluator.calc_aggregate(flipped)[M.AP]


# cwl.qrels and cwl.run from ir-measures' test suite (test/cwl.qrels, test/cwl.run,
# https://github.com/terrierteam/ir_measures, Apache License 2.0), and the values its
# test_cwl_eval.py pins "based on a manual execution of cwl-eval".
CWL_QRELS = {
    "T1": {"D1": 1, "D2": 0, "D3": 1, "D4": 1, "D7": 1, "D8": 0, "D9": 1, "D10": 0},
    "T2": {"D1": 1, "D2": 1, "D5": 1, "D6": 0, "D7": 1, "D8": 1, "D9": 1, "D10": 0},
    "T3": {"D4": 0, "D5": 0, "D6": 1, "D7": 1, "D8": 1, "D9": 0, "D10": 1},
}
CWL_SCORES = [4.3, 4.2, 4.1, 3.9, 3.8, 3.7, 3.6, 3.5, 3.4, 3.3]
CWL_RUN = {t: {f"D{i + 1}": s for i, s in enumerate(CWL_SCORES)} for t in CWL_QRELS}
CWL_EVAL = {
    M.AP: (0.7087, 0.7438, 0.3068),
    M.P @ 1: (1.0, 1.0, 0.0),
    M.P @ 5: (0.6, 0.6, 0.0),
    M.P @ 10: (0.5, 0.6, 0.4),
    M.P @ 20: (0.25, 0.3, 0.2),
    M.RBP(p=0.9, rel=1): (0.3501, 0.3996, 0.1988),
    M.RR: (1.0, 1.0, 0.1667),
}


def test_cwl_eval_numbers_from_ir_measures_test_suite():
    """RBP(rel=1) (binary at rel, as cwl-eval computes it), AP, P and RR on cwl-eval's
    fixture, to the four decimals ir-measures' test pins."""
    got = _by_query(provider.PROVIDER.iter_calc(list(CWL_EVAL), CWL_QRELS, CWL_RUN))
    for measure, values in CWL_EVAL.items():
        for query, value in zip(("T1", "T2", "T3"), values, strict=True):
            assert got[(query, str(measure))] == pytest.approx(value, abs=5e-5), measure


UNSUPPORTED = [
    (M.nDCG(judged_only=True) @ 10, "judged_only"),
    (M.nDCG(gains={0: 0, 1: 3}) @ 10, "custom gains"),
    (M.SetP(relative=True), "relative=True"),
    (M.SetF(beta=0.5), "beta other than 1"),
    (M.RBP(p=0.9), "graded"),
    (M.P(rel=0) @ 5, ">= 1"),
    (M.infAP, "not an offeval measure"),
    (M.NumRet, "not an offeval measure"),
]


@pytest.mark.parametrize(("measure", "why"), UNSUPPORTED)
def test_what_offeval_does_not_compute_is_declared_unsupported(measure, why):
    assert not provider.PROVIDER.supports(measure)
    with pytest.raises(ConfigurationError, match=why):
        provider.offeval_measure(measure)


def test_default_pipeline_registration_falls_back_for_the_rest():
    """With register(default_pipeline=True), ir_measures.calc_aggregate and evaluator
    (what PyTerrier calls) use offeval for what it supports, the others for the rest;
    unregister restores ir-measures as it was."""
    qrels_rows, run = _collection("qrels.test")
    before = list(M.DefaultPipeline.providers)
    mixed = [M.nDCG @ 10, M.infAP, M.AP]
    expected = M.calc_aggregate(mixed, qrels_rows, run)
    try:
        provider.register(default_pipeline=True)
        assert M.DefaultPipeline.providers[0] is provider.PROVIDER
        provider.register(default_pipeline=True)  # idempotent
        assert M.DefaultPipeline.providers.count(provider.PROVIDER) == 1
        alone = M.evaluator([M.nDCG @ 10, M.AP], qrels_rows)
        assert isinstance(alone, provider.OffevalEvaluator)
        mixed_evaluator = M.evaluator(mixed, qrels_rows)
        assert isinstance(mixed_evaluator.evaluators[0], provider.OffevalEvaluator)
        assert set(mixed_evaluator.evaluators[0].measures) == {M.nDCG @ 10, M.AP}
        got = M.calc_aggregate(mixed, qrels_rows, run)
        for measure in mixed:
            assert got[measure] == pytest.approx(expected[measure], abs=1e-12), measure
    finally:
        provider.unregister()
        provider.register()
    assert M.DefaultPipeline.providers == before
    assert M.providers.registry["offeval"] is not None


@pytest.mark.slow
def test_no_offeval_module_imports_ir_measures_unless_the_provider_is_used():
    import subprocess
    import sys

    code = (
        "import sys, offeval_ir, offeval_ir.runs, offeval_ir.peer_inputs, offeval_ir.command; "
        "print('ir_measures' in sys.modules, 'ranx' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_measure_strings_offeval_reads_back_are_ir_measures_own():
    """offeval_measure gives ir-measures' printed form, which offeval parses to the same
    cut-off and relevance threshold."""
    from offeval_ir import parse_measure

    for measure in [*EXACT, *GDEVAL, M.RBP(p=0.5, rel=2) @ 10]:
        text = provider.offeval_measure(measure)
        assert text == str(measure)
        parsed = parse_measure(text)
        cutoff = measure.params.get("cutoff")
        assert parsed.k == cutoff, measure
        rel = dict(parsed.overrides).get("relevance_threshold", 1.0)
        assert rel == measure.params.get("rel", 1), measure


def test_a_measure_ir_measures_itself_rejects_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match=r"P\(rel=2.0\)@5: invalid param rel=2.0"):
        provider.offeval_measure(M.P(rel=2.0) @ 5)
    with pytest.raises(ConfigurationError, match="not an ir-measures measure"):
        provider.offeval_measure("nDCG@10")
