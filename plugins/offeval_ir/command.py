"""``offeval metrics`` and ``offeval compare``: IR measures of TREC runs and qrels."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from offeval.plugin import (
    CORRECTIONS,
    OffevalError,
    OutputFile,
    active_registry,
    at_least,
    command_line,
    hint,
    markdown_table,
    parse_pairs,
    write_csv,
)
from offeval_ir.conventions import Conventions
from offeval_ir.files import FORMATS, read_qrels, read_run
from offeval_ir.judgements import role_names
from offeval_ir.measures import parse_measures
from offeval_ir.runs import TEST_P, TESTS, RunEvaluation, check_randomization, evaluate_runs

#: Measures computed when none are named (what a trec_eval user looks at first).
DEFAULT_MEASURES = ("nDCG@10", "P@5", "P@10", "R@100", "AP", "RR")
#: File types --out writes, by suffix.
TABLE_SUFFIXES = (".csv", ".md", ".tex")


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-m",
        "--measure",
        action="append",
        metavar="MEASURE",
        help="a measure: nDCG@10, P@5, P(rel=2)@5, AP, RR, R@1000, ndcg_cut_10, map, "
        f"recip_rank, Rprec, bpref, ... (repeatable; default: {', '.join(DEFAULT_MEASURES)})",
    )
    parser.add_argument(
        "--preset", default="trec_eval", help="convention preset (default: trec_eval)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SWITCH=VALUE",
        help="override a convention, e.g. --set no_predictions=zero (trec_eval -c)",
    )
    parser.add_argument("--run-format", choices=FORMATS, help="run file format (default: by name)")
    parser.add_argument(
        "--qrels-format", choices=FORMATS, help="qrels file format (default: by name)"
    )
    parser.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="ROLE=NAME",
        help="column of a role in CSV/Parquet files: user (query), item (doc), rank, score, "
        "relevance",
    )
    parser.add_argument(
        "--sep",
        help="separator of CSV run and qrels files (default: found from the header: "
        "comma, semicolon, tab or |)",
    )
    parser.add_argument("--level", type=float, default=0.95, help="interval level")


def _outputs(args: argparse.Namespace) -> dict[str, OutputFile]:
    """The files ``--out`` (and ``--pairs``) name, checked before any file is read."""
    inputs = [args.qrels, *(args.runs if hasattr(args, "runs") else [args.run])]
    outputs = {}
    for option in ("out", "pairs"):
        path = getattr(args, option, None)
        if path is None:
            continue
        if Path(path).suffix not in TABLE_SUFFIXES:
            raise OffevalError(
                f"--{option} must end in {', '.join(TABLE_SUFFIXES)}, got {Path(path).name}"
            )
        outputs[option] = OutputFile(path, option=f"--{option}", inputs=inputs)
    return outputs


def _setup(args: argparse.Namespace) -> tuple[Conventions, list[str], dict]:
    """Conventions, measure names (checked) and column mapping from the arguments."""
    overrides = parse_pairs(args.set, what="--set")
    conventions = active_registry().create("conventions", args.preset, **overrides)
    measures = [m.name for m in parse_measures(args.measure or DEFAULT_MEASURES)]
    return conventions, measures, parse_pairs(args.column, typed=False, what="--column")


def _stated(conventions: Conventions, args: argparse.Namespace, measures: list[str]) -> str:
    """The line every output starts with: preset, overrides, per-measure switches."""
    sets = ", ".join(args.set) if args.set else "none"
    own = [
        f"{m.name}: {', '.join(f'{k}={v}' for k, v in (*m.overrides, *m.params))}"
        for m in parse_measures(measures)
        if m.overrides or m.params
    ]
    line = f"conventions: preset {args.preset}, overrides {sets}"
    return line + (f"; measure switches {'; '.join(own)}" if own else "")


def _read(args: argparse.Namespace, columns: dict) -> tuple[pd.DataFrame, dict]:
    """The qrels and the runs (by file name) the arguments name."""
    runs = [args.run] if hasattr(args, "run") else args.runs
    missing = [name for name in (*runs, args.qrels) if not Path(name).exists()]
    if missing:
        raise OffevalError(f"{', '.join(missing)}: no such file")
    options = {"columns": columns, "sep": args.sep}
    qrels = _named(read_qrels(args.qrels, args.qrels_format, **options), columns)
    return qrels, {
        Path(r).name: _named(read_run(r, args.run_format, **options), columns) for r in runs
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
) -> tuple[Conventions, list[str], dict[str, OutputFile], RunEvaluation]:
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


class MetricsCommand:
    """IR measures of one run against qrels, with standard errors and intervals."""

    help = "IR measures of a run against qrels (TREC files, CSV, Parquet, JSON), trec_eval's way"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the command's arguments."""
        parser.add_argument(
            "run", help="run: TREC (qid Q0 docid rank score tag), CSV, Parquet, JSON"
        )
        parser.add_argument("qrels", help="qrels: TREC (qid [iter] docid rel), CSV, Parquet, JSON")
        _add_common(parser)
        parser.add_argument("--out", help="write the table here (.csv, .md or .tex)")
        parser.add_argument("--per-user", action="store_true", help="per-user values instead")

    def run(self, args: argparse.Namespace) -> int:
        """Compute and print the measures table (hints in errors name options)."""
        with command_line():
            return self._run(args)

    def _run(self, args: argparse.Namespace) -> int:
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


