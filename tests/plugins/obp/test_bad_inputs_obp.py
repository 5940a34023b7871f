"""Bad input at the core's ways into offeval other than a plain log frame (issue 19).

obp's ``bandit_feedback`` and ``action_dist`` (:func:`offeval.from_obp`) and
probability tables (:class:`offeval.TablePolicy`): each mistake is one line
naming the argument, key or column and the rows (obp's 0-based rounds, or the
user's labels). The plugins' adapters (obp's reward-model output, the
reward-model, DCG and NCIS estimators on obp's logs) are tested in
tests/plugins/<name>/test_bad_inputs_<name>.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from obp_inputs import ACTIONS, SLOTS, N, dist, feedback, message, one_line

from offeval import (
    ColumnError,
    ConfigurationError,
    InteractionLog,
    OffevalError,
    RowError,
    TablePolicy,
    evaluate,
)
from offeval_importance import IS
from offeval_obp import ActionDistPolicy, from_obp


def with_value(key: str, at: list[int], value, base: dict | None = None) -> dict:
    data = feedback() if base is None else base
    array = np.array(data[key], dtype=float if isinstance(value, float) else None)
    array[at] = value
    return {**data, key: array}


# -- from_obp: lengths and shapes ---------------------------------------------------------


def test_a_context_with_another_number_of_rows_is_refused_not_reshaped():
    doubled = {**feedback(), "context": np.zeros((2 * N, 2))}  # reshapes to (12, 4) silently
    with pytest.raises(OffevalError) as exc:
        from_obp(doubled)
    assert "'context'" in one_line(exc) and "24" in one_line(exc) and "12" in one_line(exc)


@pytest.mark.parametrize("key", ["reward", "pscore", "position"])
def test_an_array_of_another_length_is_named(key):
    short = {**feedback(), key: np.asarray(feedback()[key])[:-3]}
    with pytest.raises(OffevalError, match=rf"'{key}'\] has 9 rounds.*'action'\] has 12"):
        from_obp(short)


def test_n_rounds_that_disagrees_with_the_arrays_is_named():
    with pytest.raises(OffevalError, match=r"n_rounds.*13.*12"):
        from_obp({**feedback(), "n_rounds": 13})


def test_two_dimensional_actions_are_refused():
    with pytest.raises(OffevalError, match=r"'action'.*one action per round.*\(12, 1\)"):
        from_obp({**feedback(), "action": feedback()["action"][:, None]})


def test_fractional_and_negative_actions_are_named_by_round():
    fractional = with_value("action", [3, 7], 1.5)
    with pytest.raises(RowError) as exc:
        from_obp(fractional)
    assert "'action'" in one_line(exc) and "rounds [3, 7]" in one_line(exc)
    with pytest.raises(RowError, match=r"'action'.*rounds \[5\]"):
        from_obp(with_value("action", [5], -1))
    with pytest.raises(RowError, match=r"'action'.*n_actions=4.*rounds \[2\]"):
        from_obp(with_value("action", [2], 4))


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("reward", np.nan, "finite"),
        ("pscore", 0.0, r"\(0, 1\]"),
        ("pscore", 1.5, r"\(0, 1\]"),
        ("pscore", np.nan, r"\(0, 1\]"),
        ("position", -1, "whole numbers >= 0"),
        ("position", 0.5, "whole numbers >= 0"),
    ],
)
def test_bad_values_are_named_by_obp_key_and_round(key, value, problem):
    with pytest.raises(RowError, match=rf"'{key}'.*{problem}.*rounds \[4, 9\]"):
        from_obp(with_value(key, [4, 9], value))


def test_text_rewards_are_refused():
    with pytest.raises(OffevalError, match=r"'reward'.*numbers"):
        from_obp({**feedback(), "reward": np.array(["click"] * N)})


def test_a_non_finite_context_is_named_by_round():
    context = feedback()["context"].copy()
    context[6, 1] = np.inf
    with pytest.raises(RowError, match=r"'context'.*finite.*rounds \[6\]"):
        from_obp({**feedback(), "context": context})


def test_obps_slate_feedback_says_how_to_build_the_log():
    """SyntheticSlateBanditDataset's dict: one entry per slot, n_rounds slates, slate_id."""
    slates = {
        "n_rounds": 4,
        "slate_id": np.repeat(np.arange(4), 3),
        "action": np.tile([0, 1, 2], 4),
        "position": np.tile([0, 1, 2], 4),
        "reward": np.zeros(12, dtype=int),
        "pscore": np.full(12, 1 / 6),
        "pscore_item_position": np.full(12, 1 / 3),
        "pscore_cascade": np.tile([1 / 3, 1 / 6, 1 / 6], 4),
    }
    with pytest.raises(OffevalError) as exc:
        from_obp(slates)  # formerly: 'n_rounds is 4, but action has 12 rounds'
    line = one_line(exc)
    assert "'slate_id'" in line and "trajectory" in line and "pscore_item_position" in line


