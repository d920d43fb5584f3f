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

The replay table: one row per replay metric of the registry (metrics.py,
declared in C), the kernel's value, the faithful design's (v6.18, or
--faithful DESIGN; it always runs) with its ratio to the kernel judged
ok/MISS where the registry compares the figure with the kernel, and the
spread of its tick probes; every other design as its change against the
faithful design, better or worse by the metric's direction.  The total
variation distance (TVD) between the kernel's and a design's end-of-trace
free pages by order is a row of its own.
A trace with lost events is flagged in the table, the saved results and the
report, and so is one whose before/after snapshots do not bracket it
(stale_snapshot_text(): vmstat's page counts between them against the trace's).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from . import designs as designs_mod
from . import files, metrics, stats, validate
from .runner import BenchError, Measurement, run_raw, save_results
from .trace_artifact import TraceError, opened
from .trace_info import bench_info, tasks_text

STATES = ("fresh", "counts", "positional")
FAITHFUL = "v6.18"      # the design judged against the kernel unless --faithful names another
RATIO_TARGET = 0.10
TVD_TARGET = 0.05
MAX_REPS = 1000         # replays per design: the bound of pagelab bench's --reps
MAX_JOBS = 256          # processes at once: pagelab-bench replay's jobs= bound
# The registry ids of figures computed here rather than read from a counter.
SHARE_ID, TVD_ID = "free-high-order-share", "buddyinfo-tvd"


def _high_order_share(pages: list | None) -> float | None:
    """Share of free pages in order-9 and order-10 blocks (pageblock-sized and up)."""
    if not pages or sum(pages) <= 0:
        return None
    return sum(pages[9:]) / sum(pages)


def metric_value(counters: dict, key) -> float | None:
    """A counter, or a ratio of two counters; None when missing or 0/0.

    @key: a counter name, a (num, den) pair, or a registry Metric (its
    counter, or counter/per; the end-of-trace high-order share computed)."""
    if isinstance(key, metrics.Metric):
        if key.id == SHARE_ID:
            return _high_order_share(counters.get("free_pages_by_order_end"))
        key = (key.counter, key.per) if key.per else key.counter
    if isinstance(key, tuple):
        num, den = (counters.get(k) for k in key)
        if num is None or den is None or den == 0:
            return None
        return num / den
    v = counters.get(key)
    return None if v is None or isinstance(v, (list, dict)) else float(v)


def tvd(p: list[float], q: list[float]) -> float | None:
    """Total variation distance between two histograms (normalised here)."""
    if not p or not q or len(p) != len(q):
        return None
    sp, sq = float(sum(p)), float(sum(q))
    if sp <= 0 or sq <= 0:
        return None
    return 0.5 * sum(abs(a / sp - b / sq) for a, b in zip(p, q))


def _ratio(v, kv) -> float | None:
    if v is None or kv is None:
        return None
    if kv:
        return v / kv
    return 1.0 if v == 0 else None   # the kernel had none: no ratio (JSON has no Infinity)


def _value(rec: dict, kernel: dict, m: metrics.Metric) -> float | None:
    c = rec.get("counters", {})
    if m.id == TVD_ID:
        if rec is kernel:
            return 0.0
        return tvd(kernel.get("counters", {}).get("free_pages_by_order_end") or [],
                   c.get("free_pages_by_order_end") or [])
    return metric_value(c, m)


def _spread(rec: dict, m: metrics.Metric) -> tuple[float, float] | None:
    """(min, max) of @m over the tick probes of @rec, when the engine probed."""
    probes = rec.get("tick_probe_counters") or []
    vals = [metric_value(p, m) for p in probes]
    vals = [v for v in vals if v is not None]
    return (min(vals), max(vals)) if len(vals) >= 2 and len(vals) == len(probes) else None


def _change(v, base) -> float | None:
    """The plain change of @v against @base, in percent (None when undefined)."""
    if v is None or base is None:
        return None
    if base == 0:
        return 0.0 if v == 0 else None
    return (v / base - 1.0) * 100.0


