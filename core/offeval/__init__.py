"""offeval: offline evaluation of recommendation and ranking policies."""

from offeval.environment import Environment
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
from offeval.estimator import (
    ESTIMANDS,
    BaseEstimator,
    Contribution,
    Estimator,
    PolicyView,
    Shared,
)
from offeval.evaluation import Accumulator, Evaluation, evaluate
from offeval.hookspecs import hookimpl, hookspec
from offeval.interop import ActionDistPolicy, from_obp
from offeval.log import InteractionLog, Log, read_table, stream_parquet
from offeval.policy import (
    ColumnPolicy,
    ExposurePolicy,
    LoggingPolicy,
    Policy,
    RerankPolicy,
    ScoringPolicy,
    TablePolicy,
)
from offeval.registry import Registry, active_registry, get_registry
from offeval.result import Estimate
from offeval.trajectories import per_trajectory, trajectory_flags

__version__ = "0.1.0"

__all__ = [
    "ESTIMANDS",
    "Accumulator",
    "ActionDistPolicy",
    "BaseEstimator",
    "ColumnError",
    "ColumnPolicy",
    "ConfigurationError",
    "Contribution",
    "Estimate",
    "Estimator",
    "Environment",
    "ExposurePolicy",
    "Evaluation",
    "InteractionLog",
    "Log",
    "LoggingPolicy",
    "OffevalError",
    "OffevalWarning",
    "Policy",
    "PolicyView",
    "Registry",
    "RerankPolicy",
    "ScoringPolicy",
    "TablePolicy",
    "RegistryError",
    "RowError",
    "SplitUnitError",
    "Shared",
    "SupportError",
    "active_registry",
    "evaluate",
    "from_obp",
    "get_registry",
    "hookimpl",
    "hookspec",
    "per_trajectory",
    "read_table",
    "stream_parquet",
    "trajectory_flags",
]
