"""From other libraries' data structures to offeval's: obp's ``bandit_feedback``, its
``action_dist`` and its reward model's ``estimated_rewards_by_reg_model``.

A log from :func:`from_obp` keeps obp's 0-based round as its ``context``
(and as each row's label); the trajectory, the unit standard errors cluster
on, is the round, or the user's session when given. Errors about obp's arrays
name the key (``bandit_feedback['pscore']``, ``action_dist of 'new'``) and
the offending rounds by obp's own round index (``rounds [3, 7]``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
import pandas as pd

from offeval import ColumnError, ConfigurationError, InteractionLog, OffevalError, RowError
from offeval.plugin import (
    PROBABILITY_TOLERANCE,
    check_flag,
    check_whole,
    describe_rows,
    plain,
)
from offeval_rewardmodels import RewardPredictions

#: Largest difference allowed between pi_b at the logged action and position, and pscore.
TOLERANCE = 1e-6
#: obp's name for its reward model's predictions, used in messages.
Q_HAT = "estimated_rewards_by_reg_model"


def _key(key: str) -> str:
    return f"bandit_feedback[{key!r}]"


def _rounds(bad: np.ndarray) -> np.ndarray:
    """The 0-based indices of the rounds flagged in ``bad`` (any axis beyond the first)."""
    return np.flatnonzero(bad.reshape(len(bad), -1).any(axis=1))


def _simplex_rounds(dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rounds with a probability outside [0, 1] (or missing), and rounds whose sums are not 1.

    A sum within :data:`~offeval.plugin.PROBABILITY_TOLERANCE` of 1 is 1, as obp's
    ``np.allclose(action_dist.sum(axis=1), 1)`` has it.
    """
    outside = ~((dist >= 0) & (dist <= 1))
    off = np.abs(dist.sum(axis=1) - 1) > PROBABILITY_TOLERANCE
    if not (outside.any() or off.any()):  # the usual case: no pass round by round
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return _rounds(outside), _rounds(off & ~outside.any(axis=1))


def obp_array(array: npt.ArrayLike, what: str) -> np.ndarray:
    """obp's (n_rounds, n_actions) or (n_rounds, n_actions, len_list) array of numbers, as 3-D.

    ``what`` names the argument in errors (a :class:`ConfigurationError`).
    """
    try:
        out = np.asarray(array, dtype=float)
    except (TypeError, ValueError):
        raise ConfigurationError(f"{what} must hold numbers") from None
    if out.ndim == 2:
        out = out[:, :, None]
    if out.ndim != 3:
        raise ConfigurationError(
            f"{what} must have shape (n_rounds, n_actions, len_list), got {out.shape}"
        )
    return out


class ActionDistPolicy:
    """A policy given as obp's ``action_dist``: P(action a at position k | round i).

    ``action_dist`` has shape (n_rounds, n_actions, len_list) (or (n_rounds,
    n_actions): one position), each round's probabilities summing to 1 over
    the actions at every position; rows are looked up by their context
    (obp's round, as :func:`from_obp` sets it), item (the action) and position
    (1-based, obp's position + 1).
    """

    def __init__(self, action_dist: np.ndarray, name: str = "evaluation"):
        if not isinstance(name, str) or not name:
            raise ConfigurationError(
                f"a policy's name must be a non-empty string, got {plain(name)!r}"
            )
        name = str(name)  # np.str_ shown as text
        what = f"action_dist of {name!r}"
        dist = obp_array(action_dist, what)
        outside, off = _simplex_rounds(dist)
        if outside.size:
            raise ConfigurationError(
                f"{what}: probabilities outside [0, 1] or missing (rounds {describe_rows(outside)})"
            )
        if off.size:
            sums = dist.sum(axis=1)[off[0]]
            worst = sums[np.argmax(np.abs(sums - 1))]
            raise ConfigurationError(
                f"{what}: the actions' probabilities at a position sum to {worst:.6g}, not 1 "
                f"(rounds {describe_rows(off)})"
            )
        self.action_dist, self.name = dist, name

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """P(row's item at row's position | row's round)."""
        keys = []
        for column in ("context", "item", "position"):
            if column not in rows:
                raise ColumnError(column, f"policy {self.name!r} looks probabilities up by it")
            values = rows[column].to_numpy()
            if values.dtype.kind not in "iu":
                raise ColumnError(
                    column,
                    f"policy {self.name!r} looks rows up by obp's integer round (the context "
                    f"from_obp sets), action and position, got {_such_as(values)}: build the "
                    "log with offeval.from_obp",
                )
            keys.append(values)
        rounds, items, positions = keys[0], keys[1], keys[2] - 1
        n, a, k = self.action_dist.shape
        bad = (rounds < 0) | (rounds >= n) | (items < 0) | (items >= a)
        bad |= (positions < 0) | (positions >= k)
        if bad.any():
            raise ColumnError(
                "context",
                f"rows outside policy {self.name!r}'s action_dist of shape {(n, a, k)}",
                positions=np.flatnonzero(bad),
            )
        return self.action_dist[rounds, items, positions]

    def __repr__(self) -> str:
        return f"ActionDistPolicy({self.name!r}, shape={self.action_dist.shape})"


