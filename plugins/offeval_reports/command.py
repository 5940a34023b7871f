"""``offeval demo``: a simulated A/B test predicted from one log, with its report.

The arguments are declared without importing anything numerical (a mistake in them is
answered at once); ``run`` imports the simulation and the report writer.
"""

from __future__ import annotations

import argparse
import sys
import time

from offeval.plugin import OutputFolder, at_least, force_option, progress_of


class DemoCommand:
    """Simulated A/B test of a dozen policies predicted from one log; writes a report."""

    help = "simulated A/B test predicted from logs; writes a report"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the demo's options."""
        parser.add_argument("--out", default="offeval-report", help="report folder")
        force_option(parser)
        parser.add_argument(
            "--seed",
            type=at_least(0),
            default=0,
            help="seed of the simulated world, its log and its A/B test (default: 0)",
        )
        parser.add_argument(
            "--trajectories", type=at_least(1_000), default=100_000, help="logged trajectories"
        )
        parser.add_argument("--policies", type=at_least(2), default=12, help="candidate policies")
        parser.add_argument(
            "--per-cell", type=at_least(2), default=100_000, help="trajectories per A/B cell"
        )
        parser.add_argument(
            "--estimator",
            action="append",
            default=[],
            metavar="SPEC",
            help="also run this estimator, e.g. my_estimator:cap=10 (repeatable; by default "
            "the demo runs offeval's built-in estimators only)",
        )
        parser.add_argument(
            "--all-estimators",
            action="store_true",
            help="also run the estimators of every installed plugin, as each plugin "
            "configures them for the demo",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bars")
        parser.add_argument(
            "--workers",
            type=at_least(1),
            help="processes sharing the evaluation (default: the cores, at most 4)",
        )

    def run(self, args: argparse.Namespace) -> int:
        """Check the report folder, run the demo and write its report."""
        start = time.perf_counter()
        folder = OutputFolder(args.out, option="--out", force=args.force)
        import pandas as pd  # noqa: PLC0415 (the folder is checked without numpy)

        from offeval_reports.demo import run_demo  # noqa: PLC0415
        from offeval_reports.demo_report import left_out_note, write_demo_report  # noqa: PLC0415

        result = run_demo(
            seed=args.seed,
            n_trajectories=args.trajectories,
            n_policies=args.policies,
            n_per_cell=args.per_cell,
            progress=progress_of(args),
            workers=args.workers,
            estimators=args.estimator,
            all_estimators=args.all_estimators,
        )
        with folder as tmp:
            path = folder.path / write_demo_report(result, tmp, getattr(args, "argv", None)).name
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            print(result.summary.round(4).to_string(index=False))
        print(
            f"\ntrue best policy: {result.settings['true_best']}; report: {path} "
            f"({time.perf_counter() - start:.1f} s)"
        )
        if result.left_out:
            print(f"note: {left_out_note(result.left_out)}", file=sys.stderr)
        return 0
