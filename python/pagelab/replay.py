"""`pagelab replay`: replay a real trace under designs and score them against the kernel.

  pagelab replay TRACE --design A --design B ... [--state fresh|counts|positional]
                 [--emit-trace DIR] [--label L] [--reps N] [-o FILE]

TRACE is an artifact directory (NAME.pltrace/), an artifact archive (.tar.gz,
.tar.zst; unpacked into a temporary directory first) or a bare trace file.
Each design is one `pagelab-bench replay trace=... design=D --json` process
(C engine, CONTRACT-13.md), designs interleaved A B A B when --reps > 1;
--together runs all designs in one process (design=A,B,...) instead.
Its JSON lines carry a "kernel" record (the kernel's side computed from the
trace and the after-snapshot) and a "replay" record (pagelab's side), with the
same counter keys.  This module only runs the engine and compares counters;
it parses no trace events itself.

The fidelity table: one row per metric, the kernel's value, each design's
value and its ratio design/kernel, plus the total variation distance (TVD)
between the kernel's and the design's end-of-trace free pages by order.
A trace with lost events is flagged in the table, the saved results and the
report, and so is one whose before/after snapshots do not bracket it
(stale_snapshot_text(): vmstat's page counts between them against the trace's).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import designs as designs_mod
from . import files, validate
from .runner import BenchError, Measurement, run_raw, save_results
from .trace_artifact import TraceError, opened

STATES = ("fresh", "counts", "positional")
# (label, counter key or ratio (num, den), target: within 10% when True)
METRICS = [
    ("PCP refills", "pcp_refills", True),
    ("pages per refill", ("pcp_refill_pages", "pcp_refills"), True),
    ("PCP drain calls", "pcp_drain_calls", True),
    ("pages drained", "pcp_drained_pages", True),
    ("zone->lock acquisitions", "zone_lock_acquisitions", True),
    ("fallback events", "fallback_events", False),
    ("  fragmenting", "fallback_fragmenting", False),
    ("  change ownership", "fallback_change_ownership", False),
    ("  pageblocks claimed", "fallback_pageblocks_claimed", False),
    ("buddy direct allocs", "buddy_direct_allocs", False),
    ("buddy direct frees", "buddy_direct_frees", False),
    ("page allocs", "allocs", False),
    ("page frees", "frees", False),
    ("free pages at end", "nr_free_pages_end", False),
    ("PCP pages at end", "pcp_pages_end", False),
    ("vmalloc allocs", "vmalloc_allocs", False),
    ("vmalloc purges", "vmalloc_purges", False),
]
RATIO_TARGET = 0.10
TVD_TARGET = 0.05


def metric_value(counters: dict, key) -> float | None:
    """A counter, or a ratio of two counters; None when missing or 0/0."""
    if isinstance(key, tuple):
        num, den = (counters.get(k) for k in key)
        if num is None or den is None or den == 0:
            return None
        return num / den
    v = counters.get(key)
    return None if v is None else float(v)


def tvd(p: list[float], q: list[float]) -> float | None:
    """Total variation distance between two histograms (normalised here)."""
    if not p or not q or len(p) != len(q):
        return None
    sp, sq = float(sum(p)), float(sum(q))
    if sp <= 0 or sq <= 0:
        return None
    return 0.5 * sum(abs(a / sp - b / sq) for a, b in zip(p, q))


def fidelity_rows(kernel: dict, designs: dict[str, dict]) -> list[dict]:
    """Rows {metric, kernel, values{design: v}, ratios{design: r}, target, ok{design: bool}}."""
    kc = kernel.get("counters", {})
    rows = []
    for label, key, target in METRICS:
        kv = metric_value(kc, key)
        row = {"metric": label, "kernel": kv, "values": {}, "ratios": {}, "target": target, "ok": {},
               "fraction": isinstance(key, tuple)}
        for d, rec in designs.items():
            v = metric_value(rec.get("counters", {}), key)
            row["values"][d] = v
            if v is None or kv is None:
                r = None
            elif kv:
                r = v / kv
            else:                      # the kernel had none: 1x if pagelab has none too
                r = 1.0 if v == 0 else None   # else no ratio (JSON has no Infinity)
            row["ratios"][d] = r
            if target:
                row["ok"][d] = r is not None and abs(r - 1) <= RATIO_TARGET
        rows.append(row)
    row = {"metric": "buddyinfo TVD", "kernel": 0.0, "values": {}, "ratios": {}, "target": True,
           "ok": {}}
    for d, rec in designs.items():
        t = tvd(kc.get("free_pages_by_order_end") or [],
                rec.get("counters", {}).get("free_pages_by_order_end") or [])
        row["values"][d] = t
        row["ok"][d] = t is not None and t <= TVD_TARGET
    rows.append(row)
    return rows


def _fmt(v, fraction: bool = False) -> str:
    if v is None:
        return "-"
    if fraction:
        return f"{v:.2f}"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}"
    return f"{int(v)}"


def fidelity_text(result: dict) -> str:
    """The fidelity table of one replay result (see run()), as aligned text."""
    rows, designs = result["rows"], list(result["designs"])
    head = ["metric", "kernel"]
    for d in designs:
        head += [d, "x kernel"]
    table = [head]
    for r in rows:
        line = [r["metric"], "" if r["metric"] == "buddyinfo TVD" else _fmt(r["kernel"], r.get("fraction"))]
        for d in designs:
            line.append(_fmt(r["values"].get(d), r.get("fraction")))
            if r["metric"] == "buddyinfo TVD":
                mark = "" if r["values"].get(d) is None else (" ok" if r["ok"].get(d) else " MISS")
                line.append(f"<= {TVD_TARGET}{mark}")
            else:
                rr = r["ratios"].get(d)
                mark = "" if not r["target"] or rr is None else (" ok" if r["ok"][d] else " MISS")
                v = r["values"].get(d)
                none = "inf" if r["kernel"] == 0 and v else "-"   # the kernel had none
                line.append((none if rr is None else f"{rr:.2f}x") + mark)
        table.append(line)
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    out = [f"trace {result['trace']}: {result['events']} events, state {result['state']}"]
    if result["lost_events"]:
        out.append(f"WARNING: LOSSY TRACE: the kernel lost {result['lost_events']} events while "
                   "recording; every figure below misses them")
    stale = stale_snapshot_text(result)
    if stale:
        out.append("WARNING: " + stale)
    for row in table:
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    out.append(f"targets: within {RATIO_TARGET:.0%} of the kernel on the rows marked ok/MISS; "
               f"buddyinfo TVD <= {TVD_TARGET}")
    for d in designs:
        rec = result["designs"][d]
        if rec.get("tick_phase_ms") is not None:   # the engine tried four phases
            calls = "/".join(str(c) for c in rec.get("tick_probe_drain_calls") or [])
            phases = "/".join(str(c) for c in rec.get("tick_probe_ms") or [])
            out.append(f"vmstat tick ({d}): replayed at {phases} ms (drain calls {calls}); "
                       f"the run at {rec['tick_phase_ms']} ms reported, nearest their median")
    for d in designs:
        w = result["designs"][d].get("warnings") or {}
        if any(w.values()):
            out.append(f"warnings ({d}): " + ", ".join(f"{k} {v}" for k, v in sorted(w.items()) if v))
    return "\n".join(out) + "\n"


def stale_snapshot_text(result: dict) -> str | None:
    """The warning for a trace whose snapshots do not bracket it, else None.

    The engine compares the pages vmstat saw allocated and freed between the
    before and after snapshots with the trace's (pl_snapshot_gap()); far
    apart, the loaded state is not the one the trace started from."""
    g = (result.get("kernel") or {}).get("snapshot_gap")
    if not g or not g.get("stale"):
        return None
    by_alloc = abs(g["alloc_gap"]) >= abs(g["free_gap"])
    return (f"STALE SNAPSHOT: the kernel {'allocated' if by_alloc else 'freed'} "
            f"{g['alloc_gap'] if by_alloc else g['free_gap']} pages outside the trace "
            f"({g['share']:.0%} of vmstat's count between the snapshots): they were not taken "
            "right at the trace's ends, so the loaded state is not its starting state and every "
            "figure is suspect")


def _high_order_share(pages: list | None) -> float | None:
    """Share of free pages in order-9 and order-10 blocks (pageblock-sized and up)."""
    if not pages or sum(pages) <= 0:
        return None
    return sum(pages[9:]) / sum(pages)


def _ratio_cell(v, kv, name: str, fraction: bool) -> str:
    if name == "kernel":
        return _fmt(v, fraction)
    if v is None or kv is None:
        return "-"
    return f"{v / kv:.2f}x" if kv else ("1.00x" if v == 0 else "inf")


def presets_text(docs: list[dict]) -> str:
    """One row per (trace, design) of saved replay results: zone->lock and fragmentation.

    Columns: PCP refills, pages per refill, drain calls and pages drained (the
    kernel's value in the "kernel" row, ratios to it in the others); zone->lock
    acquisitions and their ratio to the kernel's estimate;
    fallback events, fragmenting ones and pageblocks claimed (the kernel's in
    the "kernel" row); the share of free pages in order >= 9 blocks at the end;
    the buddyinfo TVD against the kernel.
    """
    head = ["trace", "state", "design", "refills", "pages/refill", "drain calls", "drained",
            "zone->lock", "x kernel", "fallbacks", "fragmenting", "claimed", "free >=o9", "TVD"]
    table = [head]
    for doc in docs:
        rep = doc.get("replay")
        if not rep:
            continue
        kc = rep["kernel"].get("counters", {})
        kz = kc.get("zone_lock_acquisitions")
        rows = [("kernel", kc)] + [(d, r.get("counters", {})) for d, r in rep["designs"].items()]
        for name, c in rows:
            z = c.get("zone_lock_acquisitions")
            share = _high_order_share(c.get("free_pages_by_order_end"))
            t = None if name == "kernel" else tvd(kc.get("free_pages_by_order_end") or [],
                                                  c.get("free_pages_by_order_end") or [])
            lost = " (LOSSY)" if rep.get("lost_events") and name == "kernel" else ""
            lost += " (STALE)" if stale_snapshot_text(rep) and name == "kernel" else ""
            ratios = [_ratio_cell(metric_value(c, key), metric_value(kc, key), name,
                                  isinstance(key, tuple))
                      for key in ("pcp_refills", ("pcp_refill_pages", "pcp_refills"),
                                  "pcp_drain_calls", "pcp_drained_pages")]
            table.append([rep["label"] + lost, rep["state"], name] + ratios + [_fmt(z),
                          "" if name == "kernel" or not kz or z is None else f"{z / kz:.2f}x",
                          _fmt(c.get("fallback_events")), _fmt(c.get("fallback_fragmenting")),
                          _fmt(c.get("fallback_pageblocks_claimed")),
                          "-" if share is None else f"{share:.1%}", "" if t is None else f"{t:.3f}"])
    if len(table) == 1:
        raise BenchError("no replay results among the files given")
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i < 3 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                     for r in table) + "\n"


def _records(stdout: str, designs: list[str]) -> tuple[dict, dict[str, dict]]:
    """The kernel record and the replay record of each of @designs, from JSON lines."""
    kernel, reps = None, {}
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise BenchError("pagelab-bench replay printed a line that is not JSON") from None
        if not isinstance(rec, dict):
            continue
        if rec.get("test") == "kernel":
            kernel = rec
        elif rec.get("test") == "replay":
            reps[rec.get("design")] = rec
    if kernel is None or not reps:
        raise BenchError("pagelab-bench replay gave no kernel and replay records")
    if len(designs) == 1 and len(reps) == 1:
        reps = {designs[0]: next(iter(reps.values()))}
    missing = [d for d in designs if d not in reps]
    if missing:
        raise BenchError(f"pagelab-bench replay gave no record for design '{missing[0]}'")
    return kernel, reps


def buddyinfo_pages(text: str) -> list[int]:
    """Free PAGES per order summed over zones, from /proc/buddyinfo text."""
    pages = [0] * 11
    for line in text.splitlines():
        if ", zone" not in line:
            continue
        counts = line.split()[4:]
        for order, c in enumerate(counts[:11]):
            pages[order] += int(c) << order
    return pages


def _snapshot_pages(path: Path, manifest: dict | None, given: dict) -> dict | None:
    """The kernel's free pages by order before and after (the report's markers):
    from @given's "before"/"after" directories, else the artifact's."""
    out = {}
    for when in ("before", "after"):
        d = given.get(when)
        if d is None and manifest is not None and when in manifest:
            d = path / manifest[when]
        try:
            out[when] = buddyinfo_pages(files.read_text(Path(d) / "buddyinfo", 64 << 20))
        except (TypeError, OSError, ValueError, IndexError):
            return None
    return out


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "design"


def run(trace: str | Path, designs: list[str], state: str | None = None,
        emit_trace: str | Path | None = None, reps: int = 1, label: str | None = None,
        together: bool | None = None, jobs: int | None = None, tick: str | None = None,
        snapshot: str | Path | None = None, after: str | Path | None = None,
        pcp_busy: bool = True) -> dict:
    """Replay @trace under each design (interleaved @reps times); the scored result.

    @snapshot: a directory of /proc/{zoneinfo,buddyinfo,pagetypeinfo,vmstat}
    taken right before the trace, for a bare trace file (an artifact's own
    before/ is the default); @after: the same, taken right after (the
    kernel's end state the table compares with; default the artifact's after/).

    With @jobs > 1, up to @jobs pagelab-bench processes of one rep run at once
    (the counters are deterministic; only wall time changes).

    With @together (the default when @reps is 1), one pagelab-bench process
    per rep replays every design (design=A,B,...): the trace's text is parsed
    once, into the binary event stream every design x tick probe replays from,
    up to @jobs of them at once in processes of their own (jobs=).

    @tick: when each vCPU's vmstat tick runs: "kernel" (the engine's default:
    four runs around the trace's own phase, ticking at its kworker drains, or
    at four phases across the second without one; the run nearest their
    median reported), "first" (one second after the first event) or
    "0".."999" (ms into each second of the trace clock, every vCPU).

    @pcp_busy: False replays every free of a PCP order to its CPU's PCP; by
    default the frees the trace shows found their PCP busy go to the buddy.

    Returns {"trace", "label", "state", "events", "lost_events", "kernel": record,
    "designs": {design: replay record of rep 0}, "rows": fidelity_rows(...),
    "measurements": [Measurement ...], "deterministic": bool}.
    """
    if state is not None and state not in STATES:
        raise BenchError(f"unknown state '{state}' ({', '.join(STATES)})")
    if reps < 1:
        raise BenchError("--reps must be at least 1")
    if together is None:
        together = reps == 1
    if jobs is None:        # together: the cores, in pagelab-bench; apart: one at a time
        jobs = (os.cpu_count() or 1) if together else 1
    if jobs < 1:
        raise BenchError("--jobs must be at least 1")
    if not designs:
        designs = ["v6.18"]
    if len(set(designs)) != len(designs):
        raise BenchError("a design is given twice")
    designs_mod.check(designs)     # the C parser, before the trace is read
    tick_param = _tick_param(tick)
    if not pcp_busy:
        tick_param["pcp_busy"] = "0"
    for key, d in (("snapshot", snapshot), ("after", after)):
        if d is not None:
            if not Path(d).is_dir():
                raise BenchError(f"--{key} {d}: not a directory")
            tick_param[key] = str(Path(d).resolve())
    emit_dir = Path(emit_trace) if emit_trace else None
    if emit_dir is not None:
        if emit_dir.exists() and not emit_dir.is_dir():
            raise BenchError(f"--emit-trace {emit_dir}: not a directory")
        emit_dir.mkdir(parents=True, exist_ok=True)
    trace = Path(trace)
    label = label or trace.name.split(".")[0]
    kernel, first, measurements, deterministic = None, {}, [], True
    with opened(trace) as (path, manifest):
        snap_pages = _snapshot_pages(path, manifest, {"before": snapshot, "after": after})
        for rep in range(reps):
            batches = [designs] if together else [[d] for d in designs]
            calls = []
            for batch in batches:
                params = {"trace": str(path), "design": ",".join(batch)}
                if together:
                    params["jobs"] = str(jobs)
                if state:
                    params["state"] = state
                params.update(tick_param)
                if emit_dir is not None and rep == 0:
                    name = _safe(batch[0]) if len(batch) == 1 else "%s"
                    params["emit_trace"] = str(emit_dir / f"{_safe(label)}-{name}.trace")
                calls.append(params)
            if jobs > 1:        # the processes run at once; their results are taken in order
                with ThreadPoolExecutor(max_workers=jobs) as pool:
                    outs = list(pool.map(lambda p: run_raw("replay", p), calls))
            else:
                outs = [run_raw("replay", p) for p in calls]
            for batch, out in zip(batches, outs):
                k, recs = _records(out, batch)
                kernel = kernel or k
                for d in batch:
                    rec = recs[d]
                    if d in first:
                        deterministic &= first[d].get("counters") == rec.get("counters")
                    else:
                        first[d] = rec
                for d, r in [("kernel", k)] + [(d, recs[d]) for d in batch]:
                    m = Measurement.from_dict({**r, "design": d})
                    m.rep = rep
                    m.params = {**m.params, "label": label, "state": r.get("state", state)}
                    measurements.append(m)
    lost = int(kernel.get("lost_events") or 0)
    if manifest is not None:
        lost = max(lost, int(manifest.get("lost_events") or 0))
    return {
        "trace": str(trace), "label": label,
        "state": first[designs[0]].get("state", state or "default"),
        "events": kernel.get("events", first[designs[0]].get("events")), "lost_events": lost,
        "kernel": kernel, "designs": first, "rows": fidelity_rows(kernel, first),
        "measurements": measurements, "deterministic": deterministic,
        "manifest": manifest, "kernel_buddyinfo_pages": snap_pages,
    }


def _tick_param(tick: str | None) -> dict:
    """pagelab-bench's tick=/tick_ms= for --tick (kernel, first or 0..999 ms)."""
    if tick is None:
        return {}
    if tick in ("kernel", "first"):
        return {"tick": tick}
    if tick.isdigit() and int(tick) <= 999:
        return {"tick_ms": str(int(tick))}
    raise BenchError(f"--tick {tick}: want kernel, first or 0..999 (ms into each second)")


