"""Per-slot sums over a candidate table and each slot's logged candidate against loops, in
regular and ragged layouts; the reward model's agreement check between log and candidates."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offeval import ColumnError, InteractionLog
from offeval.data.slots import slot_sums
from offeval_rewardmodels import rewardmodel
from offeval_rewardmodels.rewardmodel import logged_candidates


def _log(seed: int, per_slot: int | None, shuffle: bool):
    """Trajectories of 1-3 slots, each with ``per_slot`` candidates (1 to 5 at random if
    None) among items 0..5, its logged item one of them; the input table shuffled or not."""
    rng = np.random.default_rng(seed)
    rows, cands = [], []
    for t in range(int(rng.integers(1, 6))):
        for k in range(1, int(rng.integers(2, 5))):
            items = rng.permutation(6)[: per_slot or int(rng.integers(1, 6))]
            logged = rng.choice(items)
            rows.append((f"t{t}", k, logged, rng.random(), 0.5))
            cands += [(f"t{t}", k, i, 0.5, rng.normal()) for i in items]
    frame = pd.DataFrame(rows, columns=["trajectory", "position", "item", "reward", "propensity"])
    cands = pd.DataFrame(cands, columns=["trajectory", "position", "item", "propensity", "v"])
    if shuffle:
        cands = cands.iloc[rng.permutation(len(cands))]
    return InteractionLog.from_frame(frame, candidates=cands)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([None, 1, 4]), st.booleans())
def test_slot_sums_and_logged_candidates_match_loops(seed, per_slot, shuffle):
    log = _log(seed, per_slot, shuffle)
    cands = log.candidates
    sizes = np.bincount(cands["slot"].to_numpy())
    assert log.regular_slots == (sizes[0] if (sizes == sizes[0]).all() else None)
    v = cands["v"].to_numpy()
    expected_sums, expected_rows = [], []
    keys = list(cands[["trajectory", "position", "item"]].itertuples(index=False, name=None))
    for t, k, item in log.frame[["trajectory", "position", "item"]].itertuples(index=False):
        mine = [j for j, key in enumerate(keys) if key[:2] == (t, k)]
        expected_sums.append(sum(v[j] for j in mine))
        expected_rows += [j for j in mine if keys[j][2] == item]
    np.testing.assert_allclose(slot_sums(log, v), expected_sums, rtol=1e-12, atol=1e-15)
    rows, slots = logged_candidates(log)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(slots, np.arange(log.n_rows))


@pytest.mark.parametrize("per_slot", [None, 4])
def test_a_logged_prediction_that_differs_from_its_candidates_names_the_candidate_row(per_slot):
    log = _log(7, per_slot, shuffle=True)
    rows, slots = logged_candidates(log)
    q = log.candidates["v"].to_numpy()
    frame = log.frame.assign(v=q[rows])
    same = InteractionLog(
        frame, log.source_rows, log.unit_starts, log.candidates, log.candidate_source_rows
    )
    np.testing.assert_array_equal(rewardmodel.candidate_predictions(same, "v", "dr"), q)
    off = frame["v"].to_numpy().copy()
    off[1] += 1e-6  # beyond the agreement's rounding allowance
    other = InteractionLog(
        frame.assign(v=off), log.source_rows, log.unit_starts, log.candidates,
        log.candidate_source_rows,
    )  # fmt: skip
    label = log.candidate_source_rows[rows[1]]
    with pytest.raises(ColumnError, match=rf"'v'.*same model.*candidate rows \[{label}\]"):
        rewardmodel.candidate_predictions(other, "v", "dr")
