"""``python -m offeval``: the ``offeval`` command line."""

from offeval.cli.shell import main

raise SystemExit(main())
