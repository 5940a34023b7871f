"""A third party's interval method, registered by a plugin as it registers an estimator
(hook ``register_intervals``), used from ``evaluate`` and from ``offeval evaluate
--interval``; and the kind's own promises: the core registers ``normal`` through the same
hook, and a normal pass folds nothing but constant-size state."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from cli_checks import evaluate_args, one_line_error
from reference_estimators import IS, SNIS
from scipy import stats as scipy_stats

from offeval import IntervalMethod, OffevalError, evaluate, hookimpl
from offeval.cli.shell import main
from offeval.engine.accumulator import Accumulator
from offeval.stats import interval


class StudentT(IntervalMethod):
    """Student-t interval: value +- t(n - 1) se over the n units used."""

    def bounds(self, case, state):
        """The t quantile with one degree of freedom fewer than the units."""
        return interval(case.value, case.se, case.level, df=case.units - 1)

    def unreadable(self, case, low, high):
        """Fewer than two units: no degree of freedom."""
        return "one unit, no degree of freedom" if case.units < 2 else None


class StudentTIS(IS):
    """IS whose intervals are Student-t ones by default."""

    name = "t_is"
    interval = "student_t"


class StudentTPlugin:
    """A third-party plugin: one interval method."""

    @hookimpl
    def register_intervals(self, register):
        register("student_t", StudentT)


@pytest.fixture()
def with_t(reference_registry):
    """The core, the reference estimators and the third party's interval method."""
    reference_registry.add_plugin(StudentTPlugin(), "student")
    return reference_registry


def _scipy_t(est) -> tuple[float, float]:
    return scipy_stats.t.interval(est.level, est.n_units - 1, loc=est.value, scale=est.se)


def test_the_core_registers_its_methods_through_the_hook(reference_registry):
    assert reference_registry.names("interval") == ["normal"]
    assert {c.plugin for c in reference_registry.components("interval")} == {"offeval"}


def test_a_third_party_method_is_used_from_evaluate(with_t, small_bandit):
    log, target, _ = small_bandit
    ev = evaluate(log, [target], [IS(), SNIS()], interval={"is": "student_t"}, level=0.9)
    est, other = ev.estimate("target", "is"), ev.estimate("target", "snis")
    assert est.interval_method == "student_t" and other.interval_method == "normal"
    np.testing.assert_allclose(est.interval, _scipy_t(est), rtol=1e-12)
    normal = evaluate(log, [target], [IS()], level=0.9).estimate("target")
    assert normal.value == pytest.approx(est.value, rel=1e-12)
    assert normal.se == pytest.approx(est.se, rel=1e-12)
    assert est.ci_low < normal.ci_low < normal.ci_high < est.ci_high  # t is wider than z
    declared = evaluate(log, [target], [StudentTIS()]).estimate("target")
    np.testing.assert_allclose(declared.interval, _scipy_t(declared), rtol=1e-12)
    assert "student_t" in repr(declared)
    summary = evaluate(log, [target], [StudentTIS()]).summary()
    assert type(summary).from_dict(summary.to_dict()).interval_method == "student_t"


def test_a_third_party_method_is_named_among_the_choices(with_t, small_bandit):
    log, target, _ = small_bandit
    with pytest.raises(OffevalError, match=r"one of \('normal', 'student_t'\)"):
        evaluate(log, [target], [IS()], interval="students_t")


def test_a_third_party_method_is_used_from_the_command_line(with_t, user_log, tmp_path, capsys):
    out = tmp_path / "out"
    argv = evaluate_args(user_log, "--estimator", "is", "--estimator", "snis")
    assert main([*argv, "--interval", "is=student_t", "--level", "0.9", "--out", str(out)]) == 0
    table = pd.read_csv(out / "estimates.csv").set_index(["policy", "estimator"])
    assert set(table.xs("is", level="estimator")["interval_method"]) == {"student_t"}
    assert set(table.xs("snis", level="estimator")["interval_method"]) == {"normal"}
    for _, row in table.xs("is", level="estimator").iterrows():
        expected = scipy_stats.t.interval(
            0.9, row["n_units"] - 1, loc=row["value"], scale=row["se"]
        )
        np.testing.assert_allclose((row["ci_low"], row["ci_high"]), expected, rtol=1e-12)
    capsys.readouterr()
    one_line_error(capsys, [*argv, "--interval", "student"], r"one of normal, student_t")


def test_the_fold_state_of_a_normal_pass_keeps_no_unit(small_bandit):
    """The interval methods of a normal pass fold nothing: besides the ledger of unit ids
    (which refuses a unit seen twice), its state is of one size whatever the units."""
    log, target, _ = small_bandit
    sizes = []
    for rows in (2_000, log.n_rows):
        acc = Accumulator([target], [IS(), SNIS()])
        acc.add(log.slice_rows(0, rows))
        assert acc.state.intervals == {}
        acc.state.ledger = None  # the units' ids, kept to refuse a unit seen twice
        sizes.append(len(pickle.dumps(acc.state)))
    assert sizes[0] == sizes[1]
