"""The kit's checks of interval methods, on its own estimator and world, with no plugin: the
core's normal method and a third party's pass; a method that breaks a promise fails the check
that states it."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from offeval import IntervalMethod, hookimpl
from offeval.kitworld import KitIS
from offeval.stats import interval
from offeval.testing import (
    check_interval_chunking,
    check_interval_covers_the_truth,
    check_interval_merge,
    check_interval_method,
    check_interval_protocol,
)


class StudentT(IntervalMethod):
    """value +- t(n - 1) se: a sound third-party method."""

    def bounds(self, case, state):
        return interval(case.value, case.se, case.level, df=case.units - 1)


class Declared(StudentT):
    """Student-t, offered only to an estimator that declares its ``t_units``."""

    def reads(self, estimator):
        return getattr(estimator, "t_units", None)


class Narrow(IntervalMethod):
    """A fifth of the normal width: it undercovers."""

    def bounds(self, case, state):
        return interval(case.value, 0.2 * case.se, case.level)


class Everything(IntervalMethod):
    """The whole real line (clipped to the value's range): it never narrows."""

    def bounds(self, case, state):
        return -np.inf, np.inf


class Chunks:
    """A fold state that counts the chunks it saw."""

    def __init__(self, n=0, lock=None):
        self.n, self.lock = n, lock

    def add(self, chunk):
        self.n += 1

    def merge(self, other):
        return Chunks(self.n + other.n, self.lock)


class ChunkCounting(IntervalMethod):
    """Widens with the number of chunks: it depends on the chunking."""

    def start(self, uses):
        return Chunks()

    def bounds(self, case, state):
        return interval(case.value, case.se * (1 + state.n / 10), case.level)


class Unpicklable(ChunkCounting):
    """Its state holds a lock, which no worker can receive."""

    def start(self, uses):
        return Chunks(lock=threading.Lock())

    def bounds(self, case, state):
        return interval(case.value, case.se, case.level)


class Methods:
    """A third party's plugin of interval methods, good and bad."""

    @hookimpl
    def register_intervals(self, register):
        for name, method in {
            "student_t": StudentT,
            "declared": Declared,
            "narrow": Narrow,
            "everything": Everything,
            "chunk_counting": ChunkCounting,
            "unpicklable": Unpicklable,
        }.items():
            register(name, method)


@pytest.fixture()
def methods(reference_registry):
    reference_registry.add_plugin(Methods(), "methods")
    return reference_registry


def test_the_core_method_passes_the_kit_on_its_own_estimator():
    check_interval_method("normal")


def test_a_third_party_method_passes(methods):
    check_interval_method("student_t")


@pytest.mark.parametrize(
    ("method", "check", "message"),
    [
        ("narrow", check_interval_covers_the_truth, r"95% narrow intervals .* covered the truth"),
        ("everything", check_interval_covers_the_truth, "does not narrow as the log grows"),
        ("chunk_counting", check_interval_chunking, "interval depends on the chunks"),
        ("unpicklable", check_interval_merge, "its fold state does not pickle"),
    ],
)
def test_a_broken_promise_fails_its_check(methods, method, check, message):
    with pytest.raises(AssertionError, match=message):
        check(method, KitIS())
    with pytest.raises(AssertionError, match=f"{check.__name__} failed for '{method}'"):
        check_interval_method(method)


def test_a_method_the_estimator_is_not_offered_fails(methods):
    class Plain(KitIS):
        name = "plain_is"
        betting_columns = None

    check_interval_protocol("student_t", Plain())
    with pytest.raises(AssertionError, match=r"plain_is is not offered 'declared' intervals"):
        check_interval_protocol("declared", Plain())
