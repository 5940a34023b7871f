"""The kit's checks of interval methods on the betting interval: it passes them on the kit's
own estimator, and an estimator that declares no betting columns is not offered it."""

from __future__ import annotations

import pytest

from offeval.kitworld import KitIS
from offeval.testing import check_interval_method, check_interval_protocol


def test_betting_passes_the_kit_on_its_own_estimator():
    check_interval_method("betting")


def test_a_method_the_estimator_is_not_offered_fails():
    class Plain(KitIS):
        name = "plain_is"
        betting_columns = None

    with pytest.raises(AssertionError, match=r"plain_is is not offered 'betting' intervals"):
        check_interval_protocol("betting", Plain())
