"""``offeval metrics``: IR metrics from prediction and label files."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from offeval import OffevalError, active_registry, read_table
from offeval.registry import parse_pairs
from offeval.tables import markdown_table
from offeval_ir.blocks import compute_frames
from offeval_ir.metrics import METRICS


class MetricsCommand:
    """Top-n metrics of a ranked prediction file against a label file."""

    help = "top-n IR metrics (P, R, F1, hit rate, MAP, MRR, nDCG) with a convention preset"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the command's arguments."""
        parser.add_argument("predictions", help="Parquet/CSV: user, item, rank (or score)")
        parser.add_argument("labels", help="Parquet/CSV: user, item, relevance")
        parser.add_argument("--preset", default="blog", help="convention preset (see plugins)")
        parser.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="SWITCH=VALUE",
            help="override one convention, e.g. --set ap_denominator=labels",
        )
        parser.add_argument("--k", type=int, action="append", help="cut-off (repeatable)")
        parser.add_argument("--metric", action="append", choices=METRICS, help="(repeatable)")
        parser.add_argument(
            "--column",
            action="append",
            default=[],
            metavar="ROLE=NAME",
            help="column of a role: user, item, rank, score, relevance",
        )
        parser.add_argument("--out", help="write the table here (.csv or .md)")
        parser.add_argument("--per-user", action="store_true", help="write per-user values")

    def run(self, args: argparse.Namespace) -> int:
        """Compute and print the metrics table."""
        if args.out and Path(args.out).suffix not in (".csv", ".md"):
            raise OffevalError(f"--out must end in .csv or .md, got {Path(args.out).name}")
        overrides = parse_pairs(args.set, what="--set")
        conventions = active_registry().create("conventions", args.preset, **overrides)
        columns = parse_pairs(args.column, typed=False, what="--column")
        result = compute_frames(
            read_table(args.predictions),
            read_table(args.labels),
            args.metric or METRICS,
            args.k or [1, 3, 5, 10],
            conventions,
            columns=columns,
        )
        table = result.per_user.reset_index() if args.per_user else result.summary()
        print(f"conventions: {conventions}")
        with pd.option_context("display.width", 160, "display.max_rows", 200):
            print(table.round(6).to_string())
        if args.out:
            out = Path(args.out)
            if out.suffix == ".md":
                out.write_text(markdown_table(table.reset_index(), digits=6) + "\n")
            else:
                table.to_csv(out)
        return 0
