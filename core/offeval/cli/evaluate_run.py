"""What ``offeval evaluate`` does with its checked request: what it names checked against the
registry and the files' headers, then the evaluation, its table, its files and report."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from offeval.cli import evaluate_inputs as inputs
from offeval.cli.evaluate_request import EvaluateRequest
from offeval.data.candidates import in_users_words, read_candidates
from offeval.data.log import InteractionLog, attach_candidates, stream_parquet
from offeval.data.output import OutputFolder
from offeval.data.policy import Policy
from offeval.data.tables import write_csv
from offeval.engine.evaluation import PROBE_ROWS, Accumulator, Evaluation, fold_log, probe
from offeval.engine.summary import save_summaries
from offeval.errors import OffevalError, OffevalWarning, RowError, SplitUnitError
from offeval.registry.manager import Registry, allow_list_note, get_registry
from offeval.registry.sections import (
    EvaluationReport,
    MarkdownDocument,
    ReportContext,
    report_sections,
)

#: Why a streamed evaluation's report has no histogram of importance weights.
STREAMED_WEIGHTS = (
    "Not drawn: --stream reads the log in batches and keeps none of its rows, which the "
    "histogram needs; run without --stream to see it (the weight diagnostics above cover "
    "every row)."
)


def run_evaluate(request: EvaluateRequest) -> int:
    """Check what the request names, evaluate, print the table, write the files."""
    registry = get_registry()
    fitter = inputs.reward_fitter(registry, request.fit_reward_model)
    named = inputs.named_estimators(registry, request)
    out, report = _folders(registry, request)
    headers = inputs.headers(request)
    fitted = inputs.check_reward_models(request, headers, fitter, named)
    policies = [target.policy(registry) for target in request.targets]
    with _users_words(request, headers) as words:
        log, batch = _read(request, headers)
        column = request.reward_model or fitted
        if fitter is not None:  # the named estimators read the fitted model's column
            log = batch = fitter.fit(log).attach(log, fitted)
            named = [inputs.build_estimator(registry, spec, column) for spec in request.estimators]
        estimators, skipped = _usable(
            registry, request.estimators, named, batch, policies, words, column
        )
        evaluation = _evaluated(request, headers, log, policies, estimators)
    outcome = _outcome(registry, request, evaluation, log, policies, skipped)
    _show(outcome)
    _write(registry, request, outcome, out, report)
    return 0


@dataclass(frozen=True)
class _Outcome:
    """What the evaluation gives to print and to write: its table (with ``--baseline``, the
    relative values too), summaries, the plugins' sections, the estimators skipped (why)."""

    evaluation: Evaluation
    table: pd.DataFrame
    summaries: list
    context: ReportContext
    sections: list
    skipped: dict[str, str]


def _folders(
    registry: Registry, request: EvaluateRequest
) -> tuple[OutputFolder | None, OutputFolder | None]:
    """The --out and --report folders, checked now (the same object if they are one folder),
    and a report writer for --report."""
    given = {"--out": request.out, "--report": request.report}
    inputs = [path for path in (request.log, request.candidates) if path is not None]
    folders = {
        option: OutputFolder(path, option=option, force=request.force, inputs=inputs)
        for option, path in given.items()
        if path
    }
    out, report = folders.get("--out"), folders.get("--report")
    if out is not None and report is not None:
        if Path(request.out).resolve() == Path(request.report).resolve():
            report = out
    if report is not None and not registry.components("report"):
        note = allow_list_note()
        why = (
            "no report writer is installed (a plugin registers one with the hook "
            "register_reports; offeval plugins lists what is installed)"
            if note is None
            else f"no report writer is loaded ({note}; offeval plugins lists what is loaded)"
        )
        raise OffevalError(f"--report {request.report}: {why}")
    return out, report