def save(result: dict, path: Path, command: list[str]) -> Path:
    """Save like `pagelab bench`: measurements + machine info, the replay under "replay"."""
    extra = {"replay": {k: v for k, v in result.items() if k != "measurements"}}
    return save_results(path, result["measurements"], command=command, extra=extra)


def default_path(out_dir: Path, label: str, state: str) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return out_dir / f"replay-{_safe(label)}-{state}-{stamp}.json"


def cli(args, argv: list[str], out_dir: Path) -> int:
    """The body of `pagelab replay` (cli.py parses the arguments)."""
    if args.output is not None:
        validate.writable(args.output)     # before the run: no device, FIFO or ""
    try:
        result = run(args.trace, args.design or [], args.state, args.emit_trace,
                     args.reps, args.label, args.together, args.jobs, args.tick,
                     args.snapshot, args.after, not args.no_pcp_busy)
    except TraceError as e:
        raise BenchError(str(e)) from None
    sys.stdout.write(fidelity_text(result))
    if not result["deterministic"]:
        print("pagelab: warning: repeated replays of one design gave different counters",
              file=sys.stderr)
    path = Path(args.output) if args.output else default_path(out_dir, result["label"],
                                                              result["state"])
    save(result, path, argv)
    print(f"saved {path}", file=sys.stderr)
    return 0