def _such_as(values: np.ndarray) -> str:
    """``values such as 'click'``: the first value as the user wrote it (or the type)."""
    if len(values):
        return f"values such as {plain(values[0])!r}"
    return f"{values.dtype.name} values"


def _per_round(feedback: Mapping, key: str, what: str, n: int | None) -> np.ndarray:
    """One number per round (``n`` of them, when known)."""
    values = np.asarray(feedback[key])
    if values.ndim != 1:
        raise OffevalError(
            f"{_key(key)} must hold one {what} per round (a 1-D array), got shape {values.shape}"
        )
    if n is not None and len(values) != n:
        raise OffevalError(
            f"{_key(key)} has {len(values)} rounds, but {_key('action')} has {n}: every array "
            "of bandit_feedback has one entry per round"
        )
    if values.dtype.kind not in "biuf":
        raise OffevalError(f"{_key(key)} must hold numbers, got {_such_as(values)}")
    return values


def _indices(values: np.ndarray, key: str, what: str, limit: int | None = None) -> np.ndarray:
    """obp's 0-based indices: whole numbers >= 0 (and below ``limit``), as int64."""
    if values.dtype.kind == "f":
        bad = ~(np.isfinite(values) & (values >= 0)) | (values != np.floor(values))
    else:
        bad = values < 0
    if bad.any():
        raise RowError(
            _key(key), f"must be whole numbers >= 0 (obp's 0-based {what})", _rounds(bad), "rounds"
        )
    out = values.astype(np.int64)
    if limit is not None and (out >= limit).any():
        raise RowError(
            _key(key), f"must be below n_actions={limit}", _rounds(out >= limit), "rounds"
        )
    return out


def _count(feedback: Mapping, key: str) -> int | None:
    """``n_rounds`` or ``n_actions``: a whole number >= 1, or None when absent."""
    value = feedback.get(key)
    if value is None:
        return None
    return check_whole(value, _key(key), low=1, error=OffevalError)


def _log_frame(feedback: Mapping) -> pd.DataFrame:
    """The log's rows, one per round, every array checked against the others."""
    if "slate_id" in feedback:
        raise OffevalError(
            f"bandit_feedback is obp's slate feedback ({_key('slate_id')}: one entry per slot "
            "of each slate), and from_obp reads one action per round: build the log with "
            "InteractionLog.from_frame, trajectory = slate_id, position = position + 1, "
            "propensity = pscore_item_position (pscore_cascade as the slates estimators' "
            "logging_prefix)"
        )
    for key in ("action", "reward", "pscore"):
        if feedback.get(key) is None:
            raise OffevalError(
                f"{_key(key)} is missing: obp's bandit_feedback must have 'action', 'reward' "
                "and 'pscore'"
            )
    action = _per_round(feedback, "action", "action", None)
    n = len(action)
    n_rounds = _count(feedback, "n_rounds")
    if n_rounds is not None and n_rounds != n:
        raise OffevalError(f"{_key('n_rounds')} is {n_rounds}, but {_key('action')} has {n} rounds")
    action = _indices(action, "action", "action indices", _count(feedback, "n_actions"))
    reward = _per_round(feedback, "reward", "reward", n).astype(float)
    if not np.isfinite(reward).all():
        raise RowError(
            _key("reward"), "must be finite numbers", _rounds(~np.isfinite(reward)), "rounds"
        )
    pscore = _per_round(feedback, "pscore", "propensity", n).astype(float)
    bad = ~((pscore > 0) & (pscore <= 1))
    if bad.any():
        raise RowError(
            _key("pscore"),
            "the logged action's probability must lie in (0, 1]",
            _rounds(bad),
            "rounds",
        )
    tiny = pscore < InteractionLog.MIN_PROPENSITY
    if tiny.any():
        raise RowError(_key("pscore"), InteractionLog.TINY_PROPENSITY, _rounds(tiny), "rounds")
    position = np.zeros(n, dtype=np.int64)
    if feedback.get("position") is not None:
        position = _indices(
            _per_round(feedback, "position", "position", n), "position", "positions"
        )
    frame = pd.DataFrame(
        {
            "trajectory": np.arange(n),
            "item": action,
            "position": position + 1,
            "reward": reward,
            "propensity": pscore,
        }
    )
    if feedback.get("context") is None:
        return frame
    features = _context(feedback["context"], n)
    return frame.assign(**{f"x{j}": features[:, j] for j in range(features.shape[1])})


