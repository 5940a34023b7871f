"""Slate estimators: exact expectations by enumeration, prefix probabilities, the simulator.

The brute-force oracles enumerate every ranking of a tiny case (3 items, 2
positions, one user): the estimator's expectation under the logger is the sum
over rankings of P_logging(ranking) times what the estimator makes of that
ranking (its value on a one-trajectory log with the expected rewards), and
the truth is the sum of P_target(ranking) times the expected reward.
"""

from __future__ import annotations

from itertools import permutations, product

import numpy as np
import pandas as pd
import pytest
from oracles import delta_se, unit_sums

from offeval import (
    ColumnError,
    ConfigurationError,
    InteractionLog,
    OffevalError,
    PolicyView,
    SupportError,
    evaluate,
)
from offeval.testing import kit_setup, parametrize_with_checks
from offeval_importance import IS
from offeval_ranking import RerankPolicy
from offeval_rewardmodels import item_position_means
from offeval_simulation import Environment, RankingPolicy
from offeval_slates import IIPS, RIPS, CascadeDR, PseudoInverse
from offeval_slates.prefixes import target_log_extended, target_log_prefix

ITEMS = np.array([10, 20, 30])
QUALITY = np.array([0.3, 0.5, 0.8])
EXAMINATION = np.array([1.0, 0.6])
RANKINGS = [np.array(r) for r in permutations(range(3), 2)]
#: Slates whose two slots are drawn independently (an item may appear twice).
SLATES = [np.array(s) for s in product(range(3), repeat=2)]


def pl(logits, slates=RANKINGS) -> np.ndarray:
    """Plackett-Luce probability of each ranking (by its definition, draw by draw)."""
    w = np.exp(np.asarray(logits, dtype=float))
    out = []
    for r in slates:
        p, left = 1.0, w.sum()
        for a in r:
            p *= w[a] / left
            left -= w[a]
        out.append(p)
    return np.array(out)


def independent(first, second) -> np.ndarray:
    """Probability of each slate of SLATES when the slots are drawn independently."""
    return np.array([first[a] * second[b] for a, b in SLATES])


def rewards(model: str, r: np.ndarray) -> np.ndarray:
    """Expected reward at each position of ranking ``r`` (item indices) under a user model."""
    q = QUALITY[r]
    if model == "position_based":  # additive, each position on its own item
        return EXAMINATION * q
    if model == "cascade":  # scan down, stop at the first click
        return q * np.r_[1.0, 1 - q[0]]
    if model == "whole_page":  # the item below distracts from the top one
        return np.array([q[0] * (1 - 0.5 * q[1] ** 2), EXAMINATION[1] * q[1]])
    raise ValueError(model)


class Enumerated:
    """A policy given by its distribution over an explicit list of slates."""

    def __init__(self, name: str, probs: np.ndarray, slates=RANKINGS):
        self.name, self.probs, self.slates = name, np.asarray(probs), slates

    def _prob(self, cells) -> float:
        return sum(
            p
            for p, s in zip(self.probs, self.slates, strict=True)
            if all(s[k] == a for k, a in cells)
        )

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        index = np.searchsorted(ITEMS, rows["item"].to_numpy())
        pos = rows["position"].to_numpy() - 1
        return np.array([self._prob([(k, a)]) for k, a in zip(pos, index, strict=True)])

    def prefix_probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        out = []
        for _, group in rows.groupby("trajectory", sort=False):
            index = np.searchsorted(ITEMS, group["item"].to_numpy())
            out += [self._prob(list(enumerate(index[: k + 1]))) for k in range(len(index))]
        return np.array(out)


def tiny_log(model: str, logging: np.ndarray, logits=None, slates=RANKINGS) -> InteractionLog:
    """One trajectory per slate, with its expected rewards and the logger's columns."""
    marg = Enumerated("logging", logging, slates)
    rows = []
    for t, s in enumerate(slates):
        for k, a in enumerate(s):
            rows.append(
                {
                    "trajectory": t,
                    "context": 0,
                    "item": ITEMS[a],
                    "position": k + 1,
                    "reward": rewards(model, s)[k],
                    "propensity": marg._prob([(k, a)]),
                    "mu_prefix": marg._prob(list(enumerate(s[: k + 1]))),
                    "shuffled": False,
                }
            )
            if logits is not None:
                hidden = np.delete(np.arange(3), s)
                rows[-1]["logging_score"] = logits[a]
                rows[-1]["logging_pool"] = np.logaddexp.reduce(np.asarray(logits)[hidden])
    return InteractionLog.from_frame(pd.DataFrame(rows))


def expectation(log: InteractionLog, logging: np.ndarray, policy, estimator) -> float:
    """sum over slates of P_logging(slate) x the estimator's value on that slate alone."""
    values = [
        evaluate(log.slice_rows(lo, hi), [policy], [estimator]).estimate(policy.name).value
        for lo, hi in zip(log.unit_starts, np.r_[log.unit_starts[1:], log.n_rows], strict=True)
    ]
    return float(np.dot(logging, values))


def truth(model: str, target: np.ndarray, slates=RANKINGS) -> float:
    """Expected total reward of a trajectory under the target."""
    return float(sum(p * rewards(model, s).sum() for p, s in zip(target, slates, strict=True)))


