"""The statistics engine: mergeable moments, linearised estimates, tests.

The names below are imported from their modules on first use, so that importing one
light module of the package (:mod:`offeval.stats.corrections`) loads no numerical
library.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: Each public name and the module that defines it.
_WHERE = {
    "PairwiseComparison": "offeval.stats.compare",
    "adjusted_p_values": "offeval.stats.compare",
    "correlation": "offeval.stats.compare",
    "kendall_tau": "offeval.stats.compare",
    "pairwise_grid": "offeval.stats.compare",
    "unpaired_difference": "offeval.stats.compare",
    "Linearisation": "offeval.stats.inference",
    "interval": "offeval.stats.inference",
    "ratio_of_means": "offeval.stats.inference",
    "Moments": "offeval.stats.moments",
    "Tally": "offeval.stats.moments",
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


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module 'offeval.stats' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


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
