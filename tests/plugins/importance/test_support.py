"""The logger's support of the target's candidates, as the IS family reports it."""

import numpy as np
import pandas as pd
import pytest
from oracles import candidate_log

from offeval import InteractionLog, PolicyView, TablePolicy
from offeval_importance import support


def test_unknown_candidate_propensities_leave_the_support_unchecked():
    rng = np.random.default_rng(3)
    log, cands = candidate_log(rng, 3, shuffle=False)
    policy = TablePolicy(pd.DataFrame({"item": range(6), "probability": 1 / 6}))
    assert support(PolicyView(policy, log)) == (0, 0.0)  # every candidate has mu > 0
    unknown = log.candidates.assign(propensity=np.nan)  # from_obp without pi_b: NaN
    log = InteractionLog(
        log.frame, log.source_rows, log.unit_starts, unknown, cands.index.to_numpy()
    )
    assert support(PolicyView(policy, log)) is None
    zero = log.candidates.assign(propensity=np.where(np.arange(len(cands)) % 3 == 1, 0.0, 0.5))
    log = InteractionLog(log.frame, log.source_rows, log.unit_starts, zero, cands.index.to_numpy())
    count, mass = support(PolicyView(policy, log))
    assert count == len(cands) // 3 and mass == pytest.approx(count / 6, rel=1e-12)
