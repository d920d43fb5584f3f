#!/usr/bin/env python3
"""vtime-calibrate.py - fit the virtual-time model's per-path costs to
instruction counts measured here (callgrind), scaled to nanoseconds by the
LLFree anchors' single-thread figures.

The virtual time of a single-vCPU run is linear in the per-path parameters
(no lock waits, no line moves between vCPUs). For each calibration workload
(a pagelab-bench command with one size parameter N) this script

  1. counts instructions under callgrind at N and 2N and takes the slope:
     instructions per unit of N (host noise cannot touch it; timed runs on a
     shared 2-core host could not be trusted, see docs/concepts/virtual-time.md);
  2. runs it once per parameter group with PAGELAB_VT_PARAMS="ZERO,<group>=1000",
     which makes the sum of its records' vtime values (ns per unit of N) the
     group's count x 1 ns: one row of the design matrix;
  3. fits non-negative costs in instructions (scipy nnls, rows weighted by
     1/instructions so each workload counts relatively);
  4. converts instructions to picoseconds with one factor: the one that
     makes the model's 1-thread llfree_anchors figures (bulk o0 get + put,
     repeat o0, rand o0 put) match the Linux buddy's 94 + 90, 112 and 256 ns
     in least squares (the anchor machine's 2.2 GHz Xeon), and prints the C
     block for src/base/vtime_params.c between "calibrated: BEGIN/END".

--host fits the host cost set (vt_costs=host) instead, to timed runs here:

  1. times each calibration workload and the real-thread check's 1-thread
     llfree_anchors run (bulk get, bulk put, rand put; clock=thread, mem=4G,
     allocs=200000, warmup=1) --reps times each, the median of each figure
     (ns per unit, the same records the model reports);
  2. builds the same design matrix, plus one column for the cache model's
     miss cost (PAGELAB_VT_PARAMS="ZERO,MISS=1000,CACHE_LINES=K", K = one
     core's L2 in lines), one for the TLB model's (TLB_ENTRIES=E) and one
     for the LLC model's memory access (LLC_LINES=L), with rand alone at
     100,000, 300,000 and 400,000 allocs as more rows (footprints below and
     above the TLB's reach and the LLC's size); E and L are fitted too: of
     the candidate pairs (--tlb-entries, up to Zen 4's 3072-entry L2 DTLB, 0 for
     no TLB model;
     --llc-lines, up to the host's 32 MiB L3, 0 for no LLC model) the one
     whose fit has the least residual. Only the TLB and LLC columns depend
     on E and L, so the other columns are run once;
  3. fits non-negative costs in ns directly (no anchor factor), the check's own
     three 1-thread rows weighted --check-weight times (3 by default: with 1 the 13
     other rows left bulk get 18% under its own measurement);
  4. runs build/pagelab-xfer for the cross-core line transfer and the lock
     handoff (lower quartiles of its trials), and the ratio of a random miss on
     lines the other CPU wrote to one on one's own (remote_miss_ps =
     miss_ps x that), and rewrites the "host: BEGIN/END" block.

--vmalloc fits only the vmalloc layer's costs of the anchors' set (VMALLOC,
VMAP_LOCK, RB_NODE, MT_NODE), the others held at their committed values so
nothing but vmalloc moves:

  1. for each row of VMALLOC_ROWS (vmalloc_fix_size and test_vmalloc at one
     thread, rbtree and maple index, trees from a handful of areas to
     tens of thousands), the callgrind slope as above;
  2. the model's slope with the committed costs and the four groups at 0
     (the page allocator's share), converted to instructions by the
     anchors' factor (--scale), taken off the measurement;
  3. the four groups' columns as in the full fit, nnls on what is left,
     rows weighted by 1/instructions; rewrites the four groups' lines
     inside the "calibrated" block.

Usage: scripts/vtime-calibrate.py [--bench build/pagelab-bench]
       [--write src/base/vtime_params.c]
       scripts/vtime-calibrate.py --vmalloc [--scale 0.2626]
       [--write src/base/vtime_params.c]
       scripts/vtime-calibrate.py --host [--reps 5] [--cache-lines 16384]
       [--xfer build/pagelab-xfer] [--write src/base/vtime_params.c]
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
from scipy.optimize import nnls

# Parameter groups: every name in a group gets the same cost.
GROUPS = {
    "ALLOC": ["PGALLOC"],
    "FREE": ["PGFREE"],
    "PCP": ["PCP_HIT", "PCP_MISS", "PCP_FREE"],
    "BUDDY": ["P_RMQUEUE", "P_FREE_ONE"],
    # A split or merge of an owned chunk under pcp->lock (pcp_owner, the
    # block economy, pcp_premerge) is the same work as the zone's; the
    # calibration workloads do none, so they share the zone's cost.
    "SPLITMERGE": ["BUDDY_SPLIT", "BUDDY_MERGE", "PCP_SPLIT", "PCP_MERGE"],
    # The PCP lock is taken once per fast-path call: the fit cannot tell the
    # lock from the call and puts the fast path's cost here (it is spent
    # under pcp->lock in the kernel too). See docs/concepts/virtual-time.md.
    "LOCK": ["LOCK"],
    "VMALLOC": ["VMALLOC", "VFREE"],
    # The vmalloc layer's own locks (free_vmap_area_lock, the vmap nodes',
    # bump chunks', blocks', pgtable, objcache): apart from LOCK, which
    # carries the PCP fast path.
    "VMAP_LOCK": ["VMAP_LOCK"],
    # One node of vmalloc's index visited or written: rbtree, maple.
    "RB_NODE": ["P_RB_NODE"],
    "MT_NODE": ["P_MT_NODE"],
    "VMAP_PURGE": ["VMAP_PURGE_AREAS"],
    "LIST_ENTRY": ["P_LIST_ENTRY"],
    "PAGEBLOCK": ["P_PAGEBLOCK"],
    "SEQ_LINE": ["P_SEQ_LINE"],
}

# Calibration workloads: (args, size key, N). Single vCPU, one thread.
WORKLOADS = [
    (["buddy_alloc_free", "order=0", "batch=512", "reps=1"], "nr", 20480),
    (["buddy_alloc_free", "order=3", "batch=64", "reps=1"], "nr", 8192),
    (["buddy_alloc_free", "order=9", "batch=8", "reps=1"], "nr", 2048),
    (["buddy_alloc_free", "order=0", "batch=512", "pcp=0", "reps=1"], "nr", 20480),
    (["buddy_alloc_free", "order=10", "batch=8", "reps=1"], "nr", 2048),
    (["vmalloc_fix_size", "nr_pages=1", "reps=1", "design=v6.18"], "test_loop_count", 10000),
    (["vmalloc_fix_size", "nr_pages=1", "reps=1", "design=maple-index"], "test_loop_count", 10000),
    (["vmalloc_fix_size", "nr_pages=16", "reps=1", "design=v6.18"], "test_loop_count", 5000),
    (["vmalloc_fix_size", "nr_pages=16", "reps=1", "design=maple-index"], "test_loop_count", 5000),
    (["pagetypeinfo", "mem=1G", "rounds=20000", "design=v6.18"], "reads", 20),
    (["pagetypeinfo", "mem=1G", "rounds=20000", "design=mt-counts"], "reads", 200),
]

# --vmalloc rows: (args, size key, N, per_op). per_op: the record's value is
# already per unit of N (vmalloc_fix_size); else the model's slope is taken
# like the instructions' (test_vmalloc reports a whole test, setup included).
VMALLOC_GROUPS = ["VMALLOC", "VMAP_LOCK", "RB_NODE", "MT_NODE"]
VMALLOC_ROWS = [
    (["vmalloc_fix_size", "nr_pages=1", "reps=1", "design=v6.18"], "test_loop_count", 10000, True),
    (["vmalloc_fix_size", "nr_pages=1", "reps=1", "design=maple-index"], "test_loop_count", 10000,
     True),
    (["vmalloc_fix_size", "nr_pages=1", "reps=1", "design=maple"], "test_loop_count", 10000, True),
    (["vmalloc_fix_size", "nr_pages=16", "reps=1", "design=v6.18"], "test_loop_count", 5000, True),
    (["vmalloc_fix_size", "nr_pages=16", "reps=1", "design=maple-index"], "test_loop_count", 5000,
     True),
] + [(["test_vmalloc", "nr_threads=1", f"run_test_mask={m}", f"design={d}"], "test_loop_count",
      2000, False)
     for m in (2, 4, 8) for d in ("v6.18", "maple-index")]

ANCHOR_1T = {"bulk-o0-get-t1": 94, "bulk-o0-put-t1": 90, "repeat-o0-getput-t1": 112,
             "rand-o0-put-t1": 256}


# Model parts on in every --host column (ZERO clears them): see vtime.h.
HOST_MODEL = ""


def env_with(params):
    env = dict(os.environ)
    env.pop("PAGELAB_VT_PARAMS", None)
    if params is not None:
        env["PAGELAB_VT_PARAMS"] = params + HOST_MODEL
    return env


def run(bench, args, env_params=None):
    argv = [bench] + args + ["--json"]
    if env_params is not None:
        argv.insert(-1, "vtime=1")
    out = subprocess.run(argv, env=env_with(env_params), capture_output=True, text=True,
                         check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def instructions(bench, args):
    """Instructions of the whole run (callgrind, no vtime)."""
    out = "/tmp/vtime-calib.callgrind"
    r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", bench]
                       + args, env=env_with(None), capture_output=True, text=True, check=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    os.unlink(out)
    return int(m.group(1))


TIME_UNITS = {"ns": 1.0, "us": 1e3, "usec": 1e3, "ns/pair": 1.0}


def model_ns(recs):
    """Sum of the time records' vtime values, in ns per unit of the size key."""
    tot = 0.0
    for rec in recs:
        if rec["unit"] in TIME_UNITS and rec["vtime"]["value"] is not None:
            tot += rec["vtime"]["value"] * TIME_UNITS[rec["unit"]]
    return tot


