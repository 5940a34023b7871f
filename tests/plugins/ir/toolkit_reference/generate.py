"""Compute the recommender toolkits' own per-user metric values on ``toolkit_data.py``.

Each toolkit pins its own numpy, pandas or torch, so each runs in its own
virtual environment, and this script computes one toolkit at a time and
merges its entry into ``pinned.json`` (values, library version, Python)::

    python3.13 -m venv /tmp/venvs/lenskit && /tmp/venvs/lenskit/bin/pip install lenskit
    python3.11 -m venv /tmp/venvs/rectools && /tmp/venvs/rectools/bin/pip install rectools
    python3.11 -m venv /tmp/venvs/recpack && /tmp/venvs/recpack/bin/pip install recpack
    python3.11 -m venv /tmp/venvs/cornac && /tmp/venvs/cornac/bin/pip install cornac
    python3.12 -m venv /tmp/venvs/trectools && /tmp/venvs/trectools/bin/pip install trectools
    /tmp/venvs/<toolkit>/bin/python tests/plugins/ir/toolkit_reference/generate.py <toolkit>

Every toolkit is called the way its users call it, with its own metric
classes and its defaults; named variants (``MAP(divide_by_k=True)``) are
extra entries. A user the toolkit leaves out is absent from its values; a
value the toolkit returns as NaN or infinity is stored as null. Where a
toolkit's mean is not the mean of its per-user values (trectools), the mean
is pinned too, as ``<variant>:mean``.
"""

from __future__ import annotations

import json
import math
import platform
import sys
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from toolkit_data import DATASETS, KS, ranked, universe  # noqa: E402

warnings.filterwarnings("ignore")
PINNED = Path(__file__).with_name("pinned.json")


