#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# designs-table.sh - the designs table: seed 003's designs and the reviewers'
# (pagelab's own switches) on the three seed-003 workloads and the two new
# ones, at 32 and 128 vCPUs, on 32 GiB and 256 GiB machines. Runs
# pagelab-bench SUITE vcpus=... mem=... design=... --json once per workload
# and memory size, keeps the JSON lines in OUT/WL-MEM.jsonl and writes the
# Markdown table (docs/model/reviewers-designs.md) to OUT/table.md and stdout.
# With VTIME=1 (the default) every run is made a second time with vtime=1
# (the virtual-time model; OUT/WL-MEM-vt.jsonl) for the table's
# predicted columns: throughput, ns per page operation, the share of
# virtual time spent waiting for locks, and that run's zone->lock count.
# The model orders the vCPUs by their virtual clocks, so its run's counters
# differ from the interleaver's; both are deterministic (host-independent).
#
# usage: scripts/designs-table.sh [OUT]   (default out/designs-table)
# environment (all optional):
#   PAGELAB_BENCH  the runner (default build/pagelab-bench)
#   DESIGNS        presets, comma-separated (default: the eight below)
#   WORKLOADS      suites (default: the five below)
#   VCPUS          default 32,128
#   MEMS           default "32G 256G"
#   OPS            page operations per run (default 2000000)
#   GIG_PROBE_256G 1 GiB ranges tried after a run at 256 GiB (default 16:
#                  all 248 cost ~20 s a run; hugetlb_1g always tries all)
#   VTIME          1: also the vtime=1 runs (default); 0: counters only
#
# Counters, not timings, are the table's point (the machine is shared); the
# 1 GiB column's time is wall time per alloc_contig_range() call.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/designs-table}
BENCH=${PAGELAB_BENCH:-build/pagelab-bench}
DESIGNS=${DESIGNS:-v6.18,pcp-owner,pcp-premerge,block-economy,targeted-drain,pcp-owner+targeted-drain,block-economy+batch,block-economy+ramp}
WORKLOADS=${WORKLOADS:-alloc_many_free_few exit_avalanche kbuild alloc_one_free_many hugetlb_1g}
VCPUS=${VCPUS:-32,128}
MEMS=${MEMS:-32G 256G}
OPS=${OPS:-2000000}
GIG_PROBE_256G=${GIG_PROBE_256G:-16}
VTIME=${VTIME:-1}

if [ ! -x "$BENCH" ]; then
	echo "designs-table: $BENCH not built (make build)" >&2
	exit 2
fi
mkdir -p "$OUT"
for mem in $MEMS; do
	for wl in $WORKLOADS; do
		probe=""
		[ "$mem" = 256G ] && probe="gig_probe=$GIG_PROBE_256G"
		echo "designs-table: $wl mem=$mem" >&2
		# shellcheck disable=SC2086
		"$BENCH" "$wl" vcpus="$VCPUS" mem="$mem" design="$DESIGNS" ops="$OPS" $probe --json \
			>"$OUT/$wl-$mem.jsonl" 2>"$OUT/$wl-$mem.txt"
		[ "$VTIME" = 1 ] || continue
		# the model's run: no 1 GiB probe after it (no time model for it)
		"$BENCH" "$wl" vcpus="$VCPUS" mem="$mem" design="$DESIGNS" ops="$OPS" gig_probe=0 \
			vtime=1 --json >"$OUT/$wl-$mem-vt.jsonl" 2>"$OUT/$wl-$mem-vt.txt"
	done
done

PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
"$PY" - "$OUT" "$DESIGNS" "$WORKLOADS" "$VCPUS" "$MEMS" <<'EOF' | tee "$OUT/table.md"
import json, sys, os
out, designs, workloads, vcpus, mems = sys.argv[1:6]
designs = designs.split(","); workloads = workloads.split(); vcpus = vcpus.split(",")
mems = mems.split()
vals, vt = {}, {}


def load(path, wl, mem, into, field):
    """Records of one JSON-lines file, keyed (workload, mem, vCPUs, design, name)."""
    if not os.path.exists(path):
        return
    for line in open(path):
        r = json.loads(line)
        name, v = r["test"].rsplit("-v", 1)
        into[(wl, mem, v, r["design"], name)] = r[field]


for mem in mems:
    for wl in workloads:
        load(os.path.join(out, f"{wl}-{mem}.jsonl"), wl, mem, vals, "value")
        load(os.path.join(out, f"{wl}-{mem}-vt.jsonl"), wl, mem, vt, "vtime")
with_vt = bool(vt)
head = ("| workload | vCPUs | mem | design | zone->lock | per Mop | pages moved under zone->lock "
        "| merges pcp / zone | unusable idx o9 | order-9 allocs after | 1 GiB won | µs per 1 GiB try "
        "| zone->lock per try |")
rule = "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
if with_vt:
    head += " model Mops/s | model ns per page op | model lock wait | model zone->lock per Mop |"
    rule += "---:|---:|---:|---:|"
print(head)
print(rule)
for wl in workloads:
    for v in vcpus:
        for mem in mems:
            for d in designs:
                g = lambda n: vals.get((wl, mem, v, d, n))
                if g("zone-lock") is None:
                    continue
                print(f"| {wl} | {v} | {mem} | {d} | {g('zone-lock'):.0f} | "
                      f"{g('zone-lock-per-Mop'):.0f} | {g('zone-lock-pages'):.0f} | "
                      f"{g('merges-pcp'):.0f} / {g('merges-zone'):.0f} | "
                      f"{g('unusable-index-9'):.3f} | {g('order9-allocs'):.0f} | "
                      f"{g('contig-1g-won'):.0f}/{g('contig-1g-tried'):.0f} | "
                      f"{g('contig-1g-us'):.0f} | {g('contig-1g-zone-lock'):.1f} |", end="")
                t = vt.get((wl, mem, v, d, "throughput"))
                z = vt.get((wl, mem, v, d, "zone-lock-per-Mop"))
                if with_vt and t and z:
                    print(f" {t['value']:.1f} | {t['ns_per_op']:.0f} | {t['lock_wait_share']:.3f} | "
                          f"{z['value']:.0f} |", end="")
                elif with_vt:
                    print(" | | | |", end="")
                print()
EOF