# The real-thread check's 1-thread run (docs/concepts/virtual-time.md, "Real threads here against the model").
HOST_ANCHOR = ["llfree_anchors", "threads=1", "order=0", "allocs=200000", "pcp_autotune=0",
               "workload=bulk,rand", "mem=4G", "warmup=1"]
HOST_ANCHOR_TESTS = ["bulk-o0-get-t1", "bulk-o0-put-t1", "rand-o0-put-t1"]
# rand alone at other footprints: the miss and TLB columns need them apart.
HOST_RAND = [["llfree_anchors", "threads=1", "order=0", f"allocs={n}", "pcp_autotune=0",
              "workload=rand", "mem=4G", "warmup=1"] for n in (100000, 300000, 400000)]


def timed_ns(recs):
    """Sum of the time records' own (timed) values, in ns per unit."""
    return sum(r["value"] * TIME_UNITS[r["unit"]] for r in recs if r["unit"] in TIME_UNITS)


def group_spec(g, a):
    spec = "ZERO," + ",".join(f"{x}=1000" for x in GROUPS[g])
    return spec + {"MISS": f",CACHE_LINES={a.cache_lines}",
                   "TLB_MISS": f",TLB_ENTRIES={a.tlb_entries}",
                   "LLC_MISS": f",CACHE_LINES={a.cache_lines},LLC_LINES={a.llc_lines}",
                   }.get(g, "")


