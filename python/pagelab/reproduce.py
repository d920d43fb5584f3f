"""`pagelab reproduce SEED`: each seed's experiment beside its published numbers.

A seed is one entry of SEEDS: what it is, which pagelab-bench suites it
needs, the issue that brings them, and (once they exist) a run function and
a render function.  A seed whose run function or suites are missing prints
"not yet available: needs ..." and is skipped, which is not an error.

Every run saves out/seed-NNN.json (measurements, machine info, the figures'
data) and prints the seed's table in the seed's own layout, the seed's
published numbers beside ours, each change as Fastpath prints it (>0 is
better than the baseline) with (R)/(I) where our 95% confidence intervals
do not overlap, then the counters that explain the numbers.

Modes: quick (make run: a smoke run, labelled as one, never marked),
default, full (the seed's own repetition counts; long).  Measurement modes
(--mode): wall, instr (callgrind instruction counts of the measured regions),
vtime (the virtual-time model); see runner.py and, for the judging rules,
stats.judge().  The judged mode's table comes first; with --second MODE a
second opinion in another mode follows, with a line per cell where the two
disagree.
"""
from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import metrics, seed004, stats, tables
from .runner import (BenchError, default_cells, list_suites, machine_info, run_adaptive,
                     run_interleaved, save_results)
from .show import buddyinfo_timeline

MODES = ("quick", "default", "full")


# --------------------------------------------------------------- seed texts

def seeds_dir() -> Path | None:
    """$PAGELAB_SEEDS, or the shared seeds directory next to the repo."""
    for cand in (os.environ.get("PAGELAB_SEEDS"),
                 Path(__file__).resolve().parents[3] / "shared" / "seeds",
                 "/work/shared/seeds"):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


def seed_text(seed: str) -> str | None:
    d = seeds_dir()
    if d is None:
        return None
    files = sorted(d.glob(f"{seed}_*.txt"))
    return files[0].read_text() if files else None


# --------------------------------------------------------- how we measure

@dataclass
class Ctx:
    """How a seed's runs are measured: the run mode, the judging policy, a log.

    run() does a smoke run's fixed repetitions, or the adaptive repetitions
    of stats.stop_reason() otherwise, in policy.mode.
    """
    mode: str = "default"                 # quick, default, full
    policy: stats.Policy = field(default_factory=lambda: stats.policy_for("wall"))
    log: list = field(default_factory=list)

    def run(self, suite: str, params: dict, designs, quick_reps: int, together: bool = False,
            label: str | None = None, cells=default_cells):
        if self.policy.quick:
            ms = run_interleaved(suite, params, list(designs), quick_reps, together=together,
                                 label=label, mode=self.policy.mode)
            self.log.append({"label": label or suite, "runs": quick_reps, "stop": "smoke"})
            return ms
        return run_adaptive(suite, params, list(designs), self.policy, together=together,
                            label=label, cells=cells, log=self.log)


def doc_policy(doc: dict) -> stats.Policy:
    """The judging policy a saved or fresh seed document was measured under."""
    return stats.policy_for(doc.get("measure", "wall"), doc.get("mode") == "quick")


