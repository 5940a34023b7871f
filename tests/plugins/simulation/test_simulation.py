"""The simulator: exact rank marginals, exact online values, user models."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

from offeval import ConfigurationError
from offeval_ranking.examination import MODELS
from offeval_simulation import Environment
from offeval_simulation.rankers import RankingPolicy


def brute_force_marginals(logits: np.ndarray, length: int) -> np.ndarray:
    """P(candidate k at position i) by enumerating every full permutation."""
    k = logits.size
    out = np.zeros((k, length))
    w = np.exp(logits)
    for perm in permutations(range(k)):
        p, left = 1.0, w.sum()
        for j in perm:
            p *= w[j] / left
            left -= w[j]
        for i in range(length):
            out[perm[i], i] += p
    return out


def test_plackett_luce_marginals_match_brute_force():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(4, 5))
    cands = np.tile(np.arange(5), (4, 1))
    policy = RankingPolicy("pl", scores, cands, n_positions=3, temperature=0.7)
    for c in range(4):
        np.testing.assert_allclose(
            policy.marginals[c], brute_force_marginals(scores[c] / 0.7, 3), rtol=1e-12
        )


def test_marginals_are_distributions_and_mixing_is_linear():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(10, 6))
    cands = np.tile(np.arange(6), (10, 1))
    pl = RankingPolicy("pl", scores, cands, 4, temperature=1.0)
    mixed = RankingPolicy("mix", scores, cands, 4, temperature=1.0, mix_uniform=0.2)
    np.testing.assert_allclose(pl.marginals.sum(axis=1), 1.0)
    assert (pl.marginals.sum(axis=2) <= 1 + 1e-12).all()
    np.testing.assert_allclose(mixed.marginals, 0.8 * pl.marginals + 0.2 / 6)
    det = RankingPolicy("det", scores, cands, 4, temperature=None)
    top = np.argsort(-scores, axis=1)[:, :4]
    assert (det.marginals.argmax(axis=1) == top).all() and set(np.unique(det.marginals)) == {0, 1}


def test_sampled_rankings_follow_the_marginals():
    scores = np.array([[1.0, 0.5, 0.0, -0.5, -1.0]])
    policy = RankingPolicy("pl", scores, np.arange(5)[None], 3, temperature=1.0, mix_uniform=0.1)
    n = 200_000
    ranking, shuffled, pool = policy.sample(np.zeros(n, dtype=int), np.random.default_rng(2))
    assert pool.all()  # one stage: the ranker orders every candidate
    freq = np.stack([(ranking[:, i, None] == np.arange(5)).mean(axis=0) for i in range(3)], axis=1)
    expected = policy.marginals[0]
    sd = np.sqrt(expected * (1 - expected) / n)
    assert (np.abs(freq - expected) < 4 * sd + 1e-12).all()
    assert abs(shuffled.mean() - 0.1) < 4 * np.sqrt(0.09 / n)


def test_logged_propensities_are_the_policy_marginals(env):
    logging = env.logging_policy()
    log = env.simulate(logging, 3_000, seed=1, with_candidates=True)
    np.testing.assert_allclose(log.column("propensity"), logging.probabilities(log.frame))
    per_slot = np.bincount(log.candidates["slot"], weights=log.candidates["propensity"])
    np.testing.assert_allclose(per_slot, 1.0)
    assert log.n_units == 3_000 and log.n_rows == 3_000 * env.n_positions


@pytest.mark.parametrize("user_model", ["position_based", "cascade"])
@pytest.mark.parametrize("which", [0, 3])  # a Plackett-Luce and a deterministic target
def test_exact_online_value_matches_simulated_ab_cells(user_model, which):
    env = Environment(
        seed=4, n_contexts=200, n_items=40, n_candidates=5, n_positions=3, user_model=user_model
    )
    policy = env.candidate_policies(4)[which]
    cell = env.ab_test([policy], 60_000, seed=which)[0]
    assert abs(cell.mean - env.online_value(policy)) < 4 * cell.se


def test_cascade_with_one_position_is_position_based():
    kwargs = dict(seed=5, n_contexts=100, n_items=30, n_candidates=4, n_positions=1)
    pbm, cascade = Environment(**kwargs), Environment(user_model="cascade", **kwargs)
    for p, q in zip(pbm.candidate_policies(3), cascade.candidate_policies(3), strict=True):
        assert pbm.online_value(p) == pytest.approx(cascade.online_value(q), rel=1e-12)


def test_better_policies_have_higher_value_on_average(env):
    values = [env.online_value(p) for p in env.candidate_policies(12)]
    assert np.corrcoef(values, np.arange(12))[0, 1] > 0.8


def test_examination_models():
    ranks = np.array([1, 2, 3, 4])
    np.testing.assert_allclose(MODELS["logarithmic"]()(ranks), 1 / np.log2(ranks + 1))
    np.testing.assert_allclose(MODELS["logarithmic"](base=np.e)(ranks), 1 / np.log(ranks + 1))
    np.testing.assert_allclose(MODELS["exponential"](gamma=0.5)(ranks), [1, 0.5, 0.25, 0.125])
    np.testing.assert_allclose(MODELS["reciprocal"]()(ranks), 1 / ranks)
    np.testing.assert_allclose(MODELS["table"](values=[0.9, 0.4])(ranks), [0.9, 0.4, 0, 0])
    cut = MODELS["cutoff"](n=2, model="exponential", gamma=0.5)
    np.testing.assert_allclose(cut(ranks), [1, 0.5, 0, 0])
    with pytest.raises(ConfigurationError, match="1-based"):
        MODELS["reciprocal"]()(np.array([0, 1]))
    with pytest.raises(ConfigurationError, match="gamma"):
        MODELS["exponential"](gamma=1.5)


def test_a_deterministic_ranker_logs_no_logits_and_flags_its_banners():
    env = Environment(seed=3, n_contexts=100, n_items=40, n_candidates=6, n_positions=3)
    for kwargs in ({}, {"generator_size": 4}):
        policy = env.policy("det", temperature=None, mix_uniform=0.3, seed=1, **kwargs)
        with pytest.raises(ConfigurationError, match="no Plackett-Luce logits"):
            policy.logits  # noqa: B018
        frame = env.simulate(policy, 2_000, seed=2).frame
        assert (frame["logging_deterministic"] == ~frame["shuffled"]).all()
        assert frame["logging_pool"].isna().all()
        np.testing.assert_array_equal(frame["logging_score"], policy.scores(frame))
    stochastic = env.simulate(env.logging_policy(), 200, seed=2).frame
    assert "logging_deterministic" not in stochastic


@pytest.mark.parametrize("generator_size", [None, 3, 5])
def test_the_logged_pool_is_the_mass_the_ranker_drew_from(generator_size):
    """logging_pool: the log mass of the candidates the ranker ordered but did not show.

    One stage: all the context's other candidates. Two stages: only the
    generator's other draws, so with generator_size = n_positions there are none.
    """
    env = Environment(seed=3, n_contexts=100, n_items=40, n_candidates=6, n_positions=3)
    policy = env.policy("pl", temperature=0.5, seed=1, generator_size=generator_size)
    frame = env.simulate(policy, 2_000, seed=2).frame
    first = frame.groupby("trajectory").head(1)
    if generator_size == env.n_positions:
        assert (first["logging_pool"] == -np.inf).all()
        return
    if generator_size is None:  # brute force: every candidate of the context not displayed
        shown = frame.groupby("trajectory")["item"].apply(set)
        for (_, row), items in zip(first.iterrows(), shown, strict=True):
            c = int(row["context"])
            hidden = [k for k, item in enumerate(env.candidates[c]) if item not in items]
            expected = np.log(np.exp(policy.logits[c, hidden]).sum())
            assert row["logging_pool"] == pytest.approx(expected, rel=1e-12)
        return
    # two stages: less mass than all the hidden candidates have, more than none
    all_hidden = first.apply(
        lambda row: np.log(
            np.exp(policy.logits[int(row["context"])]).sum()
            - np.exp(frame.loc[frame["trajectory"] == row["trajectory"], "logging_score"]).sum()
        ),
        axis=1,
    )
    assert (first["logging_pool"] < all_hidden + 1e-9).all()
    assert np.isfinite(first["logging_pool"]).all()


def test_environment_rejects_bad_settings():
    with pytest.raises(ConfigurationError, match="user_model"):
        Environment(user_model="dbn")
    with pytest.raises(ConfigurationError, match="^mix_uniform must be a number in "):
        RankingPolicy("r", np.zeros((2, 3)), np.zeros((2, 3), int), 2, mix_uniform=2)


@pytest.mark.parametrize(
    "sizes, message",
    [
        (
            {"n_positions": 9, "n_candidates": 8},
            r"n_positions must be a whole number in 1\.\.8, got 9",
        ),
        (
            {"n_items": 5, "n_candidates": 6},
            r"n_candidates must be a whole number in 1\.\.5, got 6",
        ),
        ({"n_items": 30.0}, r"n_items must be a whole number >= 1, got 30\.0"),
    ],
)
def test_environment_sizes_are_whole_and_nested(sizes, message):
    """1 <= n_positions <= n_candidates <= n_items, each named with its own bounds."""
    with pytest.raises(ConfigurationError, match=f"^{message}$"):
        Environment(**sizes)


def test_ab_cells_are_the_logs_the_policies_would_write(env):
    """An A/B cell's mean and se are those of the log simulate() writes with the cell's seed."""
    policies = env.candidate_policies(3)
    cells = env.ab_test(policies, 2_000, seed=4)
    for j, (policy, cell) in enumerate(zip(policies, cells, strict=True)):
        log = env.simulate(policy, 2_000, seed=10_000 + 400 + j)
        per_traj = log.frame.groupby("trajectory")["reward"].sum() / env.n_positions
        assert cell.mean == pytest.approx(per_traj.mean(), rel=1e-12)
        assert cell.se == pytest.approx(per_traj.std(ddof=1) / np.sqrt(2_000), rel=1e-12)


def test_a_ranker_with_text_item_ids_answers_as_with_integer_ids():
    import copy

    env = Environment(seed=0)
    policy = env.candidate_policies(2)[0]
    texts = copy.copy(policy)
    texts.__dict__.pop("_slots", None)  # the cached integer lookup table
    texts.candidates = np.array([[f"i{j}" for j in row] for row in policy.candidates])
    log = env.simulate(env.logging_policy(), 500, seed=1)
    rows = log.frame.assign(item=[f"i{j}" for j in log.frame["item"]])
    np.testing.assert_array_equal(texts.probabilities(rows), policy.probabilities(log.frame))


def brute_force_two_stage_cascade(env: Environment, policy: RankingPolicy, c: int) -> float:
    """Expected cascade clicks of context c: every generator draw and ranker ordering enumerated."""
    q = env.quality[c]
    w_g = np.exp(policy.generator_scores[c])
    total = 0.0
    for draw in permutations(range(q.size), policy.generator_size):
        p_draw, left = 1.0, w_g.sum()
        for a in draw:
            p_draw, left = p_draw * w_g[a] / left, left - w_g[a]
        chosen = sorted(draw)
        if policy.temperature is None:
            scores = policy.score_matrix[c]
            orders = [(sorted(chosen, key=lambda i: (-scores[i], i)), 1.0)]
        else:
            w_r = np.exp(policy.logits[c])
            orders = []
            for order in permutations(chosen):
                p, left = 1.0, w_r[chosen].sum()
                for a in order:
                    p, left = p * w_r[a] / left, left - w_r[a]
                orders.append((order, p))
        for order, p in orders:
            survive, clicks = 1.0, 0.0
            for a in order[: env.n_positions]:
                clicks += survive * q[a]
                survive *= 1 - q[a]
            total += p_draw * p * clicks
    return total


@pytest.mark.parametrize("temperature", [None, 0.5])
def test_two_stage_cascade_values_are_exact(temperature):
    env = Environment(
        seed=6, n_contexts=6, n_items=20, n_candidates=5, n_positions=2, user_model="cascade"
    )
    policy = env.policy("two", temperature=temperature, mix_uniform=0.2, generator_size=3)
    plain = env.policy("two", temperature=temperature, generator_size=3)
    values = env.context_values(policy) * env.n_positions
    for c in range(env.n_contexts):
        q = env.quality[c]
        shuffled = np.mean([q[a] + (1 - q[a]) * q[b] for a, b in permutations(range(5), 2)])
        want = 0.8 * brute_force_two_stage_cascade(env, plain, c) + 0.2 * shuffled
        assert values[c] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("user_model", ["position_based", "cascade"])
def test_two_stage_online_value_matches_simulated_ab_cells(user_model):
    env = Environment(
        seed=4, n_contexts=200, n_items=40, n_candidates=6, n_positions=3, user_model=user_model
    )
    policy = env.policy("two", skill=1.2, temperature=0.5, seed=3, generator_size=4)
    cell = env.ab_test([policy], 60_000, seed=7)[0]
    assert abs(cell.mean - env.online_value(policy)) < 4 * cell.se


@pytest.mark.parametrize("temperature", [None, 0.5])
def test_a_two_stage_loggers_prefix_probabilities_are_logged_exactly(temperature):
    env = Environment(seed=6, n_contexts=6, n_items=20, n_candidates=5, n_positions=3)
    policy = env.policy("two", temperature=temperature, mix_uniform=0.2, generator_size=3)
    log = env.simulate(policy, 40, seed=1)
    frame = log.frame
    assert frame["logging_two_stage"].all()
    for _, group in frame.groupby("trajectory"):
        c = group["context"].iloc[0]
        index = [list(env.candidates[c]).index(i) for i in group["item"]]
        for k in range(3):
            want = 0.8 * brute_force_two_stage_prefix(policy, c, index[: k + 1]) + 0.2 * np.prod(
                [1 / (5 - j) for j in range(k + 1)]
            )
            assert group["logging_prefix"].iloc[k] == pytest.approx(want, rel=1e-12)


def brute_force_two_stage_prefix(policy: RankingPolicy, c: int, prefix: list) -> float:
    """P(the two-stage ranker's ranking starts with ``prefix``), every draw and ordering."""
    k = policy.score_matrix.shape[1]
    w_g = np.exp(policy.generator_scores[c])
    total = 0.0
    for draw in permutations(range(k), policy.generator_size):
        p_draw, left = 1.0, w_g.sum()
        for a in draw:
            p_draw, left = p_draw * w_g[a] / left, left - w_g[a]
        chosen = sorted(draw)
        if policy.temperature is None:
            scores = policy.score_matrix[c]
            order = sorted(chosen, key=lambda i: (-scores[i], i))
            total += p_draw * (order[: len(prefix)] == list(prefix))
            continue
        w_r = np.exp(policy.logits[c])
        for order in permutations(chosen):
            if list(order[: len(prefix)]) != list(prefix):
                continue
            p, left = 1.0, w_r[chosen].sum()
            for a in order:
                p, left = p * w_r[a] / left, left - w_r[a]
            total += p_draw * p
    return total
