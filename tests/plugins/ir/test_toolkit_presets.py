"""Each recommender toolkit's own per-user numbers, reproduced by offeval's switches.

LensKit, rectools, recpack, cornac and trectools pin numpy, pandas or torch
versions offeval's environment does not share, so their values were computed
by the toolkits themselves, each in its own virtual environment, with
``tests/plugins/ir/toolkit_reference/generate.py``, and are pinned in
``pinned.json`` with the library versions. ``toolkit_reference/README.md``
says, per toolkit and measure, which convention each follows.

For each toolkit, one test reproduces the measures today's switches express,
and one test per measure holds the toolkit's preset to all of them. The
conventions the presets needed beyond those switches are written out as
brute-force formulas at the end, checked against the toolkits' numbers.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from offeval import ConfigurationError
from offeval_ir import PRESETS, Judgements, compute

HERE = Path(__file__).parent / "toolkit_reference"
sys.path.insert(0, str(HERE))
from toolkit_data import DATASETS, ranked, universe  # noqa: E402

PINNED = json.loads((HERE / "pinned.json").read_text())


def judgements(dataset: str, *, whole_catalogue=False, text_ids=False, files=False) -> Judgements:
    """The dataset's scored lists and held-out grades for every user of the lists.

    ``whole_catalogue``: every item scored, the lists on top (as cornac ranks);
    ``text_ids``: item ids as text (as trectools reads them); ``files``: only the
    users a run file or a qrels file has a line for.
    """
    scores, labels, items = DATASETS[dataset]
    if whole_catalogue:
        scores = {u: universe(s, items) for u, s in scores.items()}
    item_id = str if text_ids else int
    pred = pd.DataFrame(
        [(u, item_id(i), s) for u, d in scores.items() for i, s in d.items()],
        columns=["user", "item", "score"],
    )
    lab = pd.DataFrame(
        [(u, item_id(i), g) for u, d in labels.items() for i, g in d.items()],
        columns=["user", "item", "relevance"],
    )
    users = [u for u in scores if scores[u] or labels[u]] if files else list(scores)
    return Judgements.from_frames(pred, lab, users=users)


def pinned(toolkit: str, dataset: str, variant: str = "default", measures=None) -> dict:
    """``{column: values by user}`` the toolkit gave (NaN where it gave NaN or inf); only
    the columns of ``measures`` when given."""
    values = PINNED[toolkit]["data"][dataset][variant]
    return {
        column: pd.Series(
            {int(u): np.nan if v is None else v for u, v in per_user.items()}, dtype=float
        )
        for column, per_user in values.items()
        if measures is None or column.split("@")[0] in measures
    }


def ours(judged: Judgements, columns, conventions, rename=None) -> pd.DataFrame:
    """offeval's per-user values of ``columns`` (``measure@k``, or ``measure`` for no
    cut-off); ``rename`` maps a toolkit's measure to the offeval measure computing it."""
    rename = rename or {}
    result = {}
    for column in columns:
        measure, _, k = column.partition("@")
        cutoff = [int(k)] if k else [None]
        got = compute(judged, [rename.get(measure, measure)], cutoff, conventions)
        result[column] = got.per_user.iloc[:, 0]
    return pd.DataFrame(result)


def assert_same_users(got: pd.DataFrame, expected: dict, tol: float = 1e-12) -> None:
    """Per user, the toolkit's value, and NaN for every user the toolkit leaves out."""
    for column, theirs in expected.items():
        mine = got[column]
        np.testing.assert_allclose(mine.loc[theirs.index], theirs, rtol=0, atol=tol, err_msg=column)
        assert mine.drop(index=theirs.index).isna().all(), f"{column}: a user it leaves out"


def preset(toolkit: str, **switches):
    """The toolkit's preset, with ``switches`` changed."""
    return PRESETS[toolkit](**switches)


# -- rectools ---------------------------------------------------------------------------------
#: rectools 0.19 as today's switches say it: binary relevance, log2, AP over all held-out
#: items, the users of the held-out interactions (a user without recommendations scores 0).
RECTOOLS_TODAY = PRESETS["rectools"](ideal="labels", name="rectools-today")


