"""offeval.validation: the one place scalar arguments are checked.

The table at the end pins, for call sites written by hand before this module,
the message the old code gave (copied from its f-string, values filled in by
hand), so the module can replace them without changing what users read.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from offeval import validation
from offeval.cli.options import at_least
from offeval.errors import ConfigurationError, OffevalError

NUMPY_INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
booleans = st.sampled_from([True, False, np.True_, np.False_])


def numpy_ints():
    """A numpy integer of some width, within that width's range."""
    return st.sampled_from(NUMPY_INTS).flatmap(
        lambda kind: st.integers(int(np.iinfo(kind).min), int(np.iinfo(kind).max)).map(kind)
    )


def refusal(call, *args, **kwargs) -> Exception:
    """The exception ``call(*args, **kwargs)`` raises (an OffevalError)."""
    with pytest.raises(OffevalError) as caught:
        call(*args, **kwargs)
    return caught.value


# Whole numbers


@given(booleans, st.sampled_from([None, 0, 1]))
def test_a_boolean_is_never_a_whole_number(flag, low):
    message = str(refusal(validation.check_whole, flag, "draws", low=low, floats=True))
    assert (
        message
        == f"draws must be a whole number{'' if low is None else f' >= {low}'}, got {bool(flag)!r}"
    )


@given(numpy_ints())
def test_numpy_integers_are_whole_numbers_returned_as_python_ints(value):
    out = validation.check_whole(value, "seed")
    assert type(out) is int and out == int(value)


@given(st.integers(-(2**70), 2**70), st.integers(0, 5))
def test_whole_bounds_are_inclusive_at_both_edges(low, width):
    high = low + width
    assert validation.check_whole(low, "n", low=low, high=high) == low
    assert validation.check_whole(high, "n", low=low, high=high) == high
    for outside in (low - 1, high + 1):
        message = str(refusal(validation.check_whole, outside, "n", low=low, high=high))
        assert message == f"n must be a whole number in {low}..{high}, got {outside}"


@given(numpy_ints(), st.integers(-5, 5))
def test_a_refused_numpy_integer_is_shown_as_a_plain_number(value, shift):
    low = int(value) + 1 + abs(shift)
    message = str(refusal(validation.check_whole, value, "max_groups", low=low))
    assert message == f"max_groups must be a whole number >= {low}, got {int(value)}"


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_floats_are_whole_numbers_only_when_asked_and_whole_and_finite(value):
    with pytest.raises(ConfigurationError):
        validation.check_whole(value, "k")
    whole = math.isfinite(value) and value.is_integer()
    if whole:
        assert validation.check_whole(np.float64(value), "k", floats=True) == int(value)
    else:
        message = str(refusal(validation.check_whole, np.float64(value), "k", floats=True))
        assert message == f"k must be a whole number, got {value!r}"


def test_none_is_a_value_only_when_optional():
    assert validation.check_whole(None, "cutoff", low=1, optional=True) is None
    assert validation.check_number(None, "beta", optional=True) is None
    assert str(refusal(validation.check_whole, None, "cutoff", low=1)) == (
        "cutoff must be a whole number >= 1, got None"
    )


# Numbers


@given(booleans)
def test_a_boolean_is_never_a_number(flag):
    message = str(refusal(validation.check_number, flag, "cap", low=0, finite=False))
    assert message == f"cap must be a number >= 0 or inf, got {bool(flag)!r}"


@given(st.sampled_from(["0.5", b"1", None, [1.0], 1 + 0j, np.array(0.5)]))
def test_text_and_containers_are_not_numbers(value):
    with pytest.raises(ConfigurationError, match="^lift must be a finite number, got "):
        validation.check_number(value, "lift")


@given(st.floats(-1e6, 1e6), st.floats(1, 1e6), st.booleans(), st.booleans())
def test_number_bounds_are_inclusive_unless_open(low, width, low_open, high_open):
    high = low + width
    bounds = {"low": low, "high": high, "low_open": low_open, "high_open": high_open}
    for edge, is_open in ((low, low_open), (high, high_open)):
        if is_open:
            assert "must be a number in " in str(
                refusal(validation.check_number, edge, "x", **bounds)
            )
        else:
            assert validation.check_number(np.float64(edge), "x", **bounds) == edge
    outside = (np.nextafter(low, -np.inf), np.nextafter(high, np.inf))
    for value in outside:
        message = str(refusal(validation.check_number, value, "x", **bounds))
        interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        assert message == f"x must be a number in {interval}, got {float(value)!r}"


@given(st.sampled_from([math.nan, math.inf, -math.inf, np.float32("nan"), np.float64("inf")]))
def test_nan_and_inf_are_refused_by_default(value):
    message = str(refusal(validation.check_number, value, "sd", low=0))
    assert message.startswith("sd must be a finite number >= 0, got ") and "np." not in message


