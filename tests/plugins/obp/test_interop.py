"""Ways in without a row per candidate: probability tables, a uniform logger in one line,
composite trajectory keys, and obp's bandit_feedback."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from offeval import (
    ColumnError,
    ColumnPolicy,
    ConfigurationError,
    InteractionLog,
    OffevalError,
    TablePolicy,
    evaluate,
    stream_parquet,
)
from offeval_importance import IS
from offeval_importance import SNIPS as SNIS
from offeval_obp import from_obp, from_obp_rewards


def ranking_frame(seed: int = 0, n: int = 3000, items: int = 20, positions: int = 3):
    """Uniformly random rankings of 3 of 20 items, clicks, and a context per row."""
    rng = np.random.default_rng(seed)
    ranked = np.argsort(rng.random((n, items)), axis=1)[:, :positions]
    return pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(n), positions),
            "context": np.repeat(rng.integers(0, 4, n), positions),
            "item": ranked.ravel(),
            "position": np.tile(np.arange(1, positions + 1), n),
            "reward": (rng.random(n * positions) < 0.2).astype(float),
        }
    )


def target_table(items: int = 20, positions: int = 3, contexts: int | None = None):
    """A target that puts items in a fixed preference order, with some randomness."""
    rng = np.random.default_rng(1)
    keys = {"item": np.arange(items), "position": np.arange(1, positions + 1)}
    if contexts:
        keys = {"context": np.arange(contexts), **keys}
    grid = pd.MultiIndex.from_product(list(keys.values()), names=list(keys)).to_frame(index=False)
    raw = rng.random(len(grid)) + (grid["item"] < positions) * 3
    slot = [k for k in keys if k != "item"]
    return grid.assign(
        probability=raw / pd.Series(raw).groupby([grid[k] for k in slot]).transform("sum")
    )


def test_uniform_logger_in_one_line_and_a_table_target_equal_their_columns():
    frame = ranking_frame()
    uniform = TablePolicy.uniform(range(20), positions=3)
    log = InteractionLog.from_frame(frame, logging=uniform)
    assert np.allclose(log.column("propensity"), 1 / 20)
    for contexts in (None, 4):
        table = target_table(contexts=contexts)
        keys = [c for c in ("context", "item", "position") if c in table]
        merged = frame.merge(table, on=keys, how="left")  # oracle: a plain join
        spelled = InteractionLog.from_frame(
            frame.assign(propensity=1 / 20, pi=merged["probability"].to_numpy())
        )
        ours = evaluate(log, [TablePolicy(table, "t")], [IS(), SNIS()])
        theirs = evaluate(spelled, [ColumnPolicy("pi", "t")], [IS(), SNIS()])
        for estimator in ("is", "snips"):
            a, b = ours.estimate("t", estimator), theirs.estimate("t", estimator)
            assert a.value == pytest.approx(b.value, rel=1e-12)
            assert a.se == pytest.approx(b.se, rel=1e-12)
        w = merged["probability"].to_numpy() * 20
        assert ours.estimate("t", "is").value == pytest.approx(np.mean(frame["reward"] * w))


def test_table_policy_checks_its_table():
    good = target_table()
    rows = pd.DataFrame({"item": [0, 99], "position": [1, 1]})
    assert TablePolicy(good).probabilities(rows)[1] == 0.0  # absent key: never shown
    as_text = TablePolicy(good.assign(item=good["item"].map("i{}".format)))  # hashed lookup
    text_rows = rows.assign(item=rows["item"].map("i{}".format))
    np.testing.assert_array_equal(
        as_text.probabilities(text_rows), TablePolicy(good).probabilities(rows)
    )
    with pytest.raises(ColumnError, match="twice"):
        TablePolicy(pd.concat([good, good.iloc[:1]]))
    with pytest.raises(ConfigurationError, match="sum to more than 1"):
        TablePolicy(good.assign(probability=good["probability"] * 2))
    with pytest.raises(ColumnError, match=r"\[0, 1\]"):
        TablePolicy(good.assign(probability=-good["probability"]))
    with pytest.raises(ColumnError, match="'position'"):
        TablePolicy(good).probabilities(pd.DataFrame({"item": [1]}))
    with pytest.raises(ConfigurationError, match="positions"):
        TablePolicy.uniform(range(3), positions=4)
    with pytest.raises(ColumnError, match="propensities and a logging policy"):
        InteractionLog.from_frame(
            ranking_frame().assign(propensity=0.05), logging=TablePolicy.uniform(range(20), 3)
        )


def test_composite_trajectory_key_is_the_hand_built_key(tmp_path):
    frame = ranking_frame(n=2000)
    frame["user"] = frame["trajectory"] // 3
    frame["session"] = (frame["trajectory"] % 3).map({0: "a", 1: "b", 2: "c"})
    mapping = {"trajectory": ["user", "session"]}
    logger = TablePolicy.uniform(range(20), positions=3)
    by_parts = InteractionLog.from_frame(frame.drop(columns="trajectory"), mapping, logging=logger)
    by_hand = InteractionLog.from_frame(
        frame.assign(trajectory=frame["user"].astype(str) + "/" + frame["session"]),
        logging=logger,
    )
    assert by_parts.n_units == by_hand.n_units == 2000
    target = [TablePolicy(target_table(), "t")]
    a = evaluate(by_parts, target, [IS()]).estimate("t")
    b = evaluate(by_hand, target, [IS()]).estimate("t")
    assert (a.value, a.n_units) == pytest.approx((b.value, b.n_units), rel=1e-12)
    assert a.se == pytest.approx(b.se, rel=1e-12)
    path = tmp_path / "log.parquet"
    frame.drop(columns="trajectory").assign(propensity=1 / 20).to_parquet(path)
    streamed = evaluate(stream_parquet(path, mapping, batch_rows=777), target, [IS()])
    assert streamed.estimate("t").value == pytest.approx(a.value, rel=1e-12)
    with pytest.raises(ColumnError, match="'nope'"):
        InteractionLog.from_frame(frame, {"trajectory": ["user", "nope"]}, logging=logger)


def obp_feedback(seed: int = 0, n: int = 2000, n_actions: int = 6, len_list: int = 2):
    """A bandit_feedback dict in obp's shape, with pi_b, and two action_dist arrays."""
    rng = np.random.default_rng(seed)
    pi_b = rng.dirichlet(np.ones(n_actions), size=(n, len_list)).transpose(0, 2, 1)
    position = rng.integers(0, len_list, n)
    action = np.array([rng.choice(n_actions, p=pi_b[i, :, position[i]]) for i in range(n)])
    feedback = {
        "n_rounds": n,
        "n_actions": n_actions,
        "action": action,
        "position": position,
        "reward": (rng.random(n) < 0.1 + 0.05 * action).astype(int),
        "pscore": pi_b[np.arange(n), action, position],
        "context": rng.normal(size=(n, 3)),
        "pi_b": pi_b,
    }
    dists = {
        name: rng.dirichlet(np.ones(n_actions) * a, size=(n, len_list)).transpose(0, 2, 1)
        for name, a in (("flat", 5.0), ("sharp", 0.3))
    }
    return feedback, dists