def _read(request: EvaluateRequest, headers: inputs.Headers):
    """The log (streamed: its batches) with its candidate table, and a first chunk of it
    to try the estimators on."""
    mapping, cmapping = headers.mapping, headers.candidates_mapping
    if request.stream:
        with_candidates = {"candidates": request.candidates, "candidates_mapping": cmapping}
        log = stream_parquet(request.log, mapping, batch_rows=request.chunk_rows, **with_candidates)
        with warnings.catch_warnings():  # the file's warnings: said once, just above
            warnings.simplefilter("ignore", OffevalWarning)
            first = stream_parquet(request.log, mapping, batch_rows=PROBE_ROWS, **with_candidates)
        return log, next(iter(first))
    log = InteractionLog.from_file(
        request.log, mapping, sep=request.sep, decimal=request.decimal_of(request.log)
    )
    if request.candidates is not None:
        table = read_candidates(
            request.candidates,
            cmapping,
            sep=request.sep,
            decimal=request.decimal_of(request.candidates),
        )
        log = attach_candidates(log, table, request.candidates, request.log, cmapping, mapping)
    return log, log


@contextmanager
def _users_words(
    request: EvaluateRequest, headers: inputs.Headers
) -> Iterator[Callable[[OffevalError], OffevalError]]:
    """Within the block, errors about rows and columns are raised in the user's words (the
    column names and lines of the file they are about); yields that translation."""

    def words(exc: OffevalError) -> OffevalError:
        if not isinstance(exc, RowError):
            return exc
        return in_users_words(
            exc, request.log, headers.mapping, request.candidates, headers.candidates_mapping
        )

    try:
        yield words
    except RowError as exc:
        named = words(exc)
        if named is exc:
            raise
        raise named from None


def _usable(
    registry: Registry,
    specs: tuple[str, ...],
    named: list,
    log: InteractionLog,
    policies,
    words: Callable[[OffevalError], OffevalError],
    column: str | None,
) -> tuple[list, dict[str, str]]:
    """The estimators to run, each tried on a small chunk of the log first (:func:`probe`),
    and those skipped (why): named ones must run (an error otherwise, in the user's
    ``words``); by default every registered estimator (an alias's original only) runs, or is
    skipped with a note. ``named``: the named ones, built; ``column``: the reward model's."""
    chosen = specs or registry.distinct("estimator")
    estimators = named or [inputs.build_estimator(registry, spec, column) for spec in chosen]
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


def _evaluated(
    request: EvaluateRequest,
    headers: inputs.Headers,
    log,
    policies: list[Policy],
    estimators: list,
) -> Evaluation:
    """The evaluation, as the request asks; a streamed file not grouped by trajectory is
    told how to sort it."""
    acc = Accumulator(
        policies,
        estimators,
        interval=inputs.interval_choice(request.interval, estimators),
        reward_range=request.reward_range,
    )
    try:
        folded = fold_log(
            log,
            acc,
            chunk_rows=request.chunk_rows,
            progress=request.progress,
            workers=request.workers,
        )
    except SplitUnitError as exc:
        if not request.stream:
            raise
        key = headers.mapping.get("trajectory", "trajectory")
        raise SplitUnitError(
            exc.ids, exc.count, f"drop --stream, or sort the file by {key}"
        ) from None
    return folded.result(request.level)


def _outcome(
    registry: Registry,
    request: EvaluateRequest,
    evaluation: Evaluation,
    log,
    policies: list[Policy],
    skipped: dict[str, str],
) -> _Outcome:
    """The estimates' table, the summaries and the plugins' sections of an evaluation."""
    table = evaluation.to_frame()
    if request.baseline:
        rel = pd.DataFrame(
            [
                e.to_dict()
                for label in evaluation.estimators
                for e in evaluation.relative(request.baseline, label)
            ]
        )
        table = table.merge(
            rel[["policy", "estimator", "value", "ci_low", "ci_high"]].rename(
                columns=lambda c: c if c in {"policy", "estimator"} else f"relative_{c}"
            ),
            on=["policy", "estimator"],
        )
    summaries = [evaluation.summary(label, request.baseline) for label in evaluation.estimators]
    context = ReportContext(
        {s.estimator: s for s in summaries},
        log=None if request.stream else log,
        policies=policies,
        workers=request.workers,
    )
    sections = report_sections(registry, context)
    return _Outcome(evaluation, table, summaries, context, sections, skipped)


