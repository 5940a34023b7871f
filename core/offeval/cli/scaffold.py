"""``offeval new-plugin NAME``: a new estimator plugin package, ready to install and test.

The package holds one working estimator (importance sampling with an
optional weight cap) built on :mod:`offeval.plugin` only, its hook and entry
point, a test that runs the conformance kit and checks values worked out by
hand, a README and a chapter stub::

    offeval-NAME/
        pyproject.toml            # hatchling; the `offeval` entry point NAME
        README.md
        offeval_NAME/__init__.py  # the estimator and register_estimators
        tests/test_NAME.py        # the kit (offeval.testing) and a value check
        docs/NAME.ipynb           # the chapter to write, with a worked example

The folder is written whole or not at all; an existing non-empty folder is
refused unless ``--force`` (its files are then deleted).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import keyword
import os
import re
from importlib.metadata import entry_points, version
from pathlib import Path
from string import Template

from offeval.cli.options import force_option
from offeval.data.output import MARKER, OutputFolder
from offeval.errors import OffevalError
from offeval.registry.manager import ENTRY_POINT_GROUP, Registry, get_registry

#: What a plugin name may look like: a lower-case Python identifier (PEP 8 package names).
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
#: The longest plugin name: the longest file name it goes into, the temporary folder
#: ``.offeval-NAME.tmp-XXXXXXXX`` (8 random characters) that becomes ``offeval-NAME``,
#: within the 255 characters most file systems (ext4, APFS, NTFS) allow a file name.
MAX_NAME = 255 - len(".offeval-.tmp-") - 8
#: How many of a name's characters a refusal of a name too long shows.
SHOWN_NAME = 20


class NewPluginCommand:
    """Write a new estimator plugin package."""

    help = "write a new estimator plugin package (estimator, entry point, kit test, chapter)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """NAME, --dir and --force."""
        parser.add_argument(
            "name",
            metavar="NAME",
            help="the plugin's name, also its estimator's: a lower-case Python identifier",
        )
        parser.add_argument(
            "--dir",
            help="the folder to write (default: offeval-NAME in the current folder)",
        )
        force_option(parser)

    def run(self, args: argparse.Namespace) -> int:
        """Write the package and say what comes next."""
        folder = scaffold(args.name, args.dir, force=args.force)
        print(f"wrote {folder}{os.sep} (plugin {args.name!r}, estimator {args.name!r}); next:")
        print(f"  python -m pip install -e {folder}")
        print(f"  python -m pytest {folder / 'tests'}")
        return 0


def check_name(name: str, registry: Registry | None = None) -> str:
    """``name`` if a new plugin (and its estimator) may take it, else an OffevalError.

    Refused: a name longer than :data:`MAX_NAME` (the file names it makes would
    be too long), anything but a lower-case Python identifier, a keyword, the
    name of an installed plugin or of a registered estimator, and a name
    whose package ``offeval_NAME`` is importable already.
    """
    if len(name) > MAX_NAME:
        raise OffevalError(
            f"new-plugin {name[:SHOWN_NAME] + '...'!r}: a plugin name has at most {MAX_NAME} "
            f"characters (this one has {len(name)}), as the file names it makes must fit "
            "the file system's limit: choose a shorter name"
        )
    if not NAME_PATTERN.fullmatch(name):
        guess = re.sub(r"[^a-z0-9_]", "_", name.lower()).strip("_")
        suggestion = f" (try {guess!r})" if NAME_PATTERN.fullmatch(guess) else ""
        raise OffevalError(
            f"new-plugin {name!r}: a plugin name is a lower-case Python identifier "
            f"(a-z, digits, _; starting with a letter){suggestion}"
        )
    if keyword.iskeyword(name):
        raise OffevalError(f"new-plugin {name!r}: a Python keyword cannot name a package")
    registry = registry or get_registry()
    installed = set(registry.plugins) | {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if name in installed:
        raise OffevalError(
            f"new-plugin {name!r}: a plugin of that name is installed already "
            "(offeval plugins lists them): choose another name"
        )
    if name in registry.names("estimator"):
        owner = registry.get("estimator", name).plugin
        raise OffevalError(
            f"new-plugin {name!r}: plugin {owner!r} registers an estimator of that name "
            "already: choose another name"
        )
    if _importable(package_of(name)):
        raise OffevalError(
            f"new-plugin {name!r}: a package {package_of(name)} is installed already: "
            "choose another name"
        )
    return name


def package_of(name: str) -> str:
    """The plugin's package, named as the built-in ones are: the entry-point group, then the
    plugin's name (``my_ips`` -> ``offeval_my_ips``)."""
    return f"{ENTRY_POINT_GROUP}_{name}"