LOGITS = np.array([0.2, -0.4, 0.9])
LOGGING = pl(LOGITS)
TARGETS = {
    "plackett_luce": pl([1.5, 0.3, -1.0]),
    "deterministic": np.eye(len(RANKINGS))[2],  # always ranking (1, 0)
}
MODELS = ("position_based", "cascade", "whole_page")
#: Where each estimator's assumption holds.
HOLDS = {
    "iips": {"position_based"},
    "rips": {"position_based", "cascade"},
}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "estimator",
    [
        IIPS(per="trajectory"),
        RIPS(per="trajectory"),
        RIPS(per="trajectory", logging_prefix="mu_prefix"),
    ],
    ids=lambda e: e.label,
)
def test_iips_and_rips_are_exact_where_their_assumption_holds(model, target, estimator):
    log = tiny_log(model, LOGGING, LOGITS)
    policy = Enumerated("target", TARGETS[target])
    got = expectation(log, LOGGING, policy, estimator)
    want = truth(model, TARGETS[target])
    if model in HOLDS[estimator.name]:
        assert got == pytest.approx(want, rel=1e-12)
    else:
        assert abs(got - want) > 1e-3


@pytest.mark.parametrize("model", MODELS)
def test_pi_is_exact_for_additive_rewards_and_independent_slots(model):
    logging = independent([0.5, 0.3, 0.2], [0.2, 0.2, 0.6])
    target = independent([0.1, 0.1, 0.8], [0.6, 0.3, 0.1])
    log = tiny_log(model, logging, slates=SLATES)
    policy = Enumerated("target", target, SLATES)
    got = expectation(log, logging, policy, PseudoInverse(per="trajectory"))
    want = truth(model, target, SLATES)
    if model == "position_based":
        assert got == pytest.approx(want, rel=1e-12)
    else:
        assert abs(got - want) > 1e-3


def ranker(name: str, scores, temperature: float | None = 1.0, mix: float = 0.0):
    """The simulator's ranker over ITEMS for one context."""
    return RankingPolicy(name, np.array([scores]), ITEMS[None, :], 2, temperature, mix)


def with_candidates(log: InteractionLog) -> InteractionLog:
    """The same log with every item as a candidate of every slot."""
    frame = log.frame
    cands = pd.DataFrame(
        {
            "trajectory": np.repeat(frame["trajectory"].to_numpy(), 3),
            "position": np.repeat(frame["position"].to_numpy(), 3),
            "item": np.tile(ITEMS, len(frame)),
            # not read by PI with a logging ranker: the log's own for the logged item
            "propensity": np.where(
                np.tile(ITEMS, len(frame)) == np.repeat(frame["item"].to_numpy(), 3),
                np.repeat(frame["propensity"].to_numpy(), 3),
                0.5,
            ),
        }
    )
    return InteractionLog.from_frame(frame, candidates=cands)


@pytest.mark.parametrize("model", MODELS)
def test_pi_with_the_logging_ranker_is_exact_for_additive_rewards_on_rankings(model):
    """Exact PI needs an additive total; cascade's over two positions, 1 - (1 - q_a)(1 - q_b),
    depends only on the set shown, which makes it additive on rankings of two out of three."""
    target = ranker("target", [1.5, 0.3, -1.0])
    log = with_candidates(tiny_log(model, LOGGING, LOGITS))
    want = truth(model, TARGETS["plackett_luce"])
    exact = expectation(
        log, LOGGING, target, PseudoInverse(per="trajectory", logging=ranker("mu", LOGITS))
    )
    slot_level = expectation(log, LOGGING, target, PseudoInverse(per="trajectory"))
    # the slot-level form ignores that a ranking never repeats an item: biased even here
    assert abs(slot_level - want) > 1e-3
    if model in ("position_based", "cascade"):
        assert exact == pytest.approx(want, rel=1e-9)
    else:
        assert abs(exact - want) > 1e-4