def _context(context, n: int) -> np.ndarray:
    """Context features: (n_rounds,) or (n_rounds, d) finite numbers, as (n_rounds, d)."""
    try:
        features = np.asarray(context, dtype=float)
    except (TypeError, ValueError):
        raise OffevalError(f"{_key('context')} must hold numbers (encode categories)") from None
    if features.ndim == 1:
        features = features[:, None]
    if features.ndim != 2:
        raise OffevalError(
            f"{_key('context')} must have shape (n_rounds, n_features), got {features.shape}"
        )
    if len(features) != n:
        raise OffevalError(
            f"{_key('context')} has {len(features)} rows, but {_key('action')} has {n} rounds: "
            "give one row of features per round"
        )
    if not np.isfinite(features).all():
        bad = ~np.isfinite(features)
        raise RowError(_key("context"), "features must be finite numbers", _rounds(bad), "rounds")
    return features


def _check_dist(policy: ActionDistPolicy, frame: pd.DataFrame, n_actions: int | None) -> None:
    """An action_dist has the log's rounds, its actions and its positions."""
    what = f"action_dist of {policy.name!r}"
    n, a, k = policy.action_dist.shape
    if n != len(frame):
        raise OffevalError(
            f"{what} has {n} rounds, but bandit_feedback has {len(frame)} rounds: give one row "
            "per round of the log"
        )
    if n_actions is not None and a != n_actions:
        raise OffevalError(f"{what} has {a} actions, but the log has n_actions={n_actions}")
    beyond = frame["item"].to_numpy() >= a
    if beyond.any():
        raise RowError(
            what, f"has {a} actions, fewer than the log's", np.flatnonzero(beyond), "rounds"
        )
    beyond = frame["position"].to_numpy() > k
    if beyond.any():
        raise RowError(
            what,
            f"has {k} position(s) (len_list), but {_key('position')} goes beyond",
            np.flatnonzero(beyond),
            "rounds",
        )


def _pi_b(feedback: Mapping, frame: pd.DataFrame, n_actions: int | None) -> np.ndarray:
    """The logger's pi_b, checked against the log: shape, probabilities, and pscore."""
    pi_b = obp_array(feedback["pi_b"], _key("pi_b"))
    n, a, k = pi_b.shape
    if n != len(frame):
        raise OffevalError(
            f"{_key('pi_b')} has {n} rounds, but {_key('action')} has {len(frame)}: give the "
            "logger's probabilities for every round"
        )
    if n_actions is not None and a != n_actions:
        raise OffevalError(f"{_key('pi_b')} has {a} actions, but the log has n_actions={n_actions}")
    item, position = frame["item"].to_numpy(), frame["position"].to_numpy() - 1
    if (item >= a).any() or (position >= k).any():
        bad = (item >= a) | (position >= k)
        raise RowError(
            _key("pi_b"),
            f"of shape {pi_b.shape} has no entry for the logged action and position",
            np.flatnonzero(bad),
            "rounds",
        )
    outside, off = _simplex_rounds(pi_b)
    bad = np.union1d(outside, off)
    if bad.size:
        raise RowError(
            _key("pi_b"),
            "must be probabilities in [0, 1] summing to 1 over the actions at each position",
            bad,
            "rounds",
        )
    rounds = np.arange(n)
    off = np.abs(pi_b[rounds, item, position] - frame["propensity"].to_numpy()) > TOLERANCE
    if off.any():
        raise RowError(
            _key("pi_b"),
            f"the logged action's probability differs from {_key('pscore')}",
            np.flatnonzero(off),
            "rounds",
        )
    return pi_b