def test_bandit_feedback_must_be_a_mapping():
    with pytest.raises(OffevalError, match="bandit_feedback must be a dict"):
        from_obp([1, 2, 3])


@pytest.mark.parametrize("key", ["action", "reward", "pscore"])
def test_a_missing_key_is_named(key):
    with pytest.raises(OffevalError, match=rf"bandit_feedback\['{key}'\] is missing"):
        from_obp({**feedback(), key: None})


def test_with_candidates_must_be_a_bool():
    with pytest.raises(ConfigurationError, match="with_candidates.*'no'"):
        from_obp(feedback(), with_candidates="no")  # formerly: truthy, candidates built


def test_an_action_dist_policy_on_a_log_of_text_ids_says_how_to_build_it():
    frame = pd.DataFrame(
        {"trajectory": list("abc"), "item": [0, 1, 2], "position": 1, "reward": 1.0}
    ).assign(propensity=0.5)
    policy = ActionDistPolicy(np.full((3, 3, 1), 1 / 3))
    with pytest.raises(ColumnError, match=r"'context'.*integer round.*from_obp"):
        evaluate(InteractionLog.from_frame(frame), [policy], [IS()])  # formerly IndexError


# -- from_obp: action_dist ----------------------------------------------------------------


def test_an_action_dist_with_more_or_fewer_rounds_is_refused():
    with pytest.raises(OffevalError) as exc:
        from_obp(feedback(), dist(N + 5))
    assert "action_dist of 'evaluation'" in one_line(exc) and "17 rounds" in one_line(exc)
    with pytest.raises(OffevalError, match="action_dist of 'b' has 10 rounds"):
        from_obp(feedback(), {"a": dist(), "b": dist(N - 2)})


def test_an_action_dist_too_narrow_for_the_actions_or_positions_is_refused():
    with pytest.raises(OffevalError, match=r"action_dist of 'evaluation'.*3 actions.*n_actions=4"):
        from_obp(feedback(), np.full((N, 3, SLOTS), 1 / 3))
    with pytest.raises(OffevalError, match=r"action_dist of 'evaluation'.*1 position.*\[1, 3"):
        from_obp(feedback(), np.full((N, ACTIONS, 1), 1 / ACTIONS))


def test_an_action_dist_off_the_simplex_names_its_rounds():
    bad = dist()
    bad[[2, 8], 0, 1] = np.nan
    with pytest.raises(OffevalError, match=r"outside \[0, 1\].*rounds \[2, 8\]"):
        from_obp(feedback(), bad)
    half = dist()
    half[[1, 10]] *= 0.5
    with pytest.raises(OffevalError, match=r"sum.*not 1.*rounds \[1, 10\]"):
        from_obp(feedback(), half)


# -- from_obp: pi_b and the candidate table -----------------------------------------------


