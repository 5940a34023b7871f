"""Peak-memory and subprocess helpers shared by the benchmark scripts (Linux)."""

from __future__ import annotations

import json
import subprocess


def reset_peak() -> float:
    """Reset the kernel's peak-RSS counter; return the current RSS in MB."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status("VmRSS")


def peak_mb() -> float:
    """Peak resident memory since the last reset, in MB."""
    return _status("VmHWM")


def workers_peak_mb() -> float:
    """Peak resident memory of the largest finished child process (a worker), in MB."""
    import resource

    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _status(field: str) -> float:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(field))
    return int(line.split()[1]) / 1024


def in_subprocess(python: str, module: str, call: str) -> dict:
    """Run ``module.call`` in a fresh interpreter and return the dict it prints as JSON."""
    code = (
        f"import sys, json; sys.path.insert(0, 'benchmarks'); import {module} as b; "
        f"print(json.dumps(b.{call}))"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])