def _seed_pct(text) -> float | None:
    """'(R) -40.69%' -> -40.69; None when the seed gives no number."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.search(r"(-?\d+(?:\.\d+)?)%", text or "")
    return float(m.group(1)) if m else None


# A seed that prints bare figures (001, 002, 004: no confidence intervals)
# claims a change only where it is large; issue 19 draws that line at 10%.
IMPLIED_FLOOR = 10.0
MARKED_SEEDS = ("000",)     # seeds whose tables print Fastpath's (R)/(I) marks


def _seed_mark(text, marked: bool) -> str | None:
    """The seed's verdict on a cell: None when it makes none.

    @marked: the seed's table prints Fastpath's (R)/(I) marks (seed 000), so an
    unmarked figure is a verdict of "no significant change".  A seed of bare
    figures claims an improvement or a regression of >= IMPLIED_FLOOR%, and
    nothing below it.
    """
    pct = _seed_pct(text)
    if pct is None:
        return None
    if marked:
        m = re.match(r"\s*\(([RI])\)", text) if isinstance(text, str) else None
        return f"({m.group(1)})" if m else ""
    if abs(pct) < IMPLIED_FLOOR:
        return None
    return "(I)" if pct > 0 else "(R)"


def judge_cell(doc: dict, row: str, col: str, base, new, metric: str, seed=None,
               fmt: str = "{:.2f}%") -> str:
    """Judge one cell under the document's policy, log it, return its text.

    @metric: the registry's id of the row's figure; its direction decides.
    Under --mode instr a timed figure (family speed) was replaced by the
    instructions of its region, a cost whatever the wall figure was (a rate
    in seed 003): the registry's "instructions" metric decides then.
    """
    pol = doc_policy(doc)
    m = metrics.get(metric)
    if doc.get("measure") == "instr" and m.family == "speed":
        m = metrics.get("instructions")
    c = stats.judge(base, new, m.direction, pol)
    doc.setdefault("_cells", []).append({
        "row": row, "col": col, "change": c.change, "mark": c.mark, "noisy": c.noisy,
        "n": c.n, "cov": c.cov, "why": c.why, "seed": _seed_pct(seed),
        "seed_mark": _seed_mark(seed, doc.get("seed") in MARKED_SEEDS)})
    return c.text(fmt)


def protocol_lines(doc: dict) -> list[str]:
    """What the table above was measured under, and its warnings."""
    pol = doc_policy(doc)
    cells = doc.get("_cells", [])
    what = {"wall": "wall time of the measured region",
            "instr": "instructions executed in the measured region (callgrind, deterministic)",
            "vtime": "virtual time (the deterministic cost model)"}[pol.mode]
    out = []
    if pol.quick:
        out.append("SMOKE RUN (--quick): too few and too short runs to judge; no (R)/(I) "
                   "marks are printed")
    out.append(f"measured: {what}; " + (
        "fixed repetitions" if pol.quick else
        f"runs per cell {pol.min_runs}..{pol.max_runs}, stop when every 95% CI half-width "
        f"<= {pol.ci_target * 100:g}% of its mean; marks need >= {pol.min_runs} runs and "
        f"CoV <= {pol.noisy_cov:g}%" + (f" and |change| >= {pol.min_change:g}%"
                                        if pol.min_change else "")))
    log = doc.get("runs_log", [])
    if log:
        stops = {}
        for e in log:
            stops.setdefault(e["stop"], []).append(e["runs"])
        out.append("repetitions: " + "; ".join(f"{k} {len(v)} (runs {min(v)}-{max(v)})"
                                                for k, v in sorted(stops.items())))
    hi = [c for c in cells if not math.isnan(c.get("cov", math.nan)) and c["cov"] > pol.warn_cov]
    if hi and not pol.quick:
        worst = sorted(hi, key=lambda c: -c["cov"])[:6]
        out.append(f"warning: {len(hi)} of {len(cells)} cells have CoV > {pol.warn_cov:g}%"
                   + (f" ({sum(c['noisy'] for c in cells)} noisy, unmarked)" if
                      any(c["noisy"] for c in cells) else "") + ": "
                   + ", ".join(f"{c['row'][:40]} [{c['col']}] {c['cov']:.1f}%" for c in worst))
    faults = [m.harness.get("minflt_in") for m in doc.get("measurements", [])
              if getattr(m, "harness", None) and "minflt_in" in m.harness]
    if faults:
        out.append(f"host minor faults inside the measured regions: max {max(faults)}, "
                   f"total {sum(faults)} over {len(faults)} records")
    return out


# ------------------------------------------------------------------ helpers

def parse_size(text: str) -> int:
    """'16G' -> bytes (K/M/G are powers of 1024, as pagelab-bench reads them)."""
    t = text.strip()
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(t[-1:].lower(), 1)
    try:
        return int(t[:-1] if mult > 1 else t, 0) * mult
    except ValueError:
        raise BenchError(f"'{text}' is not a size") from None


def fmt_size(n: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def fmt_latency(us: float) -> str:
    """The seed's notation: '700.9 us', '28.7 ms'."""
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.1f} us"


def fmt_fig(v: float, doc: dict) -> str:
    """A latency in the document's unit: us/ms for wall and vtime, instructions for instr."""
    if doc.get("measure") == "instr":
        return f"{v / 1e6:.2f} Minstr" if v >= 1e6 else f"{v / 1e3:.1f} Kinstr"
    return fmt_latency(v)


def fmt_change(pct: float, mark: str = "") -> str:
    return f"{mark} {stats.fmt_change(pct)}".strip()


def _values(ms, test, design) -> list[float]:
    return [m.value for m in ms if m.test == test and m.design == design]


# ----------------------------------------------------------------- seed 000

# Seed 000's Fastpath table: (test, nr_pages, use_huge, test_loop_count,
# published change of v6.19-rc1, published change of v6.19-rc1 + change).
VMALLOC_000 = {
    "setup": "AWS m7g.metal (arm64, 64 CPUs)",
    "designs": ("v6.18", "v6.19-rc1", "v6.19-rc1+contig"),
    "mask": {"fix_size_alloc_test": 1, "full_fit_alloc_test": 2,
             "long_busy_list_alloc_test": 4, "random_size_alloc_test": 8,
             "fix_align_alloc_test": 16, "random_size_align_alloc_test": 32,
             "pcpu_alloc_test": 128, "kvfree_rcu_1_arg_vmalloc_test": 256,
             "kvfree_rcu_2_arg_vmalloc_test": 512, "vm_map_ram_test": 1024},
    "rows": (
        ("fix_align_alloc_test", 1, 0, 500000, "(R) -40.69%", "(I) 4.85%"),
        ("fix_size_alloc_test", 1, 0, 500000, "0.10%", "-1.04%"),
        ("fix_size_alloc_test", 4, 0, 500000, "(R) -22.74%", "(I) 14.12%"),
        ("fix_size_alloc_test", 16, 0, 500000, "(R) -23.63%", "(I) 43.81%"),
        ("fix_size_alloc_test", 16, 1, 500000, "-1.58%", "(I) 102.28%"),
        ("fix_size_alloc_test", 64, 0, 100000, "(R) -24.39%", "(I) 89.64%"),
        ("fix_size_alloc_test", 64, 1, 100000, "(I) 2.34%", "(I) 181.42%"),
        ("fix_size_alloc_test", 256, 0, 100000, "(R) -23.29%", "(I) 111.05%"),
        ("fix_size_alloc_test", 256, 1, 100000, "(I) 3.74%", "(I) 213.52%"),
        ("fix_size_alloc_test", 512, 0, 100000, "(R) -23.80%", "(I) 118.28%"),
        ("fix_size_alloc_test", 512, 1, 100000, "(R) -2.84%", "(I) 427.65%"),
        ("full_fit_alloc_test", 1, 0, 500000, "2.74%", "-1.12%"),
        ("kvfree_rcu_1_arg_vmalloc_test", 1, 0, 500000, "0.58%", "-0.79%"),
        ("kvfree_rcu_2_arg_vmalloc_test", 1, 0, 500000, "-0.66%", "-0.91%"),
        ("long_busy_list_alloc_test", 1, 0, 500000, "(R) -25.24%", "(I) 70.62%"),
        ("pcpu_alloc_test", 1, 0, 500000, "-0.58%", "-1.27%"),
        ("random_size_align_alloc_test", 1, 0, 500000, "(R) -45.75%", "(I) 11.11%"),
        ("random_size_alloc_test", 1, 0, 500000, "(R) -28.16%", "(I) 59.47%"),
        ("vm_map_ram_test", 1, 0, 500000, "-0.54%", "-0.85%"),
    ),
}