@pytest.mark.parametrize("dataset", DATASETS)
def test_rectools_measures_today_switches_reproduce(dataset):
    """Precision, Recall, MAP, MRR, HitRate; NDCG(divide_by_achievable=True), whose ideal
    is the user's min(k, |held out|) relevant items; Precision(r_precision=True), hits
    over min(k, |held out|): offeval's recall with recall_denominator='min_k_labels'."""
    judged = judgements(dataset)
    default = pinned("rectools", dataset, measures={"precision", "recall", "ap", "rr", "hit_rate"})
    assert_same_users(ours(judged, default, RECTOOLS_TODAY), default)
    achievable = pinned("rectools", dataset, "NDCG(divide_by_achievable=True)")
    assert_same_users(ours(judged, achievable, RECTOOLS_TODAY), achievable)
    r_precision = pinned("rectools", dataset, "Precision(r_precision=True)")
    conventions = RECTOOLS_TODAY.with_(recall_denominator="min_k_labels")
    got = ours(judged, r_precision, conventions, rename={"precision": "recall"})
    assert_same_users(got, r_precision)


@pytest.mark.parametrize(
    ("variant", "measures", "switches"),
    [
        pytest.param(
            "default",
            {"precision", "recall", "ap", "rr", "hit_rate"},
            {},
            id="default",
        ),
        pytest.param("default", {"ndcg"}, {}, id="NDCG"),
        pytest.param(
            "MAP(divide_by_k=True)",
            {"ap"},
            {"ap_denominator": "k"},
            id="MAP(divide_by_k=True)",
        ),
        pytest.param(
            "NDCG(divide_by_achievable=True)",
            {"ndcg"},
            {"ideal": "labels"},
            id="NDCG(divide_by_achievable=True)",
        ),
        pytest.param(
            "Precision(r_precision=True)",
            {"precision"},
            {"precision_denominator": "min_k_labels"},
            id="Precision(r_precision=True)",
        ),
    ],
)
def test_rectools_preset(variant, measures, switches):
    for dataset in DATASETS:
        expected = pinned("rectools", dataset, variant, measures)
        got = ours(judgements(dataset), expected, preset("rectools", **switches))
        assert_same_users(got, expected)


# -- LensKit ----------------------------------------------------------------------------------
#: LensKit 2026.4 as today's switches say it: precision over min(k, list length), recall
#: over min(k, |held out|), binary relevance; a user without held-out items is left out
#: (NaN) except by Precision, which scores it, and leaves out a user with an empty list.
LENSKIT_TODAY = PRESETS["lenskit"](
    discount="shifted", ap_denominator="min_k_list", name="lenskit-today"
)


def _nothing_at_all(dataset: str) -> list:
    """The users with neither a list nor a held-out item."""
    scores, labels, _ = DATASETS[dataset]
    return [u for u in scores if not scores[u] and not labels[u]]


@pytest.mark.parametrize("dataset", DATASETS)
def test_lenskit_measures_today_switches_reproduce(dataset):
    """Recall, RecipRank, Hit; NDCG(weight=LogRankWeight(offset=1)), whose discount is
    1/log2(rank+1); Precision, except for a user with neither a list nor a held-out
    item (LensKit: NaN, for the empty list; here 0, for the missing labels)."""
    judged = judgements(dataset)
    default = pinned("lenskit", dataset, measures={"recall", "rr", "hit_rate"})
    assert_same_users(ours(judged, default, LENSKIT_TODAY), default)
    offset = pinned("lenskit", dataset, "NDCG(weight=LogRankWeight(offset=1))")
    assert_same_users(ours(judged, offset, LENSKIT_TODAY), offset)
    precision = pinned("lenskit", dataset, measures={"precision"})
    got = ours(judged, precision, LENSKIT_TODAY).drop(index=_nothing_at_all(dataset))
    assert_same_users(
        got, {c: v.drop(index=_nothing_at_all(dataset)) for c, v in precision.items()}
    )


def _lenskit_expected(dataset: str, variant: str, measures) -> dict:
    """LensKit's values; a user on whom AveragePrecision raises ZeroDivisionError (no
    held-out item) is left out, as LensKit leaves such a user out of every other measure."""
    expected = pinned("lenskit", dataset, variant, measures)
    errors = PINNED["lenskit"]["data"][dataset]["errors"]
    for column, users in errors.items():
        if column in expected:
            expected[column] = pd.concat(
                [expected[column], pd.Series(np.nan, index=[int(u) for u in users])]
            )
    return expected


