"""``offeval metrics`` and ``offeval compare``: IR measures of TREC runs and qrels.

This module declares the commands and their arguments and imports nothing numerical, so
that a mistake in the arguments is answered at once; what the commands do once their
arguments parse is :mod:`offeval_ir.command_run` (imported by ``run``).
"""

from __future__ import annotations

import argparse

from offeval import OffevalError
from offeval.plugin import at_least, command_line
from offeval.stats import CORRECTIONS
from offeval_ir.choices import DEFAULT_MEASURES, FORMATS, MAX_DECIMALS, TESTS, named_runs


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
    parser.add_argument(
        "--level",
        type=float,
        default=0.95,
        help="level of the confidence intervals, in (0, 1) (default: 0.95)",
    )


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
        parser.add_argument(
            "--out",
            help="write the table here (.csv, .md or .tex; LaTeX needs \\usepackage{booktabs})",
        )
        parser.add_argument("--per-user", action="store_true", help="per-user values instead")

    def run(self, args: argparse.Namespace) -> int:
        """Compute and print the measures table (hints in errors name options)."""
        from offeval_ir.command_run import run_metrics  # noqa: PLC0415 (pandas, the files)

        with command_line():
            return run_metrics(args)


class CompareCommand:
    """Several runs against one qrels: means with intervals and significance markers."""

    help = (
        "compare runs on the same qrels, paired on the queries every run averages: means, "
        "intervals, paired tests (Markdown/CSV/LaTeX)"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the command's arguments."""
        parser.add_argument("qrels", help="qrels: TREC, CSV, Parquet, JSON")
        parser.add_argument(
            "runs",
            nargs="+",
            metavar="[NAME=]RUN",
            help="two or more runs, each FILE (named by its file name) or NAME=FILE (named "
            "NAME in the tables; a FILE whose name holds '=' is taken whole when it exists)",
        )
        _add_common(parser)
        parser.add_argument(
            "--test",
            choices=TESTS,
            default="t",
            help="decides significance: paired t, paired randomisation, or Tukey's HSD (as "
            "ranx; it holds the error over the pairs itself, so --correction does not apply; "
            "default: t)",
        )
        parser.add_argument(
            "--correction",
            default="holm",
            choices=[*CORRECTIONS, "none"],
            help="multiple-testing correction over the pairs of each measure (default: holm)",
        )
        parser.add_argument(
            "--alpha",
            type=_alpha,
            default=0.05,
            help="significance level, in (0, 1): p < alpha is significant (default: 0.05)",
        )
        parser.add_argument(
            "--resamples",
            type=at_least(1),
            default=10_000,
            help="random sign flips of the randomisation test (--test randomization; "
            "default: 10000)",
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=0,
            help="seed of the randomisation test's sign flips: the same seed, the same "
            "p-values (default: 0)",
        )
        parser.add_argument(
            "--decimals",
            type=_decimals,
            default=4,
            help="decimals of the means and intervals printed and written (default: 4)",
        )
        parser.add_argument(
            "--label",
            default="tab:compare",
            help="the LaTeX table's \\label (--out .tex; default: tab:compare)",
        )
        parser.add_argument(
            "--pairs",
            help="also write every pair's test here (.csv, .md or .tex, as --out; a file "
            "other than --out's)",
        )
        parser.add_argument(
            "--out",
            help="write the table here: .md or .tex (cells 'mean [low, high] letters'; LaTeX "
            "needs \\usepackage{booktabs}), or .csv (one row per run and measure, numbers in "
            "their own columns)",
        )

    def run(self, args: argparse.Namespace) -> int:
        """Compute, print and write the comparison table (hints in errors name options)."""
        if len(args.runs) < 2:
            raise OffevalError("compare needs at least two runs")
        args.named_runs = named_runs(args.runs)
        from offeval_ir.command_run import run_compare  # noqa: PLC0415 (pandas, the files)

        with command_line():
            return run_compare(args)


def _alpha(text: str) -> float:
    """argparse type of ``--alpha``: a number in (0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not in (0, 1), e.g. 0.05")
    return value


def _decimals(text: str) -> int:
    """argparse type of ``--decimals``: a whole number in 0..15 (a float's digits)."""
    value = at_least(0)(text)
    if value > MAX_DECIMALS:
        raise argparse.ArgumentTypeError(f"{value} is not <= {MAX_DECIMALS}")
    return value
