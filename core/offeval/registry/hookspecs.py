"""The hooks the core itself calls (plugins add their own with ``register_hookspecs``).

Each hook receives a ``register`` callback (no hook returns values) and is called plugin by
plugin (a kind's hook when the kind is first used), so one that raises is that plugin's
failure and leaves the others' registrations intact. A plugin names those it
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

#: What a command-line sub-command class must have (see :func:`register_commands`).
COMMAND_METHODS = ("help", "add_arguments", "run")


@hookspec
def register_hookspecs(register: Register) -> None:
    """Add the hook specifications this plugin brings (as pytest's ``pytest_addhooks``):
    ``register(holder)``, a module or class whose functions are marked with :data:`hookspec`."""


@hookspec
def register_component_kinds(register: Register) -> None:
    """Declare the component kinds this plugin brings: ``register(name, hook, required=(),
    description="")``; kind ``name``'s components come through the hook named ``hook`` (a
    specification, added with :func:`register_hookspecs`), each with the attributes ``required``."""


@hookspec
def register_estimators(register: Register) -> None:
    """Register off-policy estimator classes: ``register(name, cls)``, ``cls(**params)`` an
    :class:`offeval.engine.estimator.Estimator`. A name is unique across plugins (a built-in's
    cannot be taken)."""


@hookspec
def register_environments(register: Register) -> None:
    """Register simulation environments (for ``offeval demo`` and the conformance kit):
    ``register(name, factory)``, ``factory(seed=..., **params)`` an
    :class:`offeval.engine.environment.Environment` (logs, candidate policies, their values)."""


@hookspec
def register_commands(register: Register) -> None:
    """Register sub-commands of the ``offeval`` command line: ``register(name, cls)``,
    ``cls()`` a command with ``help`` (one line), ``add_arguments(parser)`` and ``run(args)``
    (the exit code). The core's own commands (``evaluate``, ``plugins``) keep their names."""


@hookspec
def register_reports(register: Register) -> None:
    """Register report writers, what ``offeval evaluate --report DIR`` writes (the first
    registered, built-ins first): ``register(name, cls)``, ``cls()`` with ``help`` (one line)
    and ``write(out, report)``, which writes ``report`` (an
    :class:`offeval.registry.sections.EvaluationReport`) into the folder ``out`` and returns
    the path of its main file."""


@hookspec
def register_reward_models(register: Register) -> None:
    """Register reward-model fitters, what ``offeval evaluate --fit-reward-model SPEC`` fits:
    ``register(name, cls)``, ``cls(**params)`` with ``fit(log)``, which returns the
    :class:`offeval.data.rewardmodel.RewardPredictions` of the log's rows and its candidate
    table's, cross-fitted by trajectory (:func:`offeval.data.rewardmodel.trajectory_folds`:
    no row predicted by a model that saw its trajectory). ``columns``, if given, lists the
    log columns it reads (checked in the header first); built, it says in one line what it
    needs that is not installed."""


@hookspec
def register_policies(register: Register) -> None:
    """Register target policies built by name, as ``offeval evaluate --rerank NAME=COLUMN``
    builds ``rerank``: ``register(name, cls)``, ``cls(column, name=...)`` a policy reading the
    log's ``column`` (``probabilities(rows)``; a ranking one also ``marginals``, ``ranks``,
    ``exposure`` and ``scores``)."""


@hookspec
def register_intervals(register: Register) -> None:
    """Register interval methods: what ``evaluate(..., interval=NAME)`` and ``offeval evaluate
    --interval NAME`` compute (the core's ``normal``, and the plugins' ones).

    ``register(name, cls)``: ``cls()`` is an interval method (see
    :mod:`offeval.engine.intervals`; subclass :class:`offeval.IntervalMethod`): what it
    reads of an estimator's declaration, its checks, its own mergeable fold state,
    and ``bounds(case, state)``, the ``(low, high)`` of one estimate. An estimator
    names it as its ``interval`` to have it by default.
    """


@hookspec
def register_demo_estimators(register: Register, environment: Any) -> None:
    """Configure this plugin's estimators for ``offeval demo`` on ``environment``:
    ``register(estimator)``, an estimator or a spec (``"my_estimator:cap=10"``); without this
    hook a plugin's estimators run with their defaults. The demo runs the built-in plugins';
    a third party's join with ``--all-estimators`` (as this hook configures them) or
    ``--estimator SPEC``."""


@hookspec
def register_report_sections(register: Register, report: Any) -> None:
    """Contribute sections to the reports of ``offeval demo`` and ``offeval evaluate``:
    ``register(section)``, an :class:`offeval.registry.sections.ReportSection` computed from
    ``report``, an :class:`offeval.registry.sections.ReportContext` (the summaries, the true
    values where known, the log). Anything else given is the plugin's failure."""
