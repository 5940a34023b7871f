"""Every hook an offeval plugin can implement.

Each hook receives a ``register`` callback, ``register(name, factory)``: the
host validates what it receives and rejects duplicate names, so a plugin never
returns values. All hooks are called once per plugin when the registry loads;
none stops at the first result. Specs only ever gain arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

PROJECT = "offeval"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Register = Callable[[str, Any], None]


@hookspec
def register_estimators(register: Register) -> None:
    """Register off-policy estimator classes.

    ``register(name, cls)``: ``cls`` follows :class:`offeval.estimator.Estimator`;
    ``cls(**params)`` builds a configured estimator. The name must be unique
    across all plugins.
    """


@hookspec
def register_examination_models(register: Register) -> None:
    """Register examination (position-bias) models e(i) = P(examined | rank i).

    ``register(name, factory)``: ``factory(**params)`` returns a callable
    mapping an integer array of 1-based ranks to examination probabilities.
    """


@hookspec
def register_environments(register: Register) -> None:
    """Register simulation environments (used by ``offeval demo``).

    ``register(name, factory)``: ``factory(seed=..., **params)`` returns an
    object with ``demo(...)`` producing logs, candidate policies and their true
    online values (see the ``simulation`` plugin for the reference one).
    """


@hookspec
def register_metric_conventions(register: Register) -> None:
    """Register named convention presets for top-n IR metrics.

    ``register(name, factory)``: ``factory(**overrides)`` returns a conventions
    object (see the ``ir`` plugin) that fixes every switch at once, documented
    with the source it follows.
    """


@hookspec
def register_commands(register: Register) -> None:
    """Register sub-commands of the ``offeval`` command line.

    ``register(name, cls)``: ``cls()`` is a command whose ``help`` is a one-line description,
    ``command.add_arguments(parser)`` declares its arguments and
    ``command.run(args)`` runs it and returns the exit code.
    """
