"""Every convention of the top-n metrics as a named switch, and named presets."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, fields, replace

from offeval import ConfigurationError
from offeval.plugin import check_choice, check_number

CHOICES = {
    "precision_denominator": ("k", "min_k_list", "min_k_labels"),
    "recall_denominator": ("labels", "min_k_labels"),
    "ap_denominator": ("hits", "min_k_list", "labels", "min_k_labels", "min_k_labels_list", "k"),
    "gain": ("linear", "exponential"),
    "dcg_relevance": ("graded", "binary"),
    "ideal": ("list", "labels", "k"),
    "discount": ("shifted", "clipped"),
    "empty_labels": ("nan", "zero", "judged"),
    "no_predictions": ("zero", "nan", "nan_all"),
    "ties": ("expected", "item_desc", "item_asc", "input_order", "last"),
    "nonpositive_scores": ("count", "irrelevant"),
    "order_by": ("rank", "score"),
    "negative_grades": ("error", "zero"),
}


@dataclass(frozen=True)
class Conventions:
    """The switches behind every metric at k (P, R, F1, hit rate, AP, RR, DCG, nDCG, ...).

    - ``precision_denominator``: ``k`` (hits / k), ``min_k_list`` (hits /
      min(k, list length)) or ``min_k_labels`` (hits / min(k, relevant labels):
      rectools' ``r_precision``).
    - ``recall_denominator``: ``labels`` (hits / number of relevant labels) or
      ``min_k_labels`` (hits / min(k, number of relevant labels)).
    - ``ap_denominator``: sum over relevant ranks j <= k of P@j, divided by
      ``hits`` (relevant items in the top k), ``min_k_list``, ``labels`` (all
      relevant labels), ``min_k_labels``, ``min_k_labels_list`` (min(relevant
      labels, k, list length): LensKit's) or ``k`` (k whatever the list's
      length: rectools' ``divide_by_k``).
    - ``gain``: ``linear`` (grade) or ``exponential`` (2^grade - 1).
    - ``log_base``: of the discount.
    - ``discount``: 1 / log_b(rank + 1) (``shifted``), or 1 / max(1, log_b rank)
      (``clipped``: LensKit's, ranks 1 and 2 weigh the same), in DCG and its ideal.
    - ``dcg_relevance``: DCG on the label grades (``graded``) or on binary
      relevance at the threshold (``binary``).
    - ``ideal``: IDCG from the recommended list's own grades sorted (``list``),
      from the user's best labels (``labels``), or the DCG of k items of the
      user's best gain (``k``: under binary relevance the same for every user
      with a relevant label, rectools' default).
    - ``empty_labels``: users with no relevant label get NaN and are left out
      of the mean (``nan``, counted), score 0 (``zero``), or score 0 when they
      have a judgement of any grade and are left out when they have none
      (``judged``: trec_eval's queries with only non-relevant judgements).
    - ``no_predictions``: users with labels but no predictions score 0
      (``zero``; trec_eval's ``-c``) or are left out (``nan``, counted;
      trec_eval's default, which averages the queries of both run and qrels);
      ``nan_all`` leaves out every user without predictions, also one
      without labels that ``empty_labels='zero'`` would score 0 (LensKit's
      Precision, whose denominator is the empty list's length).
    - ``relevance_threshold``: a label counts as relevant for the binary
      metrics when its grade is at least this.
    - ``ties``: how tied predictions (equal scores, or equal ranks) are
      ordered: by item id descending or ascending (ids compared as the input
      holds them: text as text), in input order, ``expected``, the
      expected value over a uniformly random order of the tied items, or
      ``last``: every item of a tie group at the group's last rank (scipy's
      ``rankdata(method="max")``, as cornac's MAP ranks), so a group crossing
      k is wholly outside the top k and each relevant item of a group reads
      AP's P@i at the group's end; defined for the measures that read only
      the ranks' relevance, gain and judged marks
      (the measures whose declaration sets ``tie_last``), an error for the
      others. This is the only place tie order is decided.
    - ``err_max_grade``: ERR's stopping probability at grade g is
      (2^g - 1) / 2^max (gdeval, which ir-measures runs, uses 4).
    - ``rbp_persistence``: RBP's p, the chance of looking at the next rank.
    - ``order_by``: when predictions have both a rank and a score column,
      which one orders the list (``score``: highest first, as trec_eval).
    - ``nonpositive_scores``: for score input, whether an item scored <= 0
      can still be a hit (``count``) or is treated as irrelevant
      (``irrelevant``, as torchmetrics does for P, R, RR and AP).
    - ``negative_grades``: a negative label grade is an error (``error``), or
      is read as trec_eval reads it (``zero``; its form_res_rels.c calls it
      "in the pool, unjudged"): gain 0 in DCG, ERR and the ideal ranking,
      never relevant, not a judged non-relevant item for bpref (neither in
      its count nor above a relevant item); the label still puts its query
      among the judged ones (``empty_labels='judged'``) and its item among
      the judged for Judged@k and RBP's residual, as ir-measures does.
    - ``per_metric``: (metric, switch, value) triples where one metric departs
      from the others (some libraries average different metrics over
      different users).
    """

    precision_denominator: str = "k"
    recall_denominator: str = "labels"
    ap_denominator: str = "hits"
    gain: str = "exponential"
    log_base: float = math.e
    dcg_relevance: str = "graded"
    ideal: str = "list"
    discount: str = "shifted"
    empty_labels: str = "nan"
    no_predictions: str = "zero"
    relevance_threshold: float = 1.0
    ties: str = "item_desc"
    nonpositive_scores: str = "count"
    order_by: str = "rank"
    err_max_grade: float = 4.0
    rbp_persistence: float = 0.8
    negative_grades: str = "error"
    per_metric: tuple[tuple[str, str, object], ...] = ()
    name: str = "custom"

    def __post_init__(self):
        for field, choices in CHOICES.items():
            check_choice(getattr(self, field), field, choices)
        check_number(self.log_base, "log_base", low=1, low_open=True)
        check_number(self.relevance_threshold, "relevance_threshold", low=0, low_open=True)
        check_number(self.err_max_grade, "err_max_grade", low=0, low_open=True)
        check_number(
            self.rbp_persistence, "rbp_persistence", low=0, high=1, low_open=True, high_open=True
        )
        for metric, switch, value in self.per_metric:
            check_choice(switch, f"per_metric override {metric}", tuple(CHOICES))
            check_choice(value, f"per_metric override {metric}.{switch}", CHOICES[switch])

    def for_metric(self, metric: str) -> Conventions:
        """The conventions one metric uses, after its per-metric overrides."""
        changes = {switch: value for name, switch, value in self.per_metric if name == metric}
        return replace(self, per_metric=(), **changes) if changes else self

    def with_(self, **overrides) -> Conventions:
        """A copy with some switches changed (named ``<preset>+overrides``)."""
        known = [f.name for f in fields(self)]
        unknown = sorted(set(overrides) - set(known))
        if unknown:
            close = difflib.get_close_matches(unknown[0], known, n=1)
            guess = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigurationError(
                f"unknown convention switches {unknown}{guess}; switches: {', '.join(known)}"
            )
        name = overrides.pop("name", None) or (
            f"{self.name}+{','.join(sorted(overrides))}" if overrides else self.name
        )
        return replace(self, name=name, **overrides)


def _preset(name: str, doc: str, base: Conventions | None = None, **switches):
    """A registered preset factory: ``factory(**overrides)`` gives Conventions."""
    preset = replace(base or Conventions(), name=name, **switches)

    def factory(**overrides) -> Conventions:
        return preset.with_(**overrides)

    factory.__doc__ = doc
    factory.__name__ = name
    factory.base = preset
    return factory


#: What the trec_eval family shares: linear gains, log2, the ideal ranking of the labels.
TREC = Conventions(
    ap_denominator="labels",
    gain="linear",
    log_base=2.0,
    ideal="labels",
    empty_labels="judged",
    ties="item_desc",
    order_by="score",
)
#: What the binary-relevance libraries share: AP over min(k, labels), binary DCG, users
#: without a relevant label left out, lists in rank order.
BINARY = replace(
    TREC,
    ap_denominator="min_k_labels",
    dcg_relevance="binary",
    empty_labels="nan",
    order_by="rank",
)

PRESETS = {
    "blog": _preset(
        "blog",
        "The blog post 'The confusion over information retrieval metrics in Recommender "
        "Systems': AP over hits in the top k, 2^rel - 1 gain with natural log, "
        "IDCG from the list's own grades, users without labels NaN and left out.",
    ),
    "trec_eval": _preset(
        "trec_eval",
        "trec_eval / pytrec_eval / ir-measures (P_k, recall_k, map_cut_k, recip_rank, "
        "ndcg_cut_k, Rprec, bpref, success_k; Judged@k as ir-measures, over min(k, list "
        "length), tied scores by docno ascending): AP over all relevant labels, linear gain, "
        "log2, ideal from the labels; lists ordered by score when there is one, ties by "
        "docno descending; the queries of both run and qrels are averaged, those judged "
        "only non-relevant scoring 0 (no_predictions='zero' is trec_eval -c: a judged "
        "query missing from the run scores 0, as in ir-measures' aggregates); a negative "
        "grade is gain 0 and unjudged, as trec_eval reads it (negative_grades='zero').",
        TREC,
        no_predictions="nan",
        negative_grades="zero",
        per_metric=(
            ("judged", "precision_denominator", "min_k_list"),
            ("judged", "ties", "item_asc"),
        ),
    ),
    "ranx": _preset(
        "ranx",
        "ranx (precision, recall, f1, hit_rate, map, mrr, ndcg at k, make_comparable=True): "
        "as trec_eval (linear gain, log2, ideal from labels, AP over all relevant labels), "
        "and a query of the qrels missing from the run scores 0. ranx sorts tied scores "
        "with numba's argsort: input order for short lists, no defined order beyond; this "
        "preset keeps input order, so compare with ranx on tie-free lists.",
        TREC,
        ties="input_order",
    ),
    "sklearn": _preset(
        "sklearn",
        "scikit-learn ndcg_score / dcg_score: linear gain, log2, ideal from all labels, ties "
        "averaged over random orders (ignore_ties=False), all-irrelevant samples score 0.",
        TREC,
        empty_labels="zero",
        ties="expected",
    ),
    "torchmetrics": _preset(
        "torchmetrics",
        "torchmetrics 1.9 retrieval functions with top_k, on every candidate of a query: "
        "precision hits/k, AP over hits in the top k, linear gain, log2, ideal from all "
        "targets, empty targets score 0 (empty_target_action='neg'); for P, R, RR and AP a "
        "document scored <= 0 never counts as relevant.",
        TREC,
        ap_denominator="hits",
        empty_labels="zero",
        ties="item_asc",
        per_metric=tuple(
            (m, "nonpositive_scores", "irrelevant")
            for m in ("precision", "recall", "f1", "rr", "ap")
        ),
    ),
    "spark_mllib": _preset(
        "spark_mllib",
        "Spark MLlib RankingMetrics (precisionAt, recallAt, meanAveragePrecisionAt, ndcgAt): "
        "AP over min(k, labels), binary relevance, ideal from the labels, users without "
        "labels score 0 (with a warning in Spark).",
        BINARY,
        empty_labels="zero",
    ),
    "recbole": _preset(
        "recbole",
        "RecBole topk metrics (Precision, Recall, MAP, MRR, NDCG, Hit): AP over min(k, "
        "labels), binary relevance, ideal from the labels; users without positives are "
        "left out (RecBole filters them before evaluating).",
        BINARY,
    ),
    "rectools": _preset(
        "rectools",
        "rectools 0.19 (Precision, Recall, MAP, NDCG, MRR, HitRate by calc_per_user): "
        "binary relevance, log2, nDCG's ideal the DCG of k relevant items for every user "
        "(NDCG(divide_by_achievable=True): ideal='labels'), AP over all held-out items "
        "(MAP(divide_by_k=True): ap_denominator='k'), Precision(r_precision=True): "
        "precision_denominator='min_k_labels'; users of the held-out interactions, one "
        "without recommendations scoring 0; ties by item id ascending.",
        ap_denominator="labels",
        dcg_relevance="binary",
        log_base=2.0,
        ideal="k",
        ties="item_asc",
        order_by="score",
    ),
    "lenskit": _preset(
        "lenskit",
        "LensKit 2026.4 (Precision, Recall, AveragePrecision, NDCG, RecipRank, Hit by "
        "measure_run): precision over min(k, list length), recall over min(k, held out), "
        "AP over min(held out, k, list length), binary nDCG with LensKit's discount "
        "1/max(1, log2 rank) in the DCG and its ideal (NDCG(weight=LogRankWeight(offset=1)):"
        " discount='shifted'); a user without held-out items is left out (LensKit's "
        "AveragePrecision divides by zero on one), Precision scores it 0 and leaves out "
        "every user with an empty list, with held-out items or not (no_predictions="
        "'nan_all').",
        precision_denominator="min_k_list",
        recall_denominator="min_k_labels",
        ap_denominator="min_k_labels_list",
        dcg_relevance="binary",
        log_base=2.0,
        discount="clipped",
        ideal="labels",
        ties="item_asc",
        order_by="score",
        per_metric=(
            ("precision", "empty_labels", "zero"),
            ("precision", "no_predictions", "nan_all"),
            ("ap", "no_predictions", "nan"),
        ),
    ),
    "recpack": _preset(
        "recpack",
        "recpack 0.3.6 (PrecisionK, RecallK, DCGK, NDCGK, RRK, HitK as hits@K, "
        "CalibratedRecallK as calibrated_recall@K): RecBole's conventions. "
        "recpack leaves tied scores in the order numpy's argpartition leaves them, which no "
        "switch reproduces: compare on tie-free scores.",
        BINARY,
        ties="item_asc",
    ),
    "cornac": _preset(
        "cornac",
        "cornac 3.0 (Precision, Recall, NDCG, HitRatio at k; MRR, MAP without k) on the "
        "whole catalogue ranked: binary relevance, log2, nDCG's ideal of min(k, held out) "
        "items, AP over every held-out item; ties by item id ascending, except MAP's, which "
        "puts every item of a tie group at the group's last rank (ties='last').",
        ap_denominator="labels",
        dcg_relevance="binary",
        log_base=2.0,
        ideal="labels",
        ties="item_asc",
        order_by="score",
        per_metric=(("ap", "ties", "last"),),
    ),
    "trectools": _preset(
        "trectools",
        "trectools 0.0.50 (TrecEval on TrecRun and TrecQrel files, ids read as text): "
        "trec_eval's measures and order, nDCG in the order read_run leaves (document id "
        "ascending); means over the run's queries, so a query without a relevant label "
        "scores 0 and one missing from the run is left out.",
        TREC,
        empty_labels="zero",
        no_predictions="nan",
        negative_grades="zero",
        per_metric=(("ndcg", "ties", "item_asc"),),
    ),
    "recommenders": _preset(
        "recommenders",
        "Microsoft recommenders 1.2 python_evaluation (precision_at_k, recall_at_k, "
        "map_at_k, ndcg_at_k): map_at_k over min(k, labels), binary relevance, ideal from "
        "the labels; precision, recall and MAP average over users in both frames, while "
        "ndcg_at_k also counts users with labels but no predictions, as 0.",
        BINARY,
        no_predictions="nan",
        per_metric=(("ndcg", "no_predictions", "zero"), ("dcg", "no_predictions", "zero")),
    ),
}
