"""What a fresh interpreter has imported once a command line is done (the start-up tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Libraries a help text or an argument mistake must not import.
HEAVY = ("numpy", "pandas", "scipy", "statsmodels", "matplotlib", "pyarrow", "sklearn")


def imported_after(argv: list[str], then: str = "") -> dict:
    """Run ``offeval argv`` in a fresh interpreter: its exit code, the heavy libraries and the
    plugins' modules imported then (``then``: Python run after the command line), and what
    it wrote on stderr (``err``)."""
    code = (
        "import json, sys\n"
        "from offeval.cli.shell import main\n"
        f"code = main({argv!r})\n"
        f"{then}\n"
        "top = {m.split('.')[0] for m in sys.modules}\n"
        f"heavy = sorted(top & set({HEAVY!r}))\n"
        "plugins = sorted(m for m in sys.modules if m.startswith('offeval_'))\n"
        "print(json.dumps({'code': code, 'heavy': heavy, 'plugins': plugins}))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert run.stdout.strip(), run.stderr
    return {**json.loads(run.stdout.strip().splitlines()[-1]), "err": run.stderr}


def beyond_packages(modules: list[str]) -> list[str]:
    """The plugin modules that are neither a plugin's package nor its hook specifications."""
    return [m for m in modules if "." in m and not m.endswith(".hookspecs")]