def test_from_obp_gives_obps_ipw_and_snipw():
    feedback, dists = obp_feedback()
    log, policies = from_obp(feedback, dists, with_candidates=True)
    ev = evaluate(log, policies, [IS(), SNIS()])
    rounds, action, position = np.arange(2000), feedback["action"], feedback["position"]
    for name, dist in dists.items():
        w = dist[rounds, action, position] / feedback["pscore"]  # obp's iw
        r = feedback["reward"]
        assert ev.estimate(name, "is").value == pytest.approx(np.mean(r * w), rel=1e-12)
        assert ev.estimate(name, "snips").value == pytest.approx(
            np.sum(r * w) / np.sum(w), rel=1e-12
        )
        assert ev.estimate(name, "is").se == pytest.approx(
            np.std(r * w, ddof=1) / np.sqrt(2000), rel=1e-9
        )
    assert list(log.frame.columns[-3:]) == ["x0", "x1", "x2"]
    assert len(log.candidates) == 2000 * 6
    with pytest.raises(ConfigurationError, match="sum to"):
        from_obp(feedback, dists["flat"] * 0.5)


def session_feedback(seed: int = 3, n_sessions: int = 1500, n_actions: int = 5):
    """obp's bandit_feedback for page views of two positions, rounds shuffled; clicks share a
    page view's appetite, so rounds of one session are correlated. The sessions' ids (text)."""
    rng = np.random.default_rng(seed)
    n = 2 * n_sessions
    session = rng.permutation(np.repeat(np.arange(n_sessions), 2))
    position = np.zeros(n, dtype=int)
    position[np.unique(session, return_index=True)[1]] = 1  # each session: positions 0 and 1
    pi_b = rng.dirichlet(np.ones(n_actions), size=(n, 2)).transpose(0, 2, 1)
    cdf = np.cumsum(pi_b[np.arange(n), :, position], axis=1)
    action = np.minimum((rng.random(n)[:, None] > cdf).sum(axis=1), n_actions - 1)
    appetite = rng.beta(0.1, 0.4, n_sessions)[session]
    feedback = {
        "n_rounds": n,
        "n_actions": n_actions,
        "action": action,
        "position": position,
        "reward": (rng.random(n) < appetite * (0.8 + 0.05 * action)).astype(int),
        "pscore": pi_b[np.arange(n), action, position],
        "pi_b": pi_b,
    }
    target = rng.dirichlet(np.ones(n_actions) * 3, size=(n, 2)).transpose(0, 2, 1)
    return feedback, target, np.array([f"s{s}" for s in session])


def _clustered_ratio_se(y: np.ndarray, d: np.ndarray, cluster: np.ndarray) -> float:
    """Brute force: the delta-method standard error of sum(y) / sum(d) with cluster sums."""
    codes = np.unique(cluster, return_inverse=True)[1]
    ys, ds = np.bincount(codes, weights=y), np.bincount(codes, weights=d)
    value = ys.sum() / ds.sum()
    return float(np.std(ys - value * ds, ddof=1) / np.sqrt(len(ys)) / ds.mean())


