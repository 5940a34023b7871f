"""``offeval evaluate``: estimate target policies on a user's log file.

A user mistake gets one line, in the command line's words: options, the
user's column names, a CSV file's line numbers. ``evaluate`` checks
everything it can (options, estimator names, output folders, the file's
header, columns, baseline) before the long computation. Output folders are
written whole or not at all (:mod:`offeval.data.output`): each run replaces
the folder of the run before, and says so. ``--report`` is written by the
first installed report writer (hook ``register_reports``).

This module declares the command and its arguments and imports nothing numerical, so that
a mistake in the arguments is answered at once; what the command does once they parse is
:mod:`offeval.cli.evaluate_run` (imported by ``run``).
"""

from __future__ import annotations

import argparse

from offeval.cli.options import at_least, force_option
from offeval.data.choices import DECIMALS


class EvaluateCommand:
    """Estimate target policies (probability or score columns) on a user's log file."""

    help = "estimate target policies on your own log file"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare evaluate's arguments."""
        parser.add_argument("log", help="Parquet, CSV or TSV file")
        parser.add_argument(
            "--sep",
            help="separator of a text file, e.g. ';' or '\\t' (default: sniffed from its first "
            "lines)",
        )
        parser.add_argument(
            "--decimal",
            choices=DECIMALS,
            help="decimal mark of a text file's numbers (default: '.', or ',' for a ';'-separated "
            "file whose numbers all read with commas)",
        )
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="ROLE=COLUMN",
            help="column of a role (trajectory, item, reward, propensity, ...)",
        )
        parser.add_argument(
            "--policy",
            action="append",
            default=[],
            metavar="NAME=COLUMN",
            help="target policy given by its probability column",
        )
        parser.add_argument(
            "--rerank",
            action="append",
            default=[],
            metavar="NAME=COLUMN",
            help="ranking policy re-ranking each trajectory's items by a score column",
        )
        parser.add_argument(
            "--estimator",
            action="append",
            metavar="SPEC",
            help="e.g. name:cap=100 (repeatable; default: every registered estimator that runs)",
        )
        parser.add_argument("--baseline", help="report values relative to this policy")
        parser.add_argument(
            "--correction", default="holm", help="multiple-comparison correction, or none"
        )
        parser.add_argument("--level", type=float, default=0.95, help="confidence level, e.g. 0.95")
        parser.add_argument("--chunk-rows", type=at_least(1), default=250_000)
        parser.add_argument(
            "--stream", action="store_true", help="stream a Parquet file in batches"
        )
        parser.add_argument(
            "--out", help="folder for estimates.csv and pairwise tests (replaced on each run)"
        )
        parser.add_argument(
            "--report",
            metavar="DIR",
            help="write report.html and report.md (forest plot, significance grids, weights, "
            "probability of being best, the command and versions) into this folder",
        )
        force_option(parser)
        parser.add_argument("--quiet", action="store_true", help="no progress bars")
        parser.add_argument(
            "--workers",
            type=at_least(1),
            default=1,
            help="processes sharing the evaluation of a log read whole (not --stream)",
        )

    def run(self, args: argparse.Namespace) -> int:
        """Check everything, evaluate, print the table, write the files."""
        from offeval.cli.evaluate_run import run_evaluate  # noqa: PLC0415 (pandas, the engine)

        return run_evaluate(args)
