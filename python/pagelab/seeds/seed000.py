"""Seed 000: vfree() frees contiguous pfn runs as high-order blocks (vfree_batch):
test_vmalloc's Fastpath table on the seed's machine.
"""
from __future__ import annotations

from .. import stats, tables
from .common import (Ctx, _values, judge_cell, machine_phrase, protocol_lines)

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
