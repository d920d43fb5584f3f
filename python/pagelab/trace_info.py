"""`pagelab trace info`: what a trace holds and who allocated in it.

  pagelab trace info TRACE [--tasks PID,COMM,...] [--command-pid PID] [--top N] [--json]

TRACE is an artifact (directory or archive) or a bare trace file (trace.dat or
text).  The C engine (`pagelab-bench trace_info`) reads the events once; this
module prints its record: format, events, losses, and the page allocations and
frees by task, the top N and the rest, with the recorded command's own share
(its pid from the manifest, or --command-pid; the tasks the trace shows it
forking count as its own) and the share of the tasks --tasks names.  A
system-wide trace on a shared host can be mostly other processes': the table
says so at once.  `pagelab replay` prints the same table in its header.
"""
from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from . import metrics
from .runner import BenchError, bench_binary
from .trace_artifact import TraceError, opened


def bench_info(trace: Path, command_pid: int | None = None, tasks: str | None = None,
               top: int = 10) -> dict:
    """`pagelab-bench trace_info` on @trace: its one JSON record."""
    try:
        bench = bench_binary()
    except BenchError as e:
        raise TraceError(str(e)) from None
    argv = [bench, "trace_info", f"trace={trace}", f"top={top}"]
    if command_pid:
        argv.append(f"command_pid={command_pid}")
    if tasks:
        argv.append(f"tasks={tasks}")
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode:
        lines = (r.stderr.strip() or r.stdout.strip()).splitlines()
        raise TraceError(lines[-1].removeprefix("pagelab-bench: ") if lines else
                         f"pagelab-bench trace_info exited with {r.returncode}")
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise TraceError("pagelab-bench trace_info printed no record")


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def tasks_text(info: dict, command_pid: int | None = None, tasks: str | None = None) -> str:
    """Page allocations and frees by task: the top rows, the rest, the command's and --tasks' shares."""
    tot = info["total"]
    a, f = tot["allocs"], tot["frees"]
    rows = [["task", "pid", "allocs", "share", "frees", "share", ""]]
    for t in info["tasks"]:
        rows.append([t["comm"], str(t["pid"]), str(t["allocs"]), _pct(t["allocs"], a),
                     str(t["frees"]), _pct(t["frees"], f), "command" if t["command"] else ""])
    rest = info["rest"]
    if rest["tasks"]:
        rows.append([f"({rest['tasks']} other tasks)", "", str(rest["allocs"]),
                     _pct(rest["allocs"], a), str(rest["frees"]), _pct(rest["frees"], f), ""])
    rows.append(["all", "", str(a), _pct(a, a), str(f), _pct(f, f), ""])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    ma, mf = metrics.get("task-alloc-share"), metrics.get("task-free-share")
    judged = "not judged" if not ma.judged else f"{ma.direction} is better"
    out = [f"page allocations and frees by task ({info['nr_tasks']} tasks; the shares, in %, "
           f"are {ma.id} and {mf.id}: {judged}):"]
    for r in rows:
        out.append("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                    for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    cmd = info.get("command")
    if cmd is not None:
        out.append(f"the recorded command (pid {command_pid}, {cmd['tasks']} tasks): "
                   f"{ma.id} {_pct(cmd['allocs'], a)}, {mf.id} {_pct(cmd['frees'], f)}; "
                   f"other processes': {_pct(a - cmd['allocs'], a)} and "
                   f"{_pct(f - cmd['frees'], f)}")
    elif info["nr_tasks"]:
        out.append("the recorded command: not known (no command pid in the manifest; "
                   "--command-pid PID)")
    sel = info.get("selected")
    if sel is not None:
        out.append(f"tasks {tasks} ({sel['tasks']} tasks): {sel['allocs']} allocations "
                   f"({ma.id} {_pct(sel['allocs'], a)}), {sel['frees']} frees "
                   f"({mf.id} {_pct(sel['frees'], f)}), "
                   f"{sel['alloc_pages']} and {sel['free_pages']} pages")
    return "\n".join(out) + "\n"


def info_text(name: str, info: dict, manifest: dict | None, command_pid: int | None,
              tasks: str | None) -> str:
    span = (info["last_ns"] - info["first_ns"]) / 1e9 if info["events"] else 0.0
    fmt = info["format"] + (f" v{info['dat_version']}" if info["dat_version"] else "")
    lost = (f"LOST {info['lost_events']} EVENTS" if info["lost_events"]
            else "no events lost")
    if manifest and manifest.get("lost_events") and not info["lost_events"]:
        lost = f"LOST {manifest['lost_events']} EVENTS (the recording's ring-buffer stats)"
    out = [f"{name}: {fmt}, {info['events']} events ({info['records']} records) on "
           f"{info['cpus']} CPUs over {span:.2f} s, {lost}"]
    by = ", ".join(f"{k} {v}" for k, v in info["by_type"].items() if v)
    out.append(f"events: {by or 'none'}")
    if info["unknown_events"] or info["malformed"]:
        out.append(f"not read: {info['unknown_events']} events of other kinds, "
                   f"{info['malformed']} malformed")
    if manifest:
        cmd = shlex.join(manifest.get("command") or []) or "(none: a timed recording)"
        out.append(f"recorded: {cmd}, {manifest['seconds']} s on {manifest['kernel']}"
                   + (f", drained {manifest['drain_seconds']} s after" if "drain_seconds" in manifest
                      else ""))
    return "\n".join(out) + "\n" + tasks_text(info, command_pid, tasks)


def cli(args) -> int:
    """The body of `pagelab trace info` (cli.py parses the arguments)."""
    if args.top < 1:
        raise TraceError("--top must be at least 1")
    with opened(Path(args.trace)) as (path, manifest):
        trace = path / manifest["trace"] if manifest else path
        pid = args.command_pid or (manifest or {}).get("command_pid")
        info = bench_info(trace, pid, args.tasks, args.top)
    if args.json:
        print(json.dumps({**info, "manifest": manifest, "command_pid": pid}, sort_keys=True))
    else:
        print(info_text(args.trace, info, manifest, pid, args.tasks), end="")
    return 0