@pytest.mark.parametrize(
    ("variant", "measures", "switches"),
    [
        pytest.param(
            "default",
            {"recall", "rr", "hit_rate"},
            {},
            id="default",
        ),
        pytest.param("default", {"precision"}, {}, id="Precision"),
        pytest.param("default", {"ndcg"}, {}, id="NDCG"),
        pytest.param("default", {"ap"}, {}, id="AveragePrecision"),
        pytest.param(
            "NDCG(gain='rating')",
            {"ndcg"},
            {"dcg_relevance": "graded", "gain": "linear"},
            id="NDCG(gain='rating')",
        ),
        pytest.param(
            "NDCG(weight=LogRankWeight(offset=1))",
            {"ndcg"},
            {"discount": "shifted"},
            id="NDCG(weight=LogRankWeight(offset=1))",
        ),
    ],
)
def test_lenskit_preset(variant, measures, switches):
    for dataset in DATASETS:
        expected = _lenskit_expected(dataset, variant, measures)
        got = ours(judgements(dataset), expected, preset("lenskit", **switches))
        assert_same_users(got, expected)


def test_lenskit_average_precision_raises_on_a_user_without_held_out_items():
    """What offeval does instead is above: such a user is left out (NaN)."""
    errors = PINNED["lenskit"]["data"]["five_users"]["errors"]
    assert errors["ap@10"] == {"4": "ZeroDivisionError: float division by zero"}


# -- recpack ----------------------------------------------------------------------------------
#: recpack 0.3.6 as today's switches say it: PrecisionK over K, RecallK over |held out|,
#: CalibratedRecallK over min(K, |held out|), DCGK and NDCGK binary with log2 and the
#: ideal of min(K, |held out|) items; users without held-out items are dropped. These are
#: RecBole's conventions. Tied scores by item id ascending, as the ``tie-free`` values
#: were scored.
RECPACK_TODAY = PRESETS["recbole"](ties="item_asc")
#: The datasets whose lists have no tied scores.
TIE_FREE = [
    name
    for name, (scores, _, _) in DATASETS.items()
    if all(len(set(s.values())) == len(s) for s in scores.values())
]


@pytest.mark.parametrize("dataset", DATASETS)
def test_recpack_measures_today_switches_reproduce(dataset):
    """On scores without ties (recpack leaves tied scores in the order numpy's
    argpartition leaves them, which no tie switch reproduces): the datasets without
    ties as they are, and every dataset scored by position (``tie-free``)."""
    judged = judgements(dataset)
    variants = ["tie-free", "default"] if dataset in TIE_FREE else ["tie-free"]
    for variant in variants:
        expected = pinned("recpack", dataset, variant, {"precision", "recall", "dcg", "ndcg", "rr"})
        assert_same_users(ours(judged, expected, RECPACK_TODAY), expected)
        calibrated = pinned("recpack", dataset, variant, {"calibrated_recall"})
        conventions = RECPACK_TODAY.with_(recall_denominator="min_k_labels")
        got = ours(judged, calibrated, conventions, rename={"calibrated_recall": "recall"})
        assert_same_users(got, calibrated)


@pytest.mark.parametrize(
    ("measures", "switches"),
    [
        pytest.param(
            {"precision", "recall", "dcg", "ndcg", "rr"},
            {},
            id="default",
        ),
        pytest.param({"calibrated_recall"}, {}, id="CalibratedRecallK"),
        pytest.param(
            {"hits"},
            {},
            id="HitK",
        ),
    ],
)
def test_recpack_preset(measures, switches):
    for dataset in DATASETS:
        expected = pinned("recpack", dataset, "tie-free", measures)
        conventions = preset("recpack", ties="item_asc", **switches)
        assert_same_users(ours(judgements(dataset), expected, conventions), expected)


# -- cornac -----------------------------------------------------------------------------------
#: cornac 3.0 as today's switches say it, on the whole catalogue ranked (as ranking_eval
#: ranks it): Precision over k, Recall over |held out|, NDCG binary with log2 and the ideal of
#: min(k, |held out|) items, MRR and MAP over the whole ranking (no k), MAP over every held-out
#: item; users without a positive test item are skipped.
CORNAC_TODAY = RECTOOLS_TODAY.with_(name="cornac-today")
CORNAC_AT_K = {"precision", "recall", "ndcg", "hit_rate"}


