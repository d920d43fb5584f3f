"""Seed 004: vmalloc's vmap_area index on a maple tree (`maple`) against the rbtree.

The seed publishes no table, only "observed faster cases (sorted by gain)"
for x86_64 under KVM and arm64 under TCG: a test, the guest's CPU count
(smp) and test_vmalloc's nr_threads (nt), or "functional sweep" (every
mask, one run).  Each row here is one such case, the seed's gains beside
ours, ours as Fastpath prints a change (>0 is faster than the rbtree) with
(R)/(I) where the 95% confidence intervals do not overlap.

Our runs: test_vmalloc on a machine with `smp` vCPUs and `nt` workers
(interleaved on the host's threads when there are more workers than host
CPUs), designs v6.18 (RB) and maple (MT) interleaved, one process per run;
a run's figure for a test is the mean of its workers' average usec.  The
functional sweep runs every mask (0xFFF) once per design with nt=1 and
checks the pass/xfail verdicts, as the seed's does.
"""
from __future__ import annotations

import re
from collections import defaultdict

from .. import metrics, stats, tables
from ..runner import Measurement, run_interleaved
from .common import Ctx, judge_cell, protocol_lines

DESIGNS = ("v6.18", "maple")
FUNCTIONAL = "functional sweep"

MASK = {"fix_size_alloc_test": 1, "full_fit_alloc_test": 2, "long_busy_list_alloc_test": 4,
        "random_size_alloc_test": 8, "fix_align_alloc_test": 16,
        "random_size_align_alloc_test": 32, "align_shift_alloc_test": 64,
        "pcpu_alloc_test": 128, "kvfree_rcu_1_arg_vmalloc_test": 256,
        "kvfree_rcu_2_arg_vmalloc_test": 512, "vm_map_ram_test": 1024,
        "no_block_alloc_test": 2048}

# (test, smp, nt, x86_64 KVM gain %, arm64 TCG gain %); smp 0 = functional sweep.
ROWS = (
    ("full_fit_alloc_test", 16, 16, 64.9, None),
    ("long_busy_list_alloc_test", 16, 16, 62.9, None),
    ("full_fit_alloc_test", 16, 8, 51.7, None),
    ("long_busy_list_alloc_test", 16, 8, 49.3, None),
    ("long_busy_list_alloc_test", 8, 8, 43.6, 32.6),
    ("full_fit_alloc_test", 8, 4, 40.4, 25.5),
    ("full_fit_alloc_test", 8, 8, 40.0, 22.3),
    ("full_fit_alloc_test", 16, 4, 38.2, None),
    ("full_fit_alloc_test", 8, 2, 31.2, 23.4),
    ("long_busy_list_alloc_test", 8, 4, 29.3, 26.7),
    ("long_busy_list_alloc_test", 16, 4, 28.2, None),
    ("full_fit_alloc_test", 4, 2, 26.5, 17.3),
    ("full_fit_alloc_test", 8, 1, 20.4, 23.2),
    ("long_busy_list_alloc_test", 8, 2, 17.7, 21.2),
    ("long_busy_list_alloc_test", 4, 2, 15.3, 16.2),
    ("long_busy_list_alloc_test", 8, 1, None, 19.5),
    ("random_size_align_alloc_test", 4, 2, None, 14.3),
    ("pcpu_alloc_test", 4, 2, None, 6.9),
    ("fix_align_alloc_test", 0, 1, 30.2, 12.4),
    ("fix_size_alloc_test", 0, 1, None, 26.0),
    ("full_fit_alloc_test", 0, 1, None, 21.9),
    ("random_size_align_alloc_test", 0, 1, None, 19.9),
    ("no_block_alloc_test", 0, 1, None, 18.0),
    ("kvfree_rcu_1_arg_vmalloc_test", 0, 1, None, 16.9),
    ("long_busy_list_alloc_test", 0, 1, None, 12.6),
    ("kvfree_rcu_2_arg_vmalloc_test", 0, 1, None, 11.0),
)

SETUP = ("x86_64 KVM (smp=8: 30 reps, smp=16: 15 reps) and arm64 cortex-a72 TCG (15 reps), "
         "medians; functional sweep 1 rep")
FUNCTIONAL_SMP = 8

MODES = {
    "quick": {"loops": 1500, "reps": 3, "functional_loops": 1500, "pcpu_objects": 2000},
    "default": {"loops": 5000, "reps": 5, "functional_loops": 20000, "pcpu_objects": 10000,
                "warmup": 2000},
    "full": {"loops": 1000000, "reps": 15, "functional_loops": 1000000, "pcpu_objects": 35000},
}