# Loop counts are the seed's divided by `div` (at least `min_loops`); the
# default and full runs use the seed's own counts (each of its rows is
# 0.1-1.7 s on this host), except pcpu_alloc_test, whose seed count would be
# ~15 s a run: `pcpu_div` brings it to ~1.5 s.  Each run first does an untimed
# warm-up pass of min(loops, warmup_max) loops (bench warmup=).  In instr
# mode the counts are divided by `instr_div` more: callgrind runs ~50x slower
# and the counts per loop are the same at any length once warm.
SEED_000_MODES = {
    "quick": {"div": 100, "min_loops": 1000, "reps": 3, "pcpu_objects": 5000, "pcpu_div": 1,
              "warmup_max": 0, "instr_div": 1},
    "default": {"div": 1, "min_loops": 1000, "reps": 5, "pcpu_objects": 35000, "pcpu_div": 10,
                "warmup_max": 50000, "instr_div": 50, "instr_pcpu_objects": 5000},
    "full": {"div": 1, "min_loops": 1, "reps": 10, "pcpu_objects": 35000, "pcpu_div": 1,
             "warmup_max": 500000, "instr_div": 10},
}


_000_DEFAULTS = {"div": 1, "min_loops": 1, "pcpu_div": 1, "warmup_max": 0, "instr_div": 1,
                 "instr_pcpu_objects": 5000}