class CompareCommand:
    """Several runs against one qrels: means with intervals and significance markers."""

    help = (
        "compare runs on the same qrels, paired on the queries every run averages: means, "
        "intervals, paired tests (Markdown/CSV/LaTeX)"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the command's arguments."""
        parser.add_argument("qrels", help="qrels: TREC, CSV, Parquet, JSON")
        parser.add_argument("runs", nargs="+", help="two or more runs (named by file name)")
        _add_common(parser)
        parser.add_argument(
            "--test",
            choices=TESTS,
            default="t",
            help="decides significance: paired t, paired randomisation, or Tukey's HSD (as "
            "ranx; it holds the error over the pairs itself, so --correction does not apply)",
        )
        parser.add_argument(
            "--correction",
            default="holm",
            choices=[*CORRECTIONS, "none"],
            help="multiple-testing correction over the pairs of each measure",
        )
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument(
            "--resamples", type=at_least(1), default=10_000, help="randomisation test"
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--decimals",
            type=at_least(0),
            default=4,
            help="decimals of the means and intervals printed and written (default: 4)",
        )
        parser.add_argument(
            "--label",
            default="tab:compare",
            help="the LaTeX table's \\label (--out .tex; default: tab:compare)",
        )
        parser.add_argument("--pairs", help="also write every pair's test here (.csv, .md or .tex)")
        parser.add_argument(
            "--out",
            help="write the table here: .md or .tex (cells 'mean [low, high] letters'), or .csv "
            "(one row per run and measure, numbers in their own columns)",
        )

    def run(self, args: argparse.Namespace) -> int:
        """Compute, print and write the comparison table (hints in errors name options)."""
        with command_line():
            return self._run(args)

    def _run(self, args: argparse.Namespace) -> int:
        if len(args.runs) < 2:
            raise OffevalError("compare needs at least two runs")
        names = [Path(r).name for r in args.runs]
        if len(set(names)) != len(names):
            raise OffevalError(f"runs need distinct file names, got {names}")
        _check_resamples(args)
        _label(args.label)
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
            latex = latex_table(
                means, pairs, names, caption, label=args.label, decimals=args.decimals
            )
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


#: The users (queries) a comparison's means and tests are over, as its CSV says.
PAIRED_ON = "queries every run averages"


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


def numeric_table(
    evaluation: RunEvaluation, means: pd.DataFrame, pairs: pd.DataFrame, names: list[str]
) -> pd.DataFrame:
    """One row per (run, measure), numbers as numbers: mean, se, interval, queries averaged,
    left out of the comparison, averaged by no run, and excluded by reason, letters of the
    runs it beats, and ``p_vs_<letter>``: the corrected p-value of the test that decides
    significance against each other run."""
    letter, beaten = _letters(names), _beaten(pairs, names)
    table = means.copy()
    table.insert(1, "letter", table["run"].map(letter))
    left_out = table["measure"].map(evaluation.left_out)
    table.insert(table.columns.get_loc("users") + 1, "left_out", left_out)
    not_averaged = {m: sum(n.values()) for m, n in evaluation.not_averaged.items()}
    table.insert(
        table.columns.get_loc("left_out") + 1, "not_averaged", table["measure"].map(not_averaged)
    )
    table.insert(table.columns.get_loc("not_averaged") + 1, "paired_on", PAIRED_ON)
    keys = list(zip(table["run"], table["measure"], strict=True))
    table["beats"] = ["".join(sorted(beaten.get(key, []))) for key in keys]
    chosen = TEST_P[pairs.attrs.get("test", "t")]
    p = {}
    for row in pairs.itertuples(index=False):
        p[(row.a, row.b, row.measure)] = p[(row.b, row.a, row.measure)] = getattr(row, chosen)
    for other in names:
        table[f"p_vs_{letter[other]}"] = [p.get((run, other, m), np.nan) for run, m in keys]
    return table


def _letters(names: list[str]) -> dict[str, str]:
    return {n: chr(ord("a") + i) if i < 26 else f"r{i}" for i, n in enumerate(names)}


def _beaten(pairs: pd.DataFrame, names: list[str]) -> dict[tuple[str, str], list[str]]:
    """Per (run, measure): the letters of the runs it beats significantly."""
    letter = _letters(names)
    beaten: dict[tuple[str, str], list[str]] = {}
    for row in pairs.itertuples(index=False):
        if row.significant:
            winner, loser = (row.a, row.b) if row.difference > 0 else (row.b, row.a)
            beaten.setdefault((winner, row.measure), []).append(letter[loser])
    return beaten


def comparison_table(
    means: pd.DataFrame, pairs: pd.DataFrame, names: list[str], *, decimals: int = 4
) -> tuple[pd.DataFrame, str]:
    """Runs x measures, each cell ``mean [low, high]`` (to ``decimals``) and the letters of
    the runs it beats."""
    letter, beaten = _letters(names), _beaten(pairs, names)
    d = decimals
    rows = []
    for run in names:
        row = {"run": f"({letter[run]}) {run}"}
        for r in means[means["run"] == run].itertuples(index=False):
            marks = "".join(sorted(beaten.get((run, r.measure), [])))
            cell = f"{r.mean:.{d}f} [{r.ci_low:.{d}f}, {r.ci_high:.{d}f}]"
            row[r.measure] = f"{cell} {marks}".rstrip()
        rows.append(row)
    legend = "letters: the runs a run beats significantly"
    return pd.DataFrame(rows), legend


def latex_table(
    means: pd.DataFrame,
    pairs: pd.DataFrame,
    names: list[str],
    caption: str,
    *,
    label: str | None = None,
    decimals: int = 4,
) -> str:
    """A booktabs table: means (to ``decimals``) with superscript letters of the runs each
    beats, best in bold; ``caption`` (escaped; see :func:`latex_caption`) and, given,
    ``\\label{label}`` under it."""
    letter, beaten = _letters(names), _beaten(pairs, names)
    measures = list(dict.fromkeys(means["measure"]))
    best = means.loc[means.groupby("measure")["mean"].idxmax()].set_index("measure")["run"]
    lines = [
        r"\begin{table}",
        r"\centering",
        r"\begin{tabular}{l" + "r" * len(measures) + "}",
        r"\toprule",
        " & ".join(["Run", *(_tex(m) for m in measures)]) + r" \\",
        r"\midrule",
    ]
    for run in names:
        cells = [f"({letter[run]}) {_tex(run)}"]
        for measure in measures:
            value = means[(means["run"] == run) & (means["measure"] == measure)]["mean"].iloc[0]
            text = f"{value:.{decimals}f}" if np.isfinite(value) else "--"
            if best[measure] == run:
                text = rf"\textbf{{{text}}}"
            marks = "".join(sorted(beaten.get((run, measure), [])))
            cells.append(f"{text}$^{{{marks}}}$" if marks else text)
        lines.append(" & ".join(cells) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_tex(caption)}}}",
        *([rf"\label{{{_label(label)}}}"] if label else []),
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _label(label: str) -> str:
    """A LaTeX label as given; one LaTeX cannot read back is an error naming it."""
    if not label or any(char in label for char in "\\{}%#$&^~ \n"):
        raise OffevalError(
            f"{hint('label', '--label')} {label!r}: a LaTeX label is text without spaces or any "
            "of \\ { } % # $ "
            "& ^ ~ (as in tab:compare)"
        )
    return label


