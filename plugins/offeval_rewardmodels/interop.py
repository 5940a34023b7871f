"""obp's reward-model output as offeval columns."""

from __future__ import annotations

import numpy as np

from offeval import ConfigurationError, InteractionLog, OffevalError
from offeval_rewardmodels.fitting import RewardPredictions


def from_obp_rewards(
    log: InteractionLog, estimated_rewards_by_reg_model: np.ndarray
) -> RewardPredictions:
    """obp's ``estimated_rewards_by_reg_model`` as predictions for a log from ``offeval.from_obp``.

    The array has shape (n_rounds, n_actions, len_list), as obp's
    ``RegressionModel.fit_predict`` returns it; rows and candidates are
    looked up by trajectory (the round), item (the action) and position
    (obp's position + 1). Attach the result with ``.attach(log)``.
    """
    q = np.asarray(estimated_rewards_by_reg_model, dtype=float)
    if q.ndim == 2:
        q = q[:, :, None]
    if q.ndim != 3:
        raise ConfigurationError(
            "estimated_rewards_by_reg_model must have shape (n_rounds, n_actions, len_list), "
            f"got {q.shape}"
        )

    def look_up(table) -> np.ndarray:
        rounds, items = table["trajectory"].to_numpy(), table["item"].to_numpy()
        positions = table["position"].to_numpy() - 1
        inside = (rounds >= 0) & (rounds < q.shape[0]) & (items >= 0) & (items < q.shape[1])
        inside &= (positions >= 0) & (positions < q.shape[2])
        if not inside.all():
            raise OffevalError(
                f"estimated_rewards_by_reg_model has shape {q.shape}, but the log has rounds, "
                "actions or positions outside it: give the log offeval.from_obp built"
            )
        return q[rounds, items, positions]

    cands = None if log.candidates is None else look_up(log.candidates)
    return RewardPredictions(look_up(log.frame), cands)
