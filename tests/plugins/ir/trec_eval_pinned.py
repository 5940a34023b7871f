"""trec_eval 10.0's pinned outputs (trec_eval_reference/pinned.json) and ``offeval trec_eval``
run on the same files, for the tests that compare them."""

from __future__ import annotations

import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from offeval.cli.shell import main

PINNED = json.loads((Path(__file__).parent / "trec_eval_reference" / "pinned.json").read_text())
NAMED = {case["id"]: case for case in PINNED["named"]}
SWEEP = PINNED["sweep"]


@dataclass(frozen=True)
class Printed:
    """What a command printed: standard output, standard error, exit code."""

    stdout: str
    stderr: str
    returncode: int


def pinned(case: dict) -> Printed:
    """What trec_eval printed for the case."""
    return Printed(case["stdout"], case["stderr"], case["returncode"])


def offeval_prints(case: dict, folder: Path, monkeypatch, capsys) -> Printed:
    """What ``offeval trec_eval`` prints for the case, its files written in ``folder``."""
    for name, text in case["files"].items():
        (folder / name).write_bytes(text.encode())
    monkeypatch.chdir(folder)
    stdin = (case["stdin"] or "").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    capsys.readouterr()
    code = main(["trec_eval", *case["argv"]])
    captured = capsys.readouterr()
    return Printed(captured.out, captured.err, code)


def values(stdout: str) -> dict[tuple[str, str], str]:
    """The printed values by (label, query)."""
    rows = (line.split("\t") for line in stdout.splitlines())
    return {(label.rstrip(" "), query): value for label, query, value in rows}


def relabelled(stdout: str, old: str, new: str) -> str:
    """The output with the label ``old`` written ``new`` (padded as trec_eval pads)."""
    return re.sub(rf"^{re.escape(f'{old:<22}')}\t", f"{new:<22}\t", stdout, flags=re.M)