def with_model(log: InteractionLog, model) -> InteractionLog:
    """The log with candidates and a reward model q(items above, c, position) in both tables."""
    log = with_candidates(log)
    frame, cands = log.frame, log.candidates
    items = frame["item"].to_numpy().reshape(-1, 2)

    def predict(slot, item):
        above = [np.searchsorted(ITEMS, i) for i in items[slot // 2, : slot % 2]]
        return model(above, np.searchsorted(ITEMS, item), slot % 2)

    logged = [predict(s, i) for s, i in enumerate(frame["item"])]
    table = [predict(s, i) for s, i in cands[["slot", "item"]].to_numpy()]
    return InteractionLog.from_frame(
        frame.assign(reward_model=logged),
        candidates=cands.drop(columns="slot").assign(reward_model=table),
    )


def rough(above, c, k) -> float:
    """A reward model that ignores the items above and gets the qualities wrong."""
    return 0.5 * QUALITY[::-1][c] + 0.1 * k


def cascade_model(above, c, k) -> float:
    """The cascade users' expected reward at k given the items down to k."""
    return QUALITY[c] * np.prod(1 - QUALITY[above])


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("target", ["pl", "det"])
def test_cascade_dr_is_exact_where_rips_is_whatever_the_model(model, target):
    policy = ranker("t", [1.5, 0.3, -1.0], 1.0 if target == "pl" else None)
    probs = TARGETS["plackett_luce"] if target == "pl" else np.eye(6)[0]
    want = truth(model, probs)
    for reward_model in (rough, cascade_model):
        log = with_model(tiny_log(model, LOGGING, LOGITS), reward_model)
        got = expectation(log, LOGGING, policy, CascadeDR(per="trajectory"))
        if model in HOLDS["rips"]:
            assert got == pytest.approx(want, rel=1e-12)
        else:
            assert abs(got - want) > 1e-3


def test_cascade_dr_with_the_true_model_varies_less_than_rips():
    policy = ranker("t", [1.5, 0.3, -1.0])
    log = with_model(tiny_log("cascade", LOGGING, LOGITS), cascade_model)
    variances = []
    for estimator in (RIPS(per="trajectory"), CascadeDR(per="trajectory")):
        values = np.array(
            [
                evaluate(log.slice_rows(2 * t, 2 * t + 2), [policy], [estimator])
                .estimate("t")
                .value
                for t in range(len(RANKINGS))
            ]
        )
        mean = LOGGING @ values
        variances.append(LOGGING @ (values - mean) ** 2)
    assert variances[1] < 0.5 * variances[0]


def test_prefix_sources_agree_with_enumeration():
    log = tiny_log("cascade", LOGGING, LOGITS)
    policies = {
        "pl": (ranker("pl", [1.5, 0.3, -1.0], 0.7), pl(np.array([1.5, 0.3, -1.0]) / 0.7)),
        "det": (ranker("det", [0.1, 2.0, 1.0], None), np.eye(6)[3]),
        "mixed": (ranker("mix", [0.1, 2.0, 1.0], 0.5, mix=0.3), 0.7 * pl([0.2, 4, 2]) + 0.05),
        "det_mixed": (ranker("dm", [0.1, 2.0, 1.0], None, mix=0.3), 0.7 * np.eye(6)[3] + 0.05),
    }
    cands = with_candidates(log).candidates
    for policy, probs in policies.values():
        want = Enumerated("check", probs).prefix_probabilities(log.frame)
        got = np.exp(target_log_prefix(PolicyView(policy, log), "rips"))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
        # a candidate c at a slot: P(logged items above the slot, then c)
        extended = np.exp(target_log_extended(PolicyView(policy, with_candidates(log)), "cdr"))
        for (slot, item), value in zip(cands[["slot", "item"]].to_numpy(), extended, strict=True):
            t, k = slot // 2, slot % 2
            cells = [*enumerate(RANKINGS[t][:k]), (k, np.searchsorted(ITEMS, item))]
            assert value == pytest.approx(Enumerated("x", probs)._prob(cells), abs=1e-15)


def test_banners_a_deterministic_logger_ordered_are_excluded_and_counted():
    env = Environment(seed=1, n_contexts=50, n_items=40, n_candidates=5, n_positions=3)
    logger = env.policy("fixed", temperature=None, mix_uniform=0.2)
    log = env.simulate(logger, 500, seed=0)
    est = evaluate(log, env.candidate_policies(1), [RIPS()]).estimate("p01")
    shuffled = int(log.frame.groupby("trajectory")["shuffled"].first().sum())
    assert est.excluded == {"shuffled": shuffled, "deterministic_logging": 500 - shuffled}
    assert est.n_units == 0 and np.isnan(est.value)


def test_text_item_ids_give_the_same_weights():
    """Item ids that are not small whole numbers go through the comparison path."""
    log = tiny_log("cascade", LOGGING, LOGITS)
    names = {10: "ten", 20: "twenty", 30: "thirty"}
    text = InteractionLog.from_frame(log.frame.assign(item=log.frame["item"].map(names)))
    scores = np.array([[1.5, 0.3, -1.0]])
    text_ranker = RankingPolicy("t", scores, np.array([["ten", "twenty", "thirty"]]), 2)
    a = evaluate(log, [ranker("t", scores[0])], [RIPS()]).estimate("t")
    b = evaluate(text, [text_ranker], [RIPS()]).estimate("t")
    assert b.value == pytest.approx(a.value, rel=1e-12)


def test_rerank_policy_prefixes_are_plackett_luce_over_the_trajectory():
    log = tiny_log("cascade", LOGGING, LOGITS)
    scores = {10: 0.4, 20: -0.2, 30: 1.1}
    scored = log.with_columns(s=np.array([scores[i] for i in log.column("item")]))
    got = np.exp(target_log_prefix(PolicyView(RerankPolicy("s", temperature=0.5), scored), "rips"))
    # each trajectory holds two items: the first is drawn against the second only
    s = scored.column("s").reshape(-1, 2) / 0.5
    first = np.exp(s[:, 0]) / np.exp(s).sum(axis=1)
    np.testing.assert_allclose(got.reshape(-1, 2), np.column_stack([first, first]), rtol=1e-12)


# -- formulas against numpy, on a simulated log --------------------------------------------


@pytest.fixture(scope="module")
def ranking_log():
    """A small position-based simulation with candidate sets, and two target policies."""
    env = Environment(seed=4, n_contexts=200, n_items=50, n_candidates=5, n_positions=3)
    log = env.simulate(env.logging_policy(), 2_000, seed=2, with_candidates=True)
    return env, log, env.candidate_policies(2)


def test_iips_is_is_on_a_ranking_log(ranking_log):
    _, log, (policy, _) = ranking_log
    ev = evaluate(log, [policy], [IS(), IIPS()])
    a, b = ev.estimate(policy.name, "is"), ev.estimate(policy.name, "iips")
    assert b.value == pytest.approx(a.value, rel=1e-12) and b.se == pytest.approx(a.se, rel=1e-9)


def prefix_weights(env, log, policy) -> np.ndarray:
    """pi(a_1..a_k) / mu_PL(a_1..a_k) by brute force (0 on shuffled trajectories)."""
    frame = log.frame
    logging = env.logging_policy()
    out = np.zeros(log.n_rows)
    for _, group in frame.groupby("trajectory"):
        if group["shuffled"].iloc[0]:
            continue
        c = group["context"].iloc[0]
        index = [list(env.candidates[c]).index(i) for i in group["item"]]
        for k in range(len(index)):
            out[group.index[k]] = prefix(policy, c, index[: k + 1]) / prefix(
                logging, c, index[: k + 1], mixed=False
            )
    return out


def prefix(policy, c, index, mixed=True) -> float:
    """P(the context's ranking starts with candidates ``index``), draw by draw."""
    if policy.temperature is None:
        base = float(list(policy.deterministic_ranking()[c][: len(index)]) == list(index))
    else:
        w = np.exp(policy.logits[c])
        base, left = 1.0, w.sum()
        for a in index:
            base, left = base * w[a] / left, left - w[a]
    m = policy.mix_uniform if mixed else 0.0
    k = policy.score_matrix.shape[1]
    return (1 - m) * base + m * np.prod([1 / (k - j) for j in range(len(index))])


def test_rips_weights_and_self_normalised_forms_match_numpy(ranking_log):
    env, log, (pl_policy, det_policy) = ranking_log
    r, pos = log.column("reward"), log.column("position")
    for policy in (pl_policy, det_policy):
        w = prefix_weights(env, log, policy)
        used = ~log.frame.groupby("trajectory")["shuffled"].first().to_numpy()
        ev = evaluate(log, [policy], [RIPS(), RIPS(self_normalized=True, per="trajectory")])
        plain = ev.estimate(policy.name, "rips")
        assert plain.value == pytest.approx(np.sum(r * w) / (3 * used.sum()), rel=1e-10)
        assert plain.n_excluded == (~used).sum()
        # obp's SNRIPS: weights normalised by their mean at each position; shuffled
        # trajectories are units with zero columns (excluded), as the engine counts them
        columns = []
        for k in (1, 2, 3):
            at = pos == k
            columns += [unit_sums(log, r * w * at), unit_sums(log, w * at)]
        columns.append(used.astype(float))

        def snrips(m):  # every used trajectory has the three positions: n_k = units
            return sum(m[2 * k] / m[2 * k + 1] for k in range(3)) * m[6] / m[6]

        value, se = delta_se(snrips, np.column_stack(columns))
        sn = ev.estimate(policy.name, "rips(self_normalized=True, per=trajectory)")
        assert sn.value == pytest.approx(value, rel=1e-10)
        assert sn.se == pytest.approx(se, rel=1e-5)


def test_pi_matches_numpy(ranking_log):
    env, log, (policy, _) = ranking_log
    w = policy.probabilities(log.frame) / log.column("propensity")
    g = unit_sums(log, w) - 2
    total = unit_sums(log, log.column("reward"))
    ev = evaluate(log, [policy], [PseudoInverse(), PseudoInverse(self_normalized=True)])
    assert ev.estimate(policy.name, "pi").value == pytest.approx(np.mean(total * g) / 3)
    wpi = ev.estimate(policy.name, "pi(self_normalized=True)")
    value, se = delta_se(lambda m: m[0] / m[1] / 3, np.column_stack([total * g, g]))
    assert wpi.value == pytest.approx(value, rel=1e-10) and wpi.se == pytest.approx(se, rel=1e-5)


# -- unbiased where the assumption holds, on the simulator -----------------------------------

#: Independent logs per user model, and trajectories in each.
LOGS, SIZE = 40, 4_000


@pytest.fixture(scope="module")
def replications():
    """Estimates on LOGS independent logs per user model, and the exact values.

    Frequent clicks (click_offset -0.5) make cascade users stop early, which
    is what IIPS gets wrong.
    """
    out = {}
    for model in ("position_based", "cascade"):
        env = Environment(
            seed=21,
            n_contexts=500,
            n_items=100,
            n_candidates=5,
            n_positions=3,
            user_model=model,
            click_offset=-0.5,
        )
        logging = env.logging_policy()
        policies = [  # Plackett-Luce, deterministic, two-stage (the generator draws 4 of 5)
            *env.candidate_policies(4)[::3],
            env.policy("two", skill=1.2, temperature=0.5, seed=3, generator_size=4),
        ]
        estimators = [IIPS(), RIPS(), CascadeDR(), CascadeDR(self_normalized=True)]
        if model == "position_based":
            estimators += [PseudoInverse(), PseudoInverse(logging=logging)]
        log = env.simulate(logging, LOGS * SIZE, seed=1, with_candidates=True)
        log = item_position_means(log).attach(log)  # cross-fitted by trajectory
        bounds = np.r_[log.unit_starts, log.n_rows]
        values = np.empty((LOGS, len(policies), len(estimators)))
        for r in range(LOGS):
            part = log.slice_rows(int(bounds[r * SIZE]), int(bounds[(r + 1) * SIZE]))
            ev = evaluate(part, policies, estimators)
            for i, p in enumerate(policies):
                values[r, i] = [ev.estimate(p.name, e.label).value for e in estimators]
        truth = [env.true_value(p, "reward_per_impression") for p in policies]
        out[model] = {
            e.label: [(values[:, i, j], truth[i]) for i in range(len(policies))]
            for j, e in enumerate(estimators)
        }
    return out


def z_scores(pairs) -> np.ndarray:
    """(mean over logs - truth) / its standard error, per target policy."""
    return np.array([(v.mean() - t) / (v.std(ddof=1) / np.sqrt(v.size)) for v, t in pairs])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "estimator"),
    [
        ("position_based", "iips"),
        ("position_based", "rips"),
        ("position_based", "pi(logging=logging)"),
        ("position_based", "cascade_dr"),
        ("cascade", "rips"),
        ("cascade", "cascade_dr"),
        ("cascade", "cascade_dr(self_normalized=True)"),  # consistent: no bias seen at 4,000
    ],
)
def test_unbiased_where_the_assumption_holds(replications, model, estimator):
    assert np.all(np.abs(z_scores(replications[model][estimator])) < 4)