def _show(outcome: _Outcome) -> None:
    """The table of estimates (no diagnostics), and the plugins' sections' tables."""
    table = outcome.table
    hidden = {"level"}
    if (table["interval_method"] == "normal").all():
        hidden.add("interval_method")  # shown where an estimate's interval is another kind
    shown = [c for c in table if not c.startswith("diag_") and c not in hidden]
    with pd.option_context("display.width", 120, "display.max_columns", 30):
        print(table[shown].round(4).to_string(index=False))
        print(f"({outcome.evaluation.level:.0%} intervals; --out or --report keep the diagnostics)")
        for section in outcome.sections:
            for name, frame in section.tables.items():
                print(f"\n{section.title}: {name}\n{frame.round(4).to_string()}")


def _write(
    registry: Registry,
    request: EvaluateRequest,
    outcome: _Outcome,
    out: OutputFolder | None,
    report: OutputFolder | None,
) -> None:
    """The --out files and the --report, each folder written whole; what was written, said."""
    written = []
    for folder in dict.fromkeys(f for f in (out, report) if f is not None):
        with folder as tmp:
            if folder is out:
                files = _write_tables(out, tmp, request, outcome)
                held = [f"{n} holds {label}" for label, n in files.items() if n in out.numbered]
                numbered = f" ({'; '.join(held)})" if held else ""
                pairs = (
                    f"one pairs_*.csv per estimator{numbered}, "
                    if len(request.targets) > 1
                    else "no pairs_*.csv (paired comparisons need two or more policies), "
                )
                written.append(
                    f"written: {out.path}/estimates.csv, {pairs}summaries.json (values and "
                    "covariances, to revisit decisions without the log), sections.md"
                    + (" and skipped_estimators.csv" if outcome.skipped else "")
                )
            if folder is report:  # what the first installed report writer writes
                writer = registry.components("report")[0].factory()
                path = writer.write(
                    tmp,
                    EvaluationReport(
                        outcome.evaluation,
                        outcome.table,
                        baseline=request.baseline,
                        correction=request.correction,
                        sections=outcome.sections,
                        log=outcome.context.log,
                        policies=outcome.context.policies,
                        argv=None if request.argv is None else list(request.argv),
                        weights_note=STREAMED_WEIGHTS if request.stream else None,
                        skipped=outcome.skipped,
                    ),
                )
                written.append(f"report: {report.path / path.name}")
    print("\n".join(written), end="\n" if written else "")


def _write_tables(
    folder: OutputFolder, out: Path, request: EvaluateRequest, outcome: _Outcome
) -> dict[str, str]:
    """evaluate --out into ``out``, ``folder``'s temporary folder: estimates.csv (``ess_unit``
    says what ``diag_ess`` counts), a pairs file per estimator (of two or more policies,
    named by :meth:`OutputFolder.file_name`, so that no two labels share one),
    summaries.json, sections.md and skipped_estimators.csv; the pairs files' names by label."""
    evaluation, table = outcome.evaluation, outcome.table
    if "diag_ess" in table:
        at = table.columns.get_loc("diag_ess") + 1
        table = table.copy()
        table.insert(at, "ess_unit", table["estimator"].map(evaluation.ess_units))
    write_csv(table, out / "estimates.csv")
    paired = len(evaluation.policies) > 1  # no pairs file of one policy (a header only)
    labels = evaluation.estimators if paired else ()
    files = {label: folder.file_name("pairs", label) for label in labels}
    for label, name in files.items():
        pairs = evaluation.pairs(label, request.correction, request.baseline)
        write_csv(pairs, out / name)
    if outcome.skipped:
        skipped = pd.DataFrame(
            {"estimator": list(outcome.skipped), "why": list(outcome.skipped.values())}
        )
        write_csv(skipped, out / "skipped_estimators.csv")
    save_summaries(out / "summaries.json", outcome.summaries)
    doc = MarkdownDocument("offeval evaluate: the plugins' sections")
    doc.sections(outcome.sections, out)
    (out / "sections.md").write_text(doc.markdown())
    return files
