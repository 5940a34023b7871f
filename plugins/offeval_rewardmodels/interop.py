"""obp's reward-model output as offeval columns."""

from __future__ import annotations

import numpy as np

from offeval.plugin import InteractionLog, OffevalError, RowError, obp_array, rewardmodel

#: The argument's name in obp, used in messages.
ARGUMENT = "estimated_rewards_by_reg_model"


def _checked(q, log: InteractionLog) -> np.ndarray:
    """The array as (n_rounds, n_actions, len_list) finite numbers, one round per trajectory."""
    q = obp_array(q, ARGUMENT)
    if q.shape[0] != log.n_units:
        raise OffevalError(
            f"{ARGUMENT} has {q.shape[0]} rounds, but the log has {log.n_units}: give the "
            "predictions for the log offeval.from_obp built from the same bandit_feedback"
        )
    bad = ~np.isfinite(q).reshape(len(q), -1).all(axis=1)
    if bad.any():
        raise RowError(
            ARGUMENT, "predicted rewards must be finite numbers", np.flatnonzero(bad), "rounds"
        )
    return q


def from_obp_rewards(
    log: InteractionLog, estimated_rewards_by_reg_model: np.ndarray
) -> rewardmodel.RewardPredictions:
    """obp's ``estimated_rewards_by_reg_model`` as predictions for a log from ``offeval.from_obp``.

    The array has shape (n_rounds, n_actions, len_list), as obp's
    ``RegressionModel.fit_predict`` returns it, one round per trajectory of
    the log; rows and candidates are looked up by trajectory (the round),
    item (the action) and position (obp's position + 1). The log must have
    its candidate table (``from_obp(..., with_candidates=True)``): the
    reward-model estimators sum the predictions over every action. Attach the
    result with ``.attach(log)``. Errors name obp's 0-based rounds.
    """
    if not isinstance(log, InteractionLog):
        raise OffevalError(
            f"log must be the InteractionLog offeval.from_obp returned, got {type(log).__name__}"
        )
    if log.candidates is None:
        raise OffevalError(
            "the log has no candidate table, and the reward-model estimators need the model's "
            "prediction for every action: build it with from_obp(..., with_candidates=True)"
        )
    q = _checked(estimated_rewards_by_reg_model, log)

    def look_up(table) -> np.ndarray:
        rounds, items = table["trajectory"].to_numpy(), table["item"].to_numpy()
        positions = table["position"].to_numpy() - 1
        if not all(v.dtype.kind in "iu" for v in (rounds, items, positions)):
            raise OffevalError(
                f"{ARGUMENT} is looked up by obp's integer rounds, actions and positions: give "
                "the log offeval.from_obp built"
            )
        inside = (rounds >= 0) & (rounds < q.shape[0]) & (items >= 0) & (items < q.shape[1])
        inside &= (positions >= 0) & (positions < q.shape[2])
        if not inside.all():
            raise RowError(
                ARGUMENT,
                f"has shape {q.shape}, but the log has actions or positions outside it: give "
                "the log offeval.from_obp built",
                np.unique(rounds[~inside]),
                "rounds",
            )
        return q[rounds, items, positions]

    return rewardmodel.RewardPredictions(look_up(log.frame), look_up(log.candidates))
