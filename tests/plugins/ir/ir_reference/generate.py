"""Compute reference values with peer libraries that are too heavy for the test suite.

torchmetrics and RecBole need torch, Spark MLlib a JVM, recommenders a long
dependency chain: run this in an environment that has them, e.g.

    pip install torch==2.13.0 torchmetrics recbole pyspark recommenders
    python tests/plugins/ir/ir_reference/generate.py

It writes ``pinned.json`` (values and library versions), which the tests
compare offeval's presets against. Each library gets the input its users would
give it; see ``data.py``.
"""

from __future__ import annotations

import json
import sys
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from data import DATASETS, KS, universe_scores  # noqa: E402

warnings.filterwarnings("ignore")


def torchmetrics_values(predictions, labels, items):
    import torch
    import torchmetrics.functional.retrieval as R

    funcs = {
        "precision": R.retrieval_precision,
        "recall": R.retrieval_recall,
        "ap": R.retrieval_average_precision,
        "rr": R.retrieval_reciprocal_rank,
        "ndcg": R.retrieval_normalized_dcg,
        "hit_rate": R.retrieval_hit_rate,
    }
    scores = universe_scores(predictions, items, tie_free=True)
    out = {}
    for k in KS:
        for name, f in funcs.items():
            per_user = {}
            for u in predictions:
                preds = torch.tensor([scores[u][i] for i in items], dtype=torch.float64)
                grades = [labels[u].get(i, 0) for i in items]
                target = torch.tensor(grades, dtype=torch.float64 if name == "ndcg" else torch.long)
                if name != "ndcg":
                    target = (target > 0).long()
                per_user[u] = float(f(preds, target, top_k=k))
            out[f"{name}@{k}"] = per_user
    return out


def recbole_values(predictions, labels, items):
    setattr(np, "float", float)  # noqa: B010 - RecBole's MAP uses the alias numpy removed
    from recbole.evaluator.metrics import MAP, MRR, NDCG, Hit, Precision, Recall

    users = [u for u in predictions if labels[u]]  # RecBole evaluates users with positives
    width = max(KS)
    pos_index = np.array(
        [[item in labels[u] for item in (predictions[u] + [None] * width)[:width]] for u in users]
    )
    pos_len = np.array([len(labels[u]) for u in users])
    config = {"topk": list(range(1, width + 1)), "metric_decimal_place": 10}
    out = {}
    for name, cls in {
        "precision": Precision,
        "recall": Recall,
        "ap": MAP,
        "rr": MRR,
        "ndcg": NDCG,
        "hit_rate": Hit,
    }.items():
        metric = cls(config)
        info = (
            metric.metric_info(pos_index)
            if name in ("precision", "rr", "hit_rate")
            else metric.metric_info(pos_index, pos_len)
        )
        for k in KS:
            out[f"{name}@{k}"] = {u: float(v) for u, v in zip(users, info[:, k - 1], strict=True)}
    return out


def spark_values(predictions, labels, items):
    from pyspark.mllib.evaluation import RankingMetrics
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rows = [
        ([float(i) for i in predictions[u]], [float(i) for i in labels[u]]) for u in predictions
    ]
    metrics = RankingMetrics(spark.sparkContext.parallelize(rows))
    out = {}
    for k in KS:
        out[f"precision@{k}"] = {"mean": metrics.precisionAt(k)}
        out[f"recall@{k}"] = {"mean": metrics.recallAt(k)}
        out[f"ap@{k}"] = {"mean": metrics.meanAveragePrecisionAt(k)}
        out[f"ndcg@{k}"] = {"mean": metrics.ndcgAt(k)}
    spark.stop()
    return out


def recommenders_values(predictions, labels, items):
    from recommenders.evaluation.python_evaluation import (
        map_at_k,
        ndcg_at_k,
        precision_at_k,
        recall_at_k,
    )

    true = pd.DataFrame(
        [(u, i, float(g)) for u, d in labels.items() for i, g in d.items()],
        columns=["userID", "itemID", "rating"],
    )
    pred = pd.DataFrame(
        [(u, i, float(len(lst) - r)) for u, lst in predictions.items() for r, i in enumerate(lst)],
        columns=["userID", "itemID", "prediction"],
    )
    funcs = {"precision": precision_at_k, "recall": recall_at_k, "ap": map_at_k, "ndcg": ndcg_at_k}
    return {
        f"{name}@{k}": {"mean": float(f(true, pred, k=k))} for k in KS for name, f in funcs.items()
    }


LIBRARIES = {
    "torchmetrics": ("torchmetrics", torchmetrics_values),
    "recbole": ("recbole", recbole_values),
    "spark_mllib": ("pyspark", spark_values),
    "recommenders": ("recommenders", recommenders_values),
}


def main() -> None:
    result = {}
    for preset, (package, func) in LIBRARIES.items():
        result[preset] = {
            "library": package,
            "version": version(package),
            "data": {name: func(*data) for name, data in DATASETS.items()},
        }
        print(preset, version(package), "done")
    path = Path(__file__).with_name("pinned.json")
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
