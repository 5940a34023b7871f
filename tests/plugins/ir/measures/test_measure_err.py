"""offeval_ir.measure.err: ERR by its definition (Chapelle et al. 2009), rank by rank."""

from __future__ import annotations

import pytest
from measure_cases import case, ours, ranked


@pytest.mark.parametrize("max_grade", [4.0, 2.0])
def test_err_by_its_definition(max_grade):
    run, qrels = case(4)
    values = ours(run, qrels, ["ERR@5", "ERR"], err_max_grade=max_grade)
    for user, (grades, _) in ranked(run, qrels).items():
        for name, k in (("ERR@5", 5), ("ERR", len(grades))):
            reach, total = 1.0, 0.0
            for rank, grade in enumerate(grades[:k], start=1):
                stop = (2 ** min(grade or 0, max_grade) - 1) / 2**max_grade
                total += reach * stop / rank
                reach *= 1 - stop
            assert values.loc[user, name] == pytest.approx(total, abs=1e-12), (user, name)
