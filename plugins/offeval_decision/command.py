"""``offeval decide``: rank probabilities, components and a selection from saved summaries.

This module declares the command and its arguments and imports nothing numerical, so that
a mistake in the arguments is answered at once; what the command does once they parse is
:mod:`offeval_decision.command_run` (imported by ``run``).
"""

from __future__ import annotations

import argparse

from offeval.plugin import at_least, force_option
from offeval_decision.methods import METHODS


class DecideCommand:
    """Which policies deserve an online test, from the summaries that evaluate --out saved."""

    help = "rank probabilities and an A/B selection from saved summaries (no log needed)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the command's arguments."""
        parser.add_argument("summaries", help="summaries.json, or the folder evaluate --out wrote")
        parser.add_argument("--estimator", action="append", help="estimator label (repeatable)")
        parser.add_argument(
            "--select",
            type=at_least(1),
            help="how many policies to test (default 3, or every policy when there are fewer)",
        )
        parser.add_argument(
            "--method",
            default="top",
            choices=METHODS,
            help="top: the policies most likely to be among the top --select; sample: drawn "
            "at random, each by its probability of being best (default: top)",
        )
        parser.add_argument(
            "--depth",
            type=at_least(1),
            help="ranks in the probability table: 1 for first only, 2 for first and second, ... "
            "(default the larger of 3 and --select, at most the number of policies)",
        )
        parser.add_argument(
            "--draws",
            type=at_least(1),
            default=100_000,
            metavar="N",
            help="draws of the estimates from their normal distribution, from which the "
            "probabilities are counted: more draws, less Monte Carlo error (default: 100,000)",
        )
        parser.add_argument(
            "--seed",
            type=at_least(0),
            default=0,
            help="seed of the draws and of --method sample: the same seed gives the same "
            "numbers (default: 0)",
        )
        parser.add_argument("--attributes", help="CSV: policy, then one column per attribute")
        parser.add_argument(
            "--out",
            help="folder for the tables printed (CSV: ranks, selection, components), "
            "written whole: an earlier run's files are replaced",
        )
        force_option(parser)

    def run(self, args: argparse.Namespace) -> int:
        """Print, per estimator, the rank probabilities, the selection and the components
        (see :func:`offeval_decision.command_run.run_decide`)."""
        from offeval_decision.command_run import run_decide  # noqa: PLC0415 (pandas, scipy)

        return run_decide(args)
