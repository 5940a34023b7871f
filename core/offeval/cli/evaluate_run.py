"""What ``offeval evaluate`` does once its arguments parse (declared in
:mod:`offeval.cli.evaluate`): everything it can check (options, estimator names, output
folders, the file's header, columns, baseline) before the long computation, then the
evaluation, its table, and the files and report asked for."""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from offeval.cli import evaluate_inputs as inputs
from offeval.cli.document import ReportDocument
from offeval.cli.options import progress_of
from offeval.data.candidates import in_users_words, read_candidates
from offeval.data.files import columns_of, separator_named
from offeval.data.log import ROLES, InteractionLog, attach_candidates, stream_parquet
from offeval.data.output import OutputFolder
from offeval.data.policy import ColumnPolicy, RerankPolicy
from offeval.data.tables import write_csv
from offeval.engine.evaluation import PROBE_ROWS, evaluate, probe
from offeval.engine.frames import ess_units, pairs_table, skipped_table
from offeval.engine.summary import save_summaries
from offeval.errors import (
    OffevalError,
    OffevalWarning,
    RowError,
    SplitUnitError,
    did_you_mean,
)
from offeval.registry.manager import Registry, allow_list_note, get_registry
from offeval.registry.sections import EvaluationReport, ReportContext, report_sections
from offeval.specs import parse_pairs
from offeval.stats.betting import check_reward_range
from offeval.stats.corrections import CORRECTIONS
from offeval.validation import check_level

#: Why a streamed evaluation's report has no histogram of importance weights.
STREAMED_WEIGHTS = (
    "Not drawn: --stream reads the log in batches and keeps none of its rows, which the "
    "histogram needs; run without --stream to see it (the weight diagnostics above cover "
    "every row)."
)


def _policies(args: argparse.Namespace) -> list:
    given = parse_pairs(args.policy, typed=False, what="--policy")
    reranked = parse_pairs(args.rerank, typed=False, what="--rerank")
    both = sorted(set(given) & set(reranked))
    if both:
        raise OffevalError(f"policy names {both} are given by both --policy and --rerank")
    policies = [ColumnPolicy(col, name) for name, col in given.items()]
    policies += [RerankPolicy(col, name=name) for name, col in reranked.items()]
    if not policies:
        raise OffevalError(
            "give at least one target policy: --policy NAME=COLUMN or --rerank NAME=SCORE_COLUMN"
        )
    names = [p.name for p in policies]
    if args.baseline is not None and args.baseline not in names:
        raise OffevalError(
            f"--baseline {args.baseline!r} is not one of the policies {names}"
            + did_you_mean(args.baseline, names)
        )
    return policies


def _check_roles(mapping: dict) -> None:
    """Every role --map names is one of the log's roles."""
    for role, column in mapping.items():
        if role not in ROLES:
            raise OffevalError(
                f"--map {role}={column}: no role {role!r}{did_you_mean(role, ROLES)}; the "
                f"roles: {', '.join(ROLES)}"
            )


def _policy_columns(args: argparse.Namespace) -> dict:
    """Each policy's column: ``{"--policy a=col": ("a=col", "col"), ...}``."""
    named = {}
    for option in ("policy", "rerank"):
        pairs = parse_pairs(getattr(args, option), typed=False, what=f"--{option}")
        named.update({f"--{option} {n}={c}": (f"{n}={c}", c) for n, c in pairs.items()})
    return named


def _check_columns(args: argparse.Namespace, mapping: dict, columns: list) -> None:
    """Every column the options name is in the file's header (read before any row)."""
    named = [
        ("--map", f"{role}={','.join(map(str, parts))}", col)
        for role, given in mapping.items()
        for parts in [given if isinstance(given, list) else [given]]
        for col in parts
    ]
    named += [
        (key.split(" ")[0], given, col) for key, (given, col) in _policy_columns(args).items()
    ]
    roles = {col: role for role, col in mapping.items() if not isinstance(col, list)}
    what = {"--policy": "policy", "--rerank": "score"}
    for option, given, column in named:
        if option != "--map" and column in roles:
            role = roles[column]
            raise OffevalError(
                f"{option} {given}: column {column!r} is mapped as the {role} "
                f"(--map {role}={column}), so a {what[option]} column must be another one"
            )
        if column not in columns:
            raise OffevalError(
                f"{option} {given}: no column {column!r} in {Path(args.log).name}"
                + (did_you_mean(column, columns) or f" (its columns: {', '.join(columns)})")
            )