@pytest.mark.slow
def test_iips_is_biased_under_cascade_users(replications):
    z = z_scores(replications["cascade"]["iips"])
    assert np.all(z > 3) and z.max() > 5  # clicks below a click are not lost to IIPS


@pytest.mark.slow
def test_cascade_dr_varies_less_than_rips_even_with_a_rough_model(replications):
    for rips, cdr in zip(
        *(replications["cascade"][e] for e in ("rips", "cascade_dr")), strict=True
    ):
        assert cdr[0].std() < rips[0].std()


@pytest.mark.slow
def test_slot_level_pi_is_biased_on_rankings(replications):
    assert z_scores(replications["position_based"]["pi"]).min() < -3


# -- the conformance kit on the non-default forms (the defaults run in test_conformance) ----

KIT_LOGGER = kit_setup(PseudoInverse())[0].logging_policy()


@pytest.mark.slow
@parametrize_with_checks(
    [
        RIPS(self_normalized=True, per="trajectory"),
        PseudoInverse(logging=KIT_LOGGER),
        CascadeDR(self_normalized=True),
    ]
)
def test_other_forms_conform(estimator, check):
    check(estimator)


# -- bad inputs: one line naming the parameter, column or rows -----------------------------


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: IIPS(self_normalized="yes"), "self_normalized"),
        (lambda: RIPS(per="row"), "per"),
        (lambda: RIPS(logging_prefix=3), "logging_prefix"),
        (lambda: PseudoInverse(logging=object()), "logging"),
        (lambda: CascadeDR(support="ignore"), "support"),
        (lambda: CascadeDR(self_normalized=1), "self_normalized"),
    ],
)
def test_bad_parameters_fail_at_construction(build, name):
    with pytest.raises(ConfigurationError, match=name):
        build()