def _judgement(change: float | None, direction: str) -> str:
    if change is None:
        return ""
    if abs(change) < 0.005:
        return "same"
    if direction == metrics.NEUTRAL:
        return "not judged"
    return "better" if (change < 0) == (direction == metrics.LOWER) else "worse"


def fidelity_rows(kernel: dict, designs: dict[str, dict], faithful: str | None = None,
                  samples: dict | None = None) -> list[dict]:
    """One row per replay metric of the registry (metrics.replay_metrics()).

    Row: {"metric": id, "label", "unit", "direction", "kernel_compared", "kernel": value,
    "values": {design: v}, "ratios": {design: v/kernel}, "ok": {faithful: bool} (only the
    faithful design, only kernel-compared metrics), "spread": {design: [min, max]} over the
    tick probes, "in_spread": {faithful: bool}, "changes": {design: % vs faithful},
    "judged": {design: better|worse|same|not judged}, "marks": {design: (I)|(R)|""} with
    @samples ({design: [counters per rep]}) of two reps or more}."""
    faithful = faithful if faithful in designs else None
    rows = []
    for m in metrics.replay_metrics():
        kv = None if not m.kernel and m.id == "zone-lock-actual" else _value(kernel, kernel, m)
        row = {"metric": m.id, "label": m.name, "unit": m.unit, "direction": m.direction,
               "kernel_compared": m.kernel, "kernel": kv, "values": {}, "ratios": {}, "ok": {},
               "spread": {}, "in_spread": {}, "changes": {}, "judged": {}, "marks": {}}
        for d, rec in designs.items():
            v = _value(rec, kernel, m)
            row["values"][d] = v
            row["ratios"][d] = None if m.id == TVD_ID else _ratio(v, kv)
            sp = _spread(rec, m)
            if sp:
                row["spread"][d] = list(sp)
        if faithful is not None:
            base = row["values"][faithful]
            if m.kernel:
                if m.id == TVD_ID:
                    ok = base is not None and base <= TVD_TARGET
                else:
                    r = row["ratios"][faithful]
                    ok = r is not None and abs(r - 1) <= RATIO_TARGET
                row["ok"][faithful] = ok
                sp = row["spread"].get(faithful)
                row["in_spread"][faithful] = bool(sp and kv is not None and sp[0] <= kv <= sp[1])
            for d in designs:
                if d == faithful:
                    continue
                ch = _change(row["values"][d], base)
                row["changes"][d] = ch
                row["judged"][d] = _judgement(ch, m.direction)
                if samples and len(samples.get(d, [])) >= 2 and len(samples.get(faithful, [])) >= 2:
                    vb = [_value({"counters": c}, kernel, m) for c in samples[faithful]]
                    vn = [_value({"counters": c}, kernel, m) for c in samples[d]]
                    if None not in vb and None not in vn:
                        row["marks"][d] = stats.verdict(vb, vn, m.direction)
        rows.append(row)
    return rows


def _fmt(v, fraction: bool = False) -> str:
    if v is None:
        return "-"
    if fraction:
        return f"{v:.2f}" if v >= 0.1 or v == 0 else f"{v:.3f}"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}"
    return f"{int(v)}"


def _is_fraction(row: dict) -> bool:
    return row["unit"] == "fraction" or row["metric"] == "pages-per-refill"


def _kernel_cell(row: dict, d: str) -> str:
    """The faithful design's cell against the kernel: ratio and ok/MISS."""
    if row["metric"] == TVD_ID:
        v = row["values"].get(d)
        if v is None:
            return "-"
        return f"<= {TVD_TARGET} " + ("ok" if row["ok"].get(d) else "MISS")
    r = row["ratios"].get(d)
    v = row["values"].get(d)
    if row["kernel"] is None:
        return ""
    cell = ("inf" if row["kernel"] == 0 and v else "-") if r is None else f"{r:.2f}x"
    if row["kernel_compared"] and d in row["ok"]:
        cell += " ok" if row["ok"][d] else " MISS"
        if not row["ok"][d] and row["in_spread"].get(d):
            cell += " (kernel inside the spread)"
    return cell


