#!/usr/bin/env python3
"""vtime-calibrate.py - fit the virtual-time model's per-path costs to
instruction counts measured here (callgrind), scaled to nanoseconds by the
LLFree anchors' single-thread figures (issue 15).

The virtual time of a single-vCPU run is linear in the per-path parameters
(no lock waits, no line moves between vCPUs). For each calibration workload
(a pagelab-bench command with one size parameter N) this script

  1. counts instructions under callgrind at N and 2N and takes the slope:
     instructions per unit of N (host noise cannot touch it; timed runs on a
     shared 2-core host could not be trusted, see the README);
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

Usage: scripts/vtime-calibrate.py [--bench build/pagelab-bench]
       [--write src/base/vtime_params.c]
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
    # under pcp->lock in the kernel too). See the README.
    "LOCK": ["LOCK"],
    "VMALLOC": ["VMALLOC", "VFREE"],
    "VMALLOC_RB": ["VMALLOC_RB"],
    "VMALLOC_MAPLE": ["VMALLOC_MAPLE"],
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

ANCHOR_1T = {"bulk-o0-get-t1": 94, "bulk-o0-put-t1": 90, "repeat-o0-getput-t1": 112,
             "rand-o0-put-t1": 256}


def env_with(params):
    env = dict(os.environ)
    env.pop("PAGELAB_VT_PARAMS", None)
    if params is not None:
        env["PAGELAB_VT_PARAMS"] = params
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="build/pagelab-bench")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--write", help="rewrite the calibrated block of this C file")
    a = ap.parse_args()

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
    lines = ["\t/* calibrated: BEGIN (scripts/vtime-calibrate.py rewrites this block) */"]
    slots = {"LOCK": "p->lock_ps", "VMALLOC_RB": "p->vmalloc_ps[0]",
             "VMALLOC_MAPLE": "p->vmalloc_ps[1]"}
    for g, cost in zip(names, x):
        ps = int(round(cost * 1000))
        for n in GROUPS[g]:
            if n in slots:
                lines.append(f"\t{slots[n]} = {ps};")
            elif n.startswith("P_"):
                lines.append(f"\tp->path_ps[VT_{n}] = {ps};")
            else:
                lines.append(f"\tp->event_ps[PL_EV_{n}] = {ps};")
    lines.append("\tp->idle_ps = 5000;\t/* one pass of a polling loop (not fitted) */")
    lines.append("\t/* calibrated: END */")
    block = "\n".join(lines)
    print(block)
    if a.write:
        src = open(a.write).read()
        src = re.sub(r"\t/\* calibrated: BEGIN.*?/\* calibrated: END \*/", lambda _: block, src,
                     flags=re.S)
        open(a.write, "w").write(src)


if __name__ == "__main__":
    main()