def _value(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _long_frames(scores, labels, user="user_id", item="item_id"):
    import pandas as pd

    reco = pd.DataFrame(
        [(u, i, r) for u, s in scores.items() for r, i in enumerate(ranked(s), start=1)],
        columns=[user, item, "rank"],
    )
    held_out = pd.DataFrame(
        [(u, i, g) for u, d in labels.items() for i, g in d.items()], columns=[user, item, "grade"]
    )
    return reco, held_out


# -- LensKit ------------------------------------------------------------------------------
def lenskit_values(scores, labels, items):
    """LensKit's ranking metrics through a MeasurementCollector (``measure_run``) on
    ItemListCollections keyed by user_id: one ordered output list per user (empty
    where the dataset's list is empty), the held-out items (with their grades as
    ``rating``) as test lists. Users are those of the outputs; a user without
    held-out items is measured against an empty list: AveragePrecision then raises
    ZeroDivisionError (its ``ap_sum / min(len(test), len(recs))``), which stops
    ``measure_run`` for the whole run, so AP is measured on the users with held-out
    items and the error is recorded for the others."""
    import lenskit.metrics as M
    from lenskit.data import ItemList, ItemListCollection, UserIDKey
    from lenskit.metrics import LogRankWeight, MeasurementCollector
    from lenskit.metrics.ranking import AveragePrecision

    def collection(lists):
        return ItemListCollection.from_dict(lists, UserIDKey)

    outputs = {
        u: ItemList(item_ids=np.array(ranked(s), dtype=np.int64), ordered=True)
        for u, s in scores.items()
    }
    tests = {
        u: ItemList(
            item_ids=np.array(list(d), dtype=np.int64),
            rating=np.array(list(d.values()), dtype=np.float64),
        )
        for u, d in labels.items()
        if d
    }
    variants = {
        "default": {
            "precision": M.Precision,
            "recall": M.Recall,
            "ndcg": M.NDCG,
            "rr": M.RecipRank,
            "hit_rate": M.Hit,
        },
        "NDCG(gain='rating')": {"ndcg": lambda n: M.NDCG(n, gain="rating")},
        "NDCG(weight=LogRankWeight(offset=1))": {
            "ndcg": lambda n: M.NDCG(n, weight=LogRankWeight(offset=1))
        },
    }

    def measured(metrics, users):
        collector = MeasurementCollector()
        for name, make in metrics.items():
            for k in KS:
                collector.add_metric(make(k), f"{name}@{k}")
        run = collector.measure_run(
            collection({u: outputs[u] for u in users}),
            collection({u: tests[u] for u in users if u in tests}),
        )
        return {
            column: {int(u): _value(v) for u, v in run.list_metrics[column].items()}
            for column in run.list_metrics.columns
        }

    out = {variant: measured(metrics, list(outputs)) for variant, metrics in variants.items()}
    held_out = [u for u in outputs if u in tests]
    out["default"].update(measured({"ap": AveragePrecision}, held_out))
    errors = {}
    for u in outputs:
        if u in tests:
            continue
        for k in KS:
            try:
                value = AveragePrecision(k).measure_list(outputs[u], ItemList([]))
            except ZeroDivisionError as error:
                errors.setdefault(f"ap@{k}", {})[u] = f"ZeroDivisionError: {error}"
            else:
                out["default"][f"ap@{k}"][u] = _value(value)
    out["errors"] = errors
    return out


# -- rectools ------------------------------------------------------------------------------
def rectools_values(scores, labels, items):
    """rectools.metrics on a reco frame (user_id, item_id, rank) and the held-out
    interactions (user_id, item_id): calc_per_user gives the users of the interactions."""
    from rectools import metrics as M

    reco, interactions = _long_frames(scores, labels)
    interactions = interactions[["user_id", "item_id"]]
    variants = {
        "default": {
            "precision": M.Precision,
            "recall": M.Recall,
            "ap": M.MAP,
            "ndcg": M.NDCG,
            "rr": M.MRR,
            "hit_rate": M.HitRate,
        },
        "MAP(divide_by_k=True)": {"ap": lambda k: M.MAP(k, divide_by_k=True)},
        "NDCG(divide_by_achievable=True)": {"ndcg": lambda k: M.NDCG(k, divide_by_achievable=True)},
        "Precision(r_precision=True)": {"precision": lambda k: M.Precision(k, r_precision=True)},
    }
    out = {}
    for variant, metrics in variants.items():
        out[variant] = {}
        for name, make in metrics.items():
            for k in KS:
                per_user = make(k).calc_per_user(reco, interactions)
                out[variant][f"{name}@{k}"] = {int(u): _value(v) for u, v in per_user.items()}
    return out


# -- recpack ------------------------------------------------------------------------------
def recpack_values(scores, labels, items):
    """recpack.metrics' classes, ``metric.calculate(y_true, y_pred)`` then ``results``:
    ``y_true`` the binary users x items matrix of held-out items (as a scenario's
    ``test_data_out.binary_values``), ``y_pred`` the scores as a sparse matrix (an
    item not recommended has no entry); recpack takes each row's top K itself
    (numpy's argpartition: tied scores in no defined order) and drops the users
    without a held-out item. HitK is elementwise: a user's value is the number of
    hits in the top K (what ``HitK.value`` averages). ``tie-free``: the same lists
    scored by their position (ties broken by item id ascending) before recpack
    sees them."""
    from recpack import metrics as M
    from scipy.sparse import csr_matrix

    users = list(scores)
    shape = (len(users), max(items) + 1)
    held = [(n, i) for n, u in enumerate(users) for i in labels[u]]
    y_true = csr_matrix((np.ones(len(held)), ([n for n, _ in held], [i for _, i in held])), shape)
    listwise = {
        "precision": M.PrecisionK,
        "recall": M.RecallK,
        "calibrated_recall": M.CalibratedRecallK,
        "dcg": M.DCGK,
        "ndcg": M.NDCGK,
        "rr": M.ReciprocalRankK,
    }

    def measured(by_user):
        rows = [(n, i, s) for n, u in enumerate(users) for i, s in by_user[u].items()]
        y_pred = csr_matrix(
            ([s for _, _, s in rows], ([n for n, _, _ in rows], [i for _, i, _ in rows])), shape
        )
        out = {}
        for k in KS:
            for name, cls in listwise.items():
                metric = cls(k)
                metric.calculate(y_true, y_pred)
                results = metric.results
                out[f"{name}@{k}"] = {
                    users[int(n)]: _value(v)
                    for n, v in zip(results["user_id"], results["score"], strict=True)
                }
            hit = M.HitK(k)
            hit.calculate(y_true, y_pred)
            per_user = hit.results.groupby("user_id")["score"].sum()
            out[f"hits@{k}"] = {users[int(n)]: _value(v) for n, v in per_user.items()}
        return out

    by_position = {
        u: {i: float(len(s) - r) for r, i in enumerate(ranked(s))} for u, s in scores.items()
    }
    return {"default": measured(scores), "tie-free": measured(by_position)}


# -- cornac --------------------------------------------------------------------------------
def cornac_values(scores, labels, items):
    """cornac.metrics as ``cornac.eval_methods.ranking_eval`` calls them: for each user
    with a positive held-out item, ``pd_rank`` ranks the whole catalogue (the
    recommended items on top), ``pd_scores`` scores it; MAP and MRR have no k."""
    from cornac import metrics as M

    at_k = {
        "precision": M.Precision,
        "recall": M.Recall,
        "ndcg": M.NDCG,
        "hit_rate": M.HitRatio,
    }
    out = {"default": {}}
    index = np.array(items)
    for u in scores:
        if not labels[u]:  # ranking_eval skips a user without a positive test item
            continue
        full = universe(scores[u], items)
        pd_scores = np.array([full[i] for i in items])
        pd_rank = np.array(ranked(full))
        gt_pos = np.array(sorted(labels[u]))
        for name, cls in at_k.items():
            for k in KS:
                value = cls(k=k).compute(gt_pos=gt_pos, pd_rank=pd_rank)
                out["default"].setdefault(f"{name}@{k}", {})[u] = _value(value)
        args = {"gt_pos": gt_pos, "pd_rank": pd_rank, "pd_scores": pd_scores}
        out["default"].setdefault("ap", {})[u] = _value(M.MAP().compute(item_indices=index, **args))
        out["default"].setdefault("rr", {})[u] = _value(M.MRR().compute(**args))
    return out


# -- trectools -----------------------------------------------------------------------------
def trectools_values(scores, labels, items):
    """trectools' TrecEval on a run file and a qrels file read by TrecRun and TrecQrel
    (a run file has no line for a user without predictions, a qrels file none for a
    user without held-out items), per_query=True, depth=k; ``trec_eval=False`` also
    (nDCG's exponential gain, the file's order: read_run's score descending, docid
    ascending)."""
    import tempfile

    from trectools import TrecEval, TrecQrel, TrecRun

    with tempfile.TemporaryDirectory() as folder:
        run_path, qrels_path = Path(folder) / "a.run", Path(folder) / "qrels.txt"
        run_path.write_text(
            "".join(
                f"{u} Q0 {i} {r} {s[i]} a\n"
                for u, s in scores.items()
                for r, i in enumerate(ranked(s), start=1)
            )
        )
        qrels_path.write_text(
            "".join(f"{u} 0 {i} {g}\n" for u, d in labels.items() for i, g in d.items())
        )
        evaluation = TrecEval(TrecRun(str(run_path)), TrecQrel(str(qrels_path)))
    methods = {
        "precision": evaluation.get_precision,
        "recall": evaluation.get_recall,
        "ap": evaluation.get_map,
        "ndcg": evaluation.get_ndcg,
        "rr": evaluation.get_reciprocal_rank,
    }
    out = {}
    for variant, trec_eval in (("default", True), ("trec_eval=False", False)):
        out[variant], out[f"{variant}:mean"] = {}, {}
        for name, method in methods.items():
            for k in KS:
                frame = method(depth=k, per_query=True, trec_eval=trec_eval)
                column = frame.iloc[:, 0]
                out[variant][f"{name}@{k}"] = {int(u): _value(v) for u, v in column.items()}
                mean = method(depth=k, per_query=False, trec_eval=trec_eval)
                out[f"{variant}:mean"][f"{name}@{k}"] = _value(mean)
    return out


TOOLKITS = {
    "lenskit": ("lenskit", lenskit_values),
    "rectools": ("rectools", rectools_values),
    "recpack": ("recpack", recpack_values),
    "cornac": ("cornac", cornac_values),
    "trectools": ("trectools", trectools_values),
}


def _installed(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def main(toolkit: str) -> None:
    package, func = TOOLKITS[toolkit]
    pinned = json.loads(PINNED.read_text()) if PINNED.exists() else {}
    pinned[toolkit] = {
        "library": package,
        "version": version(package),
        "python": platform.python_version(),
        "environment": {name: _installed(name) for name in ("numpy", "pandas", "scipy", "torch")},
        "data": {name: func(*data) for name, data in DATASETS.items()},
    }
    PINNED.write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n")
    print(toolkit, version(package), "written to", PINNED)


if __name__ == "__main__":
    main(sys.argv[1])