def _change_cell(row: dict, d: str) -> str:
    """Another design's cell: its change against the faithful design, judged
    by the metric's direction ("=" when equal; "up from 0" when the faithful
    design had none, since no percentage exists)."""
    v = row["values"].get(d)
    if v is None:
        return "-"
    ch, how = row["changes"].get(d), row["judged"].get(d, "")
    mark = row["marks"].get(d, "")
    mark = mark + " " if mark else ""
    if ch is None:               # the faithful design's figure is 0 (or missing)
        if v == 0:
            return "="
        worse = row["direction"] == metrics.LOWER
        how = "not judged" if row["direction"] == metrics.NEUTRAL else ("worse" if worse else "better")
        return f"{mark}up from 0 {how}"
    if how == "same" or ch == 0:
        return "="
    body = f"{ch:+.1f}%" if abs(ch) >= 1 else f"{ch:+.2f}%"
    return f"{mark}{body} {how}"


def _spread_cell(row: dict, d: str) -> str:
    sp = row["spread"].get(d)
    if not sp:
        return ""
    f = _is_fraction(row)
    return f"{_fmt(sp[0], f)}..{_fmt(sp[1], f)}"


def faithful_of(result: dict) -> str | None:
    """The design judged against the kernel: the result's, else v6.18 when it ran."""
    f = result.get("faithful")
    if f in result.get("designs", {}):
        return f
    return FAITHFUL if FAITHFUL in result.get("designs", {}) else None


def _label(row: dict) -> str:
    way = {metrics.LOWER: "lower", metrics.HIGHER: "higher"}.get(row["direction"], "neutral")
    return f"{row['label']} ({row['unit']}, {way})"


def fidelity_text(result: dict) -> str:
    """The replay table of one result (see run()), as aligned text.

    The faithful design alone is judged against the kernel (ok/MISS, within
    10%; buddyinfo TVD <= 0.05) with the tick probes' spread beside it; every
    other design is shown as its change against the faithful design, better
    or worse by the metric registry's direction, (I)/(R) where reps allow."""
    faithful = faithful_of(result)
    rows = result.get("rows")
    if not rows or "label" not in rows[0]:    # none saved, or an older result's
        rows = fidelity_rows(result["kernel"], result["designs"], faithful)
    others = [d for d in result["designs"] if d != faithful]
    probed = faithful is not None and any(r["spread"].get(faithful) for r in rows)
    head = ["metric (unit, better)", "kernel"]
    if faithful:
        head += [faithful, "x kernel"] + (["tick probes"] if probed else [])
    for d in others:
        head += [d, f"vs {faithful}" if faithful else "x kernel"]
    table = [head]
    for r in rows:
        f = _is_fraction(r)
        fmt = (lambda v: "-" if v is None else f"{v:.3f}") if r["metric"] == TVD_ID \
            else (lambda v: _fmt(v, f))
        line = [_label(r), "" if r["metric"] == TVD_ID else fmt(r["kernel"])]
        if faithful:
            line += [fmt(r["values"].get(faithful)), _kernel_cell(r, faithful)]
            if probed:
                line.append(_spread_cell(r, faithful))
        for d in others:
            line.append(fmt(r["values"].get(d)))
            line.append(_change_cell(r, d) if faithful else _kernel_cell(r, d))
        table.append(line)
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    out = [f"trace {result['trace']}: {result['events']} events, state {result['state']}"]
    if result["lost_events"]:
        out.append(f"WARNING: LOSSY TRACE: the kernel lost {result['lost_events']} events while "
                   "recording; every figure below misses them")
    stale = stale_snapshot_text(result)
    if stale:
        out.append("WARNING: " + stale)
    for d, rec in result["designs"].items():
        for note in rec.get("design_notes") or []:
            out.append(f"design {d}: {note}")
    if result.get("tasks"):
        out.append(tasks_text(result["tasks"], result.get("command_pid"),
                              result.get("task_filter")).rstrip("\n"))
    for row in table:
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    if faithful:
        out.append(f"{faithful} is the faithful design: judged against the kernel, ok within "
                   f"{RATIO_TARGET:.0%} on the rows the registry compares with it (buddyinfo TVD "
                   f"<= {TVD_TARGET})" + (", its tick probes' min..max beside it" if probed else "")
                   + ("; every other design as its change against it (better/worse by the "
                      "metric's direction; (I)/(R): 95% intervals over the reps do not overlap)"
                      if others else ""))
    else:
        out.append(f"no faithful design ran ({FAITHFUL}, or --faithful DESIGN): ratios to the "
                   "kernel shown, none judged")
    for d in result["designs"]:
        rec = result["designs"][d]
        if rec.get("tick_phase_ms") is not None:   # the engine tried four phases
            calls = "/".join(str(c) for c in rec.get("tick_probe_drain_calls") or [])
            phases = "/".join(str(c) for c in rec.get("tick_probe_ms") or [])
            out.append(f"vmstat tick ({d}): replayed at {phases} ms (drain calls {calls}); "
                       f"the run at {rec['tick_phase_ms']} ms reported, nearest their median")
    out += timing_lines(result)
    for d in result["designs"]:
        w = result["designs"][d].get("warnings") or {}
        if any(w.values()):
            out.append(f"warnings ({d}): " + ", ".join(f"{k} {v}" for k, v in sorted(w.items()) if v))
    return "\n".join(out) + "\n"


