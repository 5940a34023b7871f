"""Measure strings (ir-measures, trec_eval, offeval) parsed to metric, cut-off and conventions.

The names are facts about other tools: where ir_measures is installed, each
string is also parsed by ir_measures itself (its own grammar and its trec_eval
name table) and, for the metrics offeval computes, the values are compared.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offeval import ConfigurationError
from offeval_ir import PRESETS, Judgements, compute
from offeval_ir.measures import (
    KNOWN,
    Measure,
    group_by_conventions,
    parse_measure,
    parse_measures,
)
from offeval_ir.metrics import METRICS

REL2 = {"relevance_threshold": 2.0}
LOG2 = {"gain": "linear", "log_base": 2.0}
EXP_LOG2 = {"gain": "exponential", "log_base": 2.0}
P08 = {"p": 0.8}

# text -> (metric, k, overrides, params)
IR_MEASURES = {
    "P@5": ("precision", 5, {}, {}),
    "P(rel=2)@5": ("precision", 5, REL2, {}),
    "P(cutoff=5)": ("precision", 5, {}, {}),
    "P( rel = 2 ) @ 5": ("precision", 5, REL2, {}),
    "R@1000": ("recall", 1000, {}, {}),
    "R(rel=2)@10": ("recall", 10, REL2, {}),
    "AP": ("ap", None, {}, {}),
    "AP@100": ("ap", 100, {}, {}),
    "AP(rel=2)@100": ("ap", 100, REL2, {}),
    "MAP": ("ap", None, {}, {}),
    "MAP@100": ("ap", 100, {}, {}),
    "RR": ("rr", None, {}, {}),
    "RR(rel=2)": ("rr", None, REL2, {}),
    "RR@10": ("rr", 10, {}, {}),
    "MRR@10": ("rr", 10, {}, {}),
    "nDCG": ("ndcg", None, {}, {}),
    "nDCG@10": ("ndcg", 10, {}, {}),
    "NDCG@10": ("ndcg", 10, {}, {}),
    "nDCG(dcg='log2')@10": ("ndcg", 10, LOG2, {}),
    "nDCG(dcg='exp-log2')@10": ("ndcg", 10, EXP_LOG2, {}),
    'nDCG(dcg="exp-log2")': ("ndcg", None, EXP_LOG2, {}),
    "Rprec": ("rprec", None, {}, {}),
    "RPrec": ("rprec", None, {}, {}),
    "Rprec(rel=2)": ("rprec", None, REL2, {}),
    "Bpref": ("bpref", None, {}, {}),
    "BPref": ("bpref", None, {}, {}),
    "Bpref(rel=2)": ("bpref", None, REL2, {}),
    "ERR": ("err", None, {}, {}),
    "ERR@20": ("err", 20, {}, {}),
    "RBP": ("rbp", None, {}, P08),
    "RBP(p=0.9)": ("rbp", None, {}, {"p": 0.9}),
    "RBP(rel=2,p=0.5)": ("rbp", None, REL2, {"p": 0.5}),
    "RBP(p=0.95)@100": ("rbp", 100, {}, {"p": 0.95}),
    "Success@10": ("success", 10, {}, {}),
    "Success(rel=2)@1": ("success", 1, REL2, {}),
    "Judged": ("judged", None, {}, {}),
    "Judged@10": ("judged", 10, {}, {}),
    "SetP": ("precision", None, {}, {}),
    "SetP(rel=2)": ("precision", None, REL2, {}),
    "SetR": ("recall", None, {}, {}),
    "SetF": ("f1", None, {}, {}),
}
# Accepted although ir_measures' own parser refuses them (unquoted strings).
IR_MEASURES_LENIENT = {
    "nDCG(dcg=exp-log2)@10": ("ndcg", 10, EXP_LOG2, {}),
    "nDCG(dcg=log2)@10": ("ndcg", 10, LOG2, {}),
}
TREC_EVAL = {
    "P_5": ("precision", 5, {}, {}),
    "P.5": ("precision", 5, {}, {}),
    "recall_1000": ("recall", 1000, {}, {}),
    "recall.1000": ("recall", 1000, {}, {}),
    "success_1": ("success", 1, {}, {}),
    "success_5": ("success", 5, {}, {}),
    "success_10": ("success", 10, {}, {}),
    "success.10": ("success", 10, {}, {}),
    "map": ("ap", None, {}, {}),
    "map_cut_100": ("ap", 100, {}, {}),
    "map_cut.100": ("ap", 100, {}, {}),
    "ndcg": ("ndcg", None, {}, {}),
    "ndcg_cut_10": ("ndcg", 10, {}, {}),
    "ndcg_cut.10": ("ndcg", 10, {}, {}),
    "recip_rank": ("rr", None, {}, {}),
    "Rprec": ("rprec", None, {}, {}),
    "bpref": ("bpref", None, {}, {}),
    "set_P": ("precision", None, {}, {}),
    "set_recall": ("recall", None, {}, {}),
    "set_F": ("f1", None, {}, {}),
}
OFFEVAL = {
    "precision": ("precision", None, {}, {}),
    "precision@5": ("precision", 5, {}, {}),
    "precision(rel=2)@5": ("precision", 5, REL2, {}),
    "recall": ("recall", None, {}, {}),
    "recall@10": ("recall", 10, {}, {}),
    "f1@5": ("f1", 5, {}, {}),
    "hit_rate@10": ("hit_rate", 10, {}, {}),
    "ap@100": ("ap", 100, {}, {}),
    "rr": ("rr", None, {}, {}),
    "rr@10": ("rr", 10, {}, {}),
    "dcg@10": ("dcg", 10, {}, {}),
    "dcg(dcg=exp-log2)@5": ("dcg", 5, EXP_LOG2, {}),
    "ndcg@10": ("ndcg", 10, {}, {}),
    "rprec": ("rprec", None, {}, {}),
    "bpref": ("bpref", None, {}, {}),
    "err@20": ("err", 20, {}, {}),
    "rbp@10": ("rbp", 10, {}, P08),
    "rbp(p=0.5)@10": ("rbp", 10, {}, {"p": 0.5}),
    "success@10": ("success", 10, {}, {}),
    "success": ("success", None, {}, {}),
    "judged@10": ("judged", 10, {}, {}),
}
# Two letters or more match in any case; offeval's own spelling wins a clash.
ANY_CASE = {
    "DCG@10": ("dcg", 10, {}, {}),
    "Ndcg@10": ("ndcg", 10, {}, {}),
    "NDCG_CUT_10": ("ndcg", 10, {}, {}),
    "Map_Cut.100": ("ap", 100, {}, {}),
    "Recall_10": ("recall", 10, {}, {}),
    "mrr@10": ("rr", 10, {}, {}),
    "Hit_Rate@5": ("hit_rate", 5, {}, {}),
    "RPREC": ("rprec", None, {}, {}),
    "SUCCESS": ("success", None, {}, {}),
    "judged@5": ("judged", 5, {}, {}),
}
ALL = {**IR_MEASURES, **IR_MEASURES_LENIENT, **TREC_EVAL, **OFFEVAL, **ANY_CASE}
#: trec_eval's cut-off after a dot: labelled with an underscore, as trec_eval prints it.
TREC_LABELLED = [text for text in ALL if re.search(r"[A-Za-z]\.\d+$", text)]

# ir_measures' measure names -> offeval metrics
IR_NAMES = {
    "P": "precision",
    "R": "recall",
    "AP": "ap",
    "RR": "rr",
    "nDCG": "ndcg",
    "Rprec": "rprec",
    "Bpref": "bpref",
    "ERR": "err",
    "RBP": "rbp",
    "Success": "success",
    "Judged": "judged",
    "SetP": "precision",
    "SetR": "recall",
    "SetF": "f1",
}


@pytest.mark.parametrize("text", list(ALL))
def test_parsed_measure(text):
    metric, k, overrides, params = ALL[text]
    measure = parse_measure(text)
    assert (measure.metric, measure.k) == (metric, k)
    assert measure.overrides == tuple(sorted(overrides.items()))
    assert measure.params == tuple(sorted(params.items()))
    # trec_eval's cut-off after a dot is labelled as trec_eval prints it (P.5 is P_5)
    label = re.sub(r"\.(\d+)$", r"_\1", text.strip()) if text in TREC_LABELLED else text.strip()
    assert measure.name == label == str(measure)
    assert parse_measures([text]) == [measure]


def test_name_is_the_string_without_surrounding_blanks():
    assert parse_measure("  nDCG@10 ").name == "nDCG@10"


def test_overrides_are_conventions():
    """Every override is a Conventions switch with a valid value."""
    base = PRESETS["trec_eval"]()
    for text in ALL:
        overrides = dict(parse_measure(text).overrides)
        changed = base.with_(**overrides)
        assert {s: getattr(changed, s) for s in overrides} == overrides


@pytest.mark.parametrize("text", list(IR_MEASURES))
def test_agrees_with_ir_measures(text):
    import ir_measures

    theirs = ir_measures.parse_measure(text)
    ours = parse_measure(text)
    assert IR_NAMES[theirs.NAME] == ours.metric
    assert theirs.params.get("cutoff") == ours.k
    assert theirs.params.get("rel") == dict(ours.overrides).get("relevance_threshold")
    formulation = {"log2": LOG2, "exp-log2": EXP_LOG2}.get(theirs.params.get("dcg"), {})
    assert {s: v for s, v in ours.overrides if s != "relevance_threshold"} == formulation
    if theirs.NAME == "RBP":
        assert dict(ours.params) == {"p": theirs["p"]}


def test_known_ir_measures_names_are_ir_measures_names():
    import ir_measures

    for name in ("P", "R", "AP", "MAP", "RR", "MRR", "nDCG", "NDCG", "Rprec", "RPrec"):
        assert name in ir_measures.measures.registry
    for name in ("Bpref", "BPref", "ERR", "RBP", "Success", "Judged", "SetP", "SetR", "SetF"):
        assert name in ir_measures.measures.registry


@pytest.mark.parametrize("text", list(TREC_EVAL) + ["ndcg_cut.10,20", "P.5,10,1000"])
def test_agrees_with_ir_measures_trec_names(text):
    import ir_measures
    import pytrec_eval  # noqa: F401 (ir_measures computes with it)

    theirs = ir_measures.parse_trec_measure(text)
    ours = parse_measures([text])
    assert [(IR_NAMES[m.NAME], m.params.get("cutoff")) for m in theirs] == [
        (m.metric, m.k) for m in ours
    ]


# A small graded qrels/run in which every user has a label of each grade 1..3 reached.
PREDICTIONS = {"1": ["b", "a", "d", "c", "e"], "2": ["d", "a", "f", "b"], "3": ["c", "e", "a"]}
LABELS = {
    "1": {"a": 2, "b": 1, "c": 3, "e": 1},
    "2": {"a": 3, "f": 1, "b": 2},
    "3": {"e": 3, "c": 2, "x": 1},
}
COMPUTED = [
    "nDCG@3",
    "nDCG(dcg='log2')@4",
    "nDCG",
    "P@3",
    "P(rel=2)@2",
    "R(rel=2)@3",
    "AP(rel=2)@3",
    "AP(rel=2)",
    "RR(rel=3)",
    "RR(rel=2)@1",
    "Success(rel=3)@2",
    "SetP(rel=2)",
    "SetR",
    "SetF(rel=2)",
]


def _values(ir_measures, texts):
    """(offeval's mean under the trec_eval preset + the overrides, ir_measures' mean)."""
    qrels = [ir_measures.Qrel(u, i, g) for u, d in LABELS.items() for i, g in d.items()]
    run = [
        ir_measures.ScoredDoc(u, i, float(len(items) - r))
        for u, items in PREDICTIONS.items()
        for r, i in enumerate(items)
    ]
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure(t) for t in texts], qrels, run)
    judgements = Judgements.from_lists(PREDICTIONS, LABELS)
    out = {}
    for text in texts:
        m = parse_measure(text)
        # Success@k is hit_rate@k until the success metric lands in METRICS
        metric = "hit_rate" if m.metric == "success" and "success" not in METRICS else m.metric
        if metric not in METRICS:
            continue
        conventions = PRESETS["trec_eval"](**dict(m.overrides))
        result = compute(judgements, [metric], [m.k], conventions)
        out[text] = (result.mean.iloc[0], theirs[ir_measures.parse_measure(text)])
    return out


def test_values_agree_with_ir_measures():
    """The rel and dcg parameters mean in offeval what they mean in ir-measures."""
    import ir_measures

    values = _values(ir_measures, COMPUTED)
    assert set(values) == set(COMPUTED)
    for text, (ours, theirs) in values.items():
        assert ours == pytest.approx(theirs, abs=1e-12), text


@pytest.mark.parametrize(
    "text", ["Rprec", "Rprec(rel=2)", "Bpref", "Bpref(rel=2)", "Judged@3", "Judged"]
)
def test_values_of_the_newer_metrics_agree_with_ir_measures(text):
    """The same check for metrics offeval gained later (skipped while absent)."""
    import ir_measures

    if parse_measure(text).metric not in METRICS:
        pytest.skip(f"{parse_measure(text).metric} is not an offeval metric yet")
    ours, theirs = _values(ir_measures, [text])[text]
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_exp_log2_agrees_with_ir_measures():
    """dcg=exp-log2 is the 2^rel - 1 gain with a log2 discount (ir_measures computes it
    with gdeval, which prints five decimals)."""
    import ir_measures

    texts = ["nDCG(dcg='exp-log2')@3", "nDCG(dcg='exp-log2')@5"]
    try:
        values = _values(ir_measures, texts)
    except Exception as error:  # gdeval needs perl
        pytest.skip(f"ir_measures cannot compute dcg=exp-log2 here: {error}")
    for text, (ours, theirs) in values.items():
        assert ours == pytest.approx(theirs, abs=1e-5), text
    linear = _values(ir_measures, ["nDCG@3"])["nDCG@3"][0]
    assert abs(values[texts[0]][0] - linear) > 1e-3  # the two formulations differ here


def test_trec_eval_cut_lists_expand():
    measures = parse_measures(["ndcg_cut.10,20", "P.5,10", "nDCG@10"])
    assert [(m.metric, m.k, m.name) for m in measures] == [
        ("ndcg", 10, "ndcg_cut_10"),
        ("ndcg", 20, "ndcg_cut_20"),
        ("precision", 5, "P_5"),
        ("precision", 10, "P_10"),
        ("ndcg", 10, "nDCG@10"),
    ]
    assert [m.k for m in parse_measures(["map_cut_5,100,1000"])] == [5, 100, 1000]


def test_a_cut_list_in_parse_measure_points_to_parse_measures():
    with pytest.raises(ConfigurationError, match=r"ndcg_cut_10, ndcg_cut_20.*parse_measures"):
        parse_measure("ndcg_cut.10,20")


def test_group_by_conventions():
    measures = parse_measures(
        ["nDCG@10", "P(rel=2)@5", "nDCG(dcg=exp-log2)@10", "P@5", "RR(rel=2)", "RBP(p=0.5)"]
    )
    groups = group_by_conventions(measures)
    assert [(overrides, [m.name for m in ms]) for overrides, ms in groups] == [
        ((), ["nDCG@10", "P@5", "RBP(p=0.5)"]),
        ((("relevance_threshold", 2.0),), ["P(rel=2)@5", "RR(rel=2)"]),
        ((("gain", "exponential"), ("log_base", 2.0)), ["nDCG(dcg=exp-log2)@10"]),
    ]
    assert group_by_conventions([]) == []


def test_measure_is_hashable_and_frozen():
    measure = parse_measure("RBP(rel=2,p=0.5)@10")
    assert {measure: 1}[parse_measure("RBP(rel=2,p=0.5)@10")] == 1
    with pytest.raises(AttributeError):
        measure.k = 5
    assert Measure("ap", None, (), "AP").params == ()


# --- errors -------------------------------------------------------------------------


def _error(text_or_texts) -> str:
    with pytest.raises(ConfigurationError) as caught:
        if isinstance(text_or_texts, list):
            parse_measures(text_or_texts)
        else:
            parse_measure(text_or_texts)
    message = str(caught.value)
    assert "\n" not in message
    assert isinstance(caught.value, ValueError)
    return message


@pytest.mark.parametrize("text", ["foo", "nDCG10", "NumRet", "infAPP", "@10", "P-5", "nDCG[10]"])
def test_unknown_measure_lists_the_known_ones(text):
    message = _error(text)
    assert message.startswith(f"unknown measure {text!r}")
    assert KNOWN in message
    for name in ("nDCG[@k]", "ndcg_cut_k", "hit_rate", "Rprec", "recip_rank"):
        assert name in message


@pytest.mark.parametrize("text", ["p@5", "r@10", "p(rel=2)@5"])
def test_single_letters_are_case_sensitive(text):
    message = _error(text)
    assert "case-sensitive" in message
    assert text[0].upper() + text[1:] in message


@pytest.mark.parametrize(
    "text, hint",
    [("ndcg_10", "ndcg@10"), ("precision_5", "precision@5"), ("hit_rate.10", "hit_rate@10")],
)
def test_a_suffixed_cut_off_on_other_names_gives_the_right_form(text, hint):
    assert f"write the cut-off as {hint}" in _error(text)


@pytest.mark.parametrize(
    "text, bad",
    [
        ("P@0", "0"),
        ("P@-1", "-1"),
        ("P@1.5", "1.5"),
        ("P@", ""),
        ("P@ten", "ten"),
        ("nDCG@+5", "+5"),
        ("P(cutoff=0)", "0"),
        ("P_0", "0"),
        ("P_5.5", "5.5"),
        ("ndcg_cut.10,,20", ""),
        ("ndcg_cut_10,-20", "-20"),
        ("success_x", "x"),
    ],
)
def test_bad_cut_offs_name_the_measure(text, bad):
    message = _error(text)
    assert f"the cut-off of {text!r} must be a whole number >= 1, got {bad!r}" in message


@pytest.mark.parametrize("text", ["Rprec@10", "Bpref@5", "rprec@10", "Rprec_10", "bpref.5"])
def test_no_cut_off_on_rprec_and_bpref(text):
    assert "takes no cut-off" in _error(text)


@pytest.mark.parametrize("text", ["SetP@5", "set_P_5", "SetF(rel=2)@10", "set_recall@10"])
def test_set_measures_are_whole_list(text):
    message = _error(text)
    assert "takes no cut-off" in message and "@k" in message


@pytest.mark.parametrize(
    "text, hint",
    [
        ("P", "P@k"),
        ("R", "R@k"),
        ("Success", "Success@k"),
        ("map_cut", "map_cut_k"),
        ("ndcg_cut", "ndcg_cut_k"),
    ],
)
def test_a_missing_cut_off(text, hint):
    assert f"needs a cut-off: write {hint}" in _error(text)


def test_cut_off_given_twice():
    assert "cut-off twice" in _error("P(cutoff=5)@10")


@pytest.mark.parametrize(
    "text, param, accepted",
    [
        ("nDCG(rel=2)@10", "rel", "cutoff, dcg"),
        ("nDCG(gains={0:0,1:1,2:3})@10", "gains", "cutoff, dcg"),
        ("P(judged_only=True)@5", "judged_only", "cutoff, rel"),
        ("ERR(rel=2)@10", "rel", "cutoff"),
        ("Judged(rel=2)@10", "rel", "cutoff"),
        ("RBP(q=0.5)", "q", "cutoff, p, rel"),
        ("SetF(beta=2)", "beta", "rel"),
        ("Rprec(cutoff=5)", "cutoff", "rel"),
    ],
)
def test_unknown_parameter_names_the_accepted_ones(text, param, accepted):
    message = _error(text)
    assert f"takes no parameter {param!r} (accepted: {accepted})" in message
    assert repr(text) in message


@pytest.mark.parametrize(
    "text, problem",
    [
        ("nDCG(dcg=log10)@10", "dcg must be one of ['exp-log2', 'log2']"),
        ("RBP(p=1)", "p must be in (0, 1)"),
        ("RBP(p=1.5)", "p must be in (0, 1)"),
        ("RBP(p=0)", "p must be a positive number"),
        ("P(rel=0)@5", "rel must be a positive number"),
        ("P(rel=-1)@5", "rel must be a positive number"),
        ("P(rel='2')@5", "rel must be a positive number"),
        ("P(rel=nan)@5", "rel must be a positive number"),
        ("P(rel=1_0)@5", "rel must be a positive number"),
        ("P(2)@5", "parameters are written name=value"),
        ("P(rel=)@5", "parameters are written name=value"),
        ("P(rel=2,rel=3)@5", "parameter 'rel' twice"),
    ],
)
def test_bad_parameter_values(text, problem):
    assert problem in _error(text)


@pytest.mark.parametrize(
    "texts, name",
    [
        (["nDCG@10", "P@5", "nDCG@10"], "nDCG@10"),
        (["nDCG@10", " nDCG@10 "], "nDCG@10"),
        (["P.5,5"], "P_5"),
    ],
)
def test_duplicates(texts, name):
    assert f"measure {name!r} is given twice" in _error(texts)


def test_the_same_measure_under_two_names_is_two_columns():
    measures = parse_measures(["nDCG@10", "ndcg_cut_10", "ndcg@10"])
    assert {(m.metric, m.k) for m in measures} == {("ndcg", 10)}


def test_parse_measures_refuses_a_bare_string():
    assert "list of measure strings" in _error_of(lambda: parse_measures("nDCG@10"))


@pytest.mark.parametrize("text", ["", "   ", None, 10])
def test_not_a_measure(text):
    _error_of(lambda: parse_measure(text))


def _error_of(call) -> str:
    with pytest.raises(ConfigurationError) as caught:
        call()
    return str(caught.value)


# --- round trips --------------------------------------------------------------------

CUT_METRICS = ["precision", "recall", "f1", "hit_rate", "ap", "rr", "dcg", "ndcg"]
CUT_METRICS += ["err", "rbp", "success", "judged"]
IR_SPELLING = {m: n for n, m in IR_NAMES.items() if not n.startswith("Set")}
TREC_SPELLING = {
    "precision": "P",
    "recall": "recall",
    "success": "success",
    "ap": "map_cut",
    "ndcg": "ndcg_cut",
}


def spellings(metric: str, k: int) -> list[str]:
    """Every way this module's docs say ``metric`` at ``k`` can be written."""
    out = [f"{metric}@{k}", f"{metric.upper()}@{k}", f"{metric}(cutoff={k})"]
    if metric in IR_SPELLING:
        out += [f"{IR_SPELLING[metric]}@{k}", f"{IR_SPELLING[metric]}(cutoff={k})"]
    if metric in TREC_SPELLING:
        out += [f"{TREC_SPELLING[metric]}_{k}", f"{TREC_SPELLING[metric]}.{k}"]
    return out


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CUT_METRICS), st.integers(1, 10**6))
def test_round_trip_every_syntax(metric, k):
    for text in spellings(metric, k):
        measure = parse_measure(text)
        assert (measure.metric, measure.k) == (metric, k), text
        assert parse_measure(measure.name) == measure


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(sorted(TREC_SPELLING)),
    st.lists(st.integers(1, 5000), min_size=1, max_size=6, unique=True),
    st.sampled_from([".", "_"]),
)
def test_round_trip_trec_cut_lists(metric, ks, joint):
    base = TREC_SPELLING[metric]
    measures = parse_measures([f"{base}{joint}{','.join(map(str, ks))}"])
    assert [(m.metric, m.k) for m in measures] == [(metric, k) for k in ks]
    if len(ks) > 1:
        assert [m.name for m in measures] == [f"{base}_{k}" for k in ks]
        assert parse_measures([m.name for m in measures]) == measures