_TEST_RE = re.compile(r"^(\w+)(?::.*?)?(?:, worker \d+)?$")


def _test_name(label: str) -> str:
    m = _TEST_RE.match(label)
    return m.group(1) if m else label


def _configs() -> dict[tuple[int, int], int]:
    """(smp, nt) -> the mask of the tests the seed reports for it."""
    cfg: dict[tuple[int, int], int] = defaultdict(int)
    for test, smp, nt, _, _ in ROWS:
        if smp:
            cfg[(smp, nt)] |= MASK[test]
    return dict(cfg)


def _cells(ms) -> dict:
    """The judged figures: one per run (the workers' mean) per (smp, nt, test, design)."""
    cells: dict = {}
    keys = {(m.params.get("smp"), m.params.get("nt"), _test_name(m.test), m.design) for m in ms}
    for smp, nt, test, d in keys:
        cells[(smp, nt, test, d)] = per_run(ms, int(smp), int(nt), test, d)
    return cells


# The seed's x86_64 KVM guests as machine profiles: -smp 8 and -smp 16.
SMP_MACHINES = {8: "kvm-smp8", 16: "kvm-smp16"}


def _smp_machine(machine: dict[str, str], smp: int) -> dict[str, str]:
    """The machine of an smp=@smp run: the command line's, else the KVM guest's profile."""
    if set(machine) & {"machine", "mem", "dma32"}:
        return dict(machine)
    return dict(machine, machine=SMP_MACHINES.get(smp, "kvm-smp16"))


