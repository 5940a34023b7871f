"""Two-stage rankers: slate and prefix probabilities against brute-force enumeration.

A two-stage policy's generator draws a candidate set by Plackett-Luce
without replacement; its ranker orders the set (Plackett-Luce or by score)
and shows the top L. The oracle enumerates, in plain Python, every ordered
draw of the generator and every ordering of the drawn set, and adds up the
probability of each slate shown.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

from offeval import ConfigurationError
from offeval_ranking import ranking


def pl_orders(logits, items, size):
    """Every ordered draw of ``size`` out of ``items`` with its Plackett-Luce probability."""
    w = {i: np.exp(logits[i]) for i in items}
    for order in permutations(items, size):
        p, left = 1.0, sum(w.values())
        for a in order:
            p *= w[a] / left
            left -= w[a]
        yield order, p


def brute_slates(g, size, r, length, temperature) -> dict[tuple, float]:
    """{slate: probability} of one context's two-stage policy, every draw and ordering."""
    out: dict[tuple, float] = {}
    for draw, p_draw in pl_orders(g, range(len(g)), size):
        chosen = sorted(draw)
        if temperature is None:  # by score, ties by candidate order
            orders = [(tuple(sorted(chosen, key=lambda i: (-r[i], i))), 1.0)]
        else:
            orders = pl_orders(np.asarray(r) / temperature, chosen, len(chosen))
        for order, p_order in orders:
            slate = tuple(order[:length])
            out[slate] = out.get(slate, 0.0) + p_draw * p_order
    return out


def brute_prefix(slates: dict[tuple, float], prefix) -> float:
    """P(the slate starts with ``prefix``)."""
    return sum(p for s, p in slates.items() if list(s[: len(prefix)]) == list(prefix))


def ranker(r, temperature, rows=slice(None)) -> dict:
    """The ranker's keyword: Plackett-Luce logits or deterministic ranks."""
    if temperature is None:
        return {"ranks": ranking.order_ranks(r)[rows]}
    return {"logits": (r / temperature)[rows]}


#: Two contexts, 5 items, sets of 3, slates of 2 (and ties in the ranker's scores).
G = np.array([[0.3, -1.2, 0.8, 0.0, 1.5], [-0.5, 0.4, 0.4, 2.0, -1.0]])
R = np.array([[1.0, 0.2, -0.7, 1.0, 0.1], [0.0, 1.3, -0.2, 0.6, 0.9]])
TEMPERATURES = [None, 0.7]


def test_candidate_sets_are_the_generators_draws():
    members, probs = ranking.candidate_sets(G, 3)
    assert members.shape == (10, 5) and (members.sum(axis=1) == 3).all()
    for c in range(2):
        want = {}
        for draw, p in pl_orders(G[c], range(5), 3):
            key = tuple(sorted(draw))
            want[key] = want.get(key, 0.0) + p
        got = {tuple(np.flatnonzero(m)): p for m, p in zip(members, probs[c], strict=True)}
        assert got.keys() == want.keys()
        assert max(abs(got[k] - want[k]) for k in want) < 1e-15


@pytest.mark.parametrize("temperature", TEMPERATURES)
def test_slate_probabilities_equal_brute_force(temperature):
    members, probs = ranking.candidate_sets(G, 3)
    table = np.array(list(permutations(range(5), 2)))
    got = ranking.two_stage_slates(members, probs, table, **ranker(R, temperature))
    for c in range(2):
        slates = brute_slates(G[c], 3, R[c], 2, temperature)
        want = np.array([slates.get(tuple(s), 0.0) for s in table])
        np.testing.assert_allclose(got[c], want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("temperature", TEMPERATURES)
def test_slate_probabilities_give_the_exact_marginals(temperature):
    """Summed over slates, they are the rank marginals of ranking.two_stage (another path)."""
    members, probs = ranking.candidate_sets(G, 4)
    table = np.array(list(permutations(range(5), 3)))
    slates = ranking.two_stage_slates(members, probs, table, **ranker(R, temperature))
    marginals = ranking.two_stage(G, 4, R, 3, ranker_temperature=temperature).values
    for k in range(3):
        for item in range(5):
            np.testing.assert_allclose(
                slates[:, table[:, k] == item].sum(axis=1), marginals[:, item, k], atol=1e-14
            )


@pytest.mark.parametrize("temperature", TEMPERATURES)
def test_next_probabilities_equal_brute_force(temperature):
    """P(a_1..a_{k-1}, n) for every n; -1 marks an item the policy cannot show."""
    members, probs = ranking.candidate_sets(G, 3)
    shown = np.array([[0, 1, 4], [3, -1, 2], [2, 4, 1], [4, 4, 0], [1, 3, 0]])
    ctx = np.array([0, 1, 1, 0, 1])
    got = ranking.two_stage_next(members, probs[ctx], shown, **ranker(R, temperature, ctx))
    for u, c in enumerate(ctx):
        slates = brute_slates(G[c], 3, R[c], 3, temperature)
        for k in range(3):
            above = list(shown[u, :k])
            for n in range(5):
                want = 0.0 if min(above, default=0) < 0 else brute_prefix(slates, [*above, n])
                assert got[u, k, n] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_too_many_sets_are_refused():
    with pytest.raises(ConfigurationError, match="candidate sets of 10 out of 20"):
        ranking.candidate_sets(np.zeros((1, 20)), 10)