def _importable(module: str) -> bool:
    """Whether a top-level module of that name can be imported (a finder refusing it: no)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def scaffold(name: str, folder: str | Path | None = None, *, force: bool = False) -> Path:
    """Write the plugin package ``name`` into ``folder`` (default ``offeval-NAME``), whole.

    An existing non-empty folder is refused unless ``force``. Returns the folder.
    """
    check_name(name)
    path = Path(folder or f"offeval-{name.replace('_', '-')}")
    if path.is_dir() and any(path.iterdir()) and not force:
        raise OffevalError(
            f"--dir {path}: the folder exists and is not empty: choose another folder, "
            "or add --force (its files are deleted)"
        )
    out = OutputFolder(path, option="--dir", force=True, quiet=True)
    with out as tmp:
        for relative, text in plugin_files(name).items():
            (tmp / relative).parent.mkdir(parents=True, exist_ok=True)
            (tmp / relative).write_text(text)
    (out.path / MARKER).unlink()  # the package is the user's now: a rerun must not replace it
    return out.path


def class_name(name: str) -> str:
    """The estimator's class: ``my_ips`` -> ``MyIps``, or ``TallyEstimator`` for ``tally``
    (a name the package or its test uses already)."""
    camel = "".join(part.capitalize() for part in name.split("_"))
    taken = PACKAGE.split("\nclass ")[0] + TEST
    return f"{camel}Estimator" if re.search(rf"\b{camel}\b", taken) else camel


def plugin_files(name: str) -> dict[str, str]:
    """The package's files (relative path -> text) for the plugin ``name``."""
    fields = {
        "name": name,
        "package": package_of(name),
        "cls": class_name(name),
        "dist": f"offeval-{name.replace('_', '-')}",
        "api": ".".join(version("offeval").split(".")[:2]),
    }
    files = {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        f"{package_of(name)}/__init__.py": PACKAGE,
        f"tests/test_{name}.py": TEST,
    }
    written = {path: Template(text).substitute(fields) for path, text in files.items()}
    written[f"docs/{name}.ipynb"] = _notebook(fields)
    return written


