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

The files are rendered from ``template/`` beside this module: one file per
file written, its path and text with ``$name``, ``$package``, ``$cls``,
``$dist`` and ``$api`` to fill in (:class:`string.Template`), its name ending in
``.tmpl`` so that the template's Python is neither imported, linted nor
counted as offeval's. The repository's ``examples/offeval-example-plugin`` is
what it writes for the name ``example`` (a test keeps it so).

The folder is written whole or not at all; an existing non-empty folder is
refused unless ``--force`` (its files are then deleted).
"""

from __future__ import annotations

import argparse
import importlib.util
import keyword
import os
import re
from importlib.metadata import entry_points, version
from pathlib import Path
from string import Template

from offeval import OffevalError, Registry, get_registry
from offeval.plugin import OutputFolder, force_option

#: The entry-point group offeval discovers plugins in.
ENTRY_POINT_GROUP = "offeval"
#: The file :class:`~offeval.plugin.OutputFolder` marks a folder it wrote with (replaceable).
MARKER = ".offeval"

#: What a plugin name may look like: a lower-case Python identifier (PEP 8 package names).
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
#: The longest plugin name: the longest file name it goes into, the temporary folder
#: ``.offeval-NAME.tmp-XXXXXXXX`` (8 random characters) that becomes ``offeval-NAME``,
#: within the 255 characters most file systems (ext4, APFS, NTFS) allow a file name.
MAX_NAME = 255 - len(".offeval-.tmp-") - 8
#: How many of a name's characters a refusal of a name too long shows.
SHOWN_NAME = 20
#: The package's template, and the suffix its files' names end in.
TEMPLATE = Path(__file__).with_name("template")
SUFFIX = ".tmpl"


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


def templates() -> dict[str, str]:
    """The template's files: path (``$package/__init__.py``) -> text, both still to fill in."""
    return {
        path.relative_to(TEMPLATE).as_posix().removesuffix(SUFFIX): path.read_text("utf-8")
        for path in sorted(TEMPLATE.rglob(f"*{SUFFIX}"))
    }


def class_name(name: str) -> str:
    """The estimator's class: ``my_ips`` -> ``MyIps``, or ``TallyEstimator`` for ``tally``
    (a name the package or its test uses already)."""
    camel = "".join(part.capitalize() for part in name.split("_"))
    files = templates()
    taken = files["$package/__init__.py"].split("\nclass ")[0] + files["tests/test_$name.py"]
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
    return {
        Template(path).substitute(fields): Template(text).substitute(fields)
        for path, text in templates().items()
    }