def labelled(log: InteractionLog, **columns) -> pd.DataFrame:
    """The tiny log's frame with text row labels (and changed columns)."""
    frame = log.frame.assign(**columns)
    frame.index = [f"row{i}" for i in range(len(frame))]
    return frame


@pytest.mark.parametrize(
    ("change", "column", "rows"),
    [
        ({"logging_pool": [np.nan] + [0.0] * 11}, "logging_pool", "'row0'"),
        ({"position": [1, 3] + [1, 2] * 5}, "position", "'row1'"),
        ({"mu_prefix": [0.1, 0.2] + [0.5, 0.1] * 5}, "mu_prefix", "'row1'"),
    ],
)
def test_bad_columns_are_named_with_their_rows(change, column, rows):
    log = InteractionLog.from_frame(labelled(tiny_log("cascade", LOGGING, LOGITS), **change))
    estimator = RIPS(logging_prefix="mu_prefix" if column == "mu_prefix" else None)
    with pytest.raises(ColumnError, match=f"{column}.*{rows}") as err:
        evaluate(log, [Enumerated("t", LOGGING)], [estimator])
    assert "\n" not in str(err.value)


def test_missing_logging_columns_are_named():
    log = tiny_log("cascade", LOGGING, LOGITS)
    bare = InteractionLog.from_frame(log.frame.drop(columns="logging_pool"))
    with pytest.raises(ColumnError, match="logging_pool"):
        evaluate(bare, [Enumerated("t", LOGGING)], [RIPS()])
    with pytest.raises(ColumnError, match="pscore_cascade"):
        evaluate(log, [Enumerated("t", LOGGING)], [RIPS(logging_prefix="pscore_cascade")])


def test_a_target_without_prefix_probabilities_is_told_what_rips_needs():
    log = tiny_log("cascade", LOGGING, LOGITS)

    class MarginalsOnly:
        name = "marginals"
        probabilities = Enumerated("m", LOGGING).probabilities

    with pytest.raises(ConfigurationError, match="rips needs the target's prefix.*'marginals'"):
        evaluate(log, [MarginalsOnly()], [RIPS()])
    with pytest.raises(OffevalError, match="context"):
        evaluate(log.with_columns(context=np.full(log.n_rows, 99)), [ranker("r", LOGITS)], [RIPS()])


# -- two-stage rankers: every draw of the generator and ordering of the ranker enumerated ----

#: The generator's logits: it draws two of the three items, the ranker orders them.
GENERATOR = np.array([0.5, -0.3, 1.0])


def two_stage_ranker(name, scores, temperature=1.0, mix=0.0, size=2):
    """A two-stage simulator ranker over ITEMS for one context."""
    return RankingPolicy(
        name,
        np.array([scores]),
        ITEMS[None, :],
        2,
        temperature,
        mix,
        generator_scores=GENERATOR[None, :],
        generator_size=size,
    )


