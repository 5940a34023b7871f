"""The statistics engine: mergeable moments, linearised estimates, tests.

The names below are imported from their modules on first use, so that importing one
light module of the package (:mod:`offeval.stats.corrections`) loads no numerical
library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from offeval.lazy import lazy_names

#: Each module of the package and the public names it defines.
_WHERE = {
    "offeval.stats.compare": (
        "PairwiseComparison",
        "adjusted_p_values",
        "correlation",
        "kendall_tau",
        "pairwise_grid",
        "unpaired_difference",
    ),
    "offeval.stats.inference": ("Linearisation", "interval", "ratio_of_means"),
    "offeval.stats.moments": ("Moments", "Tally"),
}

__all__ = [
    "Linearisation",
    "Moments",
    "PairwiseComparison",
    "adjusted_p_values",
    "Tally",
    "correlation",
    "interval",
    "kendall_tau",
    "pairwise_grid",
    "ratio_of_means",
    "unpaired_difference",
]


__getattr__ = lazy_names(__name__, _WHERE)


if TYPE_CHECKING:
    from offeval.stats.compare import (
        PairwiseComparison,
        adjusted_p_values,
        correlation,
        kendall_tau,
        pairwise_grid,
        unpaired_difference,
    )
    from offeval.stats.inference import Linearisation, interval, ratio_of_means
    from offeval.stats.moments import Moments, Tally
