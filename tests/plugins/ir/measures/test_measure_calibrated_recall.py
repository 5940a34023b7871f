"""offeval_ir.measure.calibrated_recall: hits@k over min(k, R), against brute force."""

from __future__ import annotations

import pytest
from measure_cases import case, ours, ranked


def _by_hand(grades: list, labels: list, k: int | None, rel: int) -> float:
    """Hits in the top k over min(k, relevant labels), from the list itself; 0 when the
    user has no relevant label (``empty_labels='zero'``)."""
    top = grades if k is None else grades[:k]
    hits = sum(g is not None and g >= rel for g in top)
    n_rel = sum(g >= rel for g in labels)
    most = min(len(grades) if k is None else k, n_rel)
    return hits / most if most else 0.0


@pytest.mark.parametrize("recall_denominator", ["labels", "min_k_labels"])
@pytest.mark.parametrize("seed", [0, 1])
def test_calibrated_recall_by_hand(seed, recall_denominator):
    """At every cut-off and relevance level, whatever recall's own denominator says."""
    run, qrels = case(seed)
    names = ["calibrated_recall@1", "calibrated_recall@3", "calibrated_recall@10"]
    names += ["calibrated_recall", "calibrated_recall(rel=2)@5"]
    values = ours(run, qrels, names, empty_labels="zero", recall_denominator=recall_denominator)
    cases = {name: (int(name.rpartition("@")[2]) if "@" in name else None, 1) for name in names}
    cases["calibrated_recall(rel=2)@5"] = (5, 2)
    for user, (grades, labels) in ranked(run, qrels).items():
        for name, (k, rel) in cases.items():
            expected = _by_hand(grades, labels, k, rel)
            assert values.loc[user, name] == pytest.approx(expected, abs=1e-12), (user, name)


def test_calibrated_recall_is_recall_when_k_covers_the_labels():
    """With k at least every user's relevant labels, min(k, R) = R: recall's value."""
    run, qrels = case(3)
    values = ours(run, qrels, ["calibrated_recall@30", "recall@30"], empty_labels="zero")
    assert (values["calibrated_recall@30"] - values["recall@30"]).abs().max() <= 1e-12