def test_a_short_pi_b_is_refused():
    short = {**feedback(), "pi_b": feedback()["pi_b"][:10]}
    with pytest.raises(OffevalError, match=r"'pi_b'\] has 10 rounds.*12"):
        from_obp(short, with_candidates=True)


def test_a_pi_b_that_disagrees_with_pscore_is_named_by_round():
    data = feedback()
    pi_b = data["pi_b"].copy()
    pi_b[7] = pi_b[7, ::-1]  # another round's distribution: still sums to 1
    with pytest.raises(RowError, match=r"'pi_b'.*'pscore'.*rounds \[7\]"):
        from_obp({**data, "pi_b": pi_b}, with_candidates=True)


def test_a_pi_b_off_the_simplex_is_named_by_round():
    data = feedback()
    pi_b = data["pi_b"].copy()
    pi_b[[0, 11], :, :] *= 2
    with pytest.raises(RowError, match=r"'pi_b'.*rounds \[0, 11\]"):
        from_obp({**data, "pi_b": pi_b}, with_candidates=True)


def test_candidates_without_pi_b_or_n_actions_say_what_to_give():
    data = feedback(False)
    del data["n_actions"]
    with pytest.raises(OffevalError, match=r"n_actions.*pi_b"):
        from_obp(data, with_candidates=True)
    log, _ = from_obp(data, dist(), with_candidates=True)  # the action_dist gives the actions
    assert len(log.candidates) == N * ACTIONS


# -- from_obp_rewards ---------------------------------------------------------------------


# -- TablePolicy --------------------------------------------------------------------------


def item_position_table(positions=(1, 2), items=(10, 11, 12)) -> pd.DataFrame:
    grid = pd.MultiIndex.from_product([items, positions], names=["item", "position"])
    return grid.to_frame(index=False).assign(probability=1 / len(items))


def ranking_log(item_keys=(10, 11, 12)) -> InteractionLog:
    frame = pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(6), 2),
            "item": np.resize(np.asarray(item_keys, dtype=object), 12).tolist(),
            "position": np.tile([1, 2], 6),
            "reward": np.tile([1.0, 0.0], 6),
            "propensity": 1 / 3,
        }
    )
    return InteractionLog.from_frame(frame)


def test_a_table_with_position_0_is_refused_as_0_based():
    obp_like = item_position_table(positions=(0, 1))
    with pytest.raises(ColumnError) as exc:
        TablePolicy(obp_like)
    text = one_line(exc)
    assert "'position'" in text and "1-based" in text and "add 1" in text
    assert "rows [0, 2, 4]" in text  # the table's own labels of its position-0 rows


@pytest.mark.parametrize("bad", [-1, 1.5, np.nan])
def test_a_table_position_that_is_not_a_whole_number_from_1_is_refused(bad):
    table = item_position_table().astype({"position": float})
    table.loc[3, "position"] = bad
    with pytest.raises(ColumnError, match=r"'position'.*rows \[3\]"):
        TablePolicy(table)


def test_a_missing_item_key_is_refused():
    table = item_position_table().astype({"item": float})
    table.loc[[1, 4], "item"] = np.nan
    with pytest.raises(ColumnError, match=r"'item'.*missing.*rows \[1, 4\]"):
        TablePolicy(table)


def test_text_keys_against_a_numeric_log_are_an_error_not_zero():
    text = item_position_table().assign(item=lambda t: t["item"].map("i{}".format))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # formerly: estimate 0 and a mean-weight warning
        with pytest.raises(ColumnError) as exc:
            evaluate(ranking_log(), [TablePolicy(text, "t")], [IS()])
    line = one_line(exc)
    assert "'item'" in line and "'i10'" in line and "10" in line
    assert "text" in line and "number" in line
    numeric = TablePolicy(item_position_table(), "n")  # and the other way round
    with pytest.raises(ColumnError, match=r"'item'.*number.*10.*text.*'a'"):
        evaluate(ranking_log(("a", "b", "c")), [numeric], [IS()])


