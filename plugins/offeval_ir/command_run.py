"""What ``offeval metrics`` and ``offeval compare`` do once their arguments parse (declared
in :mod:`offeval_ir.command`): options checked, outputs checked, files read, runs
evaluated, in that order; then the tables printed and written."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from offeval import OffevalError, active_registry
from offeval.plugin import OutputFile, markdown_table, parse_pairs, write_csv
from offeval_ir.choices import DEFAULT_MEASURES, named_runs
from offeval_ir.conventions import Conventions
from offeval_ir.files import read_qrels, read_run
from offeval_ir.judgements import role_names
from offeval_ir.measures import Measure, parse_measures
from offeval_ir.run_statistics import RunEvaluation, check_randomization
from offeval_ir.runs import evaluate_runs
from offeval_ir.tables import (
    PAIRED_ON,
    WIN_TIE_LOSS,
    comparison_table,
    frame_latex,
    label_checked,
    latex_caption,
    latex_table,
    numeric_table,
    test_phrase,
    win_tie_loss_table,
)

#: File types --out writes, by suffix.
TABLE_SUFFIXES = (".csv", ".md", ".tex")


def _outputs(args: argparse.Namespace) -> dict[str, OutputFile]:
    """The files ``--out`` (and ``--pairs``) name, checked before any file is read."""
    inputs = [args.qrels, *_run_files(args).values()]
    outputs = {}
    for option in ("out", "pairs"):
        path = getattr(args, option, None)
        if path is None:
            continue
        if option == "pairs" and args.out is not None and _same_file(args.out, path):
            raise OffevalError(
                f"--out and --pairs name the same file ({path}): the pairs would replace the "
                "table; give two files"
            )
        if Path(path).suffix not in TABLE_SUFFIXES:
            raise OffevalError(
                f"--{option} must end in {', '.join(TABLE_SUFFIXES)}, got {Path(path).name}"
            )
        outputs[option] = OutputFile(path, option=f"--{option}", inputs=inputs)
    return outputs


def _run_files(args: argparse.Namespace) -> dict[str, str]:
    """{name: file} of the runs: ``compare``'s as named (:func:`named_runs`), ``metrics``'
    one by its file name."""
    if hasattr(args, "runs"):
        return getattr(args, "named_runs", None) or named_runs(args.runs)
    return {Path(args.run).name: args.run}


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (spelt differently, or linked)."""
    if Path(a).exists() and Path(b).exists():
        return Path(a).samefile(b)
    return Path(a).resolve() == Path(b).resolve()


def _setup(args: argparse.Namespace) -> tuple[Conventions, list[Measure], dict]:
    """Conventions, measures (parsed once, here) and column mapping from the arguments."""
    overrides = parse_pairs(args.set, what="--set")
    conventions = active_registry().create("conventions", args.preset, **overrides)
    measures = parse_measures(args.measure or DEFAULT_MEASURES)
    return conventions, measures, parse_pairs(args.column, typed=False, what="--column")


def _stated(conventions: Conventions, args: argparse.Namespace, measures: list[Measure]) -> str:
    """The line every output starts with: preset, overrides, per-measure switches."""
    sets = ", ".join(args.set) if args.set else "none"
    own = [
        f"{m.name}: {', '.join(f'{k}={v}' for k, v in (*m.overrides, *m.params))}"
        for m in measures
        if m.overrides or m.params
    ]
    line = f"conventions: preset {args.preset}, overrides {sets}"
    return line + (f"; measure switches {'; '.join(own)}" if own else "")


def _read(args: argparse.Namespace, columns: dict) -> tuple[pd.DataFrame, dict]:
    """The qrels and the runs (by their names: :func:`_run_files`) the arguments name."""
    runs = _run_files(args)
    missing = [name for name in (*runs.values(), args.qrels) if not Path(name).exists()]
    if missing:
        raise OffevalError(f"{', '.join(missing)}: no such file")
    options = {"columns": columns, "sep": args.sep}
    qrels = _named(read_qrels(args.qrels, args.qrels_format, **options), columns)
    return qrels, {
        name: _named(read_run(path, args.run_format, **options), columns)
        for name, path in runs.items()
    }


def _named(frame: pd.DataFrame, columns: dict) -> pd.DataFrame:
    """``frame`` with its role-named columns renamed as ``--column`` names them, where it
    has the role's column and not the named one (TREC and JSON files name theirs by role:
    a CSV run's ``--column user=qid`` beside TREC qrels)."""
    names = role_names(columns)
    renamed = {r: c for r, c in names.items() if r != c and r in frame and c not in frame}
    return frame.rename(columns=renamed) if renamed else frame


def _evaluated(
    args: argparse.Namespace,
) -> tuple[Conventions, list[Measure], dict[str, OutputFile], RunEvaluation]:
    """Options checked, outputs checked, files read, runs evaluated: in that order."""
    conventions, measures, columns = _setup(args)
    outputs = _outputs(args)
    qrels, runs = _read(args, columns)
    evaluation = evaluate_runs(
        runs,
        qrels,
        measures,
        conventions,
        columns=columns,
        level=args.level,
        qrels_name=args.qrels,
    )
    return conventions, measures, outputs, evaluation


