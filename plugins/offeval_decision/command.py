"""``offeval decide``: rank probabilities, components and a selection from saved summaries."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from offeval import OffevalError, read_table
from offeval.cli import at_least
from offeval.log import TEXT_SUFFIXES
from offeval.registry import find_label
from offeval.summary import load_summaries
from offeval_decision.choices import METHODS, check_attributes, component_probabilities, select
from offeval_decision.ranks import not_finite, rank_distribution


def read_attributes(path: str) -> pd.DataFrame:
    """Attributes indexed by policy name, the names read as text (``007`` stays ``007``)."""
    frame = read_table(path)
    if "policy" not in frame:
        raise OffevalError(f"{path}: needs a 'policy' column")
    suffix = Path(path).suffix.lower()
    if suffix in TEXT_SUFFIXES:  # read again, the names only, as typed
        names = pd.read_csv(
            path, sep=TEXT_SUFFIXES[suffix], usecols=["policy"], dtype=str, keep_default_na=False
        )["policy"]
    else:
        names = frame["policy"].astype(str)
    return frame.assign(policy=names.to_numpy()).set_index("policy")


class DecideCommand:
    """Which policies deserve an online test, from the summaries that evaluate --out saved."""

    help = "rank probabilities and an A/B selection from saved summaries (no log needed)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the command's arguments."""
        parser.add_argument("summaries", help="summaries.json, or the folder evaluate --out wrote")
        parser.add_argument("--estimator", action="append", help="estimator label (repeatable)")
        parser.add_argument(
            "--select", type=at_least(1), default=3, help="how many policies to test"
        )
        parser.add_argument("--method", default="top", choices=METHODS)
        parser.add_argument("--draws", type=at_least(1), default=100_000)
        parser.add_argument("--seed", type=at_least(0), default=0)
        parser.add_argument("--attributes", help="CSV: policy, then one column per attribute")
        parser.add_argument("--out", help="folder for the tables (CSV)")

    def run(self, args: argparse.Namespace) -> int:
        """Print, per estimator, the rank probabilities, the selection and the components.

        A summary with values or covariances that are not finite is skipped,
        in one line, as in the report's section.
        """
        summaries = load_summaries(args.summaries)
        known = {label: (s.name, s.params) for label, s in summaries.items()}
        try:  # a label, or a name or spec naming one (ncis, ncis:cap=100, ncis(cap=100))
            labels = [find_label(label, known) for label in args.estimator or summaries]
        except OffevalError as exc:
            raise OffevalError(f"--estimator: {exc} (saved summaries)") from None
        few = min(len(summaries[label].policies) for label in labels)
        if args.select > few:
            raise OffevalError(f"--select {args.select}: the summaries have {few} policies")
        attributes = None
        if args.attributes:
            attributes = read_attributes(args.attributes)
            for label in labels:
                check_attributes(summaries[label].policies, attributes)
        out = Path(args.out) if args.out else None
        if out is not None:
            try:
                out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise OffevalError(f"--out {out}: cannot create the folder ({exc})") from None
        decided = 0
        for label in labels:
            summary = summaries[label]
            bad = not_finite(summary)
            if bad:
                print(f"{label}: skipped, values or covariances not finite for policies {bad}")
                continue
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
            decided += 1
        if not decided:
            raise OffevalError("no summary with finite values and covariances to decide from")
        return 0