def test_sessions_are_the_unit_standard_errors_cluster_on():
    feedback, target, sessions = session_feedback()
    rounds = np.arange(feedback["n_rounds"])
    w = target[rounds, feedback["action"], feedback["position"]] / feedback["pscore"]
    r = feedback["reward"].astype(float)
    by_round = evaluate(*from_obp(feedback, target), [IS(), SNIS()])
    log, policies = from_obp(feedback, target, sessions=sessions, with_candidates=True)
    assert log.n_units == 1500 and log.n_rows == 3000
    assert np.array_equal(log.frame["context"].to_numpy(), log.source_rows)  # obp's rounds
    assert np.array_equal(log.frame["trajectory"].to_numpy(), sessions[log.source_rows])
    by_session = evaluate(log, policies, [IS(), SNIS()])
    ones = np.ones_like(r)
    for name, y, d in (("is", r * w, ones), ("snips", r * w, w)):
        one, two = by_round.estimate("evaluation", name), by_session.estimate("evaluation", name)
        assert two.value == pytest.approx(y.sum() / d.sum(), rel=1e-12)
        assert one.value == pytest.approx(two.value, rel=1e-12)
        assert one.se == pytest.approx(_clustered_ratio_se(y, d, rounds), rel=1e-9)
        assert two.se == pytest.approx(_clustered_ratio_se(y, d, sessions), rel=1e-9)
        assert two.se > 1.05 * one.se  # the rounds of a page view are correlated
    cands = log.candidates  # the logger's probabilities, looked up by round
    slot_round = log.frame["context"].to_numpy()[cands["slot"].to_numpy()]
    expected = feedback["pi_b"][slot_round, cands["item"], cands["position"] - 1]
    assert np.array_equal(cands["propensity"].to_numpy(), expected)


def test_a_session_holds_one_round_per_position():
    feedback, target, sessions = session_feedback(n_sessions=20)
    sessions[[4, 9]] = "twice"
    feedback["position"][[4, 9]] = 1
    with pytest.raises(OffevalError) as exc:
        from_obp(feedback, target, sessions=sessions)
    message = str(exc.value)
    assert message.startswith("sessions: two rounds of one session at the same position")
    assert "rounds [4, 9]" in message and "\n" not in message
    with pytest.raises(OffevalError, match=r"sessions must hold one id per round \(40 rounds"):
        from_obp(feedback, target, sessions=sessions[:-1])
    sessions = sessions.astype(object)
    sessions[7] = None
    with pytest.raises(OffevalError, match=r"sessions: must not be missing.*rounds \[7\]"):
        from_obp(feedback, target, sessions=sessions)


@pytest.mark.parametrize("with_sessions", [False, True])
def test_obps_reward_model_attaches_in_one_call(with_sessions):
    feedback, target, sessions = session_feedback(n_sessions=200)
    del feedback["pi_b"]  # the Open Bandit Dataset has none: the candidates' are unknown
    q = np.random.default_rng(8).random((400, 5, 2))
    kw = {"sessions": sessions} if with_sessions else {}
    log, _ = from_obp(feedback, target, estimated_rewards_by_reg_model=q, **kw)
    rounds = log.frame["context"].to_numpy()
    logged = q[rounds, log.frame["item"], log.frame["position"] - 1]
    assert np.array_equal(log.frame["reward_model"].to_numpy(), logged)
    cands = log.candidates
    slot_round = rounds[cands["slot"].to_numpy()]
    expected = q[slot_round, cands["item"], cands["position"] - 1]
    assert np.array_equal(cands["reward_model"].to_numpy(), expected)
    assert cands["propensity"].isna().all()
    two_calls, _ = from_obp(feedback, target, with_candidates=True, **kw)
    two_calls = from_obp_rewards(two_calls, q).attach(two_calls)
    pd.testing.assert_frame_equal(two_calls.candidates, cands)
    with pytest.raises(ConfigurationError, match="drop with_candidates=False"):
        from_obp(feedback, target, estimated_rewards_by_reg_model=q, with_candidates=False)
    bare, _ = from_obp(feedback, target, **kw)
    with pytest.raises(OffevalError, match=r"from_obp\(\.\.\., with_candidates=True\)"):
        from_obp_rewards(bare, q)


def test_a_propensity_too_small_for_its_weight_is_refused_naming_the_round():
    """pscore 1e-320: the weight 0.5 / 1e-320 overflows to inf (IS inf, SNIPS nan)."""
    feedback = {
        "action": np.array([0, 1, 0]),
        "reward": np.array([1.0, 0.0, 0.0]),
        "pscore": np.array([0.5, 1e-320, 0.5]),
    }
    with pytest.raises(OffevalError, match=r"pscore'\]: must be at least 1e-150.*rounds \[1\]"):
        from_obp(feedback, {"t": np.full((3, 2, 1), 0.5)})