def timing_lines(result: dict) -> list[str]:
    """Parse and replay throughput, from the engine's timings."""
    out = []
    n = result.get("events") or 0
    kt = (result.get("kernel") or {}).get("timings") or {}
    if kt.get("parse_s"):
        out.append(f"parse: {n} events in {kt['parse_s']:.2f} s "
                   f"({n / kt['parse_s'] / 1e6:.2f} M events/s, the kernel's side scored too)")
    for d, rec in result.get("designs", {}).items():
        tm = rec.get("timings") or {}
        if tm.get("replay_s"):
            total = tm.get("replay_total_s") or tm["replay_s"]
            out.append(f"replay ({d}): {tm['replay_s']:.2f} s ({n / tm['replay_s'] / 1e6:.2f} M "
                       f"events/s)" + (f", {total:.2f} s over every tick probe"
                                       if total > tm["replay_s"] * 1.01 else ""))
    return out


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


# replay-table's columns: registry ids (a column each), in this order
TABLE_METRICS = ("pcp-refills", "pages-per-refill", "pcp-drain-calls", "pcp-drained-pages",
                 "zone-lock-est", "zone-lock-actual", "fallback-events", "fallback-fragmenting",
                 "fallback-pageblocks-claimed", SHARE_ID, TVD_ID)
SHORT = {"pcp-refills": "refills", "pages-per-refill": "pages/refill",
         "pcp-drain-calls": "drain calls", "pcp-drained-pages": "drained",
         "zone-lock-est": "zone->lock", "zone-lock-actual": "counted",
         "fallback-events": "fallbacks", "fallback-fragmenting": "fragmenting",
         "fallback-pageblocks-claimed": "claimed", SHARE_ID: "free >=o9", TVD_ID: "TVD"}


def samples_of(measurements, designs) -> dict:
    """{design: [counters of each rep]} from a replay's measurements."""
    out: dict = {}
    for m in measurements:
        d = m.design if not isinstance(m, dict) else m.get("design")
        c = m.counters if not isinstance(m, dict) else m.get("counters", {})
        if d in designs:
            out.setdefault(d, []).append(c)
    return out


