"""``offeval evaluate``'s inputs beyond the log: the candidate file and its mapping, the
reward model's column, the reward model to fit, the interval methods. Each is checked against
the files' headers (no row read) and answered in the user's words: the option, the file's
name, its columns.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Sequence
from pathlib import Path

from offeval.data.candidates import CANDIDATE_ROLES, check_candidate_roles
from offeval.data.files import PARQUET_SUFFIXES
from offeval.data.keys import COMPOSITE_ROLES
from offeval.data.log import ROLES
from offeval.engine.accumulator import interval_methods, reward_ranges
from offeval.engine.declaration import INTERVALS, declaration_of
from offeval.errors import OffevalError, did_you_mean
from offeval.registry.manager import Registry
from offeval.specs import parse_pairs, parse_spec

#: The parameter through which an estimator names its reward model's column.
REWARD_PARAMETER = "reward_model"
#: The column a fitted reward model fills when ``--reward-model`` names none.
DEFAULT_REWARD_COLUMN = "reward_model"
#: Names a reward model's column cannot take: the log's roles and the candidate table's slot.
RESERVED_COLUMNS = frozenset(ROLES) | {"slot"}


def composite(mapping: dict, columns: Sequence) -> dict:
    """The mapping with ``trajectory=A,B`` (a role that may be a key of several columns)
    as the list of its columns, unless ``A,B`` is itself a column of the file."""
    return {
        role: column.split(",")
        if role in COMPOSITE_ROLES and "," in column and column not in columns
        else column
        for role, column in mapping.items()
    }


def candidate_mapping(args: argparse.Namespace) -> dict:
    """``--candidates-map``, its roles checked (no file read)."""
    mapping = parse_pairs(args.candidates_map, typed=False, what="--candidates-map")
    if mapping and not args.candidates:
        raise OffevalError("--candidates-map maps the columns of --candidates FILE: give the file")
    check_candidate_roles(mapping)
    if args.candidates is not None and args.stream and is_text(args.candidates):
        raise OffevalError(
            f"--candidates {args.candidates}: --stream reads Parquet files only; drop "
            "--stream, or write the candidate table as Parquet (sorted like the log)"
        )
    return mapping


def inherited(cmapping: dict, mapping: dict, columns: Sequence) -> dict:
    """``--candidates-map`` with the candidate roles it leaves out taken from ``--map``
    where the candidate file has the column(s) ``--map`` names: the same names in both
    files need saying once (``--map trajectory=session`` serves a candidate file with a
    ``session`` column). A role ``--candidates-map`` names keeps its column."""
    taken = {
        role: given
        for role, given in mapping.items()
        if role in CANDIDATE_ROLES
        and role not in cmapping
        and all(column in columns for column in _listed(given))
    }
    return {**taken, **cmapping}


def is_text(path: str) -> bool:
    """Whether a data file is read as delimited text (not Parquet)."""
    return Path(path).suffix.lower() not in PARQUET_SUFFIXES


def check_candidate_columns(
    args: argparse.Namespace, mapping: dict, columns: list, policy_columns: dict
) -> None:
    """Every column ``--candidates-map`` names, every role the table needs and every
    policy's column are in the candidate file's header."""
    name = Path(args.candidates).name
    for role, given in mapping.items():
        for column in given if isinstance(given, list) else [given]:
            if column not in columns:
                raise OffevalError(
                    f"--candidates-map {role}={','.join(map(str, _listed(given)))}: no column "
                    f"{column!r} in {name}" + _close(column, columns)
                )
    for role in ("trajectory", "item", "propensity"):
        if role not in mapping and role not in columns:
            raise OffevalError(
                f"--candidates {name}: no column {role!r}, {CANDIDATE_ROLES[role]}: map "
                f"yours with --candidates-map {role}=COLUMN" + _close(role, columns)
            )
    for option, (given, column) in policy_columns.items():
        if column not in columns:
            raise OffevalError(
                f"{option} {given}: no column {column!r} in {name}, which needs each policy's "
                "column for its candidates" + _close(column, columns)
            )


def _listed(given) -> list:
    return given if isinstance(given, list) else [given]


def _close(column: str, columns: Sequence) -> str:
    return did_you_mean(column, columns) or f" (its columns: {', '.join(map(str, columns))})"


def reward_column(args: argparse.Namespace) -> str | None:
    """The column ``--reward-model`` names (checked), or None."""
    if args.reward_model is None:
        return None
    if not args.reward_model or args.reward_model in RESERVED_COLUMNS:
        raise OffevalError(
            f"--reward-model {args.reward_model}: names a column of a role of the log; give "
            "the column of the model's predicted rewards"
        )
    return args.reward_model


def build_estimator(registry: Registry, spec: str, column: str | None):
    """The estimator of ``spec``; with ``column``, one that reads a reward model reads it
    (unless the spec names its own ``reward_model``)."""
    if column is None:
        return registry.create_from_spec("estimator", spec)
    name, params = parse_spec(spec)
    factory = registry.get("estimator", name).factory
    try:
        takes = REWARD_PARAMETER in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        takes = False
    if takes:
        params.setdefault(REWARD_PARAMETER, column)
    return registry.create("estimator", name, **params)


def check_named_estimators(
    args: argparse.Namespace,
    estimators: Sequence,
    log_columns: list,
    candidate_columns: list | None,
    fitted: str | None,
) -> None:
    """What the estimators named with ``--estimator`` need from the files, checked in
    their headers: the candidate table, and the reward model's column in both files
    (unless ``fitted``, the column the fitted model fills)."""
    for spec, estimator in zip(args.estimator or (), estimators, strict=True):
        requires = declaration_of(estimator).requires
        if "candidates" in requires and args.candidates is None:
            raise OffevalError(
                f"--estimator {spec}: needs the candidate table (every item the logger "
                "could have shown at each slot, with its propensity): give it with "
                "--candidates FILE (and --candidates-map ROLE=COLUMN)"
            )
        column = estimator.get_params().get(REWARD_PARAMETER)
        if not isinstance(column, str) or column == fitted:
            continue
        files = [(args.log, log_columns)]
        if candidate_columns is not None:
            files.append((args.candidates, candidate_columns))
        for path, columns in files:
            if column not in columns:
                raise OffevalError(
                    f"--estimator {spec}: reads the reward model's predictions from column "
                    f"{column!r}, which {Path(path).name} lacks: add it to both files, name "
                    "yours with --reward-model COLUMN, or fit one with --fit-reward-model SPEC"
                    + did_you_mean(column, columns)
                )


def reward_fitter(registry: Registry, args: argparse.Namespace):
    """The reward-model fitter ``--fit-reward-model`` names, built (None if not given)."""
    if args.fit_reward_model is None:
        return None
    if args.stream:
        raise OffevalError(
            f"--fit-reward-model {args.fit_reward_model}: fitting cross-fits on every row, "
            "which needs the log read whole: drop --stream (or fit elsewhere and give the "
            "predictions as a column, --reward-model COLUMN)"
        )
    if "reward_model" not in registry.kinds:
        raise OffevalError(
            "--fit-reward-model: no plugin declares reward-model fitters (offeval plugins "
            "lists what is loaded)"
        )
    try:
        return registry.create_from_spec("reward_model", args.fit_reward_model)
    except OffevalError as exc:
        raise OffevalError(f"--fit-reward-model {args.fit_reward_model}: {exc}") from None


def check_fit_columns(
    args: argparse.Namespace,
    fitter,
    mapping: dict,
    log_columns: list,
    candidate_columns: list | None,
) -> str:
    """The column the fitted model fills (``--reward-model``, else the default), which
    neither file may hold; the columns the fitter reads (its ``columns``) in the log's
    header, a mapped one named by its role."""
    column = args.reward_model or DEFAULT_REWARD_COLUMN
    for path, columns in ((args.log, log_columns), (args.candidates, candidate_columns)):
        if columns is not None and column in columns:
            raise OffevalError(
                f"--fit-reward-model: {Path(path).name} already has a column {column!r}: "
                "name the fitted model's column with --reward-model NEW, or drop "
                "--fit-reward-model to use the one given"
            )
    roles = {c: role for role, c in mapping.items() if isinstance(c, str)}
    known = set(log_columns) - set(roles) | {r for r in ("item", "position", "context")}
    known |= set(roles.values())
    for name in getattr(fitter, "columns", ()):
        if name in roles and name != roles[name]:
            raise OffevalError(
                f"--fit-reward-model {args.fit_reward_model}: column {name!r} is mapped to "
                f"the role {roles[name]} (--map {roles[name]}={name}): call it {roles[name]}"
            )
        if name not in known:
            raise OffevalError(
                f"--fit-reward-model {args.fit_reward_model}: no column {name!r} in "
                f"{Path(args.log).name}" + _close(name, log_columns)
            )
    return column


def check_interval_options(given: Sequence[str]) -> None:
    """``--interval`` values: one method, or LABEL=METHOD pairs (checked before any row is read)."""
    methods = [g.rpartition("=")[2] for g in given]  # a label may hold "=": rips(per=trajectory)
    for value, method in zip(given, methods, strict=True):
        if method not in INTERVALS:
            raise OffevalError(
                f"--interval {value}: the method is one of {', '.join(INTERVALS)}"
                + did_you_mean(method, INTERVALS)
            )
    labels = [g.rpartition("=")[0] for g in given if "=" in g]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise OffevalError(f"--interval names {twice[0]} twice")
    plain = [g for g in given if "=" not in g]
    if len(plain) > 1 or (plain and len(given) > 1):
        raise OffevalError(
            f"--interval {' '.join(given)}: give one method for every estimator, or "
            "LABEL=METHOD for each estimator you choose"
        )


def interval_choice(
    given: Sequence[str], estimators: Sequence, reward_range: tuple[float, float] | None = None
) -> str | dict | None:
    """What ``evaluate``'s ``interval`` gets from ``--interval`` (None: each estimator's own),
    checked against ``estimators`` by the engine (in the option's words at the command line),
    with ``--reward-range``'s bounds where a betting interval needs them.

    One method applies to every estimator that offers it (a betting interval
    needs an estimator that declares its betting columns; the others keep
    theirs, and the printed table says each interval's method); LABEL=METHOD
    pairs choose by estimator label or name.
    """
    declared = [declaration_of(e) for e in estimators]
    if not given:
        chosen = None
    elif "=" in given[0]:
        chosen = dict(g.rpartition("=")[::2] for g in given)
    elif given[0] == "betting":
        chosen = {d.label: "betting" for d in declared if d.betting_columns is not None}
        if not chosen:
            raise OffevalError(
                "--interval betting: none of the estimators offers betting intervals (those "
                "of importance weights with mean one do: is, ipw, cis:cap=inf, iips, rips)"
            )
    else:
        chosen = given[0]
    reward_ranges(declared, interval_methods(declared, chosen), reward_range)
    return chosen
