"""offeval: offline evaluation of recommendation and ranking policies."""

from offeval.errors import (
    ColumnError,
    ConfigurationError,
    OffevalError,
    RegistryError,
    SupportError,
)
from offeval.estimator import BaseEstimator, Contribution, Estimator, PolicyView, Shared
from offeval.evaluation import Accumulator, Evaluation, evaluate
from offeval.hookspecs import hookimpl
from offeval.log import InteractionLog, Log, read_table, stream_parquet
from offeval.policy import ColumnPolicy, ExposurePolicy, LoggingPolicy, Policy, RerankPolicy
from offeval.registry import Registry, get_registry
from offeval.result import Estimate

__version__ = "0.1.0"

__all__ = [
    "Accumulator",
    "BaseEstimator",
    "ColumnError",
    "ColumnPolicy",
    "ConfigurationError",
    "Contribution",
    "Estimate",
    "Estimator",
    "ExposurePolicy",
    "Evaluation",
    "InteractionLog",
    "Log",
    "LoggingPolicy",
    "OffevalError",
    "Policy",
    "PolicyView",
    "Registry",
    "RerankPolicy",
    "RegistryError",
    "Shared",
    "SupportError",
    "evaluate",
    "get_registry",
    "hookimpl",
    "read_table",
    "stream_parquet",
]
