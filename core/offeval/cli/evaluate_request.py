"""``offeval evaluate``'s request: its arguments read and checked once, in one frozen object
(what needs more, the registry or the files' headers, :mod:`offeval.cli.evaluate_inputs` checks)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from offeval.cli.options import progress_of
from offeval.data.candidates import check_candidate_roles
from offeval.data.files import PARQUET_SUFFIXES, separator_named
from offeval.data.log import ROLES
from offeval.data.policy import ColumnPolicy, Policy
from offeval.engine.declaration import check_reward_range
from offeval.engine.intervals import interval_names
from offeval.errors import OffevalError, did_you_mean
from offeval.registry.manager import Registry
from offeval.specs import parse_pairs
from offeval.stats.corrections import CORRECTIONS
from offeval.validation import check_level

__all__ = ["EvaluateRequest", "Target", "is_text"]

#: Names a reward model's column cannot take: the log's roles and the candidate table's slot.
RESERVED_COLUMNS = frozenset(ROLES) | {"slot"}


def is_text(path: str) -> bool:
    """Whether a data file is read as delimited text (not Parquet)."""
    return Path(path).suffix.lower() not in PARQUET_SUFFIXES


@dataclass(frozen=True)
class Target:
    """A target policy as typed: ``--policy NAME=COLUMN`` (its probabilities) or
    ``--rerank NAME=COLUMN`` (a score that re-ranks each trajectory's items)."""

    option: str
    name: str
    column: str

    @property
    def given(self) -> str:
        """``NAME=COLUMN``, as typed after the option."""
        return f"{self.name}={self.column}"

    def policy(self, registry: Registry) -> Policy:
        """The policy that reads the column: ``--rerank``'s is the registry's ``rerank``
        policy (the ranking family's)."""
        if self.option == "--policy":
            return ColumnPolicy(self.column, self.name)
        if "rerank" not in registry.names("policy"):
            raise OffevalError(
                f"--rerank {self.given}: no ranking policy is loaded (a plugin registers one "
                "as 'rerank' with the hook register_policies; offeval plugins lists what is "
                "loaded)"
            )
        return registry.get("policy", "rerank").factory(self.column, name=self.name)


@dataclass(frozen=True)
class EvaluateRequest:
    """What ``offeval evaluate`` is asked to do, every option checked.

    ``mapping`` and ``candidates_mapping``: role -> column as typed. ``estimators``: the
    specs named (empty: every registered one that runs). ``correction``: None for ``none``.
    ``interval``: None (each estimator's own), one method for all, or label -> method.
    """

    log: str
    targets: tuple[Target, ...]
    mapping: Mapping[str, str] = field(default_factory=dict)
    candidates: str | None = None
    candidates_mapping: Mapping[str, str] = field(default_factory=dict)
    sep: str | None = None
    decimal: str | None = None
    estimators: tuple[str, ...] = ()
    baseline: str | None = None
    reward_model: str | None = None
    fit_reward_model: str | None = None
    correction: str | None = "holm"
    level: float = 0.95
    interval: str | Mapping[str, str] | None = None
    reward_range: tuple[float, float] | None = None
    chunk_rows: int = 250_000
    stream: bool = False
    workers: int = 1
    out: str | None = None
    report: str | None = None
    force: bool = False
    progress: bool | None = None
    argv: tuple[str, ...] | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> EvaluateRequest:
        """The request of a parsed command line, each option checked (in the order the
        command has always answered them); the others are taken as argparse gives them."""
        checked: dict[str, Any] = {
            "level": check_level(args.level),
            "correction": _correction(args.correction),
            "interval": _interval(args.interval),
        }
        if args.reward_range is not None:
            checked["reward_range"] = check_reward_range(args.reward_range, "--reward-range")
        if args.stream and args.workers > 1:
            raise OffevalError(
                f"--workers {args.workers}: workers share a log read whole; --stream evaluates "
                "its batches in one process (drop --workers or --stream)"
            )
        files = [path for path in (args.log, args.candidates) if path is not None]
        if args.decimal is not None and not any(map(is_text, files)):
            raise OffevalError(
                f"--decimal {args.decimal}: Parquet files store numbers, not text: drop --decimal"
            )
        checked["mapping"] = _mapping(args.map)
        checked["candidates_mapping"] = _candidates_mapping(
            args.candidates_map, args.candidates, args.stream
        )
        checked["targets"] = _targets(args.policy, args.rerank, args.baseline)
        if args.reward_model is not None and args.reward_model in {"", *RESERVED_COLUMNS}:
            raise OffevalError(
                f"--reward-model {args.reward_model}: names a column of a role of the log; give "
                "the column of the model's predicted rewards"
            )
        if args.fit_reward_model is not None and args.stream:
            raise OffevalError(
                f"--fit-reward-model {args.fit_reward_model}: fitting cross-fits on every row, "
                "which needs the log read whole: drop --stream (or fit elsewhere and give the "
                "predictions as a column, --reward-model COLUMN)"
            )
        if args.out and args.report:  # one folder, or two apart
            a, b = Path(args.out).resolve(), Path(args.report).resolve()
            if a != b and (a in b.parents or b in a.parents):
                raise OffevalError(
                    f"--out {args.out} and --report {args.report}: one is inside the other; "
                    "give one folder for both, or two separate folders"
                )
        checked["sep"] = separator_named(args.sep)
        checked["estimators"] = tuple(args.estimator or ())
        checked["progress"] = progress_of(args)
        argv = getattr(args, "argv", None)
        checked["argv"] = None if argv is None else tuple(argv)
        given = {f.name: getattr(args, f.name) for f in fields(cls) if f.name not in checked}
        return cls(**given, **checked)

    def decimal_of(self, path: str) -> str | None:
        """``--decimal`` for a text file; None for a Parquet file, which stores numbers."""
        return self.decimal if is_text(path) else None


def _correction(given: str) -> str | None:
    """``--correction``: one of :data:`CORRECTIONS`, or None for ``none``."""
    if given == "none":
        return None
    if given not in CORRECTIONS:
        raise OffevalError(
            f"--correction {given!r}: one of none, {', '.join(CORRECTIONS)}"
            + did_you_mean(given, CORRECTIONS)
        )
    return given


def _interval(given: Sequence[str]) -> str | dict[str, str] | None:
    """``--interval``: one method for every estimator, or LABEL=METHOD pairs (a label may
    hold ``=``: ``rips(per=trajectory)=normal``); None when not given."""
    methods, known = [g.rpartition("=")[2] for g in given], interval_names() if given else ()
    for value, method in zip(given, methods, strict=True):
        if method not in known:
            raise OffevalError(
                f"--interval {value}: the method is one of {', '.join(known)}"
                + did_you_mean(method, known)
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
    if not given:
        return None
    if plain:
        return plain[0]
    return dict(g.rpartition("=")[::2] for g in given)


def _mapping(given: Sequence[str]) -> dict[str, str]:
    """``--map``: role -> column, every role one of the log's."""
    mapping = parse_pairs(given, typed=False, what="--map")
    for role, column in mapping.items():
        if role not in ROLES:
            raise OffevalError(
                f"--map {role}={column}: no role {role!r}{did_you_mean(role, ROLES)}; the "
                f"roles: {', '.join(ROLES)}"
            )
    return mapping


def _candidates_mapping(given: Sequence[str], candidates: str | None, stream: bool) -> dict:
    """``--candidates-map``, its roles checked, with the candidate file it maps (a Parquet
    file when streamed)."""
    mapping = parse_pairs(given, typed=False, what="--candidates-map")
    if mapping and not candidates:
        raise OffevalError("--candidates-map maps the columns of --candidates FILE: give the file")
    check_candidate_roles(mapping)
    if candidates is not None and stream and is_text(candidates):
        raise OffevalError(
            f"--candidates {candidates}: --stream reads Parquet files only; drop "
            "--stream, or write the candidate table as Parquet (sorted like the log)"
        )
    return mapping


def _targets(
    policy: Sequence[str], rerank: Sequence[str], baseline: str | None
) -> tuple[Target, ...]:
    """``--policy`` and ``--rerank``: at least one policy, each name once, the baseline
    among them."""
    given = parse_pairs(policy, typed=False, what="--policy")
    reranked = parse_pairs(rerank, typed=False, what="--rerank")
    both = sorted(set(given) & set(reranked))
    if both:
        raise OffevalError(f"policy names {both} are given by both --policy and --rerank")
    targets = tuple(Target("--policy", name, column) for name, column in given.items())
    targets += tuple(Target("--rerank", name, column) for name, column in reranked.items())
    if not targets:
        raise OffevalError(
            "give at least one target policy: --policy NAME=COLUMN or --rerank NAME=SCORE_COLUMN"
        )
    names = [t.name for t in targets]
    if baseline is not None and baseline not in names:
        raise OffevalError(
            f"--baseline {baseline!r} is not one of the policies {names}"
            + did_you_mean(baseline, names)
        )
    return targets