def _table_cell(row: dict, d: str | None, faithful: str | None) -> str:
    f = _is_fraction(row)
    if d is None:                                  # the kernel's row
        if row["metric"] == TVD_ID:
            return ""
        return _fmt(row["kernel"], f) if row["metric"] != SHARE_ID else \
            ("-" if row["kernel"] is None else f"{row['kernel']:.1%}")
    v = row["values"].get(d)
    val = ("-" if v is None else f"{v:.1%}") if row["metric"] == SHARE_ID else _fmt(v, f)
    if row["metric"] == TVD_ID:
        val = "-" if v is None else f"{v:.3f}"
    if d == faithful:
        if not row["kernel_compared"] or row["metric"] == TVD_ID:
            mark = {True: " ok", False: " MISS"}.get(row["ok"].get(d), "")
            return val + mark
        r = row["ratios"].get(d)
        k = "-" if r is None else f"{r:.2f}x"
        return f"{val} ({k} {'ok' if row['ok'].get(d) else 'MISS'}" \
               f"{', in spread' if not row['ok'].get(d) and row['in_spread'].get(d) else ''})"
    if faithful is None:
        return val
    ch = _change_cell(row, d)
    return f"{val} ({ch})" if ch not in ("-", "=") else (val if ch == "-" else f"{val} (=)")