def _notebook(fields: dict[str, str]) -> str:
    """The chapter stub: a notebook (nbformat 4) to write and execute."""
    cells = [
        ("markdown", CHAPTER_INTRO),
        ("code", CHAPTER_EXAMPLE),
        ("code", CHAPTER_CLAIM),
        ("markdown", CHAPTER_NEXT),
    ]
    notebook = {
        "cells": [
            _cell(f"cell-{i}", kind, Template(text).substitute(fields))
            for i, (kind, text) in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1) + "\n"


def _cell(identifier: str, kind: str, source: str) -> dict:
    cell = {"cell_type": kind, "id": identifier, "metadata": {}}
    cell["source"] = source.strip("\n").splitlines(keepends=True)
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "$dist"
version = "0.1.0"
description = "An offeval plugin: the $name estimator."
readme = "README.md"
requires-python = ">=3.10"
dependencies = ["offeval>=$api", "numpy"]

[project.optional-dependencies]
test = ["pytest", "pandas"]

# offeval finds the plugin through this entry point; its name is the plugin's.
[project.entry-points.offeval]
$name = "$package"

[tool.hatch.build.targets.wheel]
packages = ["$package"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

README = """\
# $dist

An [offeval](https://pypi.org/project/offeval/) plugin that registers the
estimator `$name`. It was written by `offeval new-plugin $name`: the
estimator is importance sampling with an optional weight cap, a working
starting point to replace with your own.

    python -m pip install -e ".[test]"
    offeval plugins                      # lists "estimator $name from $name"
    python -m pytest tests               # the conformance kit and hand-worked values
    offeval evaluate log.parquet --policy new=new_probability --estimator $name:cap=20

- `$package/__init__.py`: the estimator (`contribute` computes columns
  from the log and the target policy, `combine` gives the value as a function
  of their means) and the hook `register_estimators`. It imports from
  `offeval.plugin`, offeval's declared plugin API, and nothing else of offeval.
- `tests/test_$name.py`: `offeval.testing.parametrize_with_checks` runs the
  conformance kit (protocol, chunking and order invariance, declared
  requirements, and what the estimator promises checked against a
  simulator's exact values); a value check on a log small enough to work out
  by hand.
- `docs/$name.ipynb`: the chapter to write: what the estimator assumes, a
  worked example, an `assert` under every claim. Execute it with
  `jupyter execute --inplace docs/$name.ipynb`.

The book chapter "Writing a plugin" of offeval explains each part.
"""

PACKAGE = '''\
"""offeval plugin ``$name``: importance sampling with an optional weight cap.

Built on offeval's declared plugin API (:mod:`offeval.plugin`) only.
"""

from __future__ import annotations

import numpy as np

from offeval.plugin import (
    BaseEstimator,
    Contribution,
    Linearisation,
    PolicyView,
    Tally,
    check_number,
    hookimpl,
    ratio_of_means,
)


class $cls(BaseEstimator):
    """Importance sampling per impression: mean of r * min(cap, pi/mu) over the logged rows.

    Unbiased without a cap (the default) when the logged propensities are
    right and the logging policy shows every row the target policy may show;
    a finite cap trades a downward bias for a smaller variance.
    """

    name = "$name"
    estimand = "reward_per_impression"
    requires = ("propensity",)
    tags = {"linear_in_reward": True}

    def __init__(self, cap: float = float("inf")):
        check_number(cap, "cap", low=0, low_open=True, finite=False)
        self.cap = cap

    @property
    def guarantee(self) -> str | None:
        """Unbiased without a cap; biased downwards where a cap binds."""
        return "unbiased" if self.cap == float("inf") else None

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns per logged row: r * min(cap, w) and 1; rows whose weight was capped counted."""
        weights = view.weights()
        tally = Tally()
        tally.add("rows", weights.size)
        tally.count("capped", np.count_nonzero(weights > self.cap))
        rewards = view.log.column("reward") * np.minimum(weights, self.cap)
        return Contribution({"rw": rewards, "rows": np.ones(weights.size)}, tally=tally)

    def combine(self, stats) -> Linearisation:
        """The mean reward per row: the ratio of the two columns' means (delta method)."""
        return ratio_of_means(stats, "rw", "rows")

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Share of rows whose weight was capped (the engine reports the count itself)."""
        return {"capped_share": tally.counts["capped"] / tally.sums["rows"]}


@hookimpl
def register_estimators(register):
    """Register the estimator ``$name``."""
    register($cls.name, $cls)
'''

TEST = '''\
"""The $name estimator: the conformance kit, and values worked out by hand."""

import numpy as np
import pandas as pd
import pytest

from offeval.plugin import ConfigurationError, InteractionLog, evaluate, get_registry
from offeval.testing import parametrize_with_checks
from $package import $cls


@parametrize_with_checks([$cls(), $cls(cap=10)])
def test_conformance(estimator, check):
    check(estimator)


class Half:
    """A target policy that shows every logged row with probability 1/2."""

    name = "half"

    def probabilities(self, rows):
        return np.full(len(rows), 0.5)


def three_rows() -> InteractionLog:
    """Two trajectories, three rows; against Half, the weights pi/mu are 2, 1 and 4."""
    frame = pd.DataFrame(
        {
            "trajectory": [0, 0, 1],
            "context": [0, 0, 1],
            "item": [3, 5, 3],
            "position": [1, 2, 1],
            "reward": [1.0, 0.0, 1.0],
            "propensity": [0.25, 0.5, 0.125],
        }
    )
    return InteractionLog.from_frame(frame)


@pytest.mark.parametrize(
    ("cap", "value", "capped"),
    [(float("inf"), (1 * 2 + 0 * 1 + 1 * 4) / 3, 0), (3, (1 * 2 + 0 * 1 + 1 * 3) / 3, 1)],
)
def test_value_worked_out_by_hand(cap, value, capped):
    estimate = evaluate(three_rows(), [Half()], [$cls(cap=cap)], progress=False).estimate("half")
    assert estimate.value == pytest.approx(value, rel=1e-12)
    assert estimate.n_units == 2
    assert estimate.diagnostics["capped"] == capped


def test_a_cap_must_be_positive():
    with pytest.raises(ConfigurationError, match="cap must be a positive number"):
        $cls(cap=0)


def test_registered_through_its_entry_point():
    assert get_registry().get("estimator", "$name").plugin == "$name"
'''

CHAPTER_INTRO = """\
# The $name estimator

*A chapter stub written by `offeval new-plugin`: replace it with your own.*

Say here what `$name` estimates (the expected reward per logged row under a
target policy), what it assumes (the logged propensities are right; the
logging policy shows every row the target policy may show) and when to
prefer it. Below, it is run on the simulator that offeval's conformance kit
uses, whose exact values are known.
"""

CHAPTER_EXAMPLE = """\
from offeval.plugin import evaluate, get_registry
from $package import $cls

env = get_registry().create("environment", "default", seed=0)
policies = env.candidate_policies(4)
log = env.simulate(env.logging_policy(), 20_000, seed=1)
table = evaluate(log, policies, [$cls(), $cls(cap=10)], progress=False).to_frame()
table["truth"] = table["policy"].map(
    {p.name: env.true_value(p, "reward_per_impression") for p in policies}
)
table[["policy", "estimator", "value", "se", "truth"]].round(4)
"""

CHAPTER_CLAIM = """\
# Every claim the prose makes gets an assert: without a cap, within 4.5 standard errors.
uncapped = table[table["estimator"] == "$name"]
assert ((uncapped["value"] - uncapped["truth"]).abs() < 4.5 * uncapped["se"]).all()
"""

CHAPTER_NEXT = """\
## To write

- the estimator's formula and the reference it comes from;
- a worked example on data like your users' (a plot where a picture says more);
- what the diagnostics (`capped`, `capped_share`) tell a user.

Execute the notebook and keep its outputs (`jupyter execute --inplace
docs/$name.ipynb`); print floats to a few digits.
"""
