"""The hooks the core itself calls (plugins add their own with ``register_hookspecs``).

Each hook receives a ``register`` callback (no hook returns values) and is called plugin by
plugin, so one that raises leaves the others' registrations intact. A plugin names those it
builds on in ``REQUIRES = ("other_plugin",)``; it loads only when they do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

PROJECT = "offeval"
#: Marks the functions of a module or class as hook specifications (``register_hookspecs``).
hookspec = pluggy.HookspecMarker(PROJECT)
#: Marks a plugin's functions as its implementations of hooks (matched by name).
hookimpl = pluggy.HookimplMarker(PROJECT)

#: The ``register`` callback every hook receives: ``register(name, factory)`` for a kind's hook.
Register = Callable[..., None]

#: What an estimator class must have (see :class:`offeval.Estimator`).
ESTIMATOR_METHODS = ("contribute", "combine", "get_params")
#: What an environment must have (see :class:`offeval.engine.environment.Environment`).
ENVIRONMENT_METHODS = ("logging_policy", "candidate_policies", "simulate", "true_value", "ab_test")
#: What a command-line sub-command class must have (see :func:`register_commands`).
COMMAND_METHODS = ("help", "add_arguments", "run")
#: What a report writer class must have (see :func:`register_reports`).
REPORT_METHODS = ("help", "write")
#: What a reward-model fitter must have (see :func:`register_reward_models`).
REWARD_MODEL_METHODS = ("fit",)
#: What a policy built by name must have (see :func:`register_policies`).
POLICY_METHODS = ("probabilities",)
#: What an interval method must have (see :func:`register_intervals`).
INTERVAL_METHODS = ("needs", "reads", "unavailable", "check", "start", "bounds", "unreadable")


@hookspec
def register_hookspecs(register: Register) -> None:
    """Add hook specifications that this plugin brings (as pytest's ``pytest_addhooks``).

    ``register(holder)``: ``holder`` is a module or class whose functions are
    marked with :data:`hookspec`. Other plugins can then implement them.
    """


@hookspec
def register_component_kinds(register: Register) -> None:
    """Declare component kinds that this plugin brings.

    ``register(name, hook, required=(), description="")``: components of kind
    ``name`` are registered through the hook named ``hook`` (a specification
    the plugin adds with :func:`register_hookspecs`); ``required`` lists the
    attributes every factory of the kind must have.
    """


@hookspec
def register_estimators(register: Register) -> None:
    """Register off-policy estimator classes.

    ``register(name, cls)``: ``cls`` follows :class:`offeval.engine.estimator.Estimator`;
    ``cls(**params)`` builds a configured estimator. The name must be unique
    across all plugins; a built-in's name cannot be taken.
    """


@hookspec
def register_environments(register: Register) -> None:
    """Register simulation environments (used by ``offeval demo`` and the conformance kit).

    ``register(name, factory)``: ``factory(seed=..., **params)`` returns an
    :class:`offeval.engine.environment.Environment`: logs, candidate policies and
    their exact values.
    """


@hookspec
def register_commands(register: Register) -> None:
    """Register sub-commands of the ``offeval`` command line.

    ``register(name, cls)``: ``cls()`` is a command whose ``help`` is a one-line description,
    ``command.add_arguments(parser)`` declares its arguments and
    ``command.run(args)`` runs it and returns the exit code. The core's own
    commands (``evaluate``, ``plugins``) keep their names.
    """


@hookspec
def register_reports(register: Register) -> None:
    """Register report writers: what ``offeval evaluate --report DIR`` writes.

    ``register(name, cls)``: ``cls()`` has ``help``, a one-line description,
    and ``write(out, report)``, which writes the report of ``report`` (an
    :class:`offeval.registry.sections.EvaluationReport`) into the folder
    ``out`` and returns the path of its main file. ``--report`` uses the
    first writer registered (built-in plugins first).
    """


@hookspec
def register_reward_models(register: Register) -> None:
    """Register reward-model fitters: what ``offeval evaluate --fit-reward-model SPEC`` fits.

    ``register(name, cls)``: ``cls(**params)`` (the spec's parameters) has
    ``fit(log)``, which returns an :class:`offeval.data.rewardmodel.RewardPredictions`
    of the :class:`offeval.InteractionLog` ``log``: out-of-fold predicted rewards of
    its rows and of its candidate table's rows, cross-fitted by trajectory
    (:func:`offeval.data.rewardmodel.trajectory_folds`) so that no row is predicted
    by a model that saw its trajectory. It may list the log columns it reads
    as ``columns`` (checked in the file's header before the log is read), and
    should say what it needs that is not installed when built, in one line.
    """


@hookspec
def register_policies(register: Register) -> None:
    """Register kinds of target policy built by name: what ``offeval evaluate --rerank
    NAME=COLUMN`` builds (``rerank``, the ranking family's).

    ``register(name, cls)``: ``cls(column, name=...)`` is a policy (it has
    ``probabilities(rows)``; a ranking policy also ``marginals``, ``ranks``,
    ``exposure`` and ``scores``) reading the log's ``column``.
    """


@hookspec
def register_intervals(register: Register) -> None:
    """Register interval methods: what ``evaluate(..., interval=NAME)`` and ``offeval evaluate
    --interval NAME`` compute (the core's ``normal`` and ``betting``).

    ``register(name, cls)``: ``cls()`` is an interval method (see
    :mod:`offeval.engine.intervals`; subclass :class:`offeval.IntervalMethod`): what it
    reads of an estimator's declaration, its checks, its own mergeable fold state,
    and ``bounds(case, state)``, the ``(low, high)`` of one estimate. An estimator
    names it as its ``interval`` to have it by default.
    """


@hookspec
def register_demo_estimators(register: Register, environment: Any) -> None:
    """Configure this plugin's estimators for ``offeval demo`` on ``environment``.

    ``register(estimator)``: an estimator object or a spec string such as
    ``"my_estimator:cap=10"``. A plugin implementing this hook shows exactly
    what it registers; the estimators of a plugin without it appear with
    their default parameters. The demo runs offeval's built-in plugins'
    estimators; a third-party plugin's are in it with ``offeval demo
    --all-estimators`` (every installed plugin's, configured by this hook)
    or ``--estimator SPEC`` (one, as the spec gives it).
    """


@hookspec
def register_report_sections(register: Register, report: Any) -> None:
    """Contribute sections to the reports of ``offeval demo`` and ``offeval evaluate``.

    ``register(section)``: an :class:`offeval.registry.sections.ReportSection`
    computed from ``report``, an :class:`offeval.registry.sections.ReportContext`
    (the evaluation's summaries, the true values where known, the log).
    """