def _read(args: argparse.Namespace, mapping: dict, cmapping: dict, sep: str | None):
    """The log (streamed: its batches) with its candidate table, and a first chunk of it
    to try the estimators on."""

    def decimal(path: str) -> str | None:  # a Parquet file stores numbers
        return args.decimal if inputs.is_text(path) else None

    if args.stream:
        with_candidates = {"candidates": args.candidates, "candidates_mapping": cmapping}
        log = stream_parquet(args.log, mapping, batch_rows=args.chunk_rows, **with_candidates)
        with warnings.catch_warnings():  # the file's warnings: said once, just above
            warnings.simplefilter("ignore", OffevalWarning)
            first = stream_parquet(args.log, mapping, batch_rows=PROBE_ROWS, **with_candidates)
        return log, next(iter(first))
    log = InteractionLog.from_file(args.log, mapping, sep=sep, decimal=decimal(args.log))
    if args.candidates is not None:
        table = read_candidates(
            args.candidates, cmapping, sep=sep, decimal=decimal(args.candidates)
        )
        log = attach_candidates(log, table, args.candidates, args.log, cmapping, mapping)
    return log, log


def _folders(args: argparse.Namespace) -> tuple[OutputFolder | None, OutputFolder | None]:
    """The --out and --report folders, checked now (the same object if they are one folder)."""
    given = {"--out": args.out, "--report": args.report}
    paths = {option: Path(path).resolve() for option, path in given.items() if path}
    if len(paths) == 2 and paths["--out"] != paths["--report"]:
        a, b = paths["--out"], paths["--report"]
        if a in b.parents or b in a.parents:
            raise OffevalError(
                f"--out {args.out} and --report {args.report}: one is inside the other; give "
                "one folder for both, or two separate folders"
            )
    folders = {
        option: OutputFolder(
            given[option],
            option=option,
            force=args.force,
            inputs=[p for p in (args.log, args.candidates) if p is not None],
        )
        for option in paths
    }
    out, report = folders.get("--out"), folders.get("--report")
    if out is not None and report is not None and paths["--out"] == paths["--report"]:
        report = out
    return out, report


def _words(args: argparse.Namespace, mapping: dict, cmapping: dict):
    """An error about rows and columns in the user's words: the column names and lines of
    the file it is about (the log, or the candidate file)."""

    def words(exc: OffevalError) -> OffevalError:
        if not isinstance(exc, RowError):
            return exc
        return in_users_words(exc, args.log, mapping, args.candidates, cmapping)

    return words


@contextmanager
def _users_words(words: Callable[[OffevalError], OffevalError]) -> Iterator[None]:
    """Within the block, errors about rows and columns are raised in the user's words."""
    try:
        yield
    except RowError as exc:
        named = words(exc)
        if named is exc:
            raise
        raise named from None


def _usable(
    registry: Registry,
    specs: list[str] | None,
    log: InteractionLog,
    policies,
    words: Callable[[OffevalError], OffevalError],
    column: str | None = None,
) -> tuple[list, dict[str, str]]:
    """The estimators to run, each tried on a small chunk of the log first
    (:func:`offeval.engine.evaluation.probe`, which queries the policies first), and those
    skipped (why).

    Named estimators must run (an error otherwise, in the user's ``words``);
    by default every registered estimator runs at its defaults (an alias's
    original only), and those that cannot run on this log and these policies
    are skipped, with a note (and in ``--out`` and
    ``--report``). ``column``: the reward model's column (``--reward-model``).
    """
    chosen = specs or registry.distinct("estimator")
    estimators = [inputs.build_estimator(registry, spec, column) for spec in chosen]
    usable, skipped = [], {}
    for spec, estimator, error in zip(
        chosen, estimators, probe(log, policies, estimators), strict=True
    ):
        if error is None:
            usable.append(estimator)
        elif specs:
            raise OffevalError(f"--estimator {spec}: {words(error)}") from None
        else:
            skipped[spec] = str(error)
    if not usable:
        reasons = "; ".join(f"{spec}: {why}" for spec, why in skipped.items())
        raise OffevalError(f"no registered estimator runs on this log ({reasons})")
    if skipped:
        print(
            f"note: skipped {', '.join(skipped)}: they cannot run on this log with these "
            "policies (name one with --estimator to see why)"
        )
    return usable, skipped