@pytest.mark.parametrize("dataset", DATASETS)
def test_cornac_measures_today_switches_reproduce(dataset):
    """Every measure; MAP only on tie-free scores (cornac ranks tied items together)."""
    judged = judgements(dataset, whole_catalogue=True)
    measures = CORNAC_AT_K | {"rr"} | ({"ap"} if dataset in TIE_FREE else set())
    expected = pinned("cornac", dataset, measures=measures)
    assert_same_users(ours(judged, expected, CORNAC_TODAY), expected)


@pytest.mark.parametrize(
    "measures",
    [
        pytest.param(CORNAC_AT_K | {"rr"}, id="default"),
        pytest.param({"ap"}, id="MAP"),  # ties='last', as cornac's MAP ranks tied scores
    ],
)
def test_cornac_preset(measures):
    for dataset in DATASETS:
        expected = pinned("cornac", dataset, measures=measures)
        got = ours(judgements(dataset, whole_catalogue=True), expected, preset("cornac"))
        assert_same_users(got, expected)


#: ties='last' on every measure it is defined for, cornac's other switches.
AT_LAST = PRESETS["cornac"](ties="last", per_metric=(), name="at-last")


def _at_last(scores: dict, labels: dict, k: int) -> dict:
    """The measures at k with every item of a tie group at the group's last rank (the
    number of items scored at least as high), by brute force; binary relevance, log2."""
    rank = {i: sum(t >= s for t in scores.values()) for i, s in scores.items()}
    hit = sorted(rank[i] for i in labels if i in scores and rank[i] <= k)
    n_rel, discount = len(labels), [1 / np.log2(r + 1) for r in hit]
    ideal = sum(1 / np.log2(i + 1) for i in range(1, min(k, n_rel) + 1))
    return {
        f"hits@{k}": len(hit),
        f"precision@{k}": len(hit) / k,
        f"recall@{k}": len(hit) / n_rel,
        f"calibrated_recall@{k}": len(hit) / min(k, n_rel),
        f"ap@{k}": sum(hit.count(r) * sum(h <= r for h in hit) / r for r in set(hit)) / n_rel,
        f"rr@{k}": 1 / hit[0] if hit else 0.0,
        f"dcg@{k}": sum(discount),
        f"ndcg@{k}": sum(discount) / ideal,
        f"rbp@{k}": 0.2 * sum(0.8 ** (r - 1) for r in hit),
        f"judged@{k}": sum(i in labels and rank[i] <= k for i in scores) / k,
    }


@pytest.mark.parametrize("dataset", ["tied", "movielens"])
def test_ties_last_puts_a_tie_group_at_its_last_rank(dataset):
    scores, labels, _ = DATASETS[dataset]
    users = [u for u in scores if labels[u]]
    for k in (1, 3, 5, 10):
        expected = pd.DataFrame({u: _at_last(scores[u], labels[u], k) for u in users}).T
        got = ours(judgements(dataset), expected.columns, AT_LAST)
        assert_same_users(got, {column: expected[column] for column in expected})


@pytest.mark.parametrize("measure", ["err", "bpref", "rbp_residual", "trec_ndcg"])
def test_ties_last_is_an_error_where_it_is_not_defined(measure):
    with pytest.raises(ConfigurationError, match="ties='last'"):
        compute(judgements("tied"), [measure], [5], AT_LAST)


# -- trectools --------------------------------------------------------------------------------
#: trectools 0.0.50 as today's switches say it, on the files its users give it (TrecRun and
#: TrecQrel read ids as text): trec_eval's measures and order (score descending, docid
#: descending as text), except nDCG, which keeps the order read_run leaves (docid
#: ascending); its means divide by the number of the run's users, so a user without a
#: relevant label scores 0 and a user missing from the run is left out.
TRECTOOLS_TODAY = PRESETS["trec_eval"](
    empty_labels="zero", no_predictions="nan", per_metric=(("ndcg", "ties", "item_asc"),)
)
#: ``trec_eval=False``: the order read_run leaves for every measure, and nDCG's gain 2^rel - 1.
TRECTOOLS_FILE_ORDER = TRECTOOLS_TODAY.with_(
    ties="item_asc", per_metric=(("ndcg", "gain", "exponential"),)
)


