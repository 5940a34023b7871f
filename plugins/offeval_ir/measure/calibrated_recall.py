"""Calibrated recall at k: the hits in the top k over the most a list of k could hold."""

from __future__ import annotations

from offeval_ir.measure.declaration import REL, Declaration


def calibrated_recall(lists, k):
    """CalibratedRecall@k = hits@k / min(k, R), R the relevant labels (without a cut-off:
    over min(list length, R)); recall with ``recall_denominator='min_k_labels'``, whatever
    that switch says. recpack calls it ``CalibratedRecallK``."""
    return lists.hits(k) / lists.xp.minimum(lists.cut(k), lists.n_rel)


MEASURES = (
    Declaration(
        "calibrated_recall",
        calibrated_recall,
        "share of the relevant labels found in the top k, at most k of them counted "
        "(recpack CalibratedRecallK)",
        params=(REL,),
        tie_linear=True,
        tie_last=True,
    ),
)
