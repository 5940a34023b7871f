"""``offeval evaluate``'s request held against what it names: the registry's estimators and
fitters, and the files' headers (no row read), answered in the user's words: the option, the
file's name, its columns."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from offeval.cli.evaluate_request import EvaluateRequest
from offeval.data.candidates import CANDIDATE_ROLES
from offeval.data.files import columns_of
from offeval.data.keys import COMPOSITE_ROLES
from offeval.engine.declaration import declaration_of
from offeval.engine.intervals import checked_methods, chosen_methods, offering
from offeval.errors import OffevalError, did_you_mean
from offeval.registry.manager import Registry
from offeval.specs import parse_spec

#: The parameter through which an estimator names its reward model's column.
REWARD_PARAMETER = "reward_model"
#: The column a fitted reward model fills when ``--reward-model`` names none.
DEFAULT_REWARD_COLUMN = "reward_model"


@dataclass(frozen=True)
class Headers:
    """The files' headers (no row read), with the mappings completed against them: a
    ``trajectory=A,B`` read as two columns, the candidate roles ``--map`` serves."""

    mapping: dict
    columns: list
    candidates_mapping: dict
    candidate_columns: list | None = None

    def files(self, request: EvaluateRequest) -> list[tuple[str, list]]:
        """(file name, header) of the log, and of the candidate file if given."""
        found = [(Path(request.log).name, self.columns)]
        if self.candidate_columns is not None:
            found.append((Path(request.candidates).name, self.candidate_columns))
        return found


def headers(request: EvaluateRequest) -> Headers:
    """The files' headers, every column the options name checked in them. A candidate role
    ``--candidates-map`` leaves out is taken from ``--map`` where the candidate file has the
    column(s) it names: the same names in both files need saying once."""
    columns = columns_of(request.log, request.sep)
    mapping = composite(request.mapping, columns)
    check_log_columns(request, mapping, columns)
    if request.candidates is None:
        return Headers(mapping, columns, dict(request.candidates_mapping))
    cand_columns = columns_of(request.candidates, request.sep)
    given = composite(request.candidates_mapping, cand_columns)
    taken = {
        role: column
        for role, column in mapping.items()
        if role in CANDIDATE_ROLES
        and role not in given
        and all(c in cand_columns for c in _listed(column))
    }
    cmapping = {**taken, **given}
    check_candidate_columns(request, cmapping, cand_columns)
    return Headers(mapping, columns, cmapping, cand_columns)


def composite(mapping: dict, columns: Sequence) -> dict:
    """The mapping with ``trajectory=A,B`` (a role that may be a key of several columns)
    as the list of its columns, unless ``A,B`` is itself a column of the file."""
    return {
        role: column.split(",")
        if role in COMPOSITE_ROLES and "," in column and column not in columns
        else column
        for role, column in mapping.items()
    }


def check_log_columns(request: EvaluateRequest, mapping: dict, columns: list) -> None:
    """Every column the options name is in the log's header; a policy's column is none
    that ``--map`` gives a role."""
    named = [
        ("--map", f"{role}={','.join(map(str, _listed(given)))}", column)
        for role, given in mapping.items()
        for column in _listed(given)
    ]
    named += [(t.option, t.given, t.column) for t in request.targets]
    roles = {column: role for role, column in mapping.items() if not isinstance(column, list)}
    for option, given, column in named:
        if option != "--map" and column in roles:
            role = roles[column]
            raise OffevalError(
                f"{option} {given}: column {column!r} is mapped as the {role} "
                f"(--map {role}={column}), so a "
                f"{'policy' if option == '--policy' else 'score'} column must be another one"
            )
        if column not in columns:
            raise OffevalError(
                f"{option} {given}: no column {column!r} in {Path(request.log).name}"
                + _close(column, columns)
            )


def check_candidate_columns(request: EvaluateRequest, mapping: dict, columns: list) -> None:
    """Every column ``--candidates-map`` names, every role the table needs and every
    policy's column are in the candidate file's header."""
    name = Path(request.candidates).name
    for role, given in mapping.items():
        for column in _listed(given):
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
    for target in request.targets:
        if target.column not in columns:
            raise OffevalError(
                f"{target.option} {target.given}: no column {target.column!r} in {name}, which "
                "needs each policy's column for its candidates" + _close(target.column, columns)
            )


def _listed(given) -> list:
    return given if isinstance(given, list) else [given]


def _close(column: str, columns: Sequence) -> str:
    return did_you_mean(column, columns) or f" (its columns: {', '.join(map(str, columns))})"


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


def named_estimators(registry: Registry, request: EvaluateRequest) -> list:
    """The estimators ``--estimator`` names, built (a mistyped name is refused before any file
    is read), and ``--interval``'s labels and methods checked against them."""
    named = [build_estimator(registry, spec, request.reward_model) for spec in request.estimators]
    if named:  # the engine's checks of --interval and --reward-range
        declared = [declaration_of(e) for e in named]
        chosen = chosen_methods(declared, interval_choice(request.interval, named))
        checked_methods(declared, chosen, request.reward_range)
    return named