def two_stage_slates(scores, temperature, size=2) -> np.ndarray:
    """P(each of RANKINGS) by enumerating the generator's draws and the ranker's orderings."""
    w_g = np.exp(GENERATOR)
    out = np.zeros(len(RANKINGS))
    for draw in permutations(range(3), size):
        p_draw, left = 1.0, w_g.sum()
        for a in draw:
            p_draw, left = p_draw * w_g[a] / left, left - w_g[a]
        chosen = sorted(draw)
        if temperature is None:
            orders = [(sorted(chosen, key=lambda i: (-scores[i], i)), 1.0)]
        else:
            w_r = np.exp(np.asarray(scores) / temperature)
            orders = []
            for order in permutations(chosen):
                p, left = 1.0, w_r[chosen].sum()
                for a in order:
                    p, left = p * w_r[a] / left, left - w_r[a]
                orders.append((order, p))
        for order, p in orders:
            at = [list(r) for r in RANKINGS].index(list(order[:2]))
            out[at] += p_draw * p
    return out


TWO_STAGE = {
    "pl": ([1.5, 0.3, -1.0], 0.8, 0.0),
    "det": ([0.1, 2.0, 1.0], None, 0.0),
    "pl_mixed": ([0.1, 2.0, 1.0], 0.5, 0.3),
    "det_mixed": ([1.5, 0.3, -1.0], None, 0.3),
}


def two_stage_case(case: str):
    """The two-stage policy of a case and its slate probabilities (mixing a uniform shuffle)."""
    scores, temperature, mix = TWO_STAGE[case]
    probs = (1 - mix) * two_stage_slates(scores, temperature) + mix / len(RANKINGS)
    return two_stage_ranker(case, scores, temperature, mix), probs