#: The heading of the win/tie/loss table.
WIN_TIE_LOSS = "win/tie/loss: queries where the first run's value is above, equal to, below"

#: The tests as a caption names them.
_TEST_NAMES = {
    "t": "a two-sided paired t-test",
    "randomization": "a two-sided paired randomisation test",
    "tukey": "Tukey's HSD test",
}


def test_phrase(test: str, correction: str | None, alpha: float, resamples: int) -> str:
    """The test, its correction and alpha, as one phrase (``paired t test, holm correction
    over the pairs of each measure, alpha 0.05``)."""
    name = _TEST_NAMES[test]
    if test == "randomization":
        name += f" with {resamples} resamples"
    if test == "tukey":
        how = "over the pairs of each measure, which needs no further correction"
    elif correction:
        how = f"{correction} correction over the pairs of each measure"
    else:
        how = "no correction for multiple pairs"
    return f"{name} {how}, alpha {alpha}" if test == "tukey" else f"{name}, {how}, alpha {alpha}"


def latex_caption(
    evaluation: RunEvaluation,
    test: str,
    correction: str | None,
    alpha: float,
    resamples: int,
    conventions: str = "",
    details: Sequence[str] = (),
) -> str:
    """The caption of a comparison table, in sentences: what the numbers are, over how many
    queries, what a superscript and bold mean, the test with its correction and alpha,
    then ``conventions`` and each of ``details`` (the queries left out, say) as a sentence."""
    users = {
        m: next(iter(evaluation.evaluation.estimate(r, m) for r in evaluation.values)).n_units
        for m in evaluation.measures
    }
    counts = set(users.values())
    if len(counts) == 1:
        over = f"over the {counts.pop()} queries every run averages"
    else:
        each = ", ".join(f"{n} for {m}" for m, n in users.items())
        over = f"over the queries every run averages ({each})"
    runs = len(evaluation.values)
    sentences = [
        f"Means of {runs} runs on each measure, {over}.",
        "A superscript letter marks a run whose mean is significantly higher than the mean "
        f"of the run with that letter ({test_phrase(test, correction, alpha, resamples)}).",
        "The highest mean of each measure is in bold.",
    ]
    if conventions:
        sentences.append(f"{conventions[0].upper()}{conventions[1:]}.")
    sentences += [line if line.endswith(".") else f"{line}." for line in details if line]
    return " ".join(sentences)


