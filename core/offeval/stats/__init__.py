"""The statistics engine: mergeable moments, linearised estimates, tests.

A public namespace: users and plugins import the statistics from here (``from
offeval.stats import pairwise_grid, Tally``), never from its modules. The names below
are imported from their modules on first use, so that importing one
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
    "offeval.stats.corrections": ("CORRECTIONS",),
    "offeval.stats.inference": (
        "PSD_TOLERANCE",
        "SYMMETRY_TOLERANCE",
        "Linearisation",
        "interval",
        "ratio_of_means",
    ),
    "offeval.stats.moments": ("Moments", "Tally"),
    "offeval.stats.ties": (
        "RTOL",
        "first_maximum",
        "first_minimum",
        "tie_groups",
        "tied",
        "tolerant_order",
        "tolerant_sign",
    ),
}

__all__ = [
    "CORRECTIONS",
    "PSD_TOLERANCE",
    "RTOL",
    "SYMMETRY_TOLERANCE",
    "first_maximum",
    "first_minimum",
    "tie_groups",
    "tied",
    "tolerant_order",
    "tolerant_sign",
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
    from offeval.stats.corrections import CORRECTIONS
    from offeval.stats.inference import (
        PSD_TOLERANCE,
        SYMMETRY_TOLERANCE,
        Linearisation,
        interval,
        ratio_of_means,
    )
    from offeval.stats.moments import Moments, Tally
    from offeval.stats.ties import (
        RTOL,
        first_maximum,
        first_minimum,
        tie_groups,
        tied,
        tolerant_order,
        tolerant_sign,
    )