def test_matching_keys_of_either_type_still_look_up():
    numeric_log = ranking_log()
    value = evaluate(numeric_log, [TablePolicy(item_position_table())], [IS()])
    # every item has probability 1/3 at both positions, the logger too: weight 1
    assert value.estimate("table").value == pytest.approx(0.5)
    text = item_position_table().assign(item=lambda t: t["item"].map("i{}".format))
    text_log = ranking_log(("i10", "i11", "i12"))
    assert evaluate(text_log, [TablePolicy(text)], [IS()]).estimate("table").value == (
        pytest.approx(0.5)
    )


def test_a_sum_above_1_names_its_positions_as_plain_values():
    table = item_position_table(positions=(1, 2, 3)).assign(
        probability=lambda t: np.where(
            t["position"] == 2, 0.3, np.where(t["position"] == 3, 0.5, 0.2)
        )
    )
    with pytest.raises(ConfigurationError) as exc:
        TablePolicy(table, "t")
    line = one_line(exc)
    assert "np." not in line
    assert "position [3]" in line and "1.5" in line


def test_a_sum_above_1_names_context_position_pairs():
    grid = pd.MultiIndex.from_product(
        [["u1", "u2"], [10, 11], [1, 2]], names=["context", "item", "position"]
    ).to_frame(index=False)
    over = (grid["context"] == "u2") & (grid["position"] == 1)
    table = grid.assign(probability=np.where(over, 0.9, 0.5))
    with pytest.raises(ConfigurationError, match=r"context/position \[\('u2', 1\)\].*1\.8"):
        TablePolicy(table)


def test_a_bandit_table_summing_above_1_says_so():
    table = pd.DataFrame({"item": [1, 2], "probability": [0.75, 0.5]})
    with pytest.raises(ConfigurationError, match=r"sum to 1\.25"):
        TablePolicy(table)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"items": [1, 1, 2]}, r"items.*twice.*\[1\]"),
        ({"items": [1, 2, 3], "positions": 1.5}, "positions"),
        ({"items": [1, 2, 3], "positions": 0}, "positions"),
    ],
)
def test_uniform_checks_its_arguments(kwargs, message):
    with pytest.raises(ConfigurationError, match=message):
        TablePolicy.uniform(**kwargs)


def test_table_policy_checks_its_name_and_probability_column():
    with pytest.raises(ConfigurationError, match="name"):
        TablePolicy(item_position_table(), name=3)
    with pytest.raises(ConfigurationError, match="probability='item'"):
        TablePolicy(item_position_table(), probability="item")
    with pytest.raises(ConfigurationError, match=r"probability=\['probability'\]"):
        TablePolicy(item_position_table(), probability=["probability"])


# -- reward models: the target's probabilities per slot -----------------------------------


# -- reward models: fitting and attaching -------------------------------------------------


# -- review: obp's tolerances, float32, numpy scalars ------------------------------------


def test_a_float32_table_summing_to_1_is_accepted():
    """1/3 in single precision is 0.33333334: three of them sum to 1 + 3e-8."""
    table = item_position_table().astype({"probability": np.float32})
    assert table["probability"].astype(float).groupby(table["position"]).sum().min() > 1
    policy = TablePolicy(table, "t")  # formerly: 'sum to more than 1 ... (up to 1)'
    rows = pd.DataFrame({"item": [10, 12], "position": [1, 2]})
    np.testing.assert_allclose(policy.probabilities(rows), 1 / 3, rtol=1e-7)
    almost = pd.DataFrame({"item": [1, 2], "probability": [0.5, 0.5 + 5e-6]})
    assert TablePolicy(almost).probabilities(pd.DataFrame({"item": [2]}))[0] > 0.5
    with pytest.raises(ConfigurationError, match=r"sum to 1\.00003, more than 1"):
        TablePolicy(almost.assign(probability=[0.5, 0.5 + 3e-5]))