def run_evaluate(args: argparse.Namespace) -> int:
    """Check everything, evaluate, print the table, write the files."""
    registry = get_registry()
    check_level(args.level)
    if args.correction != "none" and args.correction not in CORRECTIONS:
        raise OffevalError(
            f"--correction {args.correction!r}: one of none, {', '.join(CORRECTIONS)}"
            + did_you_mean(args.correction, CORRECTIONS)
        )
    correction = None if args.correction == "none" else args.correction
    inputs.check_interval_options(args.interval)
    bounds = None
    if args.reward_range is not None:
        bounds = check_reward_range(args.reward_range, "--reward-range")
    if args.stream and args.workers > 1:
        raise OffevalError(
            f"--workers {args.workers}: workers share a log read whole; --stream evaluates its "
            "batches in one process (drop --workers or --stream)"
        )
    texts = [p for p in (args.log, args.candidates) if p is not None and inputs.is_text(p)]
    if args.decimal is not None and not texts:
        raise OffevalError(
            f"--decimal {args.decimal}: Parquet files store numbers, not text: drop --decimal"
        )
    mapping = parse_pairs(args.map, typed=False, what="--map")
    _check_roles(mapping)
    cmapping = inputs.candidate_mapping(args)
    policies = _policies(args)
    column = inputs.reward_column(args)
    fitter = inputs.reward_fitter(registry, args)
    named = [  # a mistyped name is refused before the file is read
        inputs.build_estimator(registry, spec, column) for spec in args.estimator or ()
    ]
    if named:  # the estimators are known: --interval's labels are checked before any row
        inputs.interval_choice(args.interval, named, bounds)
    out, report = _folders(args)
    if report is not None and not registry.components("report"):
        raise OffevalError(f"--report {args.report}: {_no_report_writer()}")
    sep = separator_named(args.sep)
    columns = columns_of(args.log, sep)
    mapping = inputs.composite(mapping, columns)
    _check_columns(args, mapping, columns)
    cand_columns = None
    if args.candidates is not None:
        cand_columns = columns_of(args.candidates, sep)
        cmapping = inputs.inherited(inputs.composite(cmapping, cand_columns), mapping, cand_columns)
        inputs.check_candidate_columns(args, cmapping, cand_columns, _policy_columns(args))
    if column is not None and fitter is None:
        for path, header in ((args.log, columns), (args.candidates, cand_columns)):
            if header is not None and column not in header:
                raise OffevalError(
                    f"--reward-model {column}: no column {column!r} in {Path(path).name}"
                    + (did_you_mean(column, header) or f" (its columns: {', '.join(header)})")
                )
    fitted = None
    if fitter is not None:
        fitted = inputs.check_fit_columns(args, fitter, mapping, columns, cand_columns)
    inputs.check_named_estimators(args, named, columns, cand_columns, fitted)
    words = _words(args, mapping, cmapping)
    with _users_words(words):
        log, batch = _read(args, mapping, cmapping, sep)
        if fitter is not None:
            log = batch = fitter.fit(log).attach(log, fitted)
        estimators, skipped = _usable(
            registry, args.estimator, batch, policies, words, column or fitted
        )
        try:
            evaluation = evaluate(
                log,
                policies,
                estimators,
                level=args.level,
                chunk_rows=args.chunk_rows,
                progress=progress_of(args),
                workers=args.workers,
                interval=inputs.interval_choice(args.interval, estimators, bounds),
                reward_range=bounds,
            )
        except SplitUnitError as exc:
            if not args.stream:
                raise
            key = mapping.get("trajectory", "trajectory")
            raise SplitUnitError(
                exc.ids, exc.count, f"drop --stream, or sort the file by {key}"
            ) from None
    table = evaluation.to_frame()
    if args.baseline:
        rel = pd.DataFrame(
            [
                e.to_dict()
                for label in evaluation.estimators
                for e in evaluation.relative(args.baseline, label)
            ]
        )
        table = table.merge(
            rel[["policy", "estimator", "value", "ci_low", "ci_high"]].rename(
                columns=lambda c: c if c in {"policy", "estimator"} else f"relative_{c}"
            ),
            on=["policy", "estimator"],
        )
    summaries = [evaluation.summary(label, args.baseline) for label in evaluation.estimators]
    context = ReportContext(
        {s.estimator: s for s in summaries},
        log=None if args.stream else log,
        policies=policies,
        workers=args.workers,
    )
    sections = report_sections(registry, context)
    hidden = {"level"}
    if (table["interval_method"] == "normal").all():
        hidden.add("interval_method")  # shown where an estimate's interval is another kind
    shown = [c for c in table if not c.startswith("diag_") and c not in hidden]
    with pd.option_context("display.width", 120, "display.max_columns", 30):
        print(table[shown].round(4).to_string(index=False))
        print(f"({evaluation.level:.0%} intervals; --out or --report keep the diagnostics)")
        for section in sections:
            for name, frame in section.tables.items():
                print(f"\n{section.title}: {name}\n{frame.round(4).to_string()}")
    written = []
    for folder in dict.fromkeys(f for f in (out, report) if f is not None):
        with folder as tmp:
            if folder is out:
                files = _write_tables(
                    out, tmp, evaluation, table, summaries, sections, args, correction, skipped
                )
                pairs = (
                    f"one pairs_*.csv per estimator{_numbered(files, out)}, "
                    if len(policies) > 1
                    else "no pairs_*.csv (paired comparisons need two or more policies), "
                )
                written.append(
                    f"written: {out.path}/estimates.csv, {pairs}summaries.json (values and "
                    "covariances, to revisit decisions without the log), sections.md"
                    + (" and skipped_estimators.csv" if skipped else "")
                )
            if folder is report:
                path = _write_report(
                    tmp, registry, evaluation, table, sections, context, args, correction, skipped
                )
                written.append(f"report: {report.path / path.name}")
    print("\n".join(written), end="\n" if written else "")
    return 0


