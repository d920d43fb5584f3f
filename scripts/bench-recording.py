#!/usr/bin/env python3
"""bench-recording.py - what `pagelab trace record` costs the workload it records.

  sudo .venv/bin/python scripts/bench-recording.py [--reps 5] [--mib 256] [--rounds 16] [-o FILE]

A page-fault-heavy workload (a Python process that, ROUNDS times, fills a fresh
MIB-MiB buffer: every page a fault, a zeroed page allocation and, when the
buffer goes, a free) runs alternately untraced and under `pagelab trace record`,
in the same run, interleaved (U R, R U, U R, ...), so both see the same load from
the rest of the host.  The workload times itself (the same clock, the same
code, for both); the figure is the median of recorded/untraced over the reps.
The workload's own CPU time (user + system, getrusage) is reported too: on a
host shared with other work the wall time is mostly the scheduler's share.
Also reported per recorded rep: the drain after the workload (the seconds from
tracing off to the trace.dat written) against the workload's own seconds, the
events captured and the events lost, and the recording's whole wall time.

Needs root and tracefs.  Writes a JSON result (commit, host, kernel, date as
data) to -o (default results/recording/bench-recording.json) and prints a table.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKLOAD = """
import resource, sys, time
mib, rounds = int(sys.argv[1]), int(sys.argv[2])
t0 = time.perf_counter()
for _ in range(rounds):
    b = b"\\1" * (mib << 20)      # malloc + memset: a fault and a page per 4 KiB
    del b                        # munmap: the pages freed
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(f"workload {wall:.6f} {ru.ru_utime + ru.ru_stime:.6f}")
"""


def _times(text: str) -> tuple[float, float]:
    """The workload's own "workload WALL CPU" line."""
    line = [ln for ln in text.splitlines() if ln.startswith("workload ")][-1]
    return float(line.split()[1]), float(line.split()[2])


def run_untraced(argv: list[str]) -> tuple[float, float]:
    return _times(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)


def run_recorded(argv: list[str], tmp: Path, rep: int) -> dict:
    art = tmp / f"rec{rep}.pltrace"
    log = tmp / f"rec{rep}.out"
    t0 = time.monotonic()
    with open(log, "w") as f:
        rc = subprocess.run([sys.executable, "-m", "pagelab", "trace", "record", "-o", str(art),
                             "--", *argv], stdout=f, stderr=subprocess.STDOUT).returncode
    if rc:
        raise SystemExit(f"bench-recording: pagelab trace record failed: {log.read_text()[-300:]}")
    wall = time.monotonic() - t0
    workload, cpu = _times(log.read_text())
    m = json.loads((art / "manifest.json").read_text())
    shutil.rmtree(art)
    return {"workload_s": workload, "workload_cpu_s": cpu, "wall_s": round(wall, 3),
            "traced_s": m["seconds"],
            "drain_s": m["drain_seconds"], "events": m["entries_in_buffer"],
            "lost": m["lost_events"], "buffer_kb": m["buffer_size_kb"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("-o", "--output", default=str(REPO / "results" / "recording" /
                                                  "bench-recording.json"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("bench-recording: needs root (pagelab trace record)", file=sys.stderr)
        return 2
    argv = [sys.executable, "-c", WORKLOAD, str(a.mib), str(a.rounds)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pagelab-benchrec-") as t:
        for rep in range(a.reps):
            order = ("U", "R") if rep % 2 == 0 else ("R", "U")
            row = {"rep": rep, "order": "".join(order)}
            for which in order:
                if which == "U":
                    row["untraced_s"], row["untraced_cpu_s"] = run_untraced(argv)
                else:
                    row.update(run_recorded(argv, Path(t), rep))
            row["slowdown"] = round(row["workload_s"] / row["untraced_s"], 3)
            row["cpu_ratio"] = round(row["workload_cpu_s"] / row["untraced_cpu_s"], 3)
            rows.append(row)
            print(f"rep {rep} ({row['order']}): untraced {row['untraced_s']:.2f} s, recorded "
                  f"{row['workload_s']:.2f} s ({row['slowdown']:.2f}x; CPU {row['cpu_ratio']:.2f}x), drain {row['drain_s']:.2f} s, "
                  f"{row['events']} events, {row['lost']} lost, recording wall {row['wall_s']:.1f} s",
                  flush=True)
    med = statistics.median(r["slowdown"] for r in rows)
    med_cpu = statistics.median(r["cpu_ratio"] for r in rows)
    drain_ratio = max(r["drain_s"] / r["workload_s"] for r in rows)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()
    result = {"what": "pagelab trace record: workload wall time recorded / untraced",
              "workload": f"python: {a.rounds} x fill a fresh {a.mib} MiB buffer",
              "commit": commit, "host": platform.node(), "kernel": platform.release(),
              "cpus": os.cpu_count(), "loadavg_1m": round(load[0], 2),
              "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "reps": rows, "median_slowdown": med, "median_cpu_ratio": med_cpu, "max_drain_over_workload": round(drain_ratio, 3),
              "lost_events": sum(r["lost"] for r in rows)}
    # the figures by their registry ids (src/machine/metric.c)
    result["metrics"] = {"record-slowdown": med, "record-drain-share": round(drain_ratio, 3),
                         "record-lost-events": result["lost_events"]}
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"record-slowdown (median) {med:.3f}x (target <= 1.25x), the workload's CPU time "
          f"{med_cpu:.3f}x; record-drain-share (max) {drain_ratio:.3f} (target <= 1); "
          f"record-lost-events {result['lost_events']}; load {load[0]:.1f}; saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
