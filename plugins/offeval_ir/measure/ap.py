"""Average precision at k."""

from __future__ import annotations

from offeval_ir.measure.declaration import REL, Declaration, Spelling, TrecSpelling


def precision_terms(lists):
    """k -> per user, sum over relevant ranks i <= k of rel_i hits_i / i (AP's numerator).

    Only the relevant cells are visited: hits_i is the running sum of rel over each
    user's relevant cells."""
    xp, rel = lists.xp, lists.rel
    users, cols = xp.nonzero(rel)
    values = rel[users, cols]
    running = xp.cumsum(values)
    first = xp.flatnonzero(xp.r_[True, users[1:] != users[:-1]]) if users.size else users
    lengths = xp.diff(xp.r_[first, users.size])
    hits = running - xp.repeat(running[first] - values[first], lengths)
    terms = values * hits / (cols + 1)

    def upto(k: int):
        inside = cols < k
        return xp.bincount(users[inside], weights=terms[inside], minlength=rel.shape[0])

    return upto


def ap(lists, k):
    """AP@k = sum over relevant ranks i <= k of P@i, over ``ap_denominator``: the hits in
    the top k (``hits``), min(k, list length) (``min_k_list``), the relevant labels R
    (``labels``), min(k, R) (``min_k_labels``), min(R, k, list length)
    (``min_k_labels_list``) or k (``k``); 0 when that is 0."""
    xp, conv = lists.xp, lists.conv
    how = conv.ap_denominator
    if how == "hits":
        den = lists.hits(k)
    elif how == "min_k_list":
        den = lists.in_list(k)
    elif how == "min_k_labels_list":
        den = xp.minimum(lists.in_list(k), lists.n_rel)
    elif how == "k":
        den = lists.cut(k)
    else:
        den = lists.n_rel if how == "labels" else xp.minimum(lists.cut(k), lists.n_rel)
    terms = lists.memo("precision_terms", lambda: precision_terms(lists))
    return xp.where(den > 0, terms(lists.read(k)) / den, 0.0)


MEASURES = (
    Declaration(
        "ap",
        ap,
        "average precision at k",
        params=(REL,),
        ir_measures=(Spelling("AP"), Spelling("MAP")),
        trec_eval=(
            TrecSpelling("map", "name"),
            TrecSpelling("map_cut", "name", "required"),
            TrecSpelling("map_cut", "cut"),
            TrecSpelling("gm_map", "plain", aggregate="geometric"),
        ),
        ranx="map",
        tie_last=True,
    ),
)
