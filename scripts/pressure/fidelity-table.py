#!/usr/bin/env python3
"""Regenerate the pressure fidelity table of docs/pressure.md: each pressure
trace given replayed with `pagelab-bench replay trace=DIR state=positional
design=v6.18 tick_ms=250 --json` (one at a time, at nice 10), its figures
against the kernel's, by the metric registry's rows, judged by the bands
docs/pressure.md states (10% for the page traffic, 25% for compaction and
fallbacks, TVD at most 0.05, no allocation failing that the kernel
satisfied). The table goes between the page's pressure-table markers with
the command, commit, machine and date as data; nothing in it is written by
hand. The traces are not in the repository: record them with
scripts/pressure/record.sh.

Usage: scripts/pressure/fidelity-table.py [-o docs/pressure.md]
       [--json-dir out/pressure] [--from-json] TRACE_DIR...
(PAGELAB_BENCH selects pagelab-bench; default build/pagelab-bench)
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from pagelab import metrics, replay  # noqa: E402
from pagelab.runner import machine_info  # noqa: E402

BEGIN, END = "<!-- pressure-table:begin -->", "<!-- pressure-table:end -->"
COMMAND = "scripts/pressure/fidelity-table.py"
ARGS = ["state=positional", "design=v6.18", "tick_ms=250"]
# the judged columns (registry ids) and their band: 10% page traffic, 25% compaction
BANDS = {"pcp-refills": 0.10, "pages-per-refill": 0.10, "pcp-drain-calls": 0.10,
         "pcp-drained-pages": 0.10, "zone-lock-est": 0.10, "buddyinfo-tvd": 0.05,
         "compact-stalls": 0.25, "compact-successes": 0.25, "compact-migrated": 0.25,
         "fallback-events": 0.25, "alloc-failures": 0.0}
# shown beside them, not judged: vmstat's kcompactd and migration counters
SHOWN = ["vmstat-compact-daemon-wake", "vmstat-pgmigrate-success"]


def run_one(trace: Path, out: Path) -> None:
    bench = os.environ.get("PAGELAB_BENCH", str(ROOT / "build" / "pagelab-bench"))
    with open(out, "w") as f:
        subprocess.run(["nice", "-n", "10", bench, "replay", f"trace={trace}", *ARGS, "--json"],
                       stdout=f, stderr=subprocess.DEVNULL, check=True)


def records(path: Path) -> tuple[dict, dict]:
    kernel = rec = None
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r.get("test") == "kernel":
            kernel = r
        elif r.get("design") == "v6.18":
            rec = r
    if kernel is None or rec is None:
        raise SystemExit(f"{COMMAND}: {path}: no kernel and v6.18 records")
    return kernel, rec


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3f}" if abs(v) < 10 else f"{v:,.1f}"
    return f"{int(v):,}"


def cell(row: dict, band: float | None) -> str:
    v, kv = row["values"].get("v6.18"), row["kernel"]
    if row["metric"] == replay.TVD_ID:
        return f"**{fmt(v)}**" if v is None or v > band else fmt(v)
    text = f"{fmt(v)} / {fmt(kv)}"
    r = row["ratios"].get("v6.18")
    if r is not None and kv:
        text += f" ({r:.2f})"
    if band is None:
        return text
    if row["metric"] == "alloc-failures":
        miss = v is None or kv is None or v > kv
    else:
        miss = r is None or abs(r - 1) > band
    return f"**{text}**" if miss else text


def table(results: list[tuple[str, dict, dict]]) -> list[str]:
    reg = metrics.registry()
    ids = [i for i in list(BANDS) + SHOWN if i in reg]
    head = ["trace (events)"] + [reg[i].name for i in ids]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, kernel, rec in results:
        rows = {r["metric"]: r for r in replay.fidelity_rows(kernel, {"v6.18": rec}, "v6.18")}
        cells = [f"{name} ({kernel.get('events', 0) / 1e6:.1f} M)"]
        cells += [cell(rows[i], BANDS.get(i)) if i in rows else "-" for i in ids]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("Each cell: pagelab's figure / the kernel's (ratio); TVD: pagelab's end buddyinfo "
               "against the kernel's; bold: outside its band (" + ", ".join(
                   f"{reg[i].name} {int(b * 100)}%" for i, b in BANDS.items()
                   if i in reg and i not in (replay.TVD_ID, "alloc-failures")) +
               f"; TVD at most {BANDS[replay.TVD_ID]}; no more failed allocations than the "
               "kernel's). Units and directions: " + "; ".join(
                   f"{reg[i].name} in {reg[i].unit} ({reg[i].direction})" for i in ids) + ".")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("-o", "--output", default=str(ROOT / "docs" / "pressure.md"))
    ap.add_argument("--json-dir", default=str(ROOT / "out" / "pressure"), type=Path)
    ap.add_argument("--from-json", action="store_true",
                    help="reuse the JSON of an earlier run instead of replaying")
    args = ap.parse_args()
    args.json_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for t in args.traces:
        name = t.name.removesuffix(".pltrace")
        out = args.json_dir / f"{name}.json"
        if not args.from_json:
            run_one(t, out)
        results.append((name, *records(out)))
    info = machine_info()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    block = [BEGIN,
             f"Generated by `{COMMAND} " + " ".join(t.name for t in args.traces) +
             "` (do not edit by hand): each trace replayed with `pagelab-bench replay "
             "trace=DIR " + " ".join(ARGS) + "`.", "",
             f"- commit: {commit}",
             f"- machine: {info.get('cpu', '?')}, {info.get('cores', '?')} cores, "
             f"kernel {info.get('kernel', '?')}",
             f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
             "", *table(results), END]
    page = Path(args.output).read_text()
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{COMMAND}: {args.output} has no {BEGIN} ... {END} section")
    pre, rest = page.split(BEGIN, 1)
    post = rest.split(END, 1)[1]
    Path(args.output).write_text(pre + "\n".join(block) + post)
    print(f"{args.output}: table of {len(results)} traces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