def _write(
    table: pd.DataFrame,
    out: OutputFile,
    heading: str,
    latex: str | None = None,
    more: tuple[str, pd.DataFrame] | None = None,
) -> None:
    """``table`` as CSV (spreadsheet-safe), Markdown or LaTeX, by the file's suffix; whole.
    Markdown also gets ``more``, a (heading, table) after it."""
    with out as tmp:
        if out.path.suffix == ".csv":
            write_csv(table, tmp)
        elif out.path.suffix == ".md":
            after = f"\n{more[0]}\n\n{markdown_table(more[1], digits=6)}\n" if more else ""
            tmp.write_text(f"{heading}\n\n{markdown_table(table, digits=6)}\n{after}")
        else:
            tmp.write_text(latex or frame_latex(table, heading))


def run_metrics(args: argparse.Namespace) -> int:
    """``offeval metrics``: compute and print the measures table, write ``--out``."""
    conventions, measures, outputs, evaluation = _evaluated(args)
    if args.per_user:
        table = next(iter(evaluation.results.values())).per_user.reset_index()
    else:
        table = evaluation.table().drop(columns="run")
    heading = _stated(conventions, args, measures)
    print(heading)
    with pd.option_context("display.width", 120, "display.max_rows", 200):
        print(table.round(6).to_string(index=False))
    if "out" in outputs:
        _write(table, outputs["out"], heading)
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """``offeval compare``: compute, print and write the comparison table (the runs named
    are checked: :meth:`offeval_ir.command.CompareCommand.run`)."""
    names = list(_run_files(args))
    _check_resamples(args)
    label_checked(args.label)
    conventions, measures, outputs, evaluation = _evaluated(args)
    evaluation = evaluation.on_common_queries()
    correction = None if args.correction == "none" else args.correction
    pairs = evaluation.compare(
        test=args.test,
        correction=correction,
        alpha=args.alpha,
        resamples=args.resamples,
        seed=args.seed,
    )
    means = evaluation.table()
    table, legend = comparison_table(means, pairs, names, decimals=args.decimals)
    heading = "\n".join(
        [
            f"{_stated(conventions, args, measures)}",
            *_paired_on(evaluation),
            f"{legend} ({test_phrase(args.test, correction, args.alpha, args.resamples)})",
        ]
    )
    print(heading)
    with pd.option_context("display.width", 160, "display.max_colwidth", 60):
        print(table.to_string(index=False))
    wtl = (WIN_TIE_LOSS, win_tie_loss_table(pairs, names))
    print(f"\n{wtl[0]}")
    with pd.option_context("display.width", 160):
        print(wtl[1].to_string(index=False))
    if "out" in outputs:
        numbers = numeric_table(evaluation, means, pairs, names)
        table = numbers if args.out.endswith(".csv") else table
        caption = latex_caption(
            evaluation,
            args.test,
            correction,
            args.alpha,
            args.resamples,
            _stated(conventions, args, measures),
            _paired_on(evaluation),
        )
        latex = latex_table(means, pairs, names, caption, label=args.label, decimals=args.decimals)
        _write(table, outputs["out"], heading, latex, wtl)
    if "pairs" in outputs:
        _write(pairs, outputs["pairs"], heading)
    return 0


def _check_resamples(args: argparse.Namespace) -> None:
    """Refuse, before any file is read, a randomisation test too small to decide anything
    (see :func:`check_randomization`); the number of pairs is known from the runs named."""
    if args.test == "randomization":
        runs = len(args.runs)
        correction = None if args.correction == "none" else args.correction
        check_randomization(args.resamples, args.alpha, correction, runs * (runs - 1) // 2)


def _paired_on(evaluation: RunEvaluation) -> list[str]:
    """Per measure: the queries every run averages, those left out, by the runs lacking
    them (the rule of :meth:`RunEvaluation.on_common_queries`), and those no run averages,
    by reason."""
    lines = []
    for measure in evaluation.measures:
        estimates = {r: evaluation.evaluation.estimate(r, measure) for r in evaluation.values}
        users = next(iter(estimates.values())).n_units
        line = f"{measure}: paired on the {users} {PAIRED_ON}"
        left_out = evaluation.left_out[measure]
        if left_out:
            lacking = {
                run: left_out - e.excluded.get("not_in_every_run", 0)
                for run, e in estimates.items()
            }
            by = ", ".join(f"{run} {n}" for run, n in lacking.items() if n)
            line += (
                f", {left_out} left out (not averaged by {by}; --set no_predictions=zero "
                "counts a run's missing queries as 0)"
            )
        none = evaluation.not_averaged[measure]
        if none:
            why = ", ".join(f"{_WHY[reason]}: {n}" for reason, n in none.items())
            line += f"; {sum(none.values())} averaged by no run ({why})"
        lines.append(line)
    return lines


#: Why no run averages a query, as the heading says it.
_WHY = {
    "no_labels": "no qrels",
    "no_predictions": "no run ranks it",
    "no_value": "no value",
}
