#!/usr/bin/env bash
# Run `pagelab reproduce` twice in a row with the same arguments and compare
# the verdict marks of the two runs: out/twice/run1, out/twice/run2,
# out/twice/agreement.txt.  Usage: scripts/reproduce-twice.sh [SEEDS...] [--mode M] ...
# (default: all seeds, default mode, the judged mode only: --second none).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PAGELAB_PYTHON:-.venv/bin/python}
# this tree's pagelab, whatever the venv has installed
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
out=${PAGELAB_TWICE_OUT:-out/twice}
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(all)
mkdir -p "$out"
{
	echo "host: $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	for run in run1 run2; do
		start=$(date +%s)
		"$py" -m pagelab reproduce "${args[@]}" --second none --no-report --out "$out/$run" \
			> "$out/$run.txt"
		echo "$run: $(( $(date +%s) - start )) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	done
	"$py" -m pagelab agree "$out/run1" "$out/run2"
} | tee "$out/agreement.txt"
