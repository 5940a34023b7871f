"""``offeval decide``: rank probabilities, components and a selection from saved summaries."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from offeval import OffevalError, read_table
from offeval.summary import load_summaries
from offeval_decision.choices import METHODS, component_probabilities, select
from offeval_decision.ranks import rank_distribution


class DecideCommand:
    """Which policies deserve an online test, from the summaries that evaluate --out saved."""

    help = "rank probabilities and an A/B selection from saved summaries (no log needed)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the command's arguments."""
        parser.add_argument("summaries", help="summaries.json, or the folder evaluate --out wrote")
        parser.add_argument("--estimator", action="append", help="estimator label (repeatable)")
        parser.add_argument("--select", type=int, default=3, help="how many policies to test")
        parser.add_argument("--method", default="top", choices=METHODS)
        parser.add_argument("--draws", type=int, default=100_000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--attributes", help="CSV: policy, then one column per attribute")
        parser.add_argument("--out", help="folder for the tables (CSV)")

    def run(self, args: argparse.Namespace) -> int:
        """Print, per estimator, the rank probabilities, the selection and the components."""
        summaries = load_summaries(args.summaries)
        labels = args.estimator or list(summaries)
        unknown = [label for label in labels if label not in summaries]
        if unknown:
            raise OffevalError(f"no summary for estimators {unknown}; saved: {list(summaries)}")
        attributes = None
        if args.attributes:
            attributes = read_table(args.attributes)
            if "policy" not in attributes:
                raise OffevalError(f"{args.attributes}: needs a 'policy' column")
            attributes = attributes.set_index("policy")
        out = Path(args.out) if args.out else None
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        for label in labels:
            summary = summaries[label]
            depth = min(max(args.select, 3), len(summary.policies))
            dist = rank_distribution(summary, draws=args.draws, seed=args.seed, depth=depth)
            table = dist.to_frame()
            chosen = select(dist, args.select, method=args.method, seed=args.seed)
            with pd.option_context("display.width", 160, "display.max_columns", 20):
                print(f"{label}: {args.draws:,} draws")
                print(table.round(4).to_string())
                print(f"selection ({args.method}, {args.select}): {', '.join(chosen)}")
                if attributes is not None:
                    print(component_probabilities(dist, attributes).round(4).to_string())
            if out is not None:
                safe = "".join(c if c.isalnum() else "_" for c in label)
                table.to_csv(out / f"ranks_{safe}.csv")
        return 0