def c_block(names, costs, marker, extra):
    """The C lines of a parameter block between "/* MARKER: BEGIN/END */"."""
    slots = {"LOCK": "p->lock_ps", "VMAP_LOCK": "p->vmap_lock_ps", "MISS": "p->miss_ps",
             "TLB_MISS": "p->tlb_miss_ps", "LLC_MISS": "p->llc_miss_ps"}
    lines = [f"\t/* {marker}: BEGIN (scripts/vtime-calibrate.py"
             f"{' --host' if marker == 'host' else ''} rewrites this block) */"]
    for g, cost in zip(names, costs):
        ps = int(round(cost * 1000))
        for n in GROUPS.get(g, [g]):
            if n in slots:
                lines.append(f"\t{slots[n]} = {ps};")
            elif n.startswith("P_"):
                lines.append(f"\tp->path_ps[VT_{n}] = {ps};")
            else:
                lines.append(f"\tp->event_ps[PL_EV_{n}] = {ps};")
    lines += extra
    lines.append(f"\t/* {marker}: END */")
    return "\n".join(lines)


def write_block(path, marker, block):
    src = open(path).read()
    new = re.sub(r"\t/\* " + marker + r": BEGIN.*?/\* " + marker + r": END \*/",
                 lambda _: block, src, flags=re.S)
    if new == src and block not in src:
        sys.exit(f"vtime-calibrate.py: no '{marker}: BEGIN/END' block in {path}")
    open(path, "w").write(new)


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def vmalloc_fit(a):
    """Fit the vmalloc layer's costs alone (see the top)."""
    zero = ",".join(f"{n}=0" for g in VMALLOC_GROUPS for n in GROUPS[g])

    def model(args, size, n, per_op, spec):
        v1 = model_ns(run(a.bench, args + [f"{size}={n}"], env_params=spec))
        if per_op:
            return v1
        return (model_ns(run(a.bench, args + [f"{size}={2 * n}"], env_params=spec)) - v1) / n

    rows, instr, fixed, labels = [], [], [], []
    for args, size, n, per_op in VMALLOC_ROWS:
        i1 = instructions(a.bench, args + [f"{size}={n}"])
        i2 = instructions(a.bench, args + [f"{size}={2 * n}"])
        instr.append((i2 - i1) / n)
        fixed.append(model(args, size, n, per_op, zero) / a.scale)
        rows.append([model(args, size, n, per_op,
                           "ZERO," + ",".join(f"{x}=1000" for x in GROUPS[g]))
                     for g in VMALLOC_GROUPS])
        labels.append(" ".join(args))
        print(f"# {labels[-1]}: {instr[-1]:.0f} instructions per {size}, page allocator "
              f"{fixed[-1]:.0f}", file=sys.stderr)
    A, b, f = np.array(rows), np.array(instr), np.array(fixed)
    w = 1.0 / b
    x, _ = nnls(A * w[:, None], (b - f) * w)
    pred = A @ x + f
    print("# vmalloc fit in instructions: workload, measured, model (page allocator's share), "
          "error")
    for k, t, p, q in zip(labels, b, pred, f):
        print(f"#   {k:<58} {t:8.0f} {p:8.0f} ({q:6.0f}) {100 * (p - t) / t:+6.1f}%")
    print("# instructions per unit: " + ", ".join(f"{g} {c:.1f}"
                                                 for g, c in zip(VMALLOC_GROUPS, x)))
    block = c_block(VMALLOC_GROUPS, x * a.scale, "calibrated", [])
    lines = [ln for ln in block.splitlines()[1:-1]]
    print("\n".join(lines))
    if a.write:
        src = open(a.write).read()
        # The first match is the anchors' block (costs_anchors() comes first).
        for ln in lines:
            lhs = ln.split("=")[0]
            new = re.sub(re.escape(lhs) + r"= \d+;", lambda _: ln, src, count=1)
            if new == src and ln.strip("\t") not in src:
                sys.exit(f"vtime-calibrate.py: no line '{lhs.strip()}' in {a.write}")
            src = new
        open(a.write, "w").write(src)


