#!/usr/bin/env bash
# The test_vmalloc time table of docs/model/maple.md, maple against v6.18: four
# configurations (nr_threads 1; 2 on 2 threads; 8 and 16 vCPUs interleaved on
# one thread), each `pagelab bench test_vmalloc` with both designs
# interleaved, REPS runs per design (default 5). Per run a test's figure is
# the mean of its workers' usec; per design the median of the runs;
# x = v6.18 / maple. Usage: scripts/vmalloc-maple-table.sh [reps] [outdir]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}
OUT=${2:-out/vmalloc-maple}
PY=${PYTHON:-.venv/bin/python}
export PAGELAB_BENCH=${PAGELAB_BENCH:-$PWD/build/pagelab-bench}
mkdir -p "$OUT"
COMMON="run_test_mask=4095 nr_pcpu_objects=5000"
run() {
	local name=$1
	shift
	echo "vmalloc-maple-table: $name: $*" >&2
	$PY -m pagelab bench test_vmalloc $COMMON "$@" --design v6.18 --design maple \
		--reps "$REPS" -o "$OUT/$name.json" >"$OUT/$name.log"
}
run n1 mem=2G test_loop_count=100000 nr_threads=1
run n2 mem=2G test_loop_count=100000 nr_threads=2 threads=2 sequential_test_order=1
run v8 mem=4G test_loop_count=10000 nr_threads=8 threads=1 sequential_test_order=1
run v16 mem=8G test_loop_count=5000 nr_threads=16 threads=1 sequential_test_order=1
$PY - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
cols = [("n1", "N=1 (L=100k)"), ("n2", "N=2, 2 threads (100k)"),
        ("v8", "8 vCPUs on 1 thread (10k)"), ("v16", "16 vCPUs (5k)")]
tests, x = [], {}
for key, _ in cols:
    runs = {}
    for m in json.load(open(f"{out}/{key}.json"))["measurements"]:
        test = m["test"].split(":")[0].replace("_alloc_test", "").replace("_test", "")
        if test not in tests:
            tests.append(test)
        runs.setdefault((test, m["design"], m["rep"]), []).append(m["value"])
    for test in tests:
        med = {d: statistics.median(statistics.mean(v) for (t, dd, _), v in runs.items()
                                    if t == test and dd == d) for d in ("v6.18", "maple")}
        x[(test, key)] = med["v6.18"] / med["maple"]
print("| test | " + " | ".join(c for _, c in cols) + " |")
print("|---|" + "---|" * len(cols))
for test in tests:
    cells = [f"{x[(test, k)]:.2f}" for k, _ in cols]
    print(f"| {test} | " + " | ".join(cells) + " |")
PY