def _sessions(sessions, frame: pd.DataFrame) -> np.ndarray:
    """The user's session of each round: one id per round, none missing, and no two rounds
    of a session at the same position."""
    values = np.asarray(sessions)
    n = len(frame)
    if values.ndim != 1 or len(values) != n:
        raise OffevalError(
            f"sessions must hold one id per round ({n} rounds, as {_key('action')}), got "
            f"shape {values.shape}"
        )
    missing = pd.isna(values)
    if missing.any():
        raise RowError("sessions", "must not be missing", np.flatnonzero(missing), "rounds")
    keys = pd.DataFrame({"session": values, "position": frame["position"].to_numpy()})
    twice = keys.duplicated(keep=False).to_numpy()
    if twice.any():
        raise RowError(
            "sessions",
            "two rounds of one session at the same position: a session groups the rounds "
            "shown together, one per position (give a finer id, such as the page view)",
            np.flatnonzero(twice),
            "rounds",
        )
    return values


def from_obp(
    bandit_feedback: Mapping,
    action_dist: np.ndarray | Mapping[str, np.ndarray] | None = None,
    *,
    with_candidates: bool | None = None,
    sessions: npt.ArrayLike | None = None,
    estimated_rewards_by_reg_model: npt.ArrayLike | None = None,
) -> tuple[InteractionLog, list[ActionDistPolicy]]:
    """obp's ``bandit_feedback`` dict as an :class:`InteractionLog`, and its evaluation policies.

    One row per round: item = ``action``, position = ``position`` + 1 (1
    without positions), reward, propensity = ``pscore``, context = obp's
    round index (also each row's label in errors); context features become
    columns ``x0, x1, ...``. ``action_dist`` (one array, or a dict of name ->
    array) gives the policies; each must have the log's rounds, actions and
    positions.

    The trajectory, the unit of independence that standard errors cluster
    on, is the round; give ``sessions`` (one id per round: the user's visit,
    the page view) to cluster on sessions instead, rounds shown together being
    correlated. A session holds at most one round per position.

    ``with_candidates`` adds the candidate table (every action at the logged
    position), which the reward-model estimators (DM, DR, ...) and the
    support checks read. Its propensities are the logger's ``pi_b``, checked
    against ``pscore``; without ``pi_b`` (the Open Bandit Dataset has none)
    they are unknown, NaN: DM and DR, which read only the target's
    probabilities and the reward model over the candidates, still run, and
    the support diagnostics are left out. The actions are
    ``range(n_actions)``, from ``n_actions``, ``pi_b`` or ``action_dist``.
    ``estimated_rewards_by_reg_model`` (obp's reward model's predictions,
    shape (n_rounds, n_actions, len_list)) attaches them as the column
    ``reward_model`` of the log and its candidate table, built for them.

    Arrays are checked against each other, probabilities summing to 1 as
    obp checks them (within 1e-5); errors name the key and obp's 0-based
    round index (``rounds [3, 7]``).
    """
    if not isinstance(bandit_feedback, Mapping):
        raise OffevalError(
            f"bandit_feedback must be a dict (obp's bandit_feedback), got "
            f"{type(bandit_feedback).__name__}"
        )
    q_hat = estimated_rewards_by_reg_model
    if with_candidates is None:
        with_candidates = q_hat is not None
    with_candidates = check_flag(with_candidates, "with_candidates")
    if q_hat is not None and not with_candidates:
        raise ConfigurationError(
            f"{Q_HAT} needs the candidate table (the model's prediction for every action): "
            "drop with_candidates=False"
        )
    frame = _log_frame(bandit_feedback)
    if sessions is not None:
        frame = frame.assign(context=frame["trajectory"], trajectory=_sessions(sessions, frame))
    n_actions = _count(bandit_feedback, "n_actions")
    dists = {} if action_dist is None else action_dist
    if not isinstance(dists, Mapping):
        dists = {"evaluation": dists}
    policies = [ActionDistPolicy(dist, name) for name, dist in dists.items()]
    pi_b = None
    if with_candidates and bandit_feedback.get("pi_b") is not None:
        pi_b = _pi_b(bandit_feedback, frame, n_actions)
        n_actions = pi_b.shape[1]
    if with_candidates and n_actions is None and policies:
        n_actions = policies[0].action_dist.shape[1]  # the candidates: every policy's actions
    if with_candidates and n_actions is None and q_hat is not None:
        n_actions = obp_array(q_hat, Q_HAT).shape[1]
    for policy in policies:
        _check_dist(policy, frame, n_actions)
    log = InteractionLog.from_frame(frame)
    if not with_candidates:
        return log, policies
    if n_actions is None:
        raise OffevalError(
            "with_candidates needs the number of actions: give bandit_feedback['n_actions'] or "
            "the logger's 'pi_b' (or an action_dist)"
        )
    log = _with_candidates(log, n_actions, pi_b)
    if q_hat is not None:
        log = from_obp_rewards(log, q_hat).attach(log)
    return log, policies


