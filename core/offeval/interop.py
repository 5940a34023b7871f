"""From other libraries' data structures to offeval's: obp's ``bandit_feedback``."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from offeval.errors import ColumnError, ConfigurationError
from offeval.log import InteractionLog


class ActionDistPolicy:
    """A policy given as obp's ``action_dist``: P(action a at position k | round i).

    ``action_dist`` has shape (n_rounds, n_actions, len_list); rows are
    looked up by their trajectory (the round), item (the action) and
    position (1-based, obp's position + 1).
    """

    def __init__(self, action_dist: np.ndarray, name: str = "evaluation"):
        dist = np.asarray(action_dist, dtype=float)
        if dist.ndim == 2:
            dist = dist[:, :, None]
        if dist.ndim != 3:
            raise ConfigurationError(
                f"action_dist must have shape (n_rounds, n_actions, len_list), got {dist.shape}"
            )
        if not ((dist >= 0) & (dist <= 1)).all():
            raise ConfigurationError(f"action_dist of {name!r}: probabilities outside [0, 1]")
        sums = dist.sum(axis=1)
        if (np.abs(sums - 1) > 1e-6).any():
            i, k = np.argwhere(np.abs(sums - 1) > 1e-6)[0]
            raise ConfigurationError(
                f"action_dist of {name!r}: round {i}, position {k} sums to {sums[i, k]:.6g}, not 1"
            )
        self.action_dist, self.name = dist, name

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """P(row's item at row's position | row's round)."""
        for column in ("trajectory", "item", "position"):
            if column not in rows:
                raise ColumnError(column, f"policy {self.name!r} looks probabilities up by it")
        rounds = rows["trajectory"].to_numpy()
        items = rows["item"].to_numpy()
        positions = rows["position"].to_numpy() - 1
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
    policies. ``with_candidates`` adds the candidate table (every action at
    the logged position, with the logger's ``pi_b``), which the support
    checks and candidate-based estimators read.
    """
    for key in ("action", "reward", "pscore"):
        if key not in bandit_feedback:
            raise ColumnError(key, "obp's bandit_feedback must have it")
    action = np.asarray(bandit_feedback["action"])
    n = action.size
    position = bandit_feedback.get("position")
    position = np.zeros(n, dtype=np.int64) if position is None else np.asarray(position)
    frame = pd.DataFrame(
        {
            "trajectory": np.arange(n),
            "item": action,
            "position": position + 1,
            "reward": np.asarray(bandit_feedback["reward"], dtype=float),
            "propensity": np.asarray(bandit_feedback["pscore"], dtype=float),
        }
    )
    context = bandit_feedback.get("context")
    if context is not None:
        features = np.asarray(context, dtype=float).reshape(n, -1)
        frame = frame.assign(**{f"x{j}": features[:, j] for j in range(features.shape[1])})
    candidates = _candidates(bandit_feedback, frame) if with_candidates else None
    log = InteractionLog.from_frame(frame, candidates=candidates)
    if action_dist is None:
        return log, []
    dists = action_dist if isinstance(action_dist, Mapping) else {"evaluation": action_dist}
    return log, [ActionDistPolicy(dist, name) for name, dist in dists.items()]


def _candidates(bandit_feedback: Mapping, frame: pd.DataFrame) -> pd.DataFrame:
    """Every action at each round's logged position, with the logger's probability."""
    if "pi_b" not in bandit_feedback:
        raise ColumnError("pi_b", "with_candidates needs the logging policy's pi_b")
    pi_b = np.asarray(bandit_feedback["pi_b"], dtype=float)
    if pi_b.ndim == 2:
        pi_b = pi_b[:, :, None]
    n, n_actions = len(frame), pi_b.shape[1]
    rounds = np.repeat(np.arange(n), n_actions)
    items = np.tile(np.arange(n_actions), n)
    positions = np.repeat(frame["position"].to_numpy(), n_actions)
    return pd.DataFrame(
        {
            "trajectory": rounds,
            "position": positions,
            "item": items,
            "propensity": pi_b[rounds, items, positions - 1],
        }
    )