def win_tie_loss_table(pairs: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Pairs x measures, each cell ``wins/ties/losses`` of the first run of the pair."""
    letter = _letters(names)
    rows: dict[str, dict[str, str]] = {}
    for row in pairs.itertuples(index=False):
        key = f"({letter[row.a]}) {row.a} vs ({letter[row.b]}) {row.b}"
        rows.setdefault(key, {"pair": key})[row.measure] = f"{row.wins}/{row.ties}/{row.losses}"
    return pd.DataFrame(list(rows.values()))


#: LaTeX's special characters and how to write them.
_TEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "-": "-{}",  # -- would be set as a dash: options keep their two hyphens
    "\n": ". ",  # the heading's lines, as sentences
}


def frame_latex(table: pd.DataFrame, caption: str) -> str:
    """Any table as a booktabs LaTeX table (cells as :func:`_tex_cell` writes them),
    without pandas' ``to_latex`` (which needs jinja2)."""
    lines = [
        r"\begin{table}",
        r"\centering",
        r"\begin{tabular}{" + "".join(_align(table[c]) for c in table) + "}",
        r"\toprule",
        " & ".join(_tex(c) for c in table.columns) + r" \\",
        r"\midrule",
        *(" & ".join(_tex_cell(v) for v in row) + r" \\" for row in table.itertuples(False)),
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_tex(caption)}}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _align(column: pd.Series) -> str:
    """Numbers right-aligned, anything else left."""
    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    return "r" if numeric else "l"


def _tex_cell(value: object) -> str:
    """One cell: floats to 4 decimals (below 1e-4 in scientific notation, NaN as --),
    anything else as text, escaped."""
    if isinstance(value, float | np.floating):
        if not np.isfinite(value):
            return "--"
        return f"{value:.4f}" if value == 0 or abs(value) >= 1e-4 else f"{value:.2e}"
    return _tex(value)


def _tex(text: str) -> str:
    """Text with LaTeX's special characters escaped."""
    return "".join(_TEX.get(char, char) for char in str(text))