def _loops_000(cfg: dict, test: str, loops: int, measure: str) -> int:
    div = cfg["div"] * (cfg["pcpu_div"] if test == "pcpu_alloc_test" else 1)
    if measure == "instr":
        div *= cfg["instr_div"]
    return max(cfg["min_loops"], loops // div)


def _row_label_000(test: str, p: int, h: int, loops: int) -> str:
    return f"{test}: p:{p}, h:{h}, l:{loops}"


def run_000(mode: str, machine: dict[str, str], ctx: Ctx | None = None) -> dict:
    ctx = ctx or Ctx(mode)
    cfg = dict(_000_DEFAULTS, **SEED_000_MODES[mode])
    pub = VMALLOC_000
    ms = []
    for test, p, h, l, _, _ in pub["rows"]:
        loops = _loops_000(cfg, test, l, ctx.policy.mode)
        # 64 vCPUs as the seed's m7g.metal: per-CPU PCP limits, lazy_max_pages
        # and full_fit's holes scale with them; one worker as Fastpath runs it.
        params = dict(machine, vcpus=cfg.get("vcpus", "64"),
                      run_test_mask=str(pub["mask"][test]), nr_pages=str(p),
                      use_huge=str(h), test_loop_count=str(loops), nr_threads="1",
                      nr_pcpu_objects=str(cfg["instr_pcpu_objects"] if ctx.policy.mode == "instr"
                                          else cfg["pcpu_objects"]))
        if cfg["warmup_max"]:
            params["warmup"] = str(min(loops, cfg["warmup_max"]))
        ms += ctx.run("test_vmalloc", params, pub["designs"], cfg["reps"],
                      label=f"seed 000 {test} p:{p} h:{h}")
    return {"measurements": ms, "settings": dict(cfg, **machine)}


def _counters_000(ms, label: str, design: str) -> dict[str, float]:
    """Per loop iteration: zone->lock acquisitions, PCP order-0 overflows; pages per free."""
    recs = [m for m in ms if m.test == label and m.design == design]
    if not recs:
        return {}
    loops = float(recs[0].params.get("test_loop_count", 1)) or 1.0

    def mean(key):
        return sum(float(r.counters.get(key, 0)) for r in recs) / len(recs)

    blocks = mean("PGFREE")
    return {"zlock": mean("zone_lock_acquisitions") / loops,
            "overflow": mean("PCP_OVERFLOW_O0") / loops,
            "per_free": mean("PGFREE_PAGES") / blocks if blocks else 0.0}


def render_000(doc: dict) -> str:
    ms = doc["measurements"]
    settings = doc.get("settings", {})
    pub = VMALLOC_000
    base, rc1, contig = pub["designs"]
    measure = doc.get("measure", "wall")
    head = [["test_vmalloc benchmark", "v6.19-rc1", "v6.19-rc1", "v6.19-rc1",
             "v6.19-rc1"],
            ["", "(seed)", "(ours)", "+ change (seed)", "+ contig (ours)"]]
    rows, counters = [], []
    for test, p, h, l, s_rc1, s_contig in pub["rows"]:
        cfg = dict(_000_DEFAULTS, **settings)
        label = _row_label_000(test, p, h, _loops_000(cfg, test, l, measure))
        b = _values(ms, label, base)
        ours = {}
        for d in (rc1, contig):
            n = _values(ms, label, d)
            if not b or not n:
                ours[d] = "n/a"
                continue
            seed = s_rc1 if d == rc1 else s_contig
            ours[d] = judge_cell(doc, f"{test} p:{p} h:{h}", d, b, n, "vmalloc-test-usec", seed)
        rows.append([f"{_row_label_000(test, p, h, l)} (usec)", s_rc1, ours[rc1], s_contig,
                     ours[contig]])
        c = [_counters_000(ms, label, d) for d in pub["designs"]]
        if all(c):
            counters.append([f"{test} p:{p} h:{h}",
                             f"{stats.summarize(b).amean:,.0f}" if b else "n/a"]
                            + [f"{x['zlock']:.2f}" for x in c]
                            + [f"{x['overflow']:.3f}" for x in c]
                            + [f"{x['per_free']:.1f}" for x in c])
    info = doc.get("machine", {})
    div = settings.get("div", 1) * (settings.get("instr_div", 1) if measure == "instr" else 1)
    unit = {"instr": "instructions", "vtime": "virtual usec"}.get(measure, "usec")
    loops_note = (f"our loop counts are the seed's / {div}" if div > 1 else
                  "the seed's loop counts") + (
        f" (pcpu_alloc_test / {settings.get('pcpu_div')})" if settings.get("pcpu_div", 1) > 1
        else "")
    out = [f"test_vmalloc, runs per design interleaved, {unit}; {loops_note}"
           + (f"; an untimed warm-up pass of up to {settings['warmup_max']:,} loops first"
              if settings.get("warmup_max") else ""),
           tables.fastpath(head, rows),
           f"seed: {pub['setup']}; ours: {info.get('cpu', '?')}, {info.get('cores', '?')} "
           f"cores, {machine_phrase(settings, 'x86_64-shaped ')} with "
           f"{settings.get('vcpus', '64')} vCPUs, one worker",
           "change vs v6.18: >0 is faster, <0 slower; (R)/(I): 95% confidence intervals do not "
           "overlap (Fastpath)", ""]
    out[-1:-1] = protocol_lines(doc)
    chead = ["", f"v6.18 {unit}", "zone->lock/loop", "", "", "PCP o0 overflows/loop", "", "",
             "pages per free", "", ""]
    sub = ["", ""] + ["6.18", "rc1", "+contig"] * 3
    w = [max(len(r[i]) for r in [chead, sub] + counters) for i in range(len(chead))]
    out.append("the counters behind each row (means per run; per loop iteration, setup "
               "included):")
    for r in [chead, sub] + counters:
        out.append("  " + "  ".join(f"{c:<{w[i]}}" if i == 0 else f"{c:>{w[i]}}"
                                    for i, c in enumerate(r)).rstrip())
    return "\n".join(out)


# ----------------------------------------------------------------- seed 002

PAGETYPEINFO_002 = {
    "setup": "12th Gen Intel(R) Core(TM) i7-12700, 16G, turbo off",
    "reads": 10000,
    "columns": (("no-patch", "v6.18"), ("with-patch", "mt-counts")),
    # Beside the seed's columns: pagelab's own extension beyond the patch
    # (the "Number of blocks type" section from per-type counts, lock-free).
    "extension": "mt-counts+blocks",
    # (row label, our test, published us per column)
    "rows": (("Just after boot", "read-fresh", (700.9, 268.6)),
             ("After building kernel", "read-fragmented", (28700.0, 269.8))),
}

# A booted state (issue 14 §6): a real 6.18 machine's /proc right after boot
# (buddyinfo, pagetypeinfo, zoneinfo), loaded with state=counts: free blocks
# over every order and type, boot allocations in place. It ships with the
# source tree, not with pip installs (the row is left out there).
BOOTED_SNAPSHOT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "booted-6.18"
BOOTED_PREFIX = "booted-"

SEED_002_MODES = {          # reads per process, processes (each boots and churns)
    "quick": {"reads": 30, "reps": 5, "sweep_reads": 10, "snapshots": 4},
    "default": {"reads": 200, "reps": 5, "sweep_reads": 50, "snapshots": 8},
    "full": {"reads": 10000, "reps": 3, "sweep_reads": 200, "snapshots": 16},
}


def run_002(mode: str, machine: dict[str, str], ctx: Ctx | None = None) -> dict:
    ctx = ctx or Ctx(mode)
    cfg = SEED_002_MODES[mode]
    designs = [c[1] for c in PAGETYPEINFO_002["columns"]] + [PAGETYPEINFO_002["extension"]]
    reads = cfg["reads"] if ctx.policy.mode != "instr" else max(2, cfg["reads"] // 40)
    params = dict(machine, reads=str(reads))
    ms = ctx.run("pagetypeinfo", params, designs, cfg["reps"], together=True, label="seed 002")
    if (BOOTED_SNAPSHOT / "pagetypeinfo").is_file():
        # only its first read phase is used: no churn worth the time (rounds=1)
        booted = ctx.run("pagetypeinfo", dict(params, snapshot=str(BOOTED_SNAPSHOT),
                                              state="counts", rounds="1"),
                         designs, cfg["reps"], together=True, label="seed 002, booted state")
        for m in booted:
            m.test = BOOTED_PREFIX + m.test
        ms = ms + booted
    # Latency against fragmentation: smaller machines of the same shape leave
    # proportionally fewer free blocks after the same churn.
    mem = parse_size(machine.get("mem", "16G"))
    dma32 = parse_size(machine.get("dma32", "4G"))
    sweep = []
    for div in (16, 8, 4):
        size = max(4 << 20, (mem // div) >> 21 << 21)
        p = {"mem": fmt_size(size), "dma32": fmt_size(min(dma32, size)),
             "reads": str(cfg["sweep_reads"] if ctx.policy.mode != "instr" else 2)}
        sweep += run_interleaved("pagetypeinfo", p, designs, 1, together=True,
                                 label=f"sweep {p['mem']}", mode=ctx.policy.mode)
    # Buddyinfo over the churn, on the smallest machine of the sweep.
    small = max(4 << 20, (mem // 16) >> 21 << 21)
    total_rounds = (small >> 12) // 8
    k = cfg["snapshots"]
    timeline = buddyinfo_timeline({"mem": fmt_size(small), "dma32": fmt_size(min(dma32, small))},
                                  [total_rounds * i // k for i in range(k + 1)])
    return {"measurements": ms, "sweep": [m.to_dict() for m in sweep],
            "timeline": {"mem": fmt_size(small), "snapshots": timeline},
            "settings": dict(cfg, **machine, reads=reads)}


def render_002(doc: dict) -> str:
    ms = doc["measurements"]
    settings = doc.get("settings", {})
    pub = PAGETYPEINFO_002
    (seed_base, base), (seed_new, new) = pub["columns"]
    ext = pub["extension"]
    has_ext = bool(_values(ms, "read-fresh", ext))
    reps = len(_values(ms, "read-fresh", base))
    head = [["", seed_base, base, seed_new, new], ["", "(seed)", "(ours)", "(seed)", "(ours)"]]
    if has_ext:
        head[0].append(ext)
        head[1].append("(pagelab's extension)")
    rows = []
    pub_rows = list(pub["rows"])
    if _values(ms, BOOTED_PREFIX + "read-fresh", base):
        label, test, figs = pub_rows[0]
        pub_rows.insert(1, (label + " (booted state)", BOOTED_PREFIX + test, figs))
    for label, test, (p_base, p_new) in pub_rows:
        b, n = _values(ms, test, base), _values(ms, test, new)
        bm, nm = stats.summarize(b).amean, stats.summarize(n).amean
        seed = stats.fastpath_change(p_base, p_new)
        rows.append([label, fmt_latency(p_base), fmt_fig(bm, doc),
                     f"{fmt_latency(p_new)} {fmt_change(seed)}",
                     f"{fmt_fig(nm, doc)} {judge_cell(doc, label, new, b, n, 'read-us', seed)}"])
        if has_ext:
            # pagelab's extension: judged against the baseline, no seed figure
            e = _values(ms, test, ext)
            rows[-1].append(f"{fmt_fig(stats.summarize(e).amean, doc)} "
                            f"{judge_cell(doc, label, ext, b, e, 'read-us')}")
    info = doc.get("machine", {})
    mem = settings.get("mem", "16G")
    out = [f"1. Average latency over {settings.get('reads', '?')} /proc/pagetypeinfo accesses, "
           f"{reps} runs (seed: {pub['reads']:,} accesses)",
           tables.box(head, rows),
           f"seed: {pub['setup']}; ours: {info.get('cpu', '?')}, {info.get('cores', '?')} cores, "
           f"{machine_phrase(settings)}",
           "change vs no-patch: >0 is faster; (I)/(R): our 95% confidence intervals do not "
           "overlap (Fastpath)"] + protocol_lines(doc)
    if len(pub_rows) > len(pub["rows"]):
        out.append("booted state: the machine loaded (state=counts) from a real 6.18 "
                   "machine's /proc just after boot (tests/fixtures/booted-6.18, 4.5 GiB "
                   "managed): free blocks over every order and type; the plain row boots "
                   "pagelab's pristine machine, nearly all free at order 10")
    designs = [base, new] + ([ext] if has_ext else [])
    if has_ext:
        out.append(f"{ext} is pagelab's own extension, not in seed 002: the \"Number of blocks "
                   "type\" section from per-type counts without zone->lock (the patch still "
                   "walks every pageblock under it)")
    out.append("")
    # Our means with their confidence intervals, then the counters.
    lines = [[""] + designs]
    for label, test, _ in pub_rows:
        cells = [f"read latency, {label.lower()}"]
        for d in designs:
            s = stats.summarize(_values(ms, test, d))
            ci = "" if s.n < 2 else f" ± {fmt_fig(s.ci_half, doc)}"
            cells.append(fmt_fig(s.amean, doc) + ci)
        lines.append(cells)
    for label, test, fmt in (("zone->lock acquisitions per read, just after boot",
                              "zone-lock-per-read-fresh", "{:.1f}"),
                             ("zone->lock acquisitions per read, after the churn",
                              "zone-lock-per-read-fragmented", "{:.1f}"),
                             ("free blocks after the churn", "free-blocks-after-churn", "{:.0f}")):
        if _values(ms, test, base):
            lines.append([label] + [fmt.format(stats.summarize(_values(ms, test, d)).amean)
                                    for d in designs])
    w = [max(len(r[i]) for r in lines) for i in range(len(designs) + 1)]
    out.append(f"ours, mean ± 95% CI over {reps} runs, and the counters that explain them:")
    out += ["  " + "  ".join(f"{c:<{w[i]}}" if i == 0 else f"{c:>{w[i]}}"
                             for i, c in enumerate(r)).rstrip() for r in lines]
    return "\n".join(out)


# ----------------------------------------------------------------- seed 001

# The seed's one published figure: execution time of its loop, 100,000 x
# (alloc order 9, split_page, free_contig_range), arm64 server.
PUB_001 = {"setup": "a server-class arm64 machine", "iterations": 100000,
           "before_us": 4097358.0, "after_us": 729831.0}

SEED_001_MODES = {
    "quick": {"test_loop_count": "20000", "reps": 3},
    "default": {"test_loop_count": "100000", "reps": 3},
    "full": {"test_loop_count": "100000", "reps": 10},
}


def run_001(mode: str, machine: dict[str, str], ctx: Ctx | None = None) -> dict:
    ctx = ctx or Ctx(mode)
    cfg = SEED_001_MODES[mode]
    ms = []
    for order in ("9", "3", "10"):
        # floor=0: the "drops alone" row is for the table, not the JSON.
        params = dict(machine, order=order, test_loop_count=cfg["test_loop_count"], reps="1",
                      floor="0")
        if ctx.policy.mode == "instr":
            params["test_loop_count"] = str(max(100, int(cfg["test_loop_count"]) // 100))
        ms += ctx.run("page_alloc_high_order", params, ["v6.18", "contig-batch"], cfg["reps"],
                      together=True, label=f"seed 001 order {order}")
    return {"measurements": ms, "settings": dict(cfg, **machine)}


def b_loops(ms, order: str) -> int:
    """test_loop_count of seed 001's runs at @order (instr runs use fewer)."""
    for m in ms:
        if m.test == f"odr{order}-per-iteration":
            return int(m.params.get("test_loop_count", 1))
    return 1


def render_001(doc: dict) -> str:
    ms = doc["measurements"]
    settings = doc.get("settings", {})
    base, new = "v6.18", "contig-batch"
    loops = int(settings.get("test_loop_count", PUB_001["iterations"]))
    per = PUB_001["iterations"]
    head = [["", "before (seed)", "before (ours)", "after (seed)", "after (ours)"]]
    rows = []
    for order in ("9", "3", "10"):
        b = _values(ms, f"odr{order}-per-iteration", base)
        n = _values(ms, f"odr{order}-per-iteration", new)
        if not b or not n:
            continue
        bm, nm = stats.summarize(b).amean, stats.summarize(n).amean
        seed_b = f"{PUB_001['before_us']:,.0f} usec" if order == "9" else "-"
        seed_a = (f"{PUB_001['after_us']:,.0f} usec "
                  f"{fmt_change(stats.fastpath_change(PUB_001['before_us'], PUB_001['after_us']))}"
                  if order == "9" else "-")
        u = "usec" if doc.get("measure", "wall") == "wall" else \
            ("instr" if doc.get("measure") == "instr" else "vusec")
        k = per if u != "instr" else per / max(1, int(b_loops(ms, order)))
        seed = stats.fastpath_change(PUB_001["before_us"], PUB_001["after_us"]) \
            if order == "9" else None
        rows.append([f"order {order}, {per:,} iterations", seed_b, f"{bm * k:,.0f} {u}",
                     seed_a, f"{nm * k:,.0f} {u} "
                     f"{judge_cell(doc, f'order {order}', new, b, n, 'iteration-us', seed)}"])
    loops = b_loops(ms, "9") if ms else loops
    lines = [f"Execution time of page_alloc_high_order_test (alloc, split_page, free_contig_range), "
             f"{len(_values(ms, 'odr9-per-iteration', base))} runs of {loops:,} iterations scaled "
             f"to the seed's {per:,}",
             tables.box(head, rows),
             f"seed: {PUB_001['setup']} (order 9 only); ours: a {settings.get('mem', '16G')} "
             "pagelab machine, one vCPU",
             "change: >0 is faster; (I)/(R): our 95% confidence intervals do not overlap"]
    lines += protocol_lines(doc) + ["",
             "the counters that explain them (per iteration, mean):"]
    counters = (("zone->lock acquisitions", "zone-lock-per-iteration"),)
    for order in ("9",):
        for d in (base, new):
            rec = [m for m in ms if m.test == f"odr{order}-per-iteration" and m.design == d]
            if not rec:
                continue
            c = rec[0].counters
            it = max(1, b_loops(ms, order))
            lines.append(f"  order {order} {d:<13} frees {c.get('PGFREE', 0) / it:7.1f}  "
                         f"buddy merges {c.get('BUDDY_MERGE', 0) / it:7.1f}  "
                         f"pages drained from PCPs {c.get('PCP_DRAIN_PAGES', 0) / it:7.1f}")
    del counters
    return "\n".join(lines)


# ----------------------------------------------------------------- seed 003

# The RFC publishes claims, not a table: each row puts our figure beside one.
CLAIMS_003 = {
    "setup": "32-way, 32G test machine",
    "rows": (  # (label, suite, test stem (its metric's id too), seed's claim)
        ("alloc many/free few: throughput", "alloc_many_free_few", "throughput",
         "+1% throughput"),
        ("alloc many/free few: zone->lock per Mop", "alloc_many_free_few",
         "zone-lock-per-Mop", "fewer zone->lock trips"),
        ("exit avalanche: zone->lock per Mop", "exit_avalanche", "zone-lock-per-Mop",
         "coarser transactions"),
        ("kbuild: throughput", "kbuild", "throughput", "-3..4% %sys"),
        ("kbuild: zone->lock per Mop", "kbuild", "zone-lock-per-Mop", ""),
        ("kbuild: unusable index, order 9", "kbuild", "unusable-index-9",
         "no worse fragmentation"),
    ),
}

SEED_003_MODES = {
    "quick": {"vcpus": "32", "ops": "300000", "reps": 3},
    "default": {"vcpus": "8,32,128", "ops": "2000000", "reps": 3},
    "full": {"vcpus": "8,32,128", "ops": "10000000", "reps": 5},
}


def run_003(mode: str, machine: dict[str, str], ctx: Ctx | None = None) -> dict:
    ctx = ctx or Ctx(mode)
    cfg = SEED_003_MODES[mode]
    designs = ["v6.18", "pcp-owner"]
    ms = []
    for suite in dict.fromkeys(r[1] for r in CLAIMS_003["rows"]):
        params = dict(machine, vcpus=cfg["vcpus"], ops=cfg["ops"])
        if ctx.policy.mode == "instr":
            params["ops"] = str(max(10000, int(cfg["ops"]) // 20))
        ms += ctx.run(suite, params, designs, cfg["reps"], together=True,
                      label=f"seed 003 {suite}", cells=_cells_003)
    ops = cfg["ops"] if ctx.policy.mode != "instr" else str(max(10000, int(cfg["ops"]) // 20))
    return {"measurements": ms, "settings": dict(cfg, **machine, ops=ops)}


def _cells_003(ms) -> dict:
    """Seed 003's judged figures: every row's test (timed or counted) per design."""
    stems = {r[2] for r in CLAIMS_003["rows"]}
    cells: dict = {}
    for m in ms:
        if m.test.rsplit("-v", 1)[0] in stems:
            cells.setdefault((m.suite, m.test, m.design), []).append(m.value)
    return cells


def render_003(doc: dict) -> str:
    ms = doc["measurements"]
    settings = doc.get("settings", {})
    base, new = "v6.18", "pcp-owner"
    head = [["", "seed", base, new], ["", "(claim)", "(ours)", "(ours)"]]
    rows = []
    for vcpus in settings.get("vcpus", "32").split(","):
        for label, suite, stem, claim in CLAIMS_003["rows"]:
            test = f"{stem}-v{vcpus}"
            b = [m.value for m in ms if m.suite == suite and m.test == test and m.design == base]
            n = [m.value for m in ms if m.suite == suite and m.test == test and m.design == new]
            if not b or not n:
                continue
            bm, nm = stats.summarize(b).amean, stats.summarize(n).amean
            cell = judge_cell(doc, f"{label}, {vcpus} vCPUs", new, b, n, stem)
            rows.append([f"{label}, {vcpus} vCPUs", claim, f"{bm:.3g}", f"{nm:.3g} {cell}"])
    reps = settings.get("reps", "?")
    return "\n".join([
        f"PCP pageblock ownership, {settings.get('ops', '?')} page operations per run, "
        f"{reps} runs, vCPUs interleaved on one thread",
        tables.box(head, rows),
        f"seed: {CLAIMS_003['setup']} (claims from the RFC text); ours: "
        f"{machine_phrase(settings)}",
        "change vs v6.18: >0 is better; (I)/(R): our 95% confidence intervals do not overlap",
    ] + protocol_lines(doc))


# ------------------------------------------------------------------ registry

# Each seed's hardware as a machine profile (pagelab-bench machines): used
# unless the command line names a machine (machine=, mem=, dma32=). Seed 004
# picks its profile per smp in seed004.run(); seed 001 names no machine.
SEED_MACHINES = {"000": "m7g.metal", "002": "i7-12700", "003": "x86-32c-32g"}


# Under callgrind (--mode instr) the host address space valgrind manages
# takes a machine of at most 32 GiB here (64 GiB fails to map): a larger
# profile keeps its shape (architecture, CPUs, zones) at that size.
INSTR_MAX_MEM = "32G"
BIG_PROFILES = {"m7g.metal"}     # profiles above INSTR_MAX_MEM


def seed_machine(sid: str, machine: dict[str, str], measure: str | None = None) -> dict[str, str]:
    """The machine parameters of seed @sid's runs: the command line's, else its profile."""
    if set(machine) & {"machine", "mem", "dma32"} or sid not in SEED_MACHINES:
        return dict(machine)
    out = dict(machine, machine=SEED_MACHINES[sid])
    if measure == "instr" and out["machine"] in BIG_PROFILES:
        out["mem"] = INSTR_MAX_MEM
    return out


def machine_phrase(settings: dict, shape: str = "") -> str:
    """How a table's footer names our machine: its profile, or its size."""
    if settings.get("machine"):
        at = f" at {settings['mem']}" if settings.get("mem") else ""
        return f"the {settings['machine']} machine profile{at}"
    return f"a {settings.get('mem', '16G')} {shape}pagelab machine"


@dataclass
class SeedSpec:
    id: str
    title: str
    needs: str                       # what brings it, while it is missing
    suites: tuple[str, ...] = ()
    run: Callable[[str, dict], dict] | None = None
    render: Callable[[dict], str] | None = None
    figure: Callable[[list], list] | None = None     # records for the report's bars
    notes: list[str] = field(default_factory=list)


SEEDS = {s.id: s for s in (
    SeedSpec("000", "vfree frees contiguous pfn runs as high-order blocks (vfree_batch)",
             "issue 5 (vmalloc, the test_vmalloc suite) and issue 4 (free_contig_batch)",
             ("test_vmalloc",), run_000, render_000),
    SeedSpec("001", "__free_contig_range(): order-0 runs freed as aligned chunks (free_contig_batch)",
             "issue 4", ("page_alloc_high_order",), run_001, render_001),
    SeedSpec("002", "per-migratetype free-block counts; /proc/pagetypeinfo without walking "
             "free lists (mt_counts)", "issue 2", ("pagetypeinfo",), run_002, render_002),
    SeedSpec("003", "PCP pageblock ownership (pcp_owner)", "issue 3",
             ("alloc_many_free_few", "exit_avalanche", "kbuild"), run_003, render_003),
    SeedSpec("004", "vmalloc on a maple tree, per-CPU bump allocator (maple)",
             "issue 6 (maple tree, vmalloc on it)", ("test_vmalloc",), seed004.run,
             seed004.render, figure=seed004.figure_measurements),
)}


def availability(spec: SeedSpec, suites: list[str]) -> str | None:
    """None when the seed can run, else why not (one line)."""
    if spec.run is None:
        return f"not yet available: needs {spec.needs}"
    missing = [s for s in spec.suites if s not in suites]
    if missing:
        return f"not yet available: pagelab-bench has no {', '.join(missing)} suite (needs {spec.needs})"
    return None


# The judged mode of `pagelab reproduce` (README, "Verdicts that reproduce",
# says why): instruction counts, deterministic, with wall time beside them.
# A smoke run (--quick) times wall clock: it marks nothing and must be fast.
DEFAULT_MEASURE = "instr"
QUICK_MEASURE = "wall"


def second_opinion(measure: str) -> str | None:
    """The mode measured beside the judged one by default (None: none).

    None: a wall-time second opinion at the wall protocol's lengths (5-10
    runs of >= ~1 s samples) would take `reproduce all` past its 15-minute
    budget on 2 cores; `--second wall` asks for it (README, "Verdicts that
    reproduce").
    """
    del measure
    return None


def _measure_seed(spec: SeedSpec, mode: str, machine: dict, measure: str, info: dict) -> dict:
    ctx = Ctx(mode, stats.policy_for(measure, mode == "quick"))
    t0 = time.monotonic()
    res = spec.run(mode, machine, ctx)
    extra = {k: v for k, v in res.items() if k != "measurements"}
    extra.update(seed=spec.id, mode=mode, measure=measure, runs_log=ctx.log,
                 seconds=round(time.monotonic() - t0, 1))
    doc = {"measurements": res["measurements"], "machine": info, **extra}
    doc["table"] = spec.render(doc)
    return doc


def disagreements(judged: dict, other: dict) -> list[str]:
    """Cells whose mark or sign differs between two documents of one seed."""
    a = {(c["row"], c["col"]): c for c in judged.get("_cells", [])}
    out = []
    for c in other.get("_cells", []):
        j = a.get((c["row"], c["col"]))
        if j is None:
            continue
        sign = (j["change"] > 0) != (c["change"] > 0) and abs(j["change"] - c["change"]) > 0
        if j["mark"] != c["mark"] or sign:
            out.append(f"  {c['row']} [{c['col']}]: {judged['measure']} "
                       f"{stats.Cell(j['change'], j['mark'], j['noisy'], j['n'], j['cov']).text()}"
                       f", {other['measure']} "
                       f"{stats.Cell(c['change'], c['mark'], c['noisy'], c['n'], c['cov']).text()}")
    return out


def reproduce(seed_ids: list[str], mode: str, machine: dict[str, str], out_dir: Path,
              echo=print, measure: str | None = None, second: str | None = "auto") -> list[Path]:
    """Run the seeds, print their tables, save their results; return the files.

    @measure: the judged mode (default DEFAULT_MEASURE); @second: the mode of
    the second opinion ("auto": second_opinion(), None: none; never in quick).
    """
    measure = measure or (QUICK_MEASURE if mode == "quick" else DEFAULT_MEASURE)
    if second == "auto":
        second = second_opinion(measure)
    if mode == "quick" or second == measure:
        second = None
    suites = list_suites()
    saved = []
    info = machine_info()
    if mode == "quick":
        echo("SMOKE RUN (--quick): every seed at toy sizes with a few runs; the changes are "
             "shown, no (R)/(I) marks (run without --quick to judge)")
        # The smoke run (make run) stays on the built-in default machine: the
        # seeds' own profiles (up to 64 vCPUs, 256 GiB) are for judging runs.
        if not set(machine) & {"machine", "mem", "dma32"}:
            machine = dict(machine, machine="default")
    for sid in seed_ids:
        spec = SEEDS[sid]
        why = availability(spec, suites)
        if why:
            echo(f"seed {sid}: {why}")
            continue
        echo(f"seed {sid}: {spec.title} [{mode}, judged by {measure}]")
        doc = _measure_seed(spec, mode, seed_machine(sid, machine, measure), measure, info)
        echo(doc["table"])
        if second:
            other = _measure_seed(spec, mode, seed_machine(sid, machine, second), second, info)
            echo(f"second opinion, measured by {second}:")
            echo(other["table"])
            diff = disagreements(doc, other)
            echo(f"{measure} against {second}: {len(doc.get('_cells', [])) - len(diff)} of "
                 f"{len(doc.get('_cells', []))} cells agree on mark and sign"
                 + (":" if diff else ""))
            for line in diff:
                echo(line)
            doc["second"] = {k: v for k, v in other.items() if k not in ("machine",)}
            doc["second"]["measurements"] = [m.to_dict() for m in other["measurements"]]
        extra = {k: v for k, v in doc.items() if k not in ("measurements", "machine")}
        extra["cells"] = extra.pop("_cells", [])
        if "second" in extra:
            extra["second"]["cells"] = extra["second"].pop("_cells", [])
        path = save_results(out_dir / f"seed-{sid}.json", doc["measurements"], extra=extra,
                            info=info)
        echo(f"saved {path} ({doc['seconds']:.0f} s"
             + (f" + {doc['second']['seconds']:.0f} s" if second else "") + ")")
        echo("")
        saved.append(path)
    return saved


def figure_measurements(doc: dict) -> list:
    """The records a seed's bar chart shows: its own summary, or its measurements."""
    spec = SEEDS.get(doc.get("seed", ""))
    if spec is None or spec.figure is None:
        return doc["measurements"]
    return spec.figure(doc["measurements"])


def render_saved(doc: dict) -> str | None:
    """Re-render a saved seed document (the report uses this)."""
    spec = SEEDS.get(doc.get("seed", ""))
    if spec is None or spec.render is None:
        return None
    return spec.render(doc)