@pytest.mark.parametrize("case", TWO_STAGE)
def test_two_stage_prefixes_agree_with_enumeration(case):
    policy, probs = two_stage_case(case)
    log = with_candidates(tiny_log("cascade", LOGGING, LOGITS))
    want = Enumerated("check", probs).prefix_probabilities(log.frame)
    got = np.exp(target_log_prefix(PolicyView(policy, log), "rips"))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    extended = np.exp(target_log_extended(PolicyView(policy, log), "cdr"))
    for (slot, item), value in zip(
        log.candidates[["slot", "item"]].to_numpy(), extended, strict=True
    ):
        t, k = slot // 2, slot % 2
        cells = [*enumerate(RANKINGS[t][:k]), (k, np.searchsorted(ITEMS, item))]
        assert value == pytest.approx(Enumerated("x", probs)._prob(cells), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("case", ["pl", "det_mixed"])
def test_rips_and_cascade_dr_are_exact_for_two_stage_targets(model, case):
    policy, probs = two_stage_case(case)
    want = truth(model, probs)
    for estimator, reward_model in (
        (RIPS(per="trajectory"), None),
        (CascadeDR(per="trajectory"), rough),
        (CascadeDR(per="trajectory"), cascade_model),
    ):
        log = tiny_log(model, LOGGING, LOGITS)
        log = log if reward_model is None else with_model(log, reward_model)
        got = expectation(log, LOGGING, policy, estimator)
        if model in HOLDS["rips"]:
            assert got == pytest.approx(want, rel=1e-12)
        else:
            assert abs(got - want) > 1e-3


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("case", ["pl", "pl_mixed", "det_mixed"])  # every slate logged
def test_pi_with_a_two_stage_logger_is_exact_for_additive_rewards(model, case):
    """The logger's Gamma sums its slates over the generator's sets (here it draws 2 of 3)."""
    logger, logging = two_stage_case(case)
    log = with_candidates(tiny_log(model, logging))
    target = ranker("target", [1.5, 0.3, -1.0])
    got = expectation(log, logging, target, PseudoInverse(per="trajectory", logging=logger))
    want = truth(model, TARGETS["plackett_luce"])
    if model in ("position_based", "cascade"):  # additive on rankings of two out of three
        assert got == pytest.approx(want, rel=1e-9)
    else:
        assert abs(got - want) > 1e-4


@pytest.mark.parametrize("model", ["position_based", "cascade"])
def test_pi_for_a_two_stage_target_reads_its_exact_marginals(model):
    policy, probs = two_stage_case("pl_mixed")
    log = with_candidates(tiny_log(model, LOGGING, LOGITS))
    got = expectation(
        log, LOGGING, policy, PseudoInverse(per="trajectory", logging=ranker("mu", LOGITS))
    )
    assert got == pytest.approx(truth(model, probs), rel=1e-9)


# -- self-normalised Cascade-DR and two-stage targets against numpy on a simulated log ------


def two_stage_prefix(policy, c, index) -> float:
    """P(a two-stage ranker's ranking of context c starts with ``index``), every draw enumerated."""
    k = policy.score_matrix.shape[1]
    w_g = np.exp(policy.generator_scores[c])
    w_r = np.exp(policy.logits[c])
    total = 0.0
    for draw in permutations(range(k), policy.generator_size):
        p, left = 1.0, w_g.sum()
        for a in draw:
            p, left = p * w_g[a] / left, left - w_g[a]
        if not set(index) <= set(draw):
            continue
        left = w_r[list(draw)].sum()
        for a in index:
            p, left = p * w_r[a] / left, left - w_r[a]
        total += p
    return total


def cascade_dr_columns(env, log, policy) -> dict[str, np.ndarray]:
    """Per row: w_1:k, w_1:k-1 and the baseline w_1:k-1 sum_c pi(c | above) q(above, c),
    by brute force (the target's prefixes draw by draw; 0 on shuffled trajectories)."""
    frame = log.frame
    slots = {
        s: (g["item"].to_numpy(), g["reward_model"].to_numpy())
        for s, g in log.candidates.groupby("slot")
    }
    known: dict[tuple, float] = {}

    def prob(policy, c, index):
        key = (c, tuple(index))
        if key not in known:
            known[key] = (two_stage_prefix if policy.two_stage else prefix)(policy, c, index)
        return known[key]

    logging = env.logging_policy()
    out = {name: np.zeros(log.n_rows) for name in ("w", "above", "baseline")}
    for _, group in frame.groupby("trajectory"):
        if group["shuffled"].iloc[0]:
            continue
        c = group["context"].iloc[0]
        index = [list(env.candidates[c]).index(i) for i in group["item"]]
        above_w = 1.0
        for k, row in enumerate(group.index):
            target_above = prob(policy, c, index[:k])
            baseline = 0.0
            for item, q in zip(*slots[row], strict=True):
                a = list(env.candidates[c]).index(item)
                if a not in index[:k] and target_above > 0:
                    baseline += prob(policy, c, [*index[:k], a]) / target_above * q
            w = prob(policy, c, index[: k + 1]) / prefix(logging, c, index[: k + 1], mixed=False)
            out["w"][row], out["above"][row] = w, above_w
            out["baseline"][row] = above_w * baseline
            above_w = w
    return out


@pytest.mark.parametrize("two_stage", [False, True])
def test_cascade_dr_and_its_self_normalised_form_match_numpy(ranking_log, two_stage):
    env, log, (pl_policy, _) = ranking_log
    policy = (
        env.policy("two", skill=1.2, temperature=0.5, seed=3, generator_size=4)
        if two_stage
        else pl_policy
    )
    log = item_position_means(log).attach(log)
    columns = cascade_dr_columns(env, log, policy)
    r, pos = log.column("reward"), log.column("position")
    residual = columns["w"] * (r - log.column("reward_model"))
    used = ~log.frame.groupby("trajectory")["shuffled"].first().to_numpy()
    ev = evaluate(log, [policy], [CascadeDR(), CascadeDR(self_normalized=True, per="trajectory")])
    plain = ev.estimate(policy.name, "cascade_dr")
    assert plain.value == pytest.approx(
        np.sum(residual + columns["baseline"]) / (3 * used.sum()), rel=1e-10
    )
    per_position = []
    for k in (1, 2, 3):
        at = pos == k
        for values in (residual, columns["w"], columns["baseline"], columns["above"]):
            per_position.append(unit_sums(log, values * at))
    per_position.append(used.astype(float))

    def sn_cascade_dr(m):  # every used trajectory has the three positions: n_k = units
        return sum(m[4 * k] / m[4 * k + 1] + m[4 * k + 2] / m[4 * k + 3] for k in range(3))

    value, se = delta_se(sn_cascade_dr, np.column_stack(per_position))
    sn = ev.estimate(policy.name, "cascade_dr(self_normalized=True, per=trajectory)")
    assert sn.value == pytest.approx(value, rel=1e-10)
    assert sn.se == pytest.approx(se, rel=1e-5)
    assert sn.n_units == used.sum() and sn.n_excluded == (~used).sum()


# -- support: target mass on candidates the logger never shows at a slot ------------------


def unsupported_log(model: str = "cascade") -> InteractionLog:
    """The tiny log with a reward model, whose candidate table says the logger never shows
    item 30 at position 2."""
    log = with_model(tiny_log(model, LOGGING, LOGITS), rough)
    cands = log.candidates
    never = (cands["item"] == 30) & (cands["position"] == 2)
    slot = cands["slot"].to_numpy()
    logged = cands["item"].to_numpy() == log.frame["item"].to_numpy()[slot]
    own = log.frame["propensity"].to_numpy()[slot]  # the logged item's, as the log says
    propensity = np.where(logged, own, np.where(never, 0, 0.5))  # shown where it was logged
    return InteractionLog.from_frame(
        log.frame, candidates=cands.drop(columns="slot").assign(propensity=propensity)
    )


SUPPORTED = {
    "iips": lambda s: IIPS(support=s),
    "pi": lambda s: PseudoInverse(logging=ranker("mu", LOGITS), support=s),
    "rips": lambda s: RIPS(support=s),
    "cascade_dr": lambda s: CascadeDR(support=s),
}


def unsupported_by_hand(name: str) -> tuple[int, float, set]:
    """Violations, unsupported mass per slot and the trajectories holding one, by hand.

    Rank marginals: the target's P(item 30 at position 2) in each trajectory.
    Prefixes: w_1 pi(30 | a_1) = P_target(a_1, 30) / P_logging(a_1), where a_1 is not 30.
    A trajectory that logged item 30 at position 2 has it supported there (the candidate
    table keeps the log's own propensity for a logged item).
    """
    target = Enumerated("t", TARGETS["plackett_luce"])
    logging = Enumerated("mu", LOGGING)
    masses = []
    for r in RANKINGS:
        if r[1] == 2:
            masses.append(0.0)
        elif name in ("iips", "pi"):
            masses.append(target._prob([(1, 2)]))
        else:
            first = r[0]
            masses.append(
                0.0
                if first == 2
                else target._prob([(0, first), (1, 2)]) / logging._prob([(0, first)])
            )
    masses = np.array(masses)
    slots = 2 * len(RANKINGS)
    return int((masses > 0).sum()), masses.sum() / slots, set(np.flatnonzero(masses > 0))


@pytest.mark.parametrize("name", SUPPORTED)
def test_support_violations_are_counted_refused_warned_or_dropped(name):
    log = unsupported_log()
    policy = ranker("t", [1.5, 0.3, -1.0])
    count, mass, holding = unsupported_by_hand(name)
    with pytest.raises(SupportError, match=f"violated {count} times") as err:
        evaluate(log, [policy], [SUPPORTED[name]("fail")])
    assert f"[{min(holding)}," in str(err.value)  # trajectories named by their ids
    with pytest.warns(UserWarning, match=f"violated {count} times"):
        warned = evaluate(log, [policy], [SUPPORTED[name]("warn")]).estimate("t")
    assert warned.diagnostics["support_violations"] == count
    assert warned.diagnostics["unsupported_mass_per_slot"] == pytest.approx(mass, rel=1e-12)
    assert warned.n_units == len(RANKINGS)
    dropped = evaluate(log, [policy], [SUPPORTED[name]("drop")]).estimate("t")
    assert dropped.excluded == {"support": len(holding)}
    assert dropped.n_units == len(RANKINGS) - len(holding)
    kept = [t for t in range(len(RANKINGS)) if t not in holding]
    if not kept:  # every trajectory holds item 30's slot at position 2
        assert np.isnan(dropped.value)
        return
    # the trajectories kept, alone, give the same
    rows = log.frame["trajectory"].isin(kept).to_numpy()
    cands = log.candidates
    sub = InteractionLog.from_frame(
        log.frame[rows],
        candidates=cands[cands["trajectory"].isin(kept).to_numpy()].drop(columns="slot"),
    )
    alone = evaluate(sub, [policy], [SUPPORTED[name]("fail")]).estimate("t")
    assert dropped.value == pytest.approx(alone.value, rel=1e-12)


@pytest.mark.parametrize("name", SUPPORTED)
def test_a_supported_log_reports_no_violation_and_the_ess_share(name):
    log = with_model(tiny_log("cascade", LOGGING, LOGITS), rough)
    est = evaluate(log, [ranker("t", [1.5, 0.3, -1.0])], [SUPPORTED[name]("fail")]).estimate("t")
    assert est.diagnostics["support_violations"] == 0
    assert est.diagnostics["unsupported_mass_per_slot"] == 0
    weights = len(RANKINGS) if name == "pi" else 2 * len(RANKINGS)  # trajectories or rows
    assert est.diagnostics["ess_share"] == pytest.approx(est.diagnostics["ess"] / weights)


# -- a two-stage logger: its ranker's columns refused, its logged prefixes unbiased ---------


def test_a_two_stage_loggers_ranker_columns_are_refused():
    env = Environment(seed=1, n_contexts=20, n_items=30, n_candidates=5, n_positions=3)
    logger = env.policy("two", temperature=0.5, mix_uniform=0.05, generator_size=4)
    log = env.simulate(logger, 50, seed=0)
    with pytest.raises(ColumnError, match="logging_two_stage.*logging_prefix=COLUMN") as err:
        evaluate(log, env.candidate_policies(1), [RIPS()])
    assert "\n" not in str(err.value)
    est = evaluate(log, env.candidate_policies(1), [RIPS(logging_prefix="logging_prefix")])
    assert est.estimate("p01").n_units == 50


@pytest.mark.slow
def test_estimators_on_a_two_stage_loggers_log_are_unbiased():
    """20 logs of 4,000 trajectories from a two-stage logger: mean within 4 SE of the truth
    for a Plackett-Luce and a two-stage target (RIPS, Cascade-DR with its logged prefixes;
    PI with the logger's Gamma summed over its generator's sets)."""
    logs, size = 20, 4_000
    out = {}
    for model in ("position_based", "cascade"):
        env = Environment(
            seed=8,
            n_contexts=300,
            n_items=60,
            n_candidates=5,
            n_positions=3,
            user_model=model,
            click_offset=-0.5,
        )
        logger = env.policy(
            "mu", noise=1.0, temperature=0.5, mix_uniform=0.05, seed=9, generator_size=4
        )
        policies = [
            env.candidate_policies(1)[0],
            env.policy("two", skill=1.2, temperature=0.5, seed=3, generator_size=4),
        ]
        estimators = [
            RIPS(logging_prefix="logging_prefix"),
            CascadeDR(logging_prefix="logging_prefix"),
        ]
        if model == "position_based":
            estimators.append(PseudoInverse(logging=logger))
        log = env.simulate(logger, logs * size, seed=2, with_candidates=True)
        log = item_position_means(log).attach(log)
        bounds = np.r_[log.unit_starts, log.n_rows]
        values = np.empty((logs, len(policies), len(estimators)))
        for r in range(logs):
            part = log.slice_rows(int(bounds[r * size]), int(bounds[(r + 1) * size]))
            ev = evaluate(part, policies, estimators)
            for i, p in enumerate(policies):
                values[r, i] = [ev.estimate(p.name, e.label).value for e in estimators]
        for i, p in enumerate(policies):
            truth = env.true_value(p, "reward_per_impression")
            for j, e in enumerate(estimators):
                out[model, p.name, e.label] = (values[:, i, j], truth)
    z = {key: z_scores([pair])[0] for key, pair in out.items()}
    assert all(abs(v) < 4 for v in z.values()), z
