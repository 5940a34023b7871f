"""The ``offeval`` command line: demo, evaluate, plugins."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from offeval.errors import OffevalError
from offeval.registry import get_registry, parse_pairs


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the demo and write its report."""
    from offeval.demo import run_demo
    from offeval.report import write_demo_report

    start = time.perf_counter()
    result = run_demo(
        seed=args.seed,
        n_trajectories=args.trajectories,
        n_policies=args.policies,
        n_per_cell=args.per_cell,
        progress=not args.quiet,
    )
    path = write_demo_report(result, args.out)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(result.summary.round(4).to_string(index=False))
    print(
        f"\ntrue best policy: {result.settings['true_best']}; report: {path} "
        f"({time.perf_counter() - start:.1f} s)"
    )
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Evaluate target policies (probability columns) on a user's log file."""
    from offeval.evaluation import evaluate
    from offeval.log import InteractionLog, stream_parquet
    from offeval.policy import ColumnPolicy, RerankPolicy

    registry = get_registry()
    mapping = parse_pairs(args.map, typed=False, what="--map")
    policies = [
        ColumnPolicy(col, name)
        for name, col in parse_pairs(args.policy, typed=False, what="--policy").items()
    ] + [
        RerankPolicy(col, name=name)
        for name, col in parse_pairs(args.rerank, typed=False, what="--rerank").items()
    ]
    if not policies:
        raise OffevalError(
            "give at least one target policy: --policy NAME=COLUMN or --rerank NAME=SCORE_COLUMN"
        )
    specs = args.estimator or ["is", "cis", "ncis", "beta_ips"]
    estimators = [registry.create_from_spec("estimator", spec) for spec in specs]
    path = Path(args.log)
    if args.stream and path.suffix in {".parquet", ".pq"}:
        log = stream_parquet(path, mapping, batch_rows=args.chunk_rows)
    else:
        log = InteractionLog.from_file(path, mapping)
    evaluation = evaluate(
        log,
        policies,
        estimators,
        level=args.level,
        chunk_rows=args.chunk_rows,
        progress=not args.quiet,
    )
    table = evaluation.to_frame()
    if args.baseline:
        rel = pd.DataFrame(
            [
                e.to_dict()
                for label in evaluation.estimators
                for e in evaluation.relative(args.baseline, label)
            ]
        )
        table = table.merge(
            rel[["policy", "estimator", "value", "ci_low", "ci_high"]].rename(
                columns=lambda c: c if c in {"policy", "estimator"} else f"relative_{c}"
            ),
            on=["policy", "estimator"],
        )
    with pd.option_context("display.width", 160, "display.max_columns", 30):
        print(table.round(6).to_string(index=False))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "estimates.csv", index=False)
        for label in evaluation.estimators:
            grid = evaluation.grid(label, correction=args.correction, baseline=args.baseline)
            safe = "".join(c if c.isalnum() else "_" for c in label)
            grid.table.to_csv(out / f"pairs_{safe}.csv", index=False)
        print(f"written: {out}/estimates.csv and one pairs_*.csv per estimator")
    return 0


def cmd_plugins(args: argparse.Namespace) -> int:
    """List plugins, their components, and any plugin that failed."""
    registry = get_registry()
    print("plugins:", ", ".join(registry.plugins) or "none")
    for comp in registry.components():
        print(f"  {comp.kind:<12} {comp.name:<18} from {comp.plugin:<12} {comp.summary}")
    if registry.failures:
        print("failed:")
        for failure in registry.failures:
            print(f"  {failure.plugin} ({failure.stage}): {failure.reason}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    parser = argparse.ArgumentParser(prog="offeval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="simulated A/B test predicted from logs; writes a report")
    demo.add_argument("--out", default="offeval-report", help="report folder")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--trajectories", type=int, default=100_000, help="logged trajectories")
    demo.add_argument("--policies", type=int, default=12, help="candidate policies")
    demo.add_argument("--per-cell", type=int, default=100_000, help="trajectories per A/B cell")
    demo.add_argument("--quiet", action="store_true", help="no progress bars")
    demo.set_defaults(func=cmd_demo)

    ev = sub.add_parser("evaluate", help="estimate target policies on your own log file")
    ev.add_argument("log", help="Parquet or CSV file")
    ev.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="ROLE=COLUMN",
        help="column of a role (trajectory, item, reward, propensity, ...)",
    )
    ev.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME=COLUMN",
        help="target policy given by its probability column",
    )
    ev.add_argument(
        "--rerank",
        action="append",
        default=[],
        metavar="NAME=COLUMN",
        help="ranking policy re-ranking each trajectory's items by a score column (for dcg)",
    )
    ev.add_argument(
        "--estimator",
        action="append",
        metavar="SPEC",
        help="e.g. ncis:cap=100 (repeatable; default is, cis, ncis, beta_ips)",
    )
    ev.add_argument("--baseline", help="report values relative to this policy")
    ev.add_argument("--correction", default="holm", help="multiple-comparison correction")
    ev.add_argument("--level", type=float, default=0.95, help="confidence level")
    ev.add_argument("--chunk-rows", type=int, default=250_000)
    ev.add_argument("--stream", action="store_true", help="stream a Parquet file in batches")
    ev.add_argument("--out", help="folder for estimates.csv and pairwise tests")
    ev.add_argument("--quiet", action="store_true", help="no progress bars")
    ev.set_defaults(func=cmd_evaluate)

    plugins = sub.add_parser("plugins", help="what is registered, by which plugin, what failed")
    plugins.set_defaults(func=cmd_plugins)

    for component in get_registry().components("command"):
        command = component.factory()
        sub_parser = sub.add_parser(component.name, help=command.help)
        command.add_arguments(sub_parser)
        sub_parser.set_defaults(func=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``offeval`` command."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except OffevalError as exc:
        print(f"offeval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
