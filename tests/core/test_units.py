"""The ledger of trajectories seen: exact against a set, and small for consecutive ids."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offeval import SplitUnitError
from offeval.data.units import UnitLedger

LOW, HIGH = -(2**63), 2**63 - 1
#: Ids near 0 and near the ends of int64, where intervals could overflow.
NEAR = st.sampled_from([LOW, -30, HIGH - 60]).flatmap(lambda at: st.integers(at, at + 60))
chunks = st.lists(
    st.one_of(
        st.lists(NEAR, max_size=8),  # scattered ids
        st.tuples(NEAR, st.integers(0, 12)).map(  # a run of consecutive ids
            lambda t: list(range(t[0], min(t[0] + t[1], HIGH + 1)))
        ),
        st.lists(st.text("ab", max_size=3), max_size=5),  # ids the ledger hashes
    ),
    max_size=12,
)


def replay(parts: list[list]) -> tuple[UnitLedger, set, list | None]:
    """Feed the ledger chunk by chunk; the oracle says which ids of the failing chunk repeat."""
    ledger, seen = UnitLedger(), set()
    for part in parts:
        again = [i for k, i in enumerate(part) if i in seen or i in part[:k]]
        ids = np.array(part, dtype=object if part and isinstance(part[0], str) else None)
        if again:
            with pytest.raises(SplitUnitError) as info:
                ledger.add(ids)
            assert info.value.count == len(again)
            assert sorted(map(str, info.value.ids)) == sorted(map(str, again))
            return ledger, seen, again
        ledger.add(ids)
        seen |= set(part)
    return ledger, seen, None


@settings(max_examples=300, deadline=None)
@given(chunks)
def test_add_refuses_exactly_the_ids_seen_before(parts):
    replay(parts)


@settings(max_examples=200, deadline=None)
@given(chunks, chunks)
def test_merge_refuses_exactly_the_ids_in_both(left, right):
    a, seen_a, failed_a = replay(left)
    b, seen_b, failed_b = replay(right)
    if failed_a is not None or failed_b is not None:
        return
    common = seen_a & seen_b
    if not common:
        a.merge(b)
        return
    with pytest.raises(SplitUnitError) as info:
        a.merge(b)
    numbers = {i for i in common if isinstance(i, int)}
    # the first clashing run is reported: its integer ids are named, hashed ones counted
    assert set(info.value.ids) <= numbers and 0 < info.value.count <= len(common)


def test_consecutive_ids_cost_a_few_intervals_whatever_their_number():
    ledger = UnitLedger()
    for lo in range(0, 10_000_000, 250_000):
        ledger.add(np.arange(lo, lo + 250_000))
    stored = sum(low.size for low, _ in ledger._runs["int"])
    assert stored == 1
    with pytest.raises(SplitUnitError, match=r"ids \[9999999\]"):
        ledger.add(np.array([10_000_000, 9_999_999]))


@pytest.mark.slow
def test_naming_a_clash_between_long_runs_costs_the_ids_named_not_the_runs():
    a, b = UnitLedger(), UnitLedger()
    a.add(np.arange(0, 30_000_000))
    b.add(np.arange(29_999_990, 60_000_000))
    with pytest.raises(SplitUnitError) as info:
        a.merge(b)
    assert info.value.count == 10
    assert info.value.ids == list(range(29_999_990, 30_000_000))


def test_hash_keys_at_the_top_of_their_range_are_named_by_count():
    top = np.iinfo(np.uint64).max
    keys = np.array([top - 3, top - 2, top - 1, top], dtype=np.uint64)
    a, b = UnitLedger(), UnitLedger()
    a._push("hash", keys[:3])
    b._push("hash", keys[1:])
    with pytest.raises(SplitUnitError) as info:
        a.merge(b)
    assert info.value.count == 2 and list(info.value.keys) == [top - 2, top - 1]
