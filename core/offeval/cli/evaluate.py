"""``offeval evaluate``: estimate target policies on a user's log file.

For example::

    offeval evaluate log.csv --candidates cands.csv --policy new=pi_new \
        --estimator dr --estimator sndr

This module declares the command and its arguments and imports nothing numerical, so that
a mistake in them is answered at once; the arguments become one checked request
(:class:`offeval.cli.evaluate_request.EvaluateRequest`), which
:mod:`offeval.cli.evaluate_run` carries out.
"""

from __future__ import annotations

import argparse

from offeval.cli.options import at_least, force_option
from offeval.data.choices import DECIMALS
from offeval.stats.corrections import CORRECTIONS


class EvaluateCommand:
    """Estimate target policies (probability or score columns) on a user's log file."""

    help = "estimate target policies on your own log file"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare evaluate's arguments."""
        parser.add_argument("log", help="Parquet, CSV or TSV file")
        parser.add_argument(
            "--sep",
            help="separator of the text files (log and candidates), e.g. ';' or '\\t' (default: "
            "sniffed from each file's first lines)",
        )
        parser.add_argument(
            "--decimal",
            choices=DECIMALS,
            metavar="MARK",
            help="decimal mark of a text file's numbers (default: '.', or ',' for a ';'-separated "
            "file whose numbers all read with commas)",
        )
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="ROLE=COLUMN",
            help="column of a role (trajectory, context, item, position, reward, propensity, "
            "exposure, logging_score, day, shuffled) when the file names it otherwise; a "
            "trajectory of several columns as trajectory=A,B",
        )
        parser.add_argument(
            "--candidates",
            metavar="FILE",
            help="candidate table (Parquet, CSV or TSV): every item the logger could have "
            "shown at each slot, with its propensity and each policy's column (what DM, DR "
            "and the other estimators that sum over candidates need)",
        )
        parser.add_argument(
            "--candidates-map",
            action="append",
            default=[],
            metavar="ROLE=COLUMN",
            help="column of a role in the candidate file (trajectory, position, item, "
            "propensity); a role that --map maps is taken from it when the candidate file "
            "has that column; a trajectory of several columns as trajectory=A,B (as for --map)",
        )
        parser.add_argument(
            "--reward-model",
            metavar="COLUMN",
            help="column of the log and of the candidate file holding a reward model's "
            "predictions, for every estimator that reads one (default: reward_model; the "
            "fitted model's column with --fit-reward-model)",
        )
        parser.add_argument(
            "--fit-reward-model",
            metavar="SPEC",
            help="fit a reward model on the log, cross-fitted by trajectory, e.g. "
            "logistic:features=[age],categorical=[item],folds=5 (offeval plugins lists "
            "the fitters; needs offeval[sklearn] and the log read whole)",
        )
        for flag, policy in (
            ("--policy", "target policy given by its probability column"),
            ("--rerank", "ranking policy re-ranking each trajectory's items by a score column"),
        ):
            parser.add_argument(
                flag, action="append", default=[], metavar="NAME=COLUMN", help=policy
            )
        parser.add_argument(
            "--estimator",
            action="append",
            metavar="SPEC",
            help="e.g. name:cap=100 (repeatable; default: every registered estimator that runs)",
        )
        parser.add_argument("--baseline", help="report values relative to this policy")
        parser.add_argument(
            "--correction",
            default="holm",
            help="multiple-comparison correction of the pairwise tests: one of "
            f"{', '.join(CORRECTIONS)}, or none (default: holm)",
        )
        parser.add_argument(
            "--level", type=float, default=0.95, help="confidence level (default: 0.95)"
        )
        parser.add_argument(
            "--interval",
            action="append",
            default=[],
            metavar="METHOD",
            help="a registered interval method for every estimator that offers it, or "
            "LABEL=METHOD (repeatable); default: each estimator's own",
        )
        parser.add_argument(
            "--reward-range",
            metavar="LOW,HIGH",
            help="the lowest and highest reward possible, known before the data (e.g. 0,1 for "
            "clicks), for an interval method that needs them; a reward outside is an error",
        )
        parser.add_argument(
            "--chunk-rows",
            type=at_least(1),
            default=250_000,
            metavar="N",
            help="log rows evaluated at a time (and a --stream batch's rows): fewer hold less "
            "in memory, the estimates are the same (default: 250,000)",
        )
        parser.add_argument(
            "--stream",
            action="store_true",
            help="stream a Parquet file in batches (and its --candidates Parquet file in step: "
            "both sorted by trajectory in the same order)",
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
        from offeval.cli import evaluate_run  # noqa: PLC0415 (pandas, the engine)

        return evaluate_run.run_evaluate(evaluate_run.EvaluateRequest.from_args(args))
