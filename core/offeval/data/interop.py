"""From other libraries' data structures to offeval's: obp's ``bandit_feedback``.

Errors about obp's arrays name the key (``bandit_feedback['pscore']``,
``action_dist of 'new'``) and the offending rounds by obp's own 0-based round
index (``rounds [3, 7]``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
import pandas as pd

from offeval.data.log import InteractionLog
from offeval.data.policy import PROBABILITY_TOLERANCE
from offeval.errors import (
    ColumnError,
    ConfigurationError,
    OffevalError,
    RowError,
    describe_rows,
    plain,
)
from offeval.validation import check_flag, check_whole

#: Largest difference allowed between pi_b at the logged action and position, and pscore.
TOLERANCE = 1e-6


def _key(key: str) -> str:
    return f"bandit_feedback[{key!r}]"


def _rounds(bad: np.ndarray) -> np.ndarray:
    """The 0-based indices of the rounds flagged in ``bad`` (any axis beyond the first)."""
    return np.flatnonzero(bad.reshape(len(bad), -1).any(axis=1))


def _simplex_rounds(dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rounds with a probability outside [0, 1] (or missing), and rounds whose sums are not 1.

    A sum within :data:`~offeval.data.policy.PROBABILITY_TOLERANCE` of 1 is 1, as obp's
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
    the actions at every position; rows are looked up by their trajectory
    (the round), item (the action) and position (1-based, obp's position + 1).
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
        for column in ("trajectory", "item", "position"):
            if column not in rows:
                raise ColumnError(column, f"policy {self.name!r} looks probabilities up by it")
            values = rows[column].to_numpy()
            if values.dtype.kind not in "iu":
                raise ColumnError(
                    column,
                    f"policy {self.name!r} looks rows up by obp's integer round, action and "
                    f"position, got {_such_as(values)}: build the log with offeval.from_obp",
                )
            keys.append(values)
        rounds, items, positions = keys[0], keys[1], keys[2] - 1
        n, a, k = self.action_dist.shape
        bad = (rounds < 0) | (rounds >= n) | (items < 0) | (items >= a)
        bad |= (positions < 0) | (positions >= k)
        if bad.any():
            raise ColumnError(
                "trajectory",
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


def from_obp(
    bandit_feedback: Mapping,
    action_dist: np.ndarray | Mapping[str, np.ndarray] | None = None,
    *,
    with_candidates: bool = False,
) -> tuple[InteractionLog, list[ActionDistPolicy]]:
    """obp's ``bandit_feedback`` dict as an :class:`InteractionLog`, and its evaluation policies.

    One trajectory per round (trajectory = context = the round's index), item
    = ``action``, position = ``position`` + 1 (1 without positions), reward,
    propensity = ``pscore``; context features become columns ``x0, x1, ...``.
    ``action_dist`` (one array, or a dict of name -> array) gives the
    policies; each must have the log's rounds, actions and positions.

    ``with_candidates`` adds the candidate table (every action at the logged
    position), which the reward-model estimators (DM, DR, ...) and the
    support checks read. Its propensities are the logger's ``pi_b``, checked
    against ``pscore``; without ``pi_b`` (the Open Bandit Dataset has none)
    they are unknown, NaN: DM and DR, which read only the target's
    probabilities and the reward model over the candidates, still run, and
    the support diagnostics are left out. The actions are
    ``range(n_actions)``, from ``n_actions``, ``pi_b`` or ``action_dist``.

    Arrays are checked against each other, probabilities summing to 1 as
    obp checks them (within 1e-5); errors name the key and obp's 0-based
    round index (``rounds [3, 7]``).
    """
    if not isinstance(bandit_feedback, Mapping):
        raise OffevalError(
            f"bandit_feedback must be a dict (obp's bandit_feedback), got "
            f"{type(bandit_feedback).__name__}"
        )
    with_candidates = check_flag(with_candidates, "with_candidates")
    frame = _log_frame(bandit_feedback)
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
    for policy in policies:
        _check_dist(policy, frame, n_actions)
    if not with_candidates:
        return InteractionLog.from_frame(frame), policies
    if n_actions is None:
        raise OffevalError(
            "with_candidates needs the number of actions: give bandit_feedback['n_actions'] or "
            "the logger's 'pi_b' (or an action_dist)"
        )
    return _with_candidates(frame, n_actions, pi_b), policies


def _candidate_table(frame: pd.DataFrame, n_actions: int, pi_b: np.ndarray | None) -> pd.DataFrame:
    """Every action at each round's logged position, with the logger's probability (or NaN)."""
    n = len(frame)
    rounds = np.repeat(np.arange(n), n_actions)
    items = np.tile(np.arange(n_actions), n)
    positions = np.repeat(frame["position"].to_numpy(), n_actions)
    propensity = (
        np.full(len(rounds), np.nan) if pi_b is None else pi_b[rounds, items, positions - 1]
    )
    return pd.DataFrame(
        {"trajectory": rounds, "position": positions, "item": items, "propensity": propensity}
    )


def _with_candidates(
    frame: pd.DataFrame, n_actions: int, pi_b: np.ndarray | None
) -> InteractionLog:
    """The log with its candidate table; unknown propensities (no pi_b) are set in directly.

    The log's checks refuse a candidate propensity that is not a number in
    [0, 1]; a table built here is valid by construction (one row per action
    and round, slots in the log's order, the logged action among them), so
    only its known propensities go through them.
    """
    cands = _candidate_table(frame, n_actions, pi_b)
    if pi_b is not None:
        return InteractionLog.from_frame(frame, candidates=cands)
    log = InteractionLog.from_frame(frame)
    cands["slot"] = cands["trajectory"].to_numpy()  # one row per round, in round order
    return InteractionLog(
        log.frame, log.source_rows, log.unit_starts, cands, cands.index.to_numpy()
    )