def host_model_rows(a, names):
    """The design matrix: per calibration row, the model's ns per 1 ns of each group."""
    rows = []
    for args, size, n in WORKLOADS:
        argv = args + [f"{size}={n}"]
        rows.append([model_ns(run(a.bench, argv, env_params=group_spec(g, a))) for g in names])
    cols = []
    for g in names:
        got = {r["test"]: r["vtime"]["value"]
               for r in run(a.bench, HOST_ANCHOR, env_params=group_spec(g, a))}
        cols.append([got[t] for t in HOST_ANCHOR_TESTS])
    rows += [[c[i] for c in cols] for i in range(len(HOST_ANCHOR_TESTS))]
    for argv in HOST_RAND:
        rows.append([model_ns(run(a.bench, argv, env_params=group_spec(g, a))) for g in names])
    return np.array(rows)


def host_column(a, name, **sizes):
    """One column of the design matrix, for the model sizes given (tlb_entries, llc_lines)."""
    for k, v in sizes.items():
        setattr(a, k, v)
    return host_model_rows(a, [name])[:, 0]


def host(a):
    """Fit vt_costs=host to timed single-thread runs here (see the top)."""
    # The host fit has the check's bulk get and bulk put rows timed apart: a
    # refill's __rmqueue() and a drain's __free_one_page() get a cost each
    # (one shared BUDDY cost put a put's merge work into every refill's hold).
    del GROUPS["BUDDY"]
    GROUPS["RMQUEUE"], GROUPS["FREE_ONE"] = ["P_RMQUEUE"], ["P_FREE_ONE"]
    base = list(GROUPS) + ["MISS"]
    names = base + ["TLB_MISS", "LLC_MISS"]
    for g in ("MISS", "TLB_MISS", "LLC_MISS"):
        GROUPS[g] = [g]
    a.tlb_entries = a.llc_lines = 0     # set per candidate by host_column()
    global HOST_MODEL
    HOST_MODEL = ",LIST_NEIGHBOURS=1"   # the host set lists the real list neighbours
    meas, labels = [], []
    for args, size, n in WORKLOADS:
        argv = args + [f"{size}={n}"]
        meas.append(median([timed_ns(run(a.bench, argv)) for _ in range(a.reps)]))
        labels.append(" ".join(args))
        print(f"# {labels[-1]}: {meas[-1]:.1f} ns timed", file=sys.stderr)
    real = {t: [] for t in HOST_ANCHOR_TESTS}
    for _ in range(a.reps):
        for r in run(a.bench, HOST_ANCHOR + ["clock=thread"]):
            real[r["test"]].append(r["value"])
    for t in HOST_ANCHOR_TESTS:
        meas.append(median(real[t]))
        labels.append("llfree_anchors " + t + " (clock=thread)")
    for argv in HOST_RAND:
        meas.append(median([timed_ns(run(a.bench, argv + ["clock=thread"]))
                            for _ in range(a.reps)]))
        labels.append("llfree_anchors rand " + argv[3] + " (clock=thread)")
    b = np.array(meas)
    w = 1.0 / b
    # The check's own 1-thread rows (bulk get, bulk put, rand) count --check-weight times.
    k = len(WORKLOADS)
    w[k:k + len(HOST_ANCHOR_TESTS)] *= a.check_weight
    best = None
    A0 = host_model_rows(a, base)
    tlb_cols = {e: host_column(a, "TLB_MISS", tlb_entries=e) if e else np.zeros(len(b))
                for e in (int(t) for t in a.tlb_entries_list.split(","))}
    llc_cols = {n: host_column(a, "LLC_MISS", llc_lines=n) if n else np.zeros(len(b))
                for n in (int(t) for t in a.llc_lines_list.split(","))}
    # The TLB's and the LLC's sizes are fitted too: the pair that fits best.
    for tlb, tcol in tlb_cols.items():
        for llc, lcol in llc_cols.items():
            A = np.column_stack([A0, tcol, lcol])
            x, res = nnls(A * w[:, None], b * w)   # costs in ns
            print(f"# tlb_entries={tlb} llc_lines={llc}: weighted residual {res:.4f}",
                  file=sys.stderr)
            if best is None or res < best[0]:
                best = (res, tlb, llc, A, x)
    _, tlb, llc, A, x = best
    pred = A @ x
    print("# host fit in ns (median of %d timed runs, tlb_entries=%d, llc_lines=%d): workload, "
          "measured, model, error" % (a.reps, tlb, llc))
    for k, t, p in zip(labels, b, pred):
        print(f"#   {k:<60} {t:10.1f} {p:10.1f} {100 * (p - t) / t:+6.1f}%")
    xf = json.loads(subprocess.run([a.xfer, "--json"], capture_output=True,
                                   text=True, check=True).stdout)
    ratio = xf["miss_other_ns"] / xf["miss_own_ns"]
    print(f"# pagelab-xfer: line transfer {xf['xfer_q1_ns']:.1f} ns (lower quartile; median "
          f"{xf['xfer_ns']:.1f}), per handover {xf['per_handover_q1_ns']:.1f} ns, handoff "
          f"{xf['handoff_ns']:.1f} ns; random miss on the other CPU's lines / own "
          f"{xf['miss_other_ns']:.1f} / {xf['miss_own_ns']:.1f} ns = {ratio:.2f}")
    xfer_ps = int(round(xf["xfer_q1_ns"] * 1000))
    miss = x[names.index("MISS")]
    extra = ["\tp->idle_ps = 5000;\t/* one pass of a polling loop (not fitted) */",
             f"\tp->cache_lines = {a.cache_lines};",
             f"\tp->tlb_entries = {tlb};",
             f"\tp->llc_lines = {llc};",
             "\tp->list_neighbours = 1;\t/* a list edit's real neighbours (vtime.h) */",
             f"\tp->remote_miss_ps = {int(round(miss * ratio * 1000))};"
             f"\t/* miss_ps x {ratio:.2f} (pagelab-xfer) */",
             f"\tp->handoff_ps = {int(round(xf['handoff_ns'] * 1000))};"]
    extra += [f"\tp->xfer_ps[{d}] = {xfer_ps};"
              for d in ("VT_SAME_CORE", "VT_SAME_SOCKET", "VT_OTHER_SOCKET")]
    block = c_block(names, x, "host", extra)
    print(block)
    if a.write:
        write_block(a.write, "host", block)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="build/pagelab-bench")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--write", help="rewrite the calibrated block of this C file")
    ap.add_argument("--host", action="store_true",
                    help="fit vt_costs=host to timed runs here (see the top)")
    ap.add_argument("--cache-lines", type=int, default=16384,
                    help="--host: the cache model's lines per vCPU (default: a 1 MiB L2)")
    ap.add_argument("--tlb-entries", dest="tlb_entries_list", default="0,1024,1536,2048,3072",
                    help="--host: candidate TLB sizes (pages per vCPU; 0: no TLB model); the "
                         "best fit is kept (Zen 4's L2 DTLB has 3072 entries)")
    ap.add_argument("--llc-lines", dest="llc_lines_list",
                    default="0,131072,262144,393216,524288",
                    help="--host: candidate LLC sizes in lines, shared by the socket's vCPUs "
                         "(0: no LLC model; 524288: the host's 32 MiB L3)")
    ap.add_argument("--check-weight", type=float, default=3.0,
                    help="--host: weight of the real-thread check's own 1-thread rows")
    ap.add_argument("--xfer", default="build/pagelab-xfer")
    ap.add_argument("--vmalloc", action="store_true",
                    help="fit only the vmalloc layer's costs (see the top)")
    ap.add_argument("--scale", type=float, default=0.2626,
                    help="--vmalloc: ns per instruction of the committed fit (docs/concepts/virtual-time.md)")
    a = ap.parse_args()
    if a.host:
        host(a)
        return
    if a.vmalloc:
        vmalloc_fit(a)
        return

    rows, instr = [], []
    names = list(GROUPS)
    for args, size, n in WORKLOADS:
        i1 = instructions(a.bench, args + [f"{size}={n}"])
        i2 = instructions(a.bench, args + [f"{size}={2 * n}"])
        per = (i2 - i1) / n
        row = []
        for g in names:
            spec = "ZERO," + ",".join(f"{x}=1000" for x in GROUPS[g])
            row.append(model_ns(run(a.bench, args + [f"{size}={n}"], env_params=spec)))
        rows.append((" ".join(args), row))
        instr.append(per)
        print(f"# {' '.join(args)}: {per:.0f} instructions per {size}", file=sys.stderr)

    A = np.array([r[1] for r in rows])  # model ns per 1 ns of each group's cost
    b = np.array(instr)
    w = 1.0 / b
    x, _ = nnls(A * w[:, None], b * w)   # costs in instructions
    pred = A @ x
    print("# fit in instructions: workload, measured, model, error")
    for (k, _), t, p in zip(rows, b, pred):
        print(f"#   {k:<60} {t:10.0f} {p:10.0f} {100 * (p - t) / t:+6.1f}%")

    # Instructions -> ps: the anchors' 1-thread figures.
    spec = ",".join(f"{n}={int(round(c * 1000))}" for g, c in zip(names, x) for n in GROUPS[g])
    got = {}
    for order in (0,):
        for rec in run(a.bench, ["llfree_anchors", "threads=1", f"order={order}",
                                 "allocs=20000", "pcp_autotune=0"], env_params="ZERO," + spec):
            got[rec["test"]] = rec["vtime"]["value"]   # ns if 1 instruction = 1 ns
    m = np.array([got[k] for k in ANCHOR_1T])
    t = np.array([ANCHOR_1T[k] for k in ANCHOR_1T], dtype=float)
    scale = float(m @ t / (m @ m))               # ns per instruction
    print(f"# ns per instruction from the anchors: {scale:.4f} "
          f"({1 / scale:.2f} instructions/ns)")
    for k in ANCHOR_1T:
        print(f"#   {k:<24} anchor {ANCHOR_1T[k]:6.0f} ns  model {got[k] * scale:8.1f} ns")
    x = x * scale
    block = c_block(names, x, "calibrated",
                    ["\tp->idle_ps = 5000;\t/* one pass of a polling loop (not fitted) */"])
    print(block)
    if a.write:
        write_block(a.write, "calibrated", block)


if __name__ == "__main__":
    main()
