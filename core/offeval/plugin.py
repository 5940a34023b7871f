"""The declared plugin API: everything a plugin may use from offeval, and nothing else.

A plugin (built in or third party) imports from this module only; a test
fails when a plugin imports any other part of offeval. What several plugins
need belongs here, so that no plugin imports another. The names, by job:

- **Hooks and the registry**: :data:`hookimpl` marks a plugin's hook
  implementations, :data:`hookspec` the specifications a plugin adds
  (``register_hookspecs``); ``Register`` is the type of the ``register``
  callback every hook receives; :class:`Registry`, :func:`get_registry` (the
  process-wide one) and :func:`active_registry` (the one building components
  now) find components by name; :class:`Deferred` registers a component by
  reference, imported when first used (``offeval --help`` shows a command's
  ``help`` without importing it), :class:`Alias` registers another name for
  a component (obp's ``switch-dr`` for ``switch_dr``, with its parameter
  names and defaults), and :func:`lazy_names` imports a plugin's public
  names on first use.
- **Estimators**: :class:`BaseEstimator`, :class:`Contribution`,
  :class:`PolicyView`, :class:`Shared`, :data:`ESTIMANDS`, :data:`GUARANTEES`,
  what an estimator declares (:class:`Declaration`, read by :func:`declaration_of`),
  :class:`Estimate`, and the statistics they combine into (:class:`Tally`,
  :class:`Moments`, :class:`Linearisation`, :func:`ratio_of_means`,
  :func:`interval`).
- **Shared building blocks** (what several estimator plugins compute alike):
  importance weights and capping (:func:`check_cap`, :func:`capped_weights`,
  :func:`capped_rewards`, the shared columns :data:`ROWS`,
  :func:`capped_weight_column`, :func:`capped_reward_column`) and their
  diagnostics (:func:`weight_tally`, :func:`weight_diagnostics`);
  :mod:`rewardmodel`, the reward model as columns of the log and its
  candidate table, and out-of-fold predictions to fill them
  (``RewardPredictions``, ``trajectory_folds``, ``item_position_means``);
  :mod:`exposure`, the target's and the logging policy's exposures of the
  logged items under an examination model (``target_exposure``,
  ``logging_exposure``, ``at_ranks``) and the support check; :mod:`tuning`,
  choosing an estimator's parameter from the log (SLOPE and the estimated
  MSE of obp's ``*Tuning`` estimators: ``choose``, ``check_grid``), and
  :class:`GridTuned`, what such an estimator shares (its grid, the rule's
  parameters, the choice in ``combine``).
- **Logs and policies**: :class:`InteractionLog`, :data:`ROLES`,
  :func:`per_trajectory`, :func:`trajectory_flags`, :func:`hash_ids`,
  :class:`RerankPolicy`, :data:`PROBABILITY_TOLERANCE`, :mod:`ranking`
  (Plackett-Luce rankings), obp's arrays (:func:`obp_array`) and its reward
  model's predictions for a log from ``from_obp`` (:func:`from_obp_rewards`), and what a
  command reading text files needs: :func:`read_table`,
  :data:`TEXT_SUFFIXES`, :func:`separator`, :func:`header_separator`,
  :func:`separator_named`, and the lines records start on
  (:func:`text_records`, :func:`filled_records`); public data sets inside
  package-index archives (:func:`package_file`, cached; :class:`DownloadError`).
- **Evaluations**: :func:`evaluate`, :func:`probe` (which estimators run on a
  log), :func:`evaluate_dask` (the same on a Dask DataFrame, partitions
  folded where they live), :class:`Evaluation` and its tables (:func:`pairs_table`,
  :func:`ess_units`, :func:`skipped_table`), paired tests
  (:func:`pairwise_grid`, :class:`PairwiseComparison`,
  :func:`adjusted_p_values`, :data:`CORRECTIONS`), :func:`correlation` and
  :func:`kendall_tau` between orders, :func:`agreement` of two measures over
  many models (:class:`Agreement`: Pearson, Kendall, inverted pairs, bootstrap
  intervals over users); :class:`EstimatorSummary` (what
  ``summaries.json`` holds, :func:`load_summaries`, checked to
  :data:`SYMMETRY_TOLERANCE` and :data:`PSD_TOLERANCE`); choices made from
  floats, ties within a relative 1e-9 going to the first in order
  (:func:`first_maximum`, :func:`tolerant_order`); workers
  (:func:`available_cores`, :func:`fork_available`, :data:`UNITS_PER_WORKER`).
- **Errors and arguments**: :class:`OffevalError` (a ``ValueError``) and its
  kinds :class:`ColumnError`, :class:`RowError`, :class:`ConfigurationError`,
  :class:`SupportError`; :class:`OffevalWarning`; :func:`describe_rows` (the
  user's row labels), :func:`hint`, :func:`command_line` (hints in the
  command line's words), :func:`did_you_mean`, :func:`plain`; the scalar
  checks of :mod:`offeval.validation` (:func:`check_whole`,
  :func:`check_number`, :func:`check_choice`, :func:`check_flag`,
  :func:`check_level`); the command line's :func:`at_least`,
  :func:`force_option`, :func:`progress_of`; and the spec grammar
  (:func:`parse_pairs`, :func:`find_label`).
- **Output**: :class:`OutputFolder`, :class:`OutputFile` (written whole or
  not at all), :func:`write_csv`, :func:`markdown_table`,
  :func:`markdown_escape`, :func:`progress_bar`; report sections
  (:class:`ReportSection`, :class:`ReportContext`, gathered by
  :func:`report_sections`), what a report writer is given
  (:class:`EvaluationReport`) and documents (:class:`ReportDocument`,
  figures at :data:`DPI`).
"""