def test_with_candidates_may_be_a_numpy_bool():
    log, _ = from_obp(feedback(), with_candidates=np.bool_(True))  # formerly refused
    assert len(log.candidates) == N * ACTIONS
    log, _ = from_obp(feedback(), with_candidates=np.bool_(False))
    assert log.candidates is None


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        (lambda: from_obp({**feedback(), "n_actions": np.int64(0)}), "got 0"),
        (lambda: from_obp(feedback(), with_candidates=np.int64(1)), "got 1"),
        (lambda: ActionDistPolicy(dist(), name=np.int64(3)), "got 3"),
        (lambda: TablePolicy(item_position_table(), name=np.int64(3)), "got 3"),
        (lambda: TablePolicy.uniform([1, 2], positions=np.int64(3)), "got 3"),
    ],
)
def test_messages_show_numbers_as_plain_values(call, shown):
    line = message(call)
    assert "np." not in line and shown in line


def test_text_in_a_numeric_array_is_named_in_user_words():
    line = message(lambda: from_obp({**feedback(), "reward": np.array(["click"] * N)}))
    assert "'reward'" in line and "'click'" in line
    assert "<U" not in line  # formerly: 'got <U5 values'


def test_obps_own_dtypes_and_extra_keys_are_accepted():
    """What obp's datasets and policies hand over passes the checks and gives obp's IPW:
    pandas Series, whole actions as floats, pscore of exactly 1, single precision, a bool
    context (OBD's get_dummies), numpy counts and the keys offeval does not read."""
    rng = np.random.default_rng(7)
    base = feedback()
    target = rng.dirichlet(np.ones(ACTIONS), size=(N, SLOTS)).transpose(0, 2, 1)
    pscore = base["pscore"].copy()
    pscore[0] = 1.0  # a deterministic logger on round 0: pi_b puts all its mass there
    pi_b = base["pi_b"].copy()
    pi_b[0, :, base["position"][0]] = np.eye(ACTIONS)[base["action"][0]]
    obp_like = {
        **base,
        "n_rounds": np.int64(N),
        "n_actions": np.int64(ACTIONS),
        "action": pd.Series(base["action"].astype(float)),
        "position": pd.Series(base["position"]),
        "reward": pd.Series(base["reward"]),
        "pscore": pscore.astype(np.float32),
        "pi_b": pi_b.astype(np.float32),
        "context": base["context"] > 0,
        "action_context": np.eye(ACTIONS),
        "expected_reward": rng.random((N, ACTIONS)),
    }
    log, (policy,) = from_obp(obp_like, target.astype(np.float32), with_candidates=True)
    rounds, action, position = np.arange(N), base["action"], base["position"]
    ipw = np.mean(base["reward"] * target[rounds, action, position] / pscore)  # obp's IPW
    assert evaluate(log, [policy], [IS()]).estimate("evaluation").value == pytest.approx(
        ipw, rel=1e-6
    )
    assert log.frame["item"].dtype.kind == "i"


def test_policy_names_from_numpy_arrays_are_shown_as_text():
    """Names taken from a numpy array are np.str_, whose repr is np.str_('new')."""
    names = np.array(["new", "old"])
    bad = dist()
    bad[1, 0, 0] = np.nan
    line = message(lambda: from_obp(feedback(), dict(zip(names, [bad, dist()], strict=True))))
    assert "action_dist of 'new'" in line and "np." not in line
    table = pd.DataFrame({"item": [1, 2], "probability": [0.7, 0.7]})
    line = message(lambda: TablePolicy(table, name=names[0]))
    assert "policy 'new'" in line and "np." not in line
    _, policies = from_obp(feedback(), dict(zip(names, [dist(), dist()], strict=True)))
    assert [type(p.name) for p in policies] == [str, str]