def test_inf_passes_the_bounds_when_allowed_and_nan_never():
    assert validation.check_number(math.inf, "cap", low=0, low_open=True, finite=False) == math.inf
    assert str(
        refusal(validation.check_number, -math.inf, "cap", low=0, low_open=True, finite=False)
    ) == ("cap must be a positive number or inf, got -inf")
    assert str(
        refusal(validation.check_number, math.nan, "cap", low=0, low_open=True, finite=False)
    ) == ("cap must be a positive number or inf, got nan")
    assert validation.check_number(-math.inf, "shift", finite=False) == -math.inf


def test_an_int_too_large_for_a_float_is_beyond_any_finite_bound():
    assert validation.check_number(10**400, "cap", low=1, finite=False) == math.inf
    assert str(refusal(validation.check_number, 10**400, "ratio", low=0, low_open=True)).startswith(
        "ratio must be a finite positive number, got 1000"
    )


@given(numpy_ints() | st.floats(-1e9, 1e9).map(np.float64))
def test_numpy_numbers_are_numbers_returned_as_python_floats(value):
    out = validation.check_number(value, "lift")
    assert type(out) is float and out == float(value)


# Choices, flags, levels


@given(st.sampled_from(["all", "shuffled", "non_shuffled"]))
def test_a_choice_is_returned_as_the_choice_itself(word):
    out = validation.check_choice(np.str_(word), "banners", ("all", "shuffled", "non_shuffled"))
    assert type(out) is str and out == word


@given(st.sampled_from([1, None, True, b"all", ["all"], np.array(["all"])]))
def test_only_a_value_of_the_choices_type_is_a_choice(value):
    with pytest.raises(ConfigurationError, match=r"^banners must be one of \('all', 'some'\)"):
        validation.check_choice(value, "banners", ("all", "some"))


@given(st.sampled_from(NUMPY_INTS).flatmap(lambda kind: st.sampled_from([kind(0), kind(5)])))
def test_a_numpy_integer_is_the_whole_number_choice_it_stands_for(value):
    out = validation.check_choice(value, "depth", (0, 5))
    assert type(out) is int and out == value


@given(booleans)
def test_a_boolean_is_never_a_whole_number_choice(flag):
    with pytest.raises(ConfigurationError, match=r"^depth must be one of \(0, 1\), got "):
        validation.check_choice(flag, "depth", (0, 1))


def test_a_numpy_boolean_is_the_flag_choice_it_stands_for():
    assert validation.check_choice(np.True_, "keep", (True, "auto")) is True


def test_a_mistyped_choice_suggests_the_closest():
    assert str(refusal(validation.check_choice, "Shufled", "banners", ("all", "shuffled"))) == (
        "banners must be one of ('all', 'shuffled'), got 'Shufled' (did you mean shuffled?)"
    )
    assert str(refusal(validation.check_choice, "x", "method", {"top": 1, "sample": 2})) == (
        "method must be one of ('top', 'sample'), got 'x'"
    )


@given(booleans)
def test_flags_are_python_or_numpy_booleans(flag):
    out = validation.check_flag(flag, "self_normalized")
    assert type(out) is bool and out == bool(flag)


@given(st.sampled_from([0, 1, np.int64(1), "True", None, 1.0]))
def test_a_number_or_text_is_not_a_flag(value):
    message = str(refusal(validation.check_flag, value, "self_normalized"))
    assert message.startswith("self_normalized must be True or False, got ")
    assert "np." not in message


@given(st.floats(0, 1, exclude_min=True, exclude_max=True))
def test_a_level_strictly_between_0_and_1_is_accepted(level):
    assert validation.check_level(np.float64(level)) == level


@given(st.sampled_from([0, 1, 0.0, 1.0, 95, -0.5, math.nan, math.inf, True, "0.95", None]))
def test_a_level_outside_0_1_is_refused_naming_the_rule(level):
    exc = refusal(validation.check_level, level)
    assert type(exc) is OffevalError
    assert str(exc).startswith("confidence level must lie in (0, 1), e.g. 0.95; got ")


# The argparse type (offeval.cli.options.at_least)


@given(st.integers(-(10**6), 10**6), st.integers(-5, 5))
def test_at_least_reads_whole_numbers_and_refuses_those_below(value, low):
    whole = at_least(low)
    assert whole.__name__ == f"whole number >= {low}"
    if value >= low:
        assert whole(str(value)) == value
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=f"^{value} is not >= {low}$"):
            whole(str(value))


@pytest.mark.parametrize("text", ["1.5", "abc", "", "1e3"])
def test_at_least_refuses_text_that_is_not_a_whole_number(text):
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        at_least(1)(text)
    assert str(caught.value) == f"{text!r} is not a whole number"


