"""Seed 002: per-migratetype free-block counts (mt_counts): /proc/pagetypeinfo's
read time just after boot and after a kernel build, and the sweep beside it.
"""
from __future__ import annotations

from pathlib import Path

from .. import stats, tables
from ..runner import run_interleaved
from ..show import buddyinfo_timeline
from .common import (Ctx, _values, fmt_marked_change, fmt_fig, fmt_latency, fmt_size, judge_cell,
                    machine_phrase, parse_size, protocol_lines)

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

# A booted state: a real 6.18 machine's /proc right after boot
# (buddyinfo, pagetypeinfo, zoneinfo), loaded with state=counts: free blocks
# over every order and type, boot allocations in place. It ships with the
# source tree, not with pip installs (the row is left out there).
BOOTED_SNAPSHOT = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "booted-6.18"
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
                     f"{fmt_latency(p_new)} {fmt_marked_change(seed)}",
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
