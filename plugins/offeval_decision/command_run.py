"""What ``offeval decide`` does once its arguments parse (declared in
:mod:`offeval_decision.command`): the summaries read, per estimator the rank
probabilities, the selection and the components printed, and ``--out`` written."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from offeval import OffevalError, load_summaries, read_table
from offeval.plugin import OutputFolder, find_label, write_csv
from offeval_decision.choices import check_attributes, component_probabilities, select
from offeval_decision.ranks import not_finite, rank_distribution


def read_attributes(path: str) -> pd.DataFrame:
    """Attributes indexed by policy name, the names read as text (``007`` stays ``007``)."""
    frame = read_table(path, text=("policy",))
    if "policy" not in frame:
        raise OffevalError(f"{path}: needs a 'policy' column")
    return frame.assign(policy=frame["policy"].astype(str).to_numpy()).set_index("policy")


def run_decide(args: argparse.Namespace) -> int:
    """Print, per estimator, the rank probabilities, the selection and the components.

    A summary with values or covariances that are not finite, or with one
    policy only (nothing to decide), is skipped in one line, as in the
    report's section. ``--out`` writes every table printed, and says so:
    into a temporary folder that replaces the destination when every file
    is written (:class:`offeval.data.output.OutputFolder`, checked before any work).
    """
    folder = _folder(args)
    summaries = load_summaries(args.summaries)
    if not summaries:
        raise OffevalError(f"{args.summaries}: the file holds no summaries")
    labels = _labels(args.estimator, summaries)
    sizes = [len(summaries[label].policies) for label in labels]
    few = min([k for k in sizes if k > 1], default=max(sizes))
    for option, value in (("--select", args.select), ("--depth", args.depth)):
        if value is not None and value > few:
            raise OffevalError(f"{option} {value}: the summaries have {few} policies")
    attributes = None
    if args.attributes:
        attributes = read_attributes(args.attributes)
        for label in labels:
            check_attributes(summaries[label].policies, attributes, args.attributes)
    decided = {label: _decide(label, summaries[label], args, attributes) for label in labels}
    decided = {label: tables for label, tables in decided.items() if tables is not None}
    if not decided:
        raise OffevalError(
            "no summary with finite values and covariances and two or more policies to decide from"
        )
    if folder is not None:
        with folder as tmp:
            written = _write(folder, tmp, decided)
        print(f"wrote {', '.join(written)} to {folder.path}")
    return 0


def _labels(requested: list[str] | None, summaries: dict) -> list[str]:
    """The labels ``--estimator`` names (every summary by default), each once."""
    known = {label: (s.name, s.params) for label, s in summaries.items()}
    try:  # a label, or a name or spec naming one (ncis, ncis:cap=100, ncis(cap=100))
        labels = [find_label(label, known) for label in requested or summaries]
    except OffevalError as exc:
        raise OffevalError(f"--estimator: {exc} (saved summaries)") from None
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise OffevalError(f"--estimator: {twice} named more than once")
    return labels


def _folder(args: argparse.Namespace) -> OutputFolder | None:
    """The ``--out`` folder, checked (never one holding the summaries or attributes read)."""
    if args.out is None:
        return None
    summaries = Path(args.summaries)
    inputs = [summaries / "summaries.json" if summaries.is_dir() else summaries]
    inputs += [args.attributes] if args.attributes else []
    return OutputFolder(args.out, option="--out", force=args.force, inputs=inputs)


def _decide(
    label: str, summary, args: argparse.Namespace, attributes: pd.DataFrame | None
) -> dict[str, pd.DataFrame] | None:
    """Print one summary's tables and return them by name (None, and a line, when skipped)."""
    bad, k = not_finite(summary), len(summary.policies)
    if bad:
        print(f"{label}: skipped, values or covariances not finite for policies {bad}")
        return None
    if k < 2:
        print(f"{label}: skipped, a decision needs two or more policies (only {summary.policies})")
        return None
    m = min(3, k) if args.select is None else args.select
    depth = min(max(m, 3), k) if args.depth is None else args.depth
    dist = rank_distribution(summary, draws=args.draws, seed=args.seed, depth=depth)
    chosen = select(dist, m, method=args.method, seed=args.seed)
    tables = {
        "ranks": dist.to_frame(),
        "selection": pd.DataFrame(
            {f"p_top_{m}": dist.top(m)[chosen], "p_best": dist.best[chosen]}
        ).rename_axis("policy"),
    }
    if attributes is not None:
        tables["components"] = component_probabilities(dist, attributes)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(f"{label}: {args.draws:,} draws (seed {args.seed}){_reading(summary)}")
        print(tables["ranks"].round(4).to_string())
        print(f"selection ({args.method}, {m}): {', '.join(chosen)}")
        if attributes is not None:
            print(tables["components"].round(4).to_string())
    return tables


def _reading(summary) -> str:
    """What a reader needs to read the summary's values: their direction and baseline."""
    notes = [] if summary.higher_is_better else ["; lower is better: ranked from the lowest value"]
    if summary.baseline is not None:
        notes.append(f"; values relative to {summary.baseline!r}")
    return "".join(notes)


def _write(
    folder: OutputFolder, out: Path, decided: dict[str, dict[str, pd.DataFrame]]
) -> list[str]:
    """Write every table into ``out`` (``folder``'s temporary folder) as
    ``<table>_<label>.csv``, named by :meth:`OutputFolder.file_name` as evaluate names its
    pairs files (two labels that read the same get ``_2``); the names, a numbered one
    followed by its label."""
    written = []
    for label, tables in decided.items():
        for name, table in tables.items():
            file = folder.file_name(name, label)
            write_csv(table, out / file, index=True)  # formulas quoted (OWASP)
            written.append(f"{file} ({label})" if file in folder.numbered else file)
    return written
