"""offeval: offline evaluation of recommendation and ranking policies.

The names below are the user's API; they are imported on first use (so
``offeval --help`` and a plugin's import stay quick). Plugins use them, the statistics
(:mod:`offeval.stats`) and the plugin API (:mod:`offeval.plugin`).
"""

from __future__ import annotations

from types import ModuleType

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
    "offeval.data.policy": ("ColumnPolicy", "LoggingPolicy", "Policy", "TablePolicy"),
    "offeval.registry.manager": ("Registry", "active_registry", "get_registry"),
    "offeval.engine.result": ("Estimate",),
    "offeval.data.trajectories": ("per_trajectory", "trajectory_flags"),
    "offeval.data.units": ("UnitTable",),
}

__all__ = sorted(name for names in _WHERE.values() for name in names)


__getattr__ = lazy_names(__name__, _WHERE)


def __dir__() -> list[str]:
    """The public names (imported yet or not), each once, with the dunders and the loaded
    subpackages: not the names this module imports for itself (``import_module``, ...)."""
    own = (n for n, v in globals().items() if n.startswith("__") or isinstance(v, ModuleType))
    return sorted({*(n for names in _WHERE.values() for n in names), *own})