def presets_text(docs: list[dict]) -> str:
    """One row per (trace, design) of saved replay results.

    The kernel's row holds its figures; the faithful design's row its figures
    with the ratio to the kernel and ok/MISS on the figures the registry
    compares with the kernel; every other design's row its figures with the
    change against the faithful design, better/worse by the registry's
    direction ((I)/(R) where the result has reps). Columns: TABLE_METRICS.
    """
    reg = metrics.registry()
    head = ["trace", "state", "design"] + [SHORT[i] for i in TABLE_METRICS]
    table = [head]
    for doc in docs:
        rep = doc.get("replay")
        if not rep:
            continue
        for key in ("kernel", "designs"):
            if not isinstance(rep.get(key), dict):
                raise BenchError(f"{doc.get('path', 'results')}: its replay section has no "
                                 f"'{key}' (not a pagelab replay result, or a damaged one)")
        faithful = faithful_of(rep)
        rows = {r["metric"]: r for r in fidelity_rows(
            rep["kernel"], rep["designs"], faithful,
            samples_of(doc.get("measurements", []), rep["designs"]))}
        lost = " (LOSSY)" if rep.get("lost_events") else ""
        lost += " (STALE)" if stale_snapshot_text(rep) else ""
        order = [None] + ([faithful] if faithful else []) + \
                [d for d in rep["designs"] if d != faithful]
        for d in order:
            name = "kernel" if d is None else d + (" (faithful)" if d == faithful else "")
            table.append([rep.get("label", "?") + (lost if d is None else ""),
                          rep.get("state", "?"), name]
                         + [_table_cell(rows[i], d, faithful) for i in TABLE_METRICS])
    if len(table) == 1:
        raise BenchError("no replay results among the files given")
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) if i < 3 else c.rjust(w)
                     for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in table]
    out.append("columns: " + "; ".join(
        f"{SHORT[i]} = {reg[i].name} ({reg[i].unit}, "
        f"{ {'lower': 'lower is better', 'higher': 'higher is better'}.get(reg[i].direction, 'not judged') })"
        for i in TABLE_METRICS if i in reg))
    out.append("the faithful design: (ratio to the kernel, ok within 10% / MISS; TVD ok <= 0.05); "
               "every other design: (change against the faithful design, better/worse)")
    for doc in docs:      # what a design changed in the loaded state, or could not
        rep = doc.get("replay") or {}
        for d, rec in (rep.get("designs") or {}).items():
            for note in rec.get("design_notes") or []:
                out.append(f"design {d} ({rep.get('label', '?')}): {note}")
    return "\n".join(out) + "\n"

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
        pcp_busy: bool = True, faithful: str | None = None,
        tasks: str | None = None, cache: bool = True) -> dict:
    """Replay @trace under each design (interleaved @reps times); the scored result.

    @tasks (pids, comms, "command"): their share of the trace's allocations and
    frees is reported too (result["tasks"]["selected"]); the replay stays
    system-wide.

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

    @cache: False parses the trace's text in every process and stores
    nothing; by default pagelab-bench reads the events from the
    decoded-stream cache when an earlier run stored this file content's
    (src/trace/evcache.c), so reps and later runs skip the text parse.

    @pcp_busy: False replays every free of a PCP order to its CPU's PCP; by
    default the frees the trace shows found their PCP busy go to the buddy.

    @faithful: the design judged against the kernel (default v6.18); it is
    run first when @designs lack it (a spec building the same design counts).

    Returns {"trace", "label", "state", "events", "lost_events", "kernel": record,
    "designs": {design: replay record of rep 0}, "faithful": design,
    "rows": fidelity_rows(...),
    "measurements": [Measurement ...], "deterministic": bool}.
    """
    if state is not None and state not in STATES:
        raise BenchError(f"unknown state '{state}' ({', '.join(STATES)})")
    for name, v in (("reps", reps), ("jobs", jobs)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TypeError(f"{name}: an int, not {type(v).__name__}")
    if reps < 1:
        raise BenchError("--reps must be at least 1")
    if reps > MAX_REPS:
        raise BenchError(f"--reps {reps}: at most {MAX_REPS}")
    if together is None:
        together = reps == 1
    if jobs is None:        # together: the cores, in pagelab-bench; apart: one at a time
        jobs = (os.cpu_count() or 1) if together else 1
    if jobs < 1:
        raise BenchError("--jobs must be at least 1")
    if jobs > MAX_JOBS:
        raise BenchError(f"--jobs {jobs}: at most {MAX_JOBS}")
    if not designs:
        designs = ["v6.18"]
    if len(set(designs)) != len(designs):
        raise BenchError("a design is given twice")
    canon = designs_mod.check(designs)     # the C parser, before the trace is read
    want = faithful or FAITHFUL
    fcanon = designs_mod.canonical([want])[0]
    faithful = next((d for d in designs if canon[d] == fcanon), None)
    if faithful is None:
        designs = [want] + list(designs)
        faithful = want
    tick_param = _tick_param(tick)
    if not pcp_busy:
        tick_param["pcp_busy"] = "0"
    if not cache:
        tick_param["cache"] = "0"
    for key, d in (("snapshot", snapshot), ("after", after)):
        if d is not None:
            if not Path(d).is_dir():
                raise BenchError(f"--{key} {d}: not a directory")
            tick_param[key] = str(Path(d).resolve())
    emit_dir = Path(emit_trace) if emit_trace is not None else None
    if emit_dir is not None:
        try:
            files.check_output_dir(emit_dir)
        except files.ValidationError as e:
            raise BenchError(f"--emit-trace: {e}") from None
    trace = Path(trace)
    label = label or trace.name.split(".")[0]
    kernel, first, measurements, deterministic = None, {}, [], True
    with opened(trace) as (path, manifest), _made_for_the_run(emit_dir):
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
        # who allocated: the replay is system-wide, the header says whose events they are
        # (after the replays, which report a bad trace in their own words; best effort)
        command_pid = (manifest or {}).get("command_pid")
        try:
            who = bench_info(path / manifest["trace"] if manifest else path, command_pid, tasks)
        except TraceError:
            who = None
    lost = int(kernel.get("lost_events") or 0)
    if manifest is not None:
        lost = max(lost, int(manifest.get("lost_events") or 0))
    return {
        "trace": str(trace), "label": label,
        "state": first[designs[0]].get("state", state or "default"),
        "events": kernel.get("events", first[designs[0]].get("events")), "lost_events": lost,
        "kernel": kernel, "designs": first, "faithful": faithful,
        "rows": fidelity_rows(kernel, first, faithful, samples_of(measurements, first)),
        "measurements": measurements, "deterministic": deterministic,
        "manifest": manifest, "kernel_buddyinfo_pages": snap_pages,
        "tasks": who, "command_pid": command_pid, "task_filter": tasks,
    }


@contextmanager
def _made_for_the_run(d: Path | None):
    """Make directory @d (once the trace is known to open); if the run fails, remove it
    again when this run made it, so a refused trace leaves nothing behind."""
    if d is None:
        yield
        return
    top = d.absolute()
    while not top.parent.exists():
        top = top.parent
    made = not top.exists()
    d.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        if made:
            shutil.rmtree(top, ignore_errors=True)
        raise


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
                     args.snapshot, args.after, not args.no_pcp_busy, args.faithful,
                     args.tasks, not args.no_cache)
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