# Messages of the hand-written checks this module replaces (site: old f-string).

ir_ties = ("expected", "item_desc", "item_asc", "input_order")
SITES = {
    # engine/evaluation.py evaluate: f"workers must be a whole number >= 1, got {plain(workers)!r}"
    "evaluate workers": (
        lambda: validation.check_whole(np.int64(0), "workers", low=1, error=OffevalError),
        OffevalError,
        "workers must be a whole number >= 1, got 0",
    ),
    # engine/evaluation.py _chunks: "chunk size must be a whole number of rows >= 1, got ..."
    "evaluate chunk size": (
        lambda: validation.check_whole(
            0, "chunk size", low=1, rule="a whole number of rows >= 1", error=OffevalError
        ),
        OffevalError,
        "chunk size must be a whole number of rows >= 1, got 0",
    ),
    # data/log.py stream_parquet: f"batch_rows must be a whole number >= 1, got {shown!r}"
    "stream_parquet batch_rows": (
        lambda: validation.check_whole(True, "batch_rows", low=1, error=OffevalError),
        OffevalError,
        "batch_rows must be a whole number >= 1, got True",
    ),
    # offeval_obp/interop.py _count: f"{_key(key)} must be a whole number >= 1, got {value!r}"
    "from_obp n_rounds": (
        lambda: validation.check_whole(
            2.0, "bandit_feedback['n_rounds']", low=1, error=OffevalError
        ),
        OffevalError,
        "bandit_feedback['n_rounds'] must be a whole number >= 1, got 2.0",
    ),
    # stats/inference.py check_level
    "confidence level": (
        lambda: validation.check_level(np.float64(95.0)),
        OffevalError,
        "confidence level must lie in (0, 1), e.g. 0.95; got 95.0",
    ),
    # evaluation.py Accumulator: f"covariances must be one of {COVARIANCES}, got {covariances!r}"
    "covariances": (
        lambda: validation.check_choice(
            "none", "covariances", ("estimator", "all"), error=OffevalError
        ),
        OffevalError,
        "covariances must be one of ('estimator', 'all'), got 'none'",
    ),
    # progress.py progress_enabled: f"{VARIABLE} must be 0 or 1, got {setting!r}"
    "OFFEVAL_PROGRESS": (
        lambda: validation.check_choice("yes", "OFFEVAL_PROGRESS", ("0", "1"), rule="0 or 1"),
        ConfigurationError,
        "OFFEVAL_PROGRESS must be 0 or 1, got 'yes'",
    ),
    # offeval_obp/interop.py from_obp: "with_candidates must be True or False, got {plain(...)!r}"
    "from_obp with_candidates": (
        lambda: validation.check_flag("no", "with_candidates"),
        ConfigurationError,
        "with_candidates must be True or False, got 'no'",
    ),
    # offeval_slates/base.py check_flag: f"{name} must be True or False, got {value!r}"
    "slates self_normalized": (
        lambda: validation.check_flag(None, "self_normalized"),
        ConfigurationError,
        "self_normalized must be True or False, got None",
    ),
    # offeval_ir/blocks.py: f"chunk_rows must be a whole number >= 1, got {chunk_rows!r}"
    "ir chunk_rows": (
        lambda: validation.check_whole(0, "chunk_rows", low=1),
        ConfigurationError,
        "chunk_rows must be a whole number >= 1, got 0",
    ),
    # offeval_ir/metrics.py _checked_cutoffs: "ks: each cut-off k must be a whole number >= 1
    # or None, got {plain(k)!r}"
    "ir ks": (
        lambda: validation.check_whole(
            np.float64(2.5), "ks: each cut-off k", low=1, floats=True, optional=True
        ),
        ConfigurationError,
        "ks: each cut-off k must be a whole number >= 1 or None, got 2.5",
    ),
    # offeval_ir/conventions.py: f"{field} must be one of {choices}, got {getattr(self, field)!r}"
    "ir ties": (
        lambda: validation.check_choice("random", "ties", ir_ties),
        ConfigurationError,
        "ties must be one of ('expected', 'item_desc', 'item_asc', 'input_order'), got 'random'",
    ),
    # offeval_ir/measures.py: f"{label!r}: RBP's persistence p must be in (0, 1), got {p}"
    "ir RBP p": (
        lambda: validation.check_number(
            1.5, "'RBP(p=1.5)': RBP's persistence p", high=1, high_open=True, rule="in (0, 1)"
        ),
        ConfigurationError,
        "'RBP(p=1.5)': RBP's persistence p must be in (0, 1), got 1.5",
    ),
    # offeval_disagreement/streams.py: "seed must be a whole number in [0, 2^64), got ..."
    "disagreement stream seed": (
        lambda: validation.check_whole(
            np.int64(-1), "seed", low=0, high=2**64 - 1, rule="a whole number in [0, 2^64)"
        ),
        ConfigurationError,
        "seed must be a whole number in [0, 2^64), got -1",
    ),
    # offeval_disagreement/given_set.py: f"samples must be a whole number >= 2, got ..."
    "disagreement samples": (
        lambda: validation.check_whole(np.int64(1), "samples", low=2),
        ConfigurationError,
        "samples must be a whole number >= 2, got 1",
    ),
    # offeval_disagreement/estimators.py _choice: f"{name} must be one of {options}, got {value!r}"
    "disagreement banners": (
        lambda: validation.check_choice(3, "banners", ("all", "shuffled", "non_shuffled")),
        ConfigurationError,
        "banners must be one of ('all', 'shuffled', 'non_shuffled'), got 3",
    ),
    # offeval_decision/ranks.py _whole: f"{name} must be a whole number {where}, got ..."
    "decision depth": (
        lambda: validation.check_whole(3, "depth", low=1, high=2),
        ConfigurationError,
        "depth must be a whole number in 1..2, got 3",
    ),
    # offeval_decision/choices.py select: f"m must be a whole number in 1..{len(dist.names)}, ..."
    "decision m": (
        lambda: validation.check_whole(np.int64(0), "m", low=1, high=4),
        ConfigurationError,
        "m must be a whole number in 1..4, got 0",
    ),
    # offeval_decision/choices.py _sd: "a finite number >= 0"
    "decision sd": (
        lambda: validation.check_number("0.3", "sd", low=0),
        ConfigurationError,
        "sd must be a finite number >= 0, got '0.3'",
    ),
    # offeval_decision/choices.py _probability: "a number in (0, 1)"
    "decision alpha": (
        lambda: validation.check_number(
            np.float64(1.5), "alpha", low=0, high=1, low_open=True, high_open=True
        ),
        ConfigurationError,
        "alpha must be a number in (0, 1), got 1.5",
    ),
    # offeval_decision/choices.py ab_sample_size: _real("lift", lift, "a finite number", ...)
    "decision lift": (
        lambda: validation.check_number(math.nan, "lift"),
        ConfigurationError,
        "lift must be a finite number, got nan",
    ),
    # offeval_ranking/estimators.py _check_cap: f"cap m must be a number >= 1 or inf, got {cap!r}"
    "dcg cap": (
        lambda: validation.check_number(0.5, "cap m", low=1, finite=False),
        ConfigurationError,
        "cap m must be a number >= 1 or inf, got 0.5",
    ),
    # offeval_ranking/examination.py CutOff:
    # f"cut-off n must be a whole number >= 1, got {plain(n)!r}"
    "dcg cut-off n": (
        lambda: validation.check_whole(np.int64(0), "cut-off n", low=1),
        ConfigurationError,
        "cut-off n must be a whole number >= 1, got 0",
    ),
    # offeval_importance/weights.py check_cap:
    # f"cap must be a positive number or inf, got {plain(cap)!r}"
    "ncis cap": (
        lambda: validation.check_number(np.int64(-1), "cap", low=0, low_open=True, finite=False),
        ConfigurationError,
        "cap must be a positive number or inf, got -1",
    ),
    # offeval_importance/estimators.py BetaIPS:
    # f"beta must be a finite number or None, got {beta!r}"
    "ncis beta": (
        lambda: validation.check_number(math.inf, "beta", optional=True),
        ConfigurationError,
        "beta must be a finite number or None, got inf",
    ),
    # offeval_rewardmodels/estimators.py check_threshold: "a number >= 0 or inf"
    "rewardmodels threshold": (
        lambda: validation.check_number(np.float64(-0.5), "shrinkage", low=0, finite=False),
        ConfigurationError,
        "shrinkage must be a number >= 0 or inf, got -0.5",
    ),
    # offeval_rewardmodels/fitting.py check_folds / check_seed
    "rewardmodels folds": (
        lambda: validation.check_whole(1, "folds", low=2),
        ConfigurationError,
        "folds must be a whole number >= 2, got 1",
    ),
    "rewardmodels seed": (
        lambda: validation.check_whole(np.int64(-3), "seed", low=0),
        ConfigurationError,
        "seed must be a whole number >= 0, got -3",
    ),
    # cli at_least: f"{value} is not >= {low}" (argparse adds "--chunk-rows: ")
}


@pytest.mark.parametrize(("call", "error", "message"), SITES.values(), ids=SITES)
def test_the_message_of_each_replaced_check_is_the_one_it_gave(call, error, message):
    exc = refusal(call)
    assert type(exc) is error
    assert str(exc) == message