def check_reward_models(
    request: EvaluateRequest, headers: Headers, fitter, named: list
) -> str | None:
    """What the reward model and the ``named`` estimators need from the files' headers (the
    candidate table, the reward model's column in both files unless the fitted model fills
    it); the column the fitted model fills (None without ``--fit-reward-model``)."""
    fitted = None
    if fitter is not None:
        fitted = check_fit_columns(request, fitter, headers)
    elif (column := request.reward_model) is not None:
        for name, header in headers.files(request):
            if column not in header:
                raise OffevalError(
                    f"--reward-model {column}: no column {column!r} in {name}"
                    + _close(column, header)
                )
    for spec, estimator in zip(request.estimators, named, strict=True):
        requires = declaration_of(estimator).requires
        if "candidates" in requires and request.candidates is None:
            raise OffevalError(
                f"--estimator {spec}: needs the candidate table (every item the logger "
                "could have shown at each slot, with its propensity): give it with "
                "--candidates FILE (and --candidates-map ROLE=COLUMN)"
            )
        column = estimator.get_params().get(REWARD_PARAMETER)
        if not isinstance(column, str) or column == fitted:
            continue
        for name, columns in headers.files(request):
            if column not in columns:
                raise OffevalError(
                    f"--estimator {spec}: reads the reward model's predictions from column "
                    f"{column!r}, which {name} lacks: add it to both files, name "
                    "yours with --reward-model COLUMN, or fit one with --fit-reward-model SPEC"
                    + did_you_mean(column, columns)
                )
    return fitted


def reward_fitter(registry: Registry, spec: str | None):
    """The reward-model fitter ``--fit-reward-model`` names, built (None if not given)."""
    if spec is None:
        return None
    if "reward_model" not in registry.kinds:
        raise OffevalError(
            "--fit-reward-model: no plugin declares reward-model fitters (offeval plugins "
            "lists what is loaded)"
        )
    try:
        return registry.create_from_spec("reward_model", spec)
    except OffevalError as exc:
        raise OffevalError(f"--fit-reward-model {spec}: {exc}") from None


def check_fit_columns(request: EvaluateRequest, fitter, headers: Headers) -> str:
    """The column the fitted model fills (``--reward-model``, else the default), which
    neither file may hold; the columns the fitter reads (its ``columns``) in the log's
    header, a mapped one named by its role."""
    column = request.reward_model or DEFAULT_REWARD_COLUMN
    for name, columns in headers.files(request):
        if column in columns:
            raise OffevalError(
                f"--fit-reward-model: {name} already has a column {column!r}: "
                "name the fitted model's column with --reward-model NEW, or drop "
                "--fit-reward-model to use the one given"
            )
    roles = {c: role for role, c in headers.mapping.items() if isinstance(c, str)}
    known = set(headers.columns) - set(roles) | {"item", "position", "context"}
    known |= set(roles.values())
    for name in getattr(fitter, "columns", ()):
        if name in roles and name != roles[name]:
            raise OffevalError(
                f"--fit-reward-model {request.fit_reward_model}: column {name!r} is mapped to "
                f"the role {roles[name]} (--map {roles[name]}={name}): call it {roles[name]}"
            )
        if name not in known:
            raise OffevalError(
                f"--fit-reward-model {request.fit_reward_model}: no column {name!r} in "
                f"{Path(request.log).name}" + _close(name, headers.columns)
            )
    return column


def interval_choice(
    interval: str | Mapping[str, str] | None, estimators: Sequence
) -> str | Mapping[str, str] | None:
    """What ``evaluate``'s ``interval`` gets from ``--interval``: None (each estimator's own),
    LABEL=METHOD pairs as given, or one method for every estimator that offers it (the others
    keep theirs); an error if none offers it."""
    if not isinstance(interval, str):
        return interval
    declared = [declaration_of(e) for e in estimators]
    chosen = {d.label: interval for d in declared if interval in d.intervals}
    if len(chosen) == len(declared):
        return interval
    if not chosen:
        who = offering(interval)
        raise OffevalError(
            f"--interval {interval}: none of the estimators offers {interval} intervals"
            + (f" (registered estimators that do: {', '.join(who)})" if who else "")
        )
    return chosen
