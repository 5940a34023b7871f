"""trec_eval's measures under trec_eval's names, against trec_eval's stored outputs.

The out.* files in trec_eval_test/ are trec_eval 10.0's own outputs (see the
NOTICE.md there for their command lines); values are compared per query and
for the ``all`` line to trec_eval's four decimals. Measures trec_eval's folder
does not exercise are checked against brute-force oracles in plain Python.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from offeval import ConfigurationError
from offeval_ir import PRESETS, Judgements, compute_measures, parse_measure, parse_measures
from offeval_ir.files import read_qrels, read_run
from offeval_ir.measures import TREC_EVAL_TEXT, trec_eval_measures, trec_eval_texts
from offeval_ir.metrics import aggregate
from offeval_ir.trec_measures import relstrings


def _frames(runs, qrels):
    pred = pd.DataFrame(
        [
            (u, item, float(len(items) - r))
            for u, items in runs.items()
            for r, item in enumerate(items)
        ],
        columns=["user", "item", "score"],
    )
    lab = pd.DataFrame(
        [(u, item, g) for u, grades in qrels.items() for item, g in grades.items()],
        columns=["user", "item", "relevance"],
    )
    return pred, lab


def _scored_frames(run, qrels):
    """A run given as {query: {doc: score}} and its qrels as long frames."""
    pred = pd.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["user", "item", "score"],
    )
    lab = pd.DataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        columns=["user", "item", "relevance"],
    )
    return pred, lab


def test_aggregations():
    values = np.array([0.5, np.nan, 0.0, 0.2])
    assert aggregate(values, "mean") == pytest.approx(0.7 / 3)
    assert aggregate(values, "sum") == pytest.approx(0.7)
    geometric = math.exp((math.log(0.5) + math.log(1e-5) + math.log(0.2)) / 3)
    assert aggregate(values, "geometric") == pytest.approx(geometric)
    parts = pd.DataFrame({"numerator": [1.0, 9.0, 0.0, 2.0], "denominator": [2.0, 9.0, 4.0, 2.0]})
    assert aggregate(values, "ratio", parts) == pytest.approx(3.0 / 8.0)


# ---- trec_eval's stored outputs ---------------------------------------------------------

HERE = Path(__file__).parent / "trec_eval_test"
#: out file -> (qrels, results, -m arguments, -c, -M, -l), as NOTICE.md lists them.
STORED = {
    "out.test": ("qrels.test", "results.test", ["official"], False, None, 1),
    "out.test.a": ("qrels.test", "results.test", ["all_trec"], False, None, 1),
    "out.comment.test": (
        "qrels.comment.test",
        "results.comment.test.gz",
        ["official"],
        False,
        None,
        1,
    ),
    "out.test.aq": ("qrels.test", "results.test", ["all_trec"], False, None, 1),
    "out.test.aqc": ("qrels.test", "results.trunc", ["all_trec"], True, None, 1),
    "out.test.aqcM": ("qrels.test", "results.trunc", ["all_trec"], True, 100, 1),
    "out.test.aql": (
        "qrels.rel_level",
        "results.test",
        ["all_trec", "relstring.20"],
        False,
        None,
        2,
    ),
    "out.test.meas_params": (
        "qrels.test",
        "results.test",
        [
            "iprec_at_recall..10,.20,.25,.75,.50",
            "P.5,7,3",
            "recall.20,2000",
            "Rprec_mult.5.0,0.2,0.35",
            "utility.2,-1,0,0",
            "11pt_avg..25,.5,.75",
            "ndcg.1=3,2=9,4=4.5",
            "ndcg_cut.10,20,23.4",
            "success.2,5,20",
        ],
        False,
        None,
        1,
    ),
}


#: The command line of each stored output, from NOTICE.md's table.
NOTICE = {
    line.split("|")[1].strip(): line.split("|")[2]
    for line in (HERE / "NOTICE.md").read_text().splitlines()
    if line.startswith("| out.")
}


def _stored(name: str) -> tuple[list[str], dict[tuple[str, str], str]]:
    """The measures of a stored output in the order of its ``all`` lines, and its values by
    (measure, query)."""
    order, values = [], {}
    for line in (HERE / name).read_text().splitlines():
        if not line.strip():
            continue
        measure, query, value = line.split()
        if measure in TREC_EVAL_TEXT:
            continue
        if query == "all":
            order.append(measure)
        values[measure, query] = value
    return order, values


def _ours(name: str):
    qrels, results, arguments, complete, most, level = STORED[name]
    run = read_run(HERE / results)
    if most is not None:  # trec_eval's -M: the first `most` of each list in its order
        run = run.sort_values(["user", "score", "item"], ascending=[True, False, False])
        run = run.groupby("user", sort=False).head(most)
    conventions = PRESETS["trec_eval"](
        no_predictions="zero" if complete else "nan", relevance_threshold=float(level)
    )
    measures = trec_eval_measures(arguments)
    return measures, compute_measures(run, read_qrels(HERE / qrels), measures, conventions)


@pytest.mark.parametrize("name", list(STORED))
def test_expansion_gives_trec_eval_s_measures_in_its_order(name):
    order, _ = _stored(name)
    assert [m.name for m in trec_eval_measures(STORED[name][2])] == order


@pytest.mark.parametrize("name", list(STORED))
def test_every_value_per_query_and_all_as_trec_eval_prints_it(name):
    _, stored = _stored(name)
    measures, result = _ours(name)
    value = result.value
    compared = 0
    for measure in measures:
        per_query = {key[1]: float(text) for key, text in stored.items() if key[0] == measure.name}
        theirs_all = per_query.pop("all")
        assert value[measure.name] == pytest.approx(theirs_all, abs=5e-5), measure.name
        ours = result.per_user[measure.name].dropna()
        if measure.name in ("num_q", "gm_map", "gm_bpref") or "-q" not in NOTICE[name]:
            assert not per_query  # printed in `all` only
        else:
            assert sorted(ours.index) == sorted(per_query), measure.name
            for query, theirs in per_query.items():
                assert ours[query] == pytest.approx(theirs, abs=5e-5), (measure.name, query)
                compared += 1
    assert compared >= (3 * (len(measures) - 3) if "-q" in NOTICE[name] else 0)


def test_trec_eval_s_rbp_is_graded_and_ignores_the_relevance_level():
    """On -l2 trec_eval's rbp still counts grade-1 items (query 301: 0.0465, all 0.2769);
    offeval's RBP at the threshold gives 0 there."""
    measures, result = _ours("out.test.aql")
    assert result.per_user.loc["301", "rbp"] == pytest.approx(0.0465, abs=5e-5)
    assert result.value["rbp"] == pytest.approx(0.2769, abs=5e-5)
    offeval_rbp = compute_measures(
        read_run(HERE / "results.test"),
        read_qrels(HERE / "qrels.rel_level"),
        ["RBP(p=0.9)"],
        PRESETS["trec_eval"](relevance_threshold=2.0),
    )
    assert offeval_rbp.per_user.loc["301", "RBP(p=0.9)"] == pytest.approx(0.0, abs=1e-12)