def _write_tables(
    folder: OutputFolder,
    out: Path,
    evaluation,
    table,
    summaries,
    sections,
    args,
    correction,
    skipped,
) -> dict[str, str]:
    """evaluate --out: estimates.csv, pairs_*.csv (of two or more policies), summaries.json
    sections.md, and skipped_estimators.csv (what a default run could not run, and why);
    the pairs files' names by estimator label.

    ``out`` is ``folder``'s temporary folder. CSV text cells are spreadsheet-safe;
    ``ess_unit`` says what ``diag_ess`` counts; with ``--baseline``, each pairs file's
    ``relative_to`` names it. Each estimator gets a pairs file of its own, named by
    :meth:`~offeval.data.output.OutputFolder.file_name`: two labels that read the same
    in a file name (``dm(reward_model=q.hat)``, ``dm(reward_model=q_hat)``) never share one.
    """

    if "diag_ess" in table:
        at = table.columns.get_loc("diag_ess") + 1
        table = table.copy()
        table.insert(at, "ess_unit", table["estimator"].map(ess_units(evaluation)))
    write_csv(table, out / "estimates.csv")
    paired = len(evaluation.policies) > 1  # no pairs file of one policy (a header only)
    labels = evaluation.estimators if paired else ()
    files = {label: folder.file_name("pairs", label) for label in labels}
    for label, name in files.items():
        write_csv(pairs_table(evaluation, label, correction, args.baseline), out / name)
    if skipped:
        write_csv(skipped_table(skipped), out / "skipped_estimators.csv")
    save_summaries(out / "summaries.json", summaries)
    doc = ReportDocument("offeval evaluate: the plugins' sections")
    doc.sections(sections, out)
    (out / "sections.md").write_text(doc.markdown())
    return files


def _numbered(files: dict[str, str], folder: OutputFolder) -> str:
    """``" (pairs_x_2.csv holds x(a=b))"``: which estimator a numbered pairs file holds
    (its name read as another's), or ``""``."""
    held = [f"{name} holds {label}" for label, name in files.items() if name in folder.numbered]
    return f" ({'; '.join(held)})" if held else ""


def _no_report_writer() -> str:
    """Why no report writer is there: none installed, or the plugins' allow-list left it out."""
    note = allow_list_note()
    if note is None:
        return (
            "no report writer is installed (a plugin registers one with the hook "
            "register_reports; offeval plugins lists what is installed)"
        )
    return f"no report writer is loaded ({note}; offeval plugins lists what is loaded)"


def _write_report(
    out: Path, registry: Registry, evaluation, table, sections, context, args, correction, skipped
) -> Path:
    """evaluate --report: what the first installed report writer writes (report.html, ...)."""
    writer = registry.components("report")[0].factory()
    report = EvaluationReport(
        evaluation,
        table,
        baseline=args.baseline,
        correction=correction,
        sections=sections,
        log=context.log,
        policies=context.policies,
        argv=getattr(args, "argv", None),
        weights_note=STREAMED_WEIGHTS if args.stream else None,
        skipped=skipped,
    )
    return writer.write(out, report)