def _with_candidates(
    log: InteractionLog, n_actions: int, pi_b: np.ndarray | None
) -> InteractionLog:
    """The log with every action at each row's position, with the logger's probability (or NaN).

    The log's checks refuse a candidate propensity that is not a number in
    [0, 1]; a table built here is valid by construction (one row per action
    and log row, slots in the log's order, the logged action among them), so
    only known propensities go through them; unknown ones are set in directly.
    """
    rows = log.frame
    rounds = np.repeat(rows["context"].to_numpy(), n_actions)
    positions = np.repeat(rows["position"].to_numpy(), n_actions)
    items = np.tile(np.arange(n_actions), log.n_rows)
    cands = pd.DataFrame(
        {
            "trajectory": np.repeat(rows["trajectory"].to_numpy(), n_actions),
            "position": positions,
            "item": items,
            "propensity": (
                np.full(len(rounds), np.nan) if pi_b is None else pi_b[rounds, items, positions - 1]
            ),
        }
    )
    if pi_b is not None:
        return log.with_candidates(cands)
    cands["slot"] = np.repeat(np.arange(log.n_rows), n_actions)
    return InteractionLog(
        log.frame, log.source_rows, log.unit_starts, cands, cands.index.to_numpy()
    )


def from_obp_rewards(
    log: InteractionLog, estimated_rewards_by_reg_model: npt.ArrayLike
) -> RewardPredictions:
    """obp's ``estimated_rewards_by_reg_model`` as predictions for a log from :func:`from_obp`.

    The array has shape (n_rounds, n_actions, len_list), as obp's
    ``RegressionModel.fit_predict`` returns it; rows and candidates are
    looked up by their round (the log's context), item (the action) and
    position (obp's position + 1). The log must have its candidate table
    (``from_obp(..., with_candidates=True)``): the reward-model estimators sum
    the predictions over every action. Attach the result with
    ``.attach(log)``, or give the array to ``from_obp(...,
    estimated_rewards_by_reg_model=...)``, which does both. Errors name obp's
    0-based rounds.
    """
    if not isinstance(log, InteractionLog):
        raise OffevalError(
            f"log must be the InteractionLog offeval.from_obp returned, got {type(log).__name__}"
        )
    if log.candidates is None:
        raise OffevalError(
            "the log has no candidate table, and the reward-model estimators need the model's "
            "prediction for every action: build it with from_obp(..., with_candidates=True), "
            f"or give from_obp(..., {Q_HAT}=...) the array"
        )
    q = _q_hat(estimated_rewards_by_reg_model, log)
    rounds = log.frame["context"].to_numpy()
    slots = log.candidates["slot"].to_numpy()
    return RewardPredictions(
        _predictions(q, log.frame, rounds), _predictions(q, log.candidates, rounds[slots])
    )


def _q_hat(q_hat: npt.ArrayLike, log: InteractionLog) -> np.ndarray:
    """The array as (n_rounds, n_actions, len_list) finite numbers, one round per log row."""
    q = obp_array(q_hat, Q_HAT)
    if q.shape[0] != log.n_rows:
        raise OffevalError(
            f"{Q_HAT} has {q.shape[0]} rounds, but the log has {log.n_rows}: give the "
            "predictions for the log offeval.from_obp built from the same bandit_feedback"
        )
    bad = ~np.isfinite(q).reshape(len(q), -1).all(axis=1)
    if bad.any():
        raise RowError(
            Q_HAT, "predicted rewards must be finite numbers", np.flatnonzero(bad), "rounds"
        )
    return q


def _predictions(q: np.ndarray, table: pd.DataFrame, rounds: np.ndarray) -> np.ndarray:
    """q[round, item, position - 1] for each row of ``table`` (the log's or its candidates')."""
    items, positions = table["item"].to_numpy(), table["position"].to_numpy() - 1
    if not all(v.dtype.kind in "iu" for v in (rounds, items, positions)):
        raise OffevalError(
            f"{Q_HAT} is looked up by obp's integer rounds, actions and positions: give "
            "the log offeval.from_obp built"
        )
    inside = (rounds >= 0) & (rounds < q.shape[0]) & (items >= 0) & (items < q.shape[1])
    inside &= (positions >= 0) & (positions < q.shape[2])
    if not inside.all():
        raise RowError(
            Q_HAT,
            f"has shape {q.shape}, but the log has actions or positions outside it: give "
            "the log offeval.from_obp built",
            np.unique(rounds[~inside]),
            "rounds",
        )
    return q[rounds, items, positions]
