"""Where pagelab-bench is, and the error it raises: the lowest module of the
package that runs the C bench, so that both runner.py and metrics.py (which
runner.py imports) can find the binary without importing each other.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class BenchError(RuntimeError):
    """pagelab-bench refused the request (unknown suite, design or parameter)."""


def bench_binary() -> str:
    """Locate pagelab-bench: $PAGELAB_BENCH, ./build, inside the package (pip install .), or $PATH."""
    env = os.environ.get("PAGELAB_BENCH")
    if env:
        return env
    here = REPO / "build" / "pagelab-bench"
    if here.exists():
        return str(here)
    packaged = Path(__file__).resolve().parent / "_lib" / "pagelab-bench"
    if packaged.exists():
        return str(packaged)
    found = shutil.which("pagelab-bench")
    if found:
        return found
    raise BenchError("pagelab-bench not found: build it with `make build` or set PAGELAB_BENCH")
