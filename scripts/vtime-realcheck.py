#!/usr/bin/env python3
"""vtime-realcheck.py - real threads here against the model's vCPUs with the
host cost set (docs/concepts/virtual-time.md, "Real threads here against the model").

Runs the LLFree workloads (bulk, rand; order 0, allocs=200000, pcp_autotune=0,
mem=4G, warmup=1) with 1 and 2 real threads, --runs times each under
clock=thread and clock=wall, interleaved, and once with vtime=1 vt_costs=host
at 1 and 2 vCPUs (deterministic), then prints a Markdown table: medians of
the real runs (min-max in parentheses), the model, and the model's error
against the thread-CPU-time median. The load average and pagelab-xfer's
transfer and miss costs are read before and after: on a shared host (and a
VM whose two vCPUs the hypervisor places near or far) say what they were.

Usage: scripts/vtime-realcheck.py [--runs 5] [--bench build/pagelab-bench]
"""
import argparse
import json
import subprocess
import sys

BASE = ["llfree_anchors", "order=0", "allocs=200000", "pcp_autotune=0", "workload=bulk,rand",
        "mem=4G", "warmup=1"]
TESTS = [("bulk", "get"), ("bulk", "put"), ("rand", "put")]


def run(bench, args):
    out = subprocess.run([bench] + BASE + args + ["--json"], capture_output=True, text=True,
                         check=True).stdout
    return {r["test"]: r for r in (json.loads(x) for x in out.splitlines() if x.startswith("{"))}


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


def xfer(bench):
    """build/pagelab-xfer's line transfer and random miss now (ns)."""
    x = str(__import__("pathlib").Path(bench).with_name("pagelab-xfer"))
    r = json.loads(subprocess.run([x, "--json"], capture_output=True, text=True,
                                  check=True).stdout)
    return f"transfer {r['xfer_q1_ns']:.0f} ns, random miss {r['miss_own_ns']:.0f} ns"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bench", default="build/pagelab-bench")
    a = ap.parse_args()
    if a.runs < 1:
        print("vtime-realcheck.py: --runs must be at least 1", file=sys.stderr)
        sys.exit(2)
    load0, x0 = loadavg(), xfer(a.bench)
    real = {}
    for _ in range(a.runs):
        for t in (1, 2):
            for clock in ("thread", "wall"):
                for k, r in run(a.bench, [f"threads={t}", f"clock={clock}"]).items():
                    real.setdefault((k, clock), []).append(r["value"])
    model = {}
    for t in (1, 2):
        for k, r in run(a.bench, [f"threads={t}", "vtime=1", "vt_costs=host"]).items():
            model[k] = r["vtime"]["value"]
    load1, x1 = loadavg(), xfer(a.bench)
    print(f"load average before {' '.join(load0)}, after {' '.join(load1)} "
          f"(1, 5, 15 min); pagelab-xfer before: {x0}; after: {x1}; "
          f"real: median of {a.runs} runs (min-max)\n")
    print("| | " + " | ".join(f"{w} {p}" for w, p in TESTS) + " |")
    print("|---|" + "---|" * len(TESTS))

    def key(w, p, t):
        return f"{w}-o0-{p}-t{t}"

    for t in (1, 2):
        for clock, what in (("thread", "thread CPU time (`clock=thread`)"), ("wall", "wall")):
            cells = []
            for w, p in TESTS:
                v = real[(key(w, p, t), clock)]
                cells.append(f"{median(v):.1f} ({min(v):.1f}-{max(v):.1f})")
            print(f"| {t} real thread{'s' if t > 1 else ''}, {what} | " + " | ".join(cells) + " |")
        cells = []
        for w, p in TESTS:
            m, r = model[key(w, p, t)], median(real[(key(w, p, t), "thread")])
            cells.append(f"{m:.1f} ({100 * (m - r) / r:+.0f}%)")
        print(f"| {t} vCPU{'s' if t > 1 else ''} (model, vt_costs=host; error vs thread CPU "
              f"time) | " + " | ".join(cells) + " |")
    for src, name in (("real", "real (thread CPU time)"), ("model", "model")):
        cells = []
        for w, p in TESTS:
            if src == "real":
                g = (median(real[(key(w, p, 2), "thread")]) /
                     median(real[(key(w, p, 1), "thread")]))
            else:
                g = model[key(w, p, 2)] / model[key(w, p, 1)]
            cells.append(f"{g:.2f}")
        print(f"| growth 1 -> 2, {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
