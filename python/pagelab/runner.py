"""Run pagelab-bench and collect its JSON lines.

Designs are run interleaved (A B A B ...), one process per (rep, design), so
that drift on the host falls on every design alike.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path


class BenchError(RuntimeError):
    """pagelab-bench refused the request (unknown suite, design or parameter)."""


def bench_binary() -> str:
    """Locate pagelab-bench: $PAGELAB_BENCH, ./build, or $PATH."""
    env = os.environ.get("PAGELAB_BENCH")
    if env:
        return env
    here = Path(__file__).resolve().parents[2] / "build" / "pagelab-bench"
    if here.exists():
        return str(here)
    found = shutil.which("pagelab-bench")
    if found:
        return found
    raise BenchError("pagelab-bench not found: build it with `make build` or set PAGELAB_BENCH")


@dataclass
class Measurement:
    suite: str
    test: str
    design: str
    rep: int
    value: float
    unit: str
    params: dict = field(default_factory=dict)
    counters: dict = field(default_factory=dict)


def run_once(suite: str, params: dict[str, str], design: str | None = None) -> list[Measurement]:
    """One pagelab-bench process; returns its measurements."""
    args = [bench_binary(), suite] + [f"{k}={v}" for k, v in params.items()]
    if design is not None:
        args.append(f"design={design}")
    args.append("--json")
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode == 2:
        raise BenchError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "bad request")
    if proc.returncode != 0:
        raise BenchError(f"pagelab-bench {suite} failed ({proc.returncode}): {proc.stderr.strip()}")
    out = []
    for line in proc.stdout.splitlines():
        rec = json.loads(line)
        out.append(Measurement(**rec))
    return out


def run_interleaved(suite: str, params: dict[str, str], designs: list[str], reps: int) -> list[Measurement]:
    """Run every design @reps times in the order A B A B ...; rep numbers are ours."""
    results: list[Measurement] = []
    for rep in range(reps):
        for design in designs:
            for m in run_once(suite, params, design):
                m.rep = rep
                results.append(m)
    return results
