"""offeval: offline evaluation of recommendation and ranking policies.

The names below are the user's API; they are imported on first use (so
``offeval --help`` and a plugin's import stay quick). Plugins use
:mod:`offeval.plugin`, the declared plugin API.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module that defines it.
_WHERE = {
    "Environment": "offeval.engine.environment",
    "ColumnError": "offeval.errors",
    "ConfigurationError": "offeval.errors",
    "OffevalError": "offeval.errors",
    "OffevalWarning": "offeval.errors",
    "RegistryError": "offeval.errors",
    "RowError": "offeval.errors",
    "SplitUnitError": "offeval.errors",
    "SupportError": "offeval.errors",
    "ESTIMANDS": "offeval.engine.estimator",
    "BaseEstimator": "offeval.engine.estimator",
    "Contribution": "offeval.engine.estimator",
    "Estimator": "offeval.engine.estimator",
    "PolicyView": "offeval.engine.estimator",
    "Shared": "offeval.engine.estimator",
    "Accumulator": "offeval.engine.evaluation",
    "Evaluation": "offeval.engine.evaluation",
    "evaluate": "offeval.engine.evaluation",
    "hookimpl": "offeval.registry.hookspecs",
    "hookspec": "offeval.registry.hookspecs",
    "ActionDistPolicy": "offeval.data.interop",
    "from_obp": "offeval.data.interop",
    "InteractionLog": "offeval.data.log",
    "read_table": "offeval.data.files",
    "stream_parquet": "offeval.data.log",
    "ColumnPolicy": "offeval.data.policy",
    "ExposurePolicy": "offeval.data.policy",
    "LoggingPolicy": "offeval.data.policy",
    "Policy": "offeval.data.policy",
    "RerankPolicy": "offeval.data.policy",
    "ScoringPolicy": "offeval.data.policy",
    "TablePolicy": "offeval.data.policy",
    "Registry": "offeval.registry.manager",
    "active_registry": "offeval.registry.manager",
    "get_registry": "offeval.registry.manager",
    "Estimate": "offeval.engine.result",
    "per_trajectory": "offeval.data.trajectories",
    "trajectory_flags": "offeval.data.trajectories",
}

__all__ = [
    "Accumulator",
    "ActionDistPolicy",
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
    "ExposurePolicy",
    "InteractionLog",
    "LoggingPolicy",
    "OffevalError",
    "OffevalWarning",
    "Policy",
    "PolicyView",
    "Registry",
    "RegistryError",
    "RerankPolicy",
    "RowError",
    "ScoringPolicy",
    "Shared",
    "SplitUnitError",
    "SupportError",
    "TablePolicy",
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


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module 'offeval' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names (imported yet or not), each once, with the dunders and the loaded
    subpackages: not the names this module imports for itself (``import_module``, ...)."""
    own = (n for n, v in globals().items() if n.startswith("__") or isinstance(v, ModuleType))
    return sorted({*_WHERE, *own})


if TYPE_CHECKING:
    from offeval.data.files import read_table
    from offeval.data.interop import ActionDistPolicy, from_obp
    from offeval.data.log import InteractionLog, stream_parquet
    from offeval.data.policy import (
        ColumnPolicy,
        ExposurePolicy,
        LoggingPolicy,
        Policy,
        RerankPolicy,
        ScoringPolicy,
        TablePolicy,
    )
    from offeval.data.trajectories import per_trajectory, trajectory_flags
    from offeval.engine.environment import Environment
    from offeval.engine.estimator import (
        ESTIMANDS,
        BaseEstimator,
        Contribution,
        Estimator,
        PolicyView,
        Shared,
    )
    from offeval.engine.evaluation import Accumulator, Evaluation, evaluate
    from offeval.engine.result import Estimate
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