def assert_trectools(got: pd.DataFrame, per_user: dict, means: dict) -> None:
    """trectools' per-query frames: a value wherever trectools computes one (it gives NaN
    for 0/0 and omits a query without a hit from recip_rank), and its means."""
    for column, theirs in per_user.items():
        known = theirs.dropna()
        np.testing.assert_allclose(got[column].loc[known.index], known, rtol=0, atol=1e-12)
        assert got[column].mean() == pytest.approx(means[column], abs=1e-12), column


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize(
    ("variant", "conventions"),
    [("default", TRECTOOLS_TODAY), ("trec_eval=False", TRECTOOLS_FILE_ORDER)],
)
def test_trectools_today_switches_reproduce(dataset, variant, conventions):
    judged = judgements(dataset, text_ids=True, files=True)
    per_user = pinned("trectools", dataset, variant)
    means = PINNED["trectools"]["data"][dataset][f"{variant}:mean"]
    assert_trectools(ours(judged, per_user, conventions), per_user, means)


@pytest.mark.parametrize("dataset", DATASETS)
def test_trectools_preset(dataset):
    judged = judgements(dataset, text_ids=True, files=True)
    per_user = pinned("trectools", dataset)
    means = PINNED["trectools"]["data"][dataset]["default:mean"]
    assert_trectools(ours(judged, per_user, preset("trectools")), per_user, means)


# -- the missing conventions, as formulas -----------------------------------------------------
# Brute force on the dataset itself, no offeval: the formulas README.md states reproduce the
# toolkits' pinned numbers, so a switch implementing them reproduces the toolkit.


def _hits(scores: dict, labels: dict, k: int) -> np.ndarray:
    return np.array([item in labels for item in ranked(scores)[:k]], dtype=float)


def _precision_sum(hits: np.ndarray) -> float:
    """Sum of P@i over the relevant ranks i."""
    return float((np.cumsum(hits) / np.arange(1, hits.size + 1) * hits).sum())


def _clipped(n: int) -> np.ndarray:
    """LensKit's rank weights 1 / max(1, log2 i), i = 1..n."""
    return 1 / np.log2(np.maximum(np.arange(1, n + 1), 2))


def rectools_ndcg(scores, labels, items, k):
    shifted = 1 / np.log2(np.arange(2, k + 2))
    hits = _hits(scores, labels, k)
    return float(hits @ shifted[: hits.size] / shifted.sum())


def rectools_map_over_k(scores, labels, items, k):
    return _precision_sum(_hits(scores, labels, k)) / k


def lenskit_ndcg(scores, labels, items, k, graded=False):
    if not labels:
        return np.nan
    top = ranked(scores)[:k]
    gains = np.array([labels.get(i, 0) if graded else float(i in labels) for i in top])
    best = np.sort(np.array(list(labels.values()) if graded else [1.0] * len(labels)))[::-1][:k]
    ideal = float(best @ _clipped(best.size))
    return float(gains @ _clipped(gains.size)) / ideal if ideal else 0.0


def lenskit_ap(scores, labels, items, k):
    hits = _hits(scores, labels, k)
    return _precision_sum(hits) / min(len(labels), k, hits.size) if hits.size else np.nan


def cornac_ap(scores, labels, items, k=None):
    full = universe(scores, items)
    values = np.array([full[i] for i in items])
    relevant = values[[i in labels for i in items]]
    above = (values[None, :] >= relevant[:, None]).sum(axis=1)  # rank: the group's last
    relevant_above = (relevant[None, :] >= relevant[:, None]).sum(axis=1)
    return float((relevant_above / above).mean())


def recpack_hits(scores, labels, items, k):
    return float(_hits(scores, labels, k).sum())


@pytest.mark.parametrize(
    ("toolkit", "variant", "measure", "formula"),
    [
        ("rectools", "default", "ndcg", rectools_ndcg),
        ("rectools", "MAP(divide_by_k=True)", "ap", rectools_map_over_k),
        ("lenskit", "default", "ndcg", lenskit_ndcg),
        ("lenskit", "NDCG(gain='rating')", "ndcg", partial(lenskit_ndcg, graded=True)),
        ("lenskit", "default", "ap", lenskit_ap),
        ("cornac", "default", "ap", cornac_ap),
        ("recpack", "tie-free", "hits", recpack_hits),
    ],
)
def test_the_missing_conventions_are_these_formulas(toolkit, variant, measure, formula):
    for dataset, (scores, labels, items) in DATASETS.items():
        for column, theirs in pinned(toolkit, dataset, variant, {measure}).items():
            k = int(column.partition("@")[2]) if "@" in column else None
            mine = [formula(scores[u], labels[u], items, k=k) for u in theirs.index]
            np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12, err_msg=column)
