"""offeval: offline evaluation of recommendation and ranking policies.

The names below are the user's API; they are imported on first use (so
``offeval --help`` and a plugin's import stay quick). Plugins use
:mod:`offeval.plugin`, the declared plugin API.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from offeval.lazy import lazy_names

__version__ = "0.1.0"

#: Each module of the package and the public names it defines.
_WHERE = {
    "offeval.engine.environment": ("Environment",),
    "offeval.errors": (
        "ColumnError",
        "ConfigurationError",
        "OffevalError",
        "OffevalWarning",
        "RegistryError",
        "RowError",
        "SplitUnitError",
        "SupportError",
    ),
    "offeval.engine.estimator": (
        "ESTIMANDS",
        "BaseEstimator",
        "Contribution",
        "Estimator",
        "PolicyView",
        "Shared",
    ),
    "offeval.engine.evaluation": ("Accumulator", "Evaluation", "evaluate", "probe"),
    "offeval.engine.declaration": ("Declaration", "declaration_of"),
    "offeval.engine.intervals": ("IntervalCase", "IntervalMethod"),
    "offeval.engine.distributed": ("evaluate_dask",),
    "offeval.engine.summary": ("EstimatorSummary", "load_summaries"),
    "offeval.registry.hookspecs": ("hookimpl", "hookspec"),
    "offeval.data.log": ("InteractionLog", "stream_parquet"),
    "offeval.data.files": ("read_table",),
    "offeval.data.policy": (
        "ColumnPolicy",
        "ExposurePolicy",
        "LoggingPolicy",
        "Policy",
        "ScoringPolicy",
        "TablePolicy",
    ),
    "offeval.registry.manager": ("Registry", "active_registry", "get_registry"),
    "offeval.engine.result": ("Estimate",),
    "offeval.data.trajectories": ("per_trajectory", "trajectory_flags"),
}

__all__ = [
    "EstimatorSummary",
    "Declaration",
    "Accumulator",
    "BaseEstimator",
    "ColumnError",
    "ColumnPolicy",
    "ConfigurationError",
    "Contribution",
    "ESTIMANDS",
    "Environment",
    "Estimate",
    "Estimator",
    "Evaluation",
    "IntervalCase",
    "IntervalMethod",
    "ExposurePolicy",
    "InteractionLog",
    "LoggingPolicy",
    "OffevalError",
    "OffevalWarning",
    "Policy",
    "PolicyView",
    "Registry",
    "RegistryError",
    "RowError",
    "ScoringPolicy",
    "Shared",
    "SplitUnitError",
    "SupportError",
    "TablePolicy",
    "active_registry",
    "evaluate",
    "probe",
    "load_summaries",
    "evaluate_dask",
    "declaration_of",
    "get_registry",
    "hookimpl",
    "hookspec",
    "per_trajectory",
    "read_table",
    "stream_parquet",
    "trajectory_flags",
]


__getattr__ = lazy_names(__name__, _WHERE)


def __dir__() -> list[str]:
    """The public names (imported yet or not), each once, with the dunders and the loaded
    subpackages: not the names this module imports for itself (``import_module``, ...)."""
    own = (n for n, v in globals().items() if n.startswith("__") or isinstance(v, ModuleType))
    return sorted({*(n for names in _WHERE.values() for n in names), *own})


if TYPE_CHECKING:
    from offeval.data.files import read_table
    from offeval.data.log import InteractionLog, stream_parquet
    from offeval.data.policy import (
        ColumnPolicy,
        ExposurePolicy,
        LoggingPolicy,
        Policy,
        ScoringPolicy,
        TablePolicy,
    )
    from offeval.data.trajectories import per_trajectory, trajectory_flags
    from offeval.engine.declaration import Declaration, declaration_of
    from offeval.engine.distributed import evaluate_dask
    from offeval.engine.environment import Environment
    from offeval.engine.estimator import (
        ESTIMANDS,
        BaseEstimator,
        Contribution,
        Estimator,
        PolicyView,
        Shared,
    )
    from offeval.engine.evaluation import Accumulator, Evaluation, evaluate, probe
    from offeval.engine.intervals import IntervalCase, IntervalMethod
    from offeval.engine.result import Estimate
    from offeval.engine.summary import EstimatorSummary, load_summaries
    from offeval.errors import (
        ColumnError,
        ConfigurationError,
        OffevalError,
        OffevalWarning,
        RegistryError,
        RowError,
        SplitUnitError,
        SupportError,
    )
    from offeval.registry.hookspecs import hookimpl, hookspec
    from offeval.registry.manager import Registry, active_registry, get_registry
