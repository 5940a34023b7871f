"""What the IR commands offer to choose from (file formats, significance tests), their
defaults and how ``compare`` names its runs, in a module that imports nothing numerical:
``offeval metrics`` and ``offeval compare`` declare their arguments, and answer a mistake
in them, without loading the modules that read files and compute; those modules
(:mod:`offeval_ir.command_run`, :mod:`offeval_ir.tables`) take the same things from here."""

from __future__ import annotations

from pathlib import Path

from offeval import OffevalError

#: Formats of run and qrels files (:func:`offeval_ir.files.read_run`, ``read_qrels``).
FORMATS = ("trec", "csv", "tsv", "parquet", "json")

#: Tests that can decide significance in :meth:`offeval_ir.run_statistics.RunEvaluation.compare`.
TESTS = ("t", "randomization", "tukey")

#: The most decimals ``offeval compare`` prints: a double holds about 15 significant digits.
MAX_DECIMALS = 15

#: Measures computed when none are named (what a trec_eval user looks at first).
DEFAULT_MEASURES = ("nDCG@10", "P@5", "P@10", "R@100", "AP", "RR")


def named_runs(runs: list[str]) -> dict[str, str]:
    """{name: file} of ``compare``'s run arguments: ``NAME=FILE``, or a file named by its
    file name (an existing file whose name holds ``=`` too); names must be distinct."""
    named = []
    for run in runs:
        name, equals, path = run.partition("=")
        if not equals or Path(run).exists():
            named.append((Path(run).name, run))
        elif not name:
            raise OffevalError(f"{run!r}: a run's name (NAME=FILE) must not be empty")
        else:
            named.append((name, path))
    names = [name for name, _ in named]
    if len(set(names)) != len(names):
        raise OffevalError(
            f"runs need distinct file names (or names given as NAME=FILE), got {names}"
        )
    return dict(named)
