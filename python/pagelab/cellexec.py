"""Run one cell of an experiment: what a worker (local pool or Dask) executes.

execute_cell() takes a cell's spec (experiments.Cell.spec, plain JSON) and
runs its pagelab-bench processes on this machine, with this machine's
pagelab build: a "bench" cell runs a suite for its designs and repetitions
in the interleaved order (A B A B ..., reversed design lists on odd
repetitions with together=), a "replay" cell replays one trace under one
design, a "seedgroup" cell runs one of a seed's measurement groups under the
seed's policy (adaptive repetitions outside quick mode), and a "call" cell
runs one of a seed's helpers (seed 002's buddyinfo timeline).

It returns {"records": [...], "machine": {...}, "host_load", "seconds",
"worker"}: the JSON records as pagelab-bench printed them (with rep and
design set), never writing anything itself: the runner process alone writes
the store.  A failure raises CellFailed carrying pagelab-bench's stderr; the
runner (or Dask) retries it.
"""
from __future__ import annotations

import os
import platform
import socket
import subprocess
import time
from functools import lru_cache
from pathlib import Path

from .experiments import REPO, trace_label


class CellFailed(RuntimeError):
    """A cell's process failed; str() is its stderr (last lines)."""


@lru_cache(maxsize=1)
def worker_info() -> dict:
    """This worker's machine and build, once per worker process."""
    from .runner import machine_info
    info = machine_info()
    info["host"] = socket.gethostname()
    info["platform"] = platform.platform()
    return info


def _stderr_tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _bench(spec: dict) -> list[dict]:
    from .runner import BenchError, run_once
    out = []
    designs = spec["designs"]
    for rep in spec["reps"]:
        if spec.get("together"):
            order = designs if rep % 2 == 0 or len(spec["reps"]) == 1 else designs[::-1]
            batches = [",".join(order)]
        else:
            batches = list(designs)
        for d in batches:
            try:
                ms = run_once(spec["suite"], dict(spec["params"]), d, spec.get("mode", "wall"))
            except BenchError as e:
                raise CellFailed(str(e)) from None
            for m in ms:
                m.rep = rep
                out.append(m.to_dict())
    return out


def _replay(spec: dict) -> list[dict]:
    import json

    from .trace_artifact import TraceError, opened
    from .runner import bench_binary
    trace = Path(spec["trace"])
    if not trace.is_absolute():
        trace = REPO / trace
    params = {"design": spec["design"]}
    if spec.get("state"):
        params["state"] = spec["state"]
    tick = spec.get("tick")
    if tick in ("kernel", "first"):
        params["tick"] = tick
    elif tick:
        params["tick_ms"] = tick
    params.update(spec.get("params") or {})
    label = trace_label(trace)
    out = []
    try:
        with opened(trace) as (path, _manifest):
            args = [bench_binary(), "replay", f"trace={path}"] + \
                [f"{k}={v}" for k, v in params.items()] + ["--json"]
            for rep in spec["reps"]:
                proc = subprocess.run(args, capture_output=True, text=True, errors="replace")
                if proc.returncode != 0:
                    raise CellFailed(f"pagelab-bench replay exit {proc.returncode}: "
                                     + _stderr_tail(proc.stderr))
                for line in proc.stdout.splitlines():
                    if not line.strip().startswith("{"):
                        continue
                    rec = json.loads(line)
                    if rec.get("test") not in ("kernel", "replay"):
                        continue
                    rec["design"] = "kernel" if rec["test"] == "kernel" else spec["design"]
                    rec["rep"] = rep
                    rec["suite"] = "replay"
                    rec.setdefault("value", 0.0)
                    rec["params"] = {**(rec.get("params") or {}), "label": label,
                                     "state": rec.get("state", spec.get("state") or "")}
                    out.append(rec)
    except TraceError as e:
        raise CellFailed(str(e)) from None
    if not any(r["design"] != "kernel" for r in out):
        raise CellFailed("pagelab-bench replay gave no replay record")
    return out


def _seedgroup(spec: dict) -> list[dict]:
    from . import stats
    from .runner import BenchError, run_adaptive, run_interleaved
    from .seed_cells import cells_fn, local_params
    pol = stats.policy_for(spec["measure"], spec["seed_mode"] == "quick")
    params = local_params(spec["params"])
    try:
        if pol.quick or spec.get("fixed"):
            ms = run_interleaved(spec["suite"], dict(params), spec["designs"],
                                 spec["quick_reps"], together=spec["together"],
                                 mode=pol.mode)
        else:
            ms = run_adaptive(spec["suite"], dict(params), spec["designs"], pol,
                              together=spec["together"], cells=cells_fn(spec))
    except BenchError as e:
        raise CellFailed(str(e)) from None
    return [m.to_dict() for m in ms]


def _call(spec: dict) -> list[dict]:
    from .seed_cells import CALLS
    fn = CALLS.get(spec["fn"])
    if fn is None:
        raise CellFailed(f"unknown helper '{spec['fn']}'")
    return [{"suite": "call", "test": spec["fn"], "design": "", "value": 0.0, "unit": "",
             "result": fn(*spec.get("args", []))}]


KINDS = {"bench": _bench, "replay": _replay, "seedgroup": _seedgroup, "call": _call}


def execute_cell(spec: dict) -> dict:
    """Run one cell here; its records and where and how it ran (see the header)."""
    fn = KINDS.get(spec.get("kind"))
    if fn is None:
        raise CellFailed(f"unknown cell kind '{spec.get('kind')}'")
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    records = fn(spec)
    info = worker_info()
    return {"status": "ok", "records": records, "machine": info, "host_load": load,
            "seconds": round(time.monotonic() - t0, 3), "worker": info["host"]}