def test_expansion_reads_parameters_as_trec_eval():
    names = lambda *args: [m.name for m in trec_eval_measures(args)]  # noqa: E731
    assert names("P.5", "P.10") == ["P_5"]  # the first parameters win
    assert names("P.7", "official")[-1] == "P_7"
    assert names("map", "P") == [
        "map",
        *(f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    ]
    assert names("ndcg_cut.10,20,23.4") == ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
    assert names("success") == ["success_1", "success_5", "success_10"]
    assert names("unj") == ["unj_5", "unj_10", "unj_20"]
    assert names("Rprec_mult")[0] == "Rprec_mult_0.20"
    assert names("iprec_at_recall")[::10] == ["iprec_at_recall_0.00", "iprec_at_recall_1.00"]
    assert names("set") == [
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_relative_P",
        "set_recall",
        "set_map",
        "set_F",
    ]  # fmt: skip (measures.c's order, not the group's)
    aggregates = {m.name: m.aggregate for m in trec_eval_measures(["official"])}
    assert aggregates["num_ret"] == "sum" and aggregates["gm_map"] == "geometric"
    for bad, message in [
        ("ndcg_cut_10", "no measure 'ndcg_cut_10'"),  # trec_eval: illegal measure
        ("P.5,5", "given twice"),
        ("utility.1,2", "four coefficients"),
        ("num_ret.5", "takes no parameters"),
        ("maps", "did you mean map"),
    ]:
        with pytest.raises(ConfigurationError, match=message):
            trec_eval_measures([bad])


def test_trec_eval_spellings_label_alike():
    assert [m.name for m in parse_measures(["ndcg_cut.10", "ndcg_cut_10"])] == ["ndcg_cut_10"]
    assert parse_measure("ndcg_cut.10").name == "ndcg_cut_10"
    assert [m.name for m in parse_measures(["ndcg_cut.10,20", "ndcg_cut_20"])] == [
        "ndcg_cut_10",
        "ndcg_cut_20",
    ]
    assert parse_measure("iprec_at_recall_0.1").name == "iprec_at_recall_0.10"
    assert parse_measure("Rprec_mult.0.2").name == "Rprec_mult_0.20"
    assert parse_measure("utility.2,-1,0,0").name == "utility_2,-1,0,0"
    assert parse_measure("rbp").metric == "trec_rbp"  # trec_eval's name: trec_eval's RBP
    assert parse_measure("RBP").metric == parse_measure("rbp@10").metric == "rbp"
    with pytest.raises(ConfigurationError, match="given twice"):
        parse_measures(["nDCG@10", "nDCG@10"])


# ---- pytrec_eval on random runs with ties and qrels with -1 grades --------------------


def _random_collection(seed: int):
    rng = np.random.default_rng(seed)
    docs = [str(i) for i in range(1, 15)] + [f"d{i}" for i in range(15)]  # "10" < "7" as text
    qrels, run = {}, {}
    for q in range(25):
        judged = rng.choice(docs, size=rng.integers(1, 20), replace=False)
        qrels[f"q{q}"] = {d: int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
        retrieved = rng.choice(docs, size=rng.integers(1, 25), replace=False)
        run[f"q{q}"] = {d: float(rng.integers(0, 5)) / 2 for d in retrieved}  # many ties
    return qrels, run


# ---- plain-Python transcriptions of trec_eval's C loops, for what pytrec_eval lacks ----


def _rel_list(ranked: list[str], qrels: dict[str, int]) -> list[int]:
    """form_res_rels.c's results_rel_list: the grade, -1 not in the pool, -2 grade < 0."""
    return [(-1 if d not in qrels else (-2 if qrels[d] < 0 else qrels[d])) for d in ranked]


def _gain_table(qrels: dict[str, int], pairs: dict[int, float]):
    """gain_init.c: (level, gain, count) sorted by gain, levels 0..highest and the pairs."""
    top = max(qrels.values())
    table = {level: [gain, 0] for level, gain in pairs.items()}
    for level in range(top + 1):
        table.setdefault(level, [float(level), 0])
        table[level][1] = sum(1 for g in qrels.values() if g == level)
    return sorted(((lvl, g, n) for lvl, (g, n) in table.items()), key=lambda t: t[1])


def _ideal_walk(table, length: int) -> list[float]:
    """The ideal gain at each position 0..length-1 (the C loops' cur_level walk)."""
    out, level, count = [], len(table) - 1, 0
    for _ in range(length):
        count += 1
        while level >= 0 and count > table[level][2]:
            count, level = 1, level - 1
        out.append(table[level][1] if level >= 0 else 0.0)
    return out


def _oracle(ranked, qrels, pairs):
    rels = _rel_list(ranked, qrels)
    table = _gain_table(qrels, pairs)
    gain = {lvl: g for lvl, g, _ in table}
    gains = [gain.get(r, 0.0) for r in rels]
    n = len(gains) + len(qrels) + 2
    ideal = _ideal_walk(table, n)
    positive = []
    for g in ideal:  # the ideal stops at its first gain <= 0
        if g <= 0:
            break
        positive.append(g)
    disc = [1 / math.log2(i + 2) for i in range(n)]
    dcg = sum(g * disc[i] for i, g in enumerate(gains))
    idcg = sum(g * disc[i] for i, g in enumerate(positive))
    ndcg = dcg / idcg if idcg > 0 else 0.0
    # m_ndcg_rel.c
    total, found, run_dcg, run_idcg = 0.0, 0, 0.0, 0.0
    for i in range(max(len(gains), len(positive))):
        if i < len(gains):
            run_dcg += gains[i] * disc[i]
        if i < len(positive):
            run_idcg += positive[i] * disc[i]
        if i < len(gains) and gains[i] > 0:
            total += run_dcg / run_idcg
            found += 1
    total += (len(positive) - found) * dcg / idcg if idcg > 0 else 0.0
    ndcg_rel = total / len(positive) if total > 0 else 0.0
    # m_G.c
    cost = done = g_sum = 0.0
    for i, g in enumerate(gains):
        done += g
        cost += max(positive[i] if i < len(positive) else 0.0, 1.0)
        if g != 0:
            g_sum += g / math.log2(2 + cost - done)
    big_g = g_sum / sum(positive) if sum(positive) > 0 else 0.0
    # m_Rndcg.c, statement for statement: nDCG where the ideal gain changes level
    level, count = len(table) - 1, 0
    ideal_gain = table[level][1] if level >= 0 else 0.0
    old, total, points, run_dcg, run_idcg, i = ideal_gain, 0.0, 0, 0.0, 0.0, 0

    def step():
        nonlocal level, count, ideal_gain, old, total, points
        count += 1
        while level >= 0 and count > table[level][2]:
            count, level = 1, level - 1
            ideal_gain = table[level][1] if level >= 0 else 0.0
        if old != ideal_gain:
            if run_idcg > 0:
                total, points = total + run_dcg / run_idcg, points + 1
            old = ideal_gain

    while i < len(gains) and ideal_gain > 0:
        step()
        run_dcg += gains[i] * disc[i]
        run_idcg += ideal_gain * disc[i] if ideal_gain > 0 else 0.0
        i += 1
    if i < len(gains):
        run_dcg = dcg
        if run_idcg > 0:
            total, points = total + run_dcg / run_idcg, points + 1
    while ideal_gain > 0:
        step()
        run_idcg += ideal_gain * disc[i] if ideal_gain > 0 else 0.0
        i += 1
    num_rel = sum(1 for g in qrels.values() if g >= 1)
    rndcg = total / points if num_rel and points else 0.0
    # m_rbp.c with its min and max over the gain table, starting from 0, p = 0.9
    low, high = min([0, *(g for _, g, _ in table)]), max([0, *(g for _, g, _ in table)])
    scale = (lambda g: (g - low) / (high - low)) if (low < 0 or high > 1) else (lambda g: g)
    scaled = [scale(gain[r]) if r in gain else 0.0 for r in rels]  # after get_gain
    rbp = 0.1 * sum(g * 0.9**i for i, g in enumerate(scaled) if g != 0)
    # m_rbp_resid.c
    unjudged = [i for i, r in enumerate(rels) if r < 0]
    resid = 0.9 ** len(rels) + 0.1 * sum(0.9**i for i in unjudged) if unjudged else 0.0
    return {
        "dcg": dcg,
        "ideal_dcg": idcg,
        "ndcg": ndcg,
        "ndcg_rel": ndcg_rel,
        "Rndcg": rndcg,
        "G": big_g,
        "rbp": rbp,
        "rbp_resid": resid,
    }


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pairs", [{}, {0: 1.0, 2: 5.0}, {1: 3.0, 3: -2.0}])
def test_gain_measures_against_trec_eval_s_loops(seed, pairs):
    """trec_eval's dcg, ideal_dcg, ndcg, ndcg_rel, G (custom gains as trec_eval's
    'grade=gain' parameters, whole-number apart: trec_eval orders gains closer than 1 by a
    truncated difference), rbp and rbp_resid against plain-Python transcriptions of their
    C loops."""
    qrels, run = _random_collection(seed)
    text = ",".join(f"{level}={gain:g}" for level, gain in pairs.items())
    gain_measures = ("dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "G")
    names = {name: f"{name}.{text}" if text else name for name in gain_measures}
    names.update({name: f"{name}.{text}" if text else name for name in ("rbp", "rbp_resid")})
    measures = trec_eval_measures(list(names.values()))
    base_of = {text.replace(".", "_", 1): base for base, text in names.items()}
    assert sorted(m.name for m in measures) == sorted(base_of)
    pred, lab = _scored_frames(run, qrels)
    ours = compute_measures(pred, lab, measures, PRESETS["trec_eval"]()).per_user
    for query, docs in run.items():
        ranked = sorted(docs, key=lambda d: (docs[d], d), reverse=True)  # ties: docno desc
        want = {**_oracle(ranked, qrels[query], pairs), **{
            name: value
            for name, value in _oracle(ranked, qrels[query], {}).items()
            if name == "rbp_resid"  # trec_eval's rbp_resid reads gains and ignores them
        }}  # fmt: skip
        for measure in measures:
            base = base_of[measure.name]
            assert ours.loc[query, measure.name] == pytest.approx(want[base], abs=1e-12), (
                measure.name,
                query,
            )


@pytest.mark.parametrize(
    "text, problem",
    [
        ("relative_P", "'relative_P' needs a cut-off: write relative_P_5"),
        ("unj", "'unj' needs a cut-off: write unj_5"),
        ("iprec_at_recall", "'iprec_at_recall' needs a level: write iprec_at_recall_0.10"),
        ("Rprec_mult", "needs a level"),
        ("rbp.q=3", "'rbp.q=3': rbp: bad parameter 'q=3'"),
        ("ndcg.1=x", "'ndcg.1=x': ndcg: bad parameter '1=x'"),
        ("utility.1,2", "expected four coefficients"),
        ("iprec_at_recall_x", "'x' is not a number"),
        ("ndcg_cut.10,20,23.4", "must be a whole number >= 1, got '23.4'"),
        ("unj_0", "must be a whole number >= 1, got '0'"),
        ("Rprec_mult.0.2,0.2", "measure 'Rprec_mult_0.20' is given twice"),
        ("rbp.p=2", "'rbp.p=2': rbp: RBP's persistence p must be in (0, 1), got 2.0"),
        ("rbp.p=1,1=2", "RBP's persistence p must be in (0, 1), got 1.0"),
        ("rbp.p=-0.5", "RBP's persistence p must be in (0, 1), got -0.5"),
        ("rbp.p=nan", "'rbp.p=nan': rbp: bad parameter 'p=nan'"),
        ("iprec_at_recall_1.5", "a recall level must be in [0, 1], got 1.5"),
        ("iprec_at_recall.0.5,-0.1", "a recall level must be in [0, 1], got -0.1"),
        ("11pt_avg.0.5,2", "a recall level must be in [0, 1], got 2.0"),
        ("Rprec_mult_0", "the multiple of R must be > 0, got 0.0"),
        ("Rprec_mult.-1", "the multiple of R must be > 0, got -1.0"),
    ],
)
def test_bad_trec_eval_measures_are_named(text, problem):
    with pytest.raises(ConfigurationError) as caught:
        parse_measures([text])
    assert problem in str(caught.value)
    assert "\n" not in str(caught.value)


def test_every_known_name_mistyped_gets_an_error_not_a_crash():
    from offeval_ir.measures import _SUGGESTED

    for name in set(_SUGGESTED.values()):
        for text in (name, f"{name}x", name.upper(), f"{name}_"):
            try:
                parse_measures([text])
            except ConfigurationError:
                pass


@pytest.mark.parametrize(
    "name, qrels, length, label",
    [
        ("out.test.aq", "qrels.test", 10, "relstring"),
        ("out.test.aql", "qrels.rel_level", 20, "relstring_20"),
    ],
)
def test_relstrings_as_trec_eval_prints_them(name, qrels, length, label):
    lines = [line.split() for line in (HERE / name).read_text().splitlines()]
    theirs = {query: value.strip("'") for measure, query, value in lines if measure == label}
    judgements = Judgements.from_frames(
        read_run(HERE / "results.test"),
        read_qrels(HERE / qrels),
        order_by="score",
        negative_grades="zero",
    )
    assert relstrings(judgements, length=length).to_dict() == theirs


def test_relstrings_mark_every_state():
    judgements = Judgements.from_frames(
        pd.DataFrame({"user": "q", "item": list("abcde"), "rank": [1, 2, 3, 4, 5]}),
        pd.DataFrame({"user": "q", "item": list("abce"), "relevance": [12, 0, -1, 3]}),
        negative_grades="zero",
    )
    assert relstrings(judgements, PRESETS["trec_eval"](order_by="rank"))["q"] == ">0.-3"
    assert relstrings(judgements, PRESETS["trec_eval"](order_by="rank"), 2)["q"] == ">0"


def test_text_values_and_measures_offeval_does_not_have():
    assert trec_eval_texts(["all_trec", "relstring.20"]) == [
        ("runid", None),
        ("relstring_20", 20),
    ]
    assert trec_eval_texts(["official"]) == [("runid", None)]
    assert trec_eval_texts(["relstring"]) == [("relstring", 10)]
    assert trec_eval_texts(["P.5"]) == []
    for name in ("prefs", "prefs_simp", "map_avgjg"):
        with pytest.raises(ConfigurationError, match="offeval does not compute trec_eval's"):
            trec_eval_measures([name])


@pytest.mark.parametrize("name", list(STORED))
def test_stored_settings_are_notice_md_s_command_lines(name):
    qrels, results, arguments, complete, most, level = STORED[name]
    command = NOTICE[name]
    assert qrels in command and results.removesuffix(".gz") in command
    assert (" -c " in command) == complete
    assert (f"-M{most}" in command) == (most is not None)
    assert (f"-l{level}" in command) == (level != 1)
    given = [part.split()[0] for part in command.strip("` ").split("-m")[1:]]
    assert given == arguments or (not given and arguments == ["official"])  # the default


@pytest.mark.parametrize("seed", range(3))
def test_identities_between_trec_eval_s_measures(seed):
    qrels, run = _random_collection(seed)
    pred, lab = _scored_frames(run, qrels)
    names = ["num_rel", "num_rel_ret", "num_ret", "Rprec", "iprec_at_recall", "11pt_avg"]
    names += ["Rprec_mult.1.0", "set_P", "set_recall", "set_map", "set_relative_P"]
    v = compute_measures(pred, lab, trec_eval_measures(names), PRESETS["trec_eval"]()).per_user
    v = v.dropna()
    levels = [f"iprec_at_recall_{0.1 * i:.2f}" for i in range(11)]
    assert np.allclose(v["11pt_avg"], v[levels].mean(axis=1))
    assert (np.diff(v[levels].to_numpy(), axis=1) <= 1e-12).all()  # interpolated: falling
    assert np.allclose(v["Rprec_mult_1.00"], v["Rprec"])
    assert np.allclose(v["set_map"], v["set_P"] * v["set_recall"])
    assert np.allclose(v["num_rel_ret"], v["set_P"] * v["num_ret"])
    best = np.minimum(v["num_ret"], v["num_rel"])
    assert np.allclose(v["set_relative_P"], np.where(best > 0, v["num_rel_ret"] / best, 0))


def test_summary_reports_each_column_s_own_aggregate():
    run = pd.DataFrame({"user": ["q1", "q1", "q2"], "item": list("abc"), "score": [2.0, 1, 1]})
    qrels = pd.DataFrame({"user": ["q1", "q2"], "item": ["a", "c"], "relevance": [1, 1]})
    result = compute_measures(run, qrels, parse_measures(["num_ret", "P_1", "gm_map"]))
    summary = result.summary()
    assert summary.loc["num_ret", "value"] == 3 and summary.loc["num_ret", "mean"] == 1.5
    assert summary.loc["P_1", "value"] == summary.loc["P_1", "mean"] == 1.0
    assert summary.loc["gm_map", "value"] == pytest.approx(1.0)
    assert "num_ret=3.0000" in repr(result)
    plain = compute_measures(run, qrels, ["P_1"]).summary()
    assert "value" not in plain.columns


def test_blocks_of_users_give_the_same_values():
    measures = trec_eval_measures(["all_trec", "ndcg.0=1,2=5", "G.1=2", "rbp.p=0.5,3=-1"])
    run, qrels = read_run(HERE / "results.test"), read_qrels(HERE / "qrels.rel_level")
    conventions = PRESETS["trec_eval"](relevance_threshold=2.0)
    whole = compute_measures(run, qrels, measures, conventions)
    blocks = compute_measures(run, qrels, measures, conventions, chunk_rows=300)
    pd.testing.assert_frame_equal(blocks.per_user, whole.per_user)


def test_every_known_name_with_an_at_cut_off_parses_or_is_refused_never_crashes():
    from offeval_ir.measures import _SUGGESTED

    for name in sorted(set(_SUGGESTED.values())):
        try:
            parse_measures([f"{name}@3"])
        except ConfigurationError:
            pass


def test_unj_and_relative_p_take_an_at_cut_off_as_map_cut_does():
    # m_unjudged.c: unjudged in the top k over k; m_rel_P.c: relevant in the top k
    # over min(k, relevant labels), 0 for a query without relevant labels
    runs = {"a": ["d1", "d2", "d3", "d4"], "b": ["d5", "d6"], "c": ["d7", "d8", "d9"]}
    qrels = {"a": {"d1": 1, "d3": 0, "d9": 2}, "b": {"d6": 2}, "c": {"d8": 0, "d7": 0}}
    pred, lab = _frames(runs, qrels)
    result = compute_measures(pred, lab, ["unj@3", "relative_P@2", "unj_3", "relative_P_2"])
    unj = [sum(i not in qrels[u] for i in runs[u][:3]) / 3 for u in "abc"]
    relevant = {u: [i for i, g in qrels[u].items() if g >= 1] for u in "abc"}
    rel_p = [
        sum(i in relevant[u] for i in runs[u][:2]) / min(2, len(relevant[u]))
        if relevant[u]
        else 0.0
        for u in "abc"
    ]
    frame = result.per_user.loc[list("abc")]
    assert frame["unj@3"].to_numpy() == pytest.approx(unj)
    assert frame["unj_3"].to_numpy() == pytest.approx(unj)
    assert frame["relative_P@2"].to_numpy() == pytest.approx(rel_p)
    assert frame["relative_P_2"].to_numpy() == pytest.approx(rel_p)