from __future__ import annotations

import ast
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

#: The API's names are imported on first use, so ``from offeval.plugin import hookimpl``
#: costs pluggy alone and ``offeval --help`` imports no numerical library. The imports
#: under ``TYPE_CHECKING`` below are the one list of where each name comes from: import-linter
#: and type checkers read them, and :func:`__getattr__` reads them from this file's source on
#: first use. A name added to the API goes in three places, checked by tests: its import
#: below, ``__all__`` and the docstring's group.


@cache
def _modules() -> dict[str, str]:
    """Each declared name's module, read from the imports under ``TYPE_CHECKING`` below."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    )
    return {alias.name: imp.module for imp in block.body for alias in imp.names}


if TYPE_CHECKING:
    from offeval.cli.document import DPI, ReportDocument
    from offeval.cli.options import at_least, force_option, progress_of
    from offeval.data import ranking
    from offeval.data.files import (
        TEXT_SUFFIXES,
        filled_records,
        header_separator,
        read_table,
        separator,
        separator_named,
        text_records,
    )
    from offeval.data.log import MIN_PROPENSITY, ROLES, TINY_PROPENSITY, InteractionLog
    from offeval.data.output import OutputFile, OutputFolder
    from offeval.data.policy import PROBABILITY_TOLERANCE, RerankPolicy
    from offeval.data.slots import regular_slots
    from offeval.data.tables import markdown_escape, markdown_table, write_csv
    from offeval.data.trajectories import per_trajectory, trajectory_flags
    from offeval.data.units import hash_ids
    from offeval.engine.declaration import Declaration, declaration_of
    from offeval.engine.distributed import evaluate_dask
    from offeval.engine.estimator import (
        ESTIMANDS,
        GUARANTEES,
        BaseEstimator,
        Contribution,
        PolicyView,
        Shared,
    )
    from offeval.engine.evaluation import Evaluation, evaluate, probe
    from offeval.engine.frames import ess_units, pairs_table, skipped_table
    from offeval.engine.parallel import UNITS_PER_WORKER, available_cores, fork_available
    from offeval.engine.result import Estimate
    from offeval.engine.summary import (
        PSD_TOLERANCE,
        SYMMETRY_TOLERANCE,
        EstimatorSummary,
        load_summaries,
    )
    from offeval.errors import (
        ColumnError,
        ConfigurationError,
        OffevalError,
        OffevalWarning,
        RowError,
        SupportError,
        command_line,
        describe_rows,
        did_you_mean,
        hint,
        plain,
    )
    from offeval.lazy import Deferred, lazy_names
    from offeval.progress import progress_bar
    from offeval.registry.aliases import Alias
    from offeval.registry.hookspecs import Register, hookimpl, hookspec
    from offeval.registry.manager import Registry, active_registry, get_registry
    from offeval.registry.sections import (
        EvaluationReport,
        ReportContext,
        ReportSection,
        report_sections,
    )
    from offeval.specs import find_label, parse_pairs
    from offeval.stats.compare import (
        PairwiseComparison,
        adjusted_p_values,
        correlation,
        kendall_tau,
        pairwise_grid,
    )
    from offeval.stats.corrections import CORRECTIONS
    from offeval.stats.inference import Linearisation, interval, ratio_of_means
    from offeval.stats.moments import Moments, Tally
    from offeval.stats.ties import (
        first_maximum,
        first_minimum,
        tie_groups,
        tied,
        tolerant_order,
        tolerant_sign,
    )
    from offeval.validation import (
        check_choice,
        check_flag,
        check_level,
        check_number,
        check_whole,
    )

__all__ = [
    "tolerant_sign",
    "tied",
    "tie_groups",
    "first_minimum",
    "regular_slots",
    "TINY_PROPENSITY",
    "MIN_PROPENSITY",
    "CORRECTIONS",
    "DPI",
    "ESTIMANDS",
    "GUARANTEES",
    "PROBABILITY_TOLERANCE",
    "PSD_TOLERANCE",
    "ROLES",
    "SYMMETRY_TOLERANCE",
    "TEXT_SUFFIXES",
    "UNITS_PER_WORKER",
    "Alias",
    "BaseEstimator",
    "ColumnError",
    "ConfigurationError",
    "Contribution",
    "Declaration",
    "Deferred",
    "Estimate",
    "EstimatorSummary",
    "Evaluation",
    "EvaluationReport",
    "InteractionLog",
    "Linearisation",
    "Moments",
    "OffevalError",
    "OffevalWarning",
    "OutputFile",
    "OutputFolder",
    "PairwiseComparison",
    "PolicyView",
    "Register",
    "Registry",
    "ReportContext",
    "ReportDocument",
    "ReportSection",
    "RerankPolicy",
    "RowError",
    "Shared",
    "SupportError",
    "Tally",
    "active_registry",
    "adjusted_p_values",
    "at_least",
    "available_cores",
    "check_choice",
    "check_flag",
    "check_level",
    "check_number",
    "check_whole",
    "command_line",
    "correlation",
    "declaration_of",
    "describe_rows",
    "did_you_mean",
    "ess_units",
    "evaluate",
    "evaluate_dask",
    "filled_records",
    "first_maximum",
    "find_label",
    "force_option",
    "fork_available",
    "get_registry",
    "hash_ids",
    "header_separator",
    "hint",
    "hookimpl",
    "hookspec",
    "interval",
    "kendall_tau",
    "lazy_names",
    "load_summaries",
    "markdown_escape",
    "markdown_table",
    "pairs_table",
    "pairwise_grid",
    "parse_pairs",
    "per_trajectory",
    "plain",
    "probe",
    "progress_bar",
    "progress_of",
    "ranking",
    "ratio_of_means",
    "read_table",
    "report_sections",
    "separator",
    "separator_named",
    "skipped_table",
    "text_records",
    "tolerant_order",
    "trajectory_flags",
    "write_csv",
]


def __getattr__(name: str) -> Any:
    """The declared name ``name``, imported from its module on first use."""
    modules = _modules()
    if name not in modules:
        raise AttributeError(f"module 'offeval.plugin' has no attribute {name!r}")
    module = import_module(modules[name])
    try:
        value = getattr(module, name)
    except AttributeError:  # a submodule (ranking, rewardmodel, exposure)
        value = import_module(f"{modules[name]}.{name}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The declared names, imported yet or not, and the module's dunders."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})