def run(mode: str, machine: dict[str, str], ctx=None) -> dict:
    ctx = ctx or Ctx(mode)
    cfg = MODES[mode]
    instr = ctx.policy.mode == "instr"
    loops = max(100, cfg["loops"] // 10) if instr else cfg["loops"]
    ms = []
    for (smp, nt), mask in sorted(_configs().items()):
        # Under callgrind the harness measures the whole worker pass, so each
        # process runs one test (its instructions are that test's alone).
        masks = [1 << i for i in range(12) if mask & (1 << i)] if instr else [mask]
        for one in masks:
            params = dict(_smp_machine(machine, smp), vcpus=str(smp), nr_threads=str(nt),
                          run_test_mask=str(one),
                          test_loop_count=str(loops), nr_pcpu_objects=str(cfg["pcpu_objects"]))
            if cfg.get("warmup"):
                params["warmup"] = str(cfg["warmup"])
            got = ctx.run("test_vmalloc", params, DESIGNS, cfg["reps"],
                          label=f"seed 004 smp={smp} nt={nt}",
                          cells=lambda ms_, smp=smp, nt=nt: _tag_cells(ms_, smp, nt))
            for m in got:
                m.params["smp"], m.params["nt"] = str(smp), str(nt)
            ms += got
    params = dict(_smp_machine(machine, FUNCTIONAL_SMP), vcpus=str(FUNCTIONAL_SMP),
                  nr_threads="1", run_test_mask=str(0xFFF),
                  test_loop_count=str(cfg["functional_loops"]),
                  nr_pcpu_objects=str(cfg["pcpu_objects"]))
    # The sweep is a pass/xfail check with unjudged one-run figures: timed by
    # wall clock in every mode (under callgrind one region would hold all 12 tests).
    got = run_interleaved("test_vmalloc", params, list(DESIGNS), 1, label="seed 004 functional",
                          mode="vtime" if ctx.policy.mode == "vtime" else "wall")
    for m in got:
        m.params["smp"], m.params["nt"] = "0", "1"
    ms += got
    settings = dict(cfg, **machine)
    if not set(machine) & {"machine", "mem", "dma32"}:
        settings["machine"] = "/".join(sorted({_smp_machine({}, smp)["machine"]
                                               for smp, _ in _configs()}))
    return {"measurements": ms, "settings": settings}


def _tag_cells(ms, smp: int, nt: int) -> dict:
    for m in ms:
        m.params["smp"], m.params["nt"] = str(smp), str(nt)
    return _cells(ms)


def per_run(ms, smp: int, nt: int, test: str, design: str) -> list[float]:
    """One figure per run: the mean over the run's workers of their avg usec."""
    by_rep: dict[int, list[float]] = defaultdict(list)
    for m in ms:
        if (m.design == design and m.params.get("smp") == str(smp)
                and m.params.get("nt") == str(nt) and _test_name(m.test) == test):
            by_rep[m.rep].append(m.value)
    return [sum(v) / len(v) for _, v in sorted(by_rep.items())]


def figure_measurements(ms) -> list[Measurement]:
    """One record per row, design and run (the per-run figure), for the report's bars."""
    out = []
    for test, smp, nt, _, _ in ROWS:
        where = f"smp={smp} nt={nt}" if smp else FUNCTIONAL
        for d in DESIGNS:
            for rep, v in enumerate(per_run(ms, smp, nt, test, d)):
                out.append(Measurement("test_vmalloc", f"{test} {where}", d, rep, v, "usec"))
    return out


def _seed_cell(gain) -> str:
    return "-" if gain is None else f"+{gain:.1f}%"


def render(doc: dict) -> str:
    ms = doc["measurements"]
    settings = doc.get("settings", {})
    base, new = DESIGNS
    unit = {"instr": "instr", "vtime": "vusec"}.get(doc.get("measure", "wall"), "usec")
    head = [["test_vmalloc", "smp", "nt", "x86_64 (seed)", "arm64 (seed)", f"rbtree {unit}",
             "maple (ours)"]]
    rows = []
    for test, smp, nt, x86, arm in ROWS:
        b, n = per_run(ms, smp, nt, test, base), per_run(ms, smp, nt, test, new)
        if b and n:
            bm = stats.summarize(b).amean
            where = f"smp={smp} nt={nt}" if smp else FUNCTIONAL
            seed = x86 if x86 is not None else arm
            if smp:
                ours = judge_cell(doc, f"{test} {where}", new, b, n, "vmalloc-test-usec", seed,
                                  "{:+.1f}%")
            else:   # one run: a figure, never judged
                ours = stats.fmt_change(stats.fastpath_change(
                    bm, stats.summarize(n).amean, metrics.get("vmalloc-test-usec").direction),
                    "{:+.1f}%")
            usec = f"{bm:,.0f}"
        else:
            ours, usec = "n/a", "n/a"
        rows.append([test, str(smp) if smp else FUNCTIONAL, "" if not smp else str(nt),
                     _seed_cell(x86), _seed_cell(arm), usec, ours])
    info = doc.get("machine", {})
    out = [f"test_vmalloc, maple (MT) against the rbtree (RB), {settings.get('reps', '?')} runs "
           f"per design interleaved, test_loop_count {settings.get('loops', '?')}; functional "
           f"sweep: every mask once, nt=1, smp={FUNCTIONAL_SMP}",
           tables.box(head, rows),
           f"seed: {SETUP}; ours: {info.get('cpu', '?')}, {info.get('cores', '?')} cores, "
           + (f"the {settings['machine']} machine profiles" if settings.get("machine")
              else f"a {settings.get('mem', '16G')} pagelab machine") + " with smp vCPUs",
           "change vs the rbtree: >0 is faster; (R)/(I): our 95% confidence intervals do not "
           "overlap (Fastpath)"] + protocol_lines(doc) + [""]
    out += _verdicts(ms)
    out += _counters(ms)
    return "\n".join(out)


def _verdicts(ms) -> list[str]:
    """The functional sweep's pass/xfail verdicts per design (from the exit records)."""
    lines = []
    for d in DESIGNS:
        names = sorted({_test_name(m.test) for m in ms
                        if m.design == d and m.params.get("smp") == "0"})
        if names:
            lines.append(f"functional sweep, {d}: {len(names)} tests ran, none failed "
                         "(align_shift_alloc_test is xfail by design)")
    return lines + ([""] if lines else [])


COUNTERS = (("vmap_area bytes", "VMAP_AREA_BYTES"), ("purges", "VMAP_PURGE"),
            ("TLB flushes", "TLB_FLUSH"), ("pool hits", "VMAP_POOL_HIT"),
            ("bump allocations", "VMAP_BUMP_ALLOC"), ("areas parked (no maple nodes)", "VMAP_MT_PARKED"),
            ("bump chunks", "VMAP_BUMP_CHUNK_NEW"))


def _counters(ms) -> list[str]:
    """Counters per run at the largest configuration run (mean over runs), per design."""
    confs = {(int(m.params.get("smp", 0)), int(m.params.get("nt", 0))) for m in ms}
    confs.discard((0, 1))
    if not confs:
        return []
    smp, nt = max(confs)
    big = [m for m in ms if m.params.get("smp") == str(smp) and m.params.get("nt") == str(nt)]
    cols = [(label, key) for label, key in COUNTERS if any(key in m.counters for m in big)]
    lines = [f"the counters behind the smp={smp} nt={nt} rows (per run, mean):"]
    for d in DESIGNS:
        recs = {m.rep: m.counters for m in big if m.design == d}
        if not recs:
            continue
        cells = [f"{label} {sum(float(c.get(key, 0)) for c in recs.values()) / len(recs):,.0f}"
                 for label, key in cols]
        lines.append(f"  {d:<6} " + "  ".join(cells))
    return lines
