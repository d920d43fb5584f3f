#!/usr/bin/env bash
# capture-tracedat-fixture.sh OUTDIR - make the trace-cmd fixtures of
# tests/fixtures/traces: a short kmem + vmalloc capture written by
# trace-cmd itself (`trace-cmd extract` of an instance of our own, version 7
# with zstd, and `trace-cmd convert` of it to version 6), each with its
# `trace-cmd report -t` text (full nanosecond timestamps).
#
# `trace-cmd record` cannot be used here: it writes
# /proc/sys/kernel/ftrace_enabled and the function-tracer files, which this
# host refuses (EPERM), and leaves its instance behind. `trace-cmd extract`
# reads an existing instance but resets the top-level instance (disables
# every top-level event, clears its buffer and filters): this script runs it
# only when the top level is idle (no event enabled, nop tracer, empty
# buffer) and checks afterwards that the top level reads back the same.
# /proc/kallsyms is hidden from trace-cmd in a private mount namespace so the
# fixture does not carry 5 MB of symbols. Needs root.
set -euo pipefail
out=${1:?usage: capture-tracedat-fixture.sh OUTDIR}
T=/sys/kernel/tracing
inst=pagelab-fixture-$$
I=$T/instances/$inst
events=(kmem/mm_page_alloc kmem/mm_page_free kmem/mm_page_free_batched
	kmem/mm_page_alloc_zone_locked kmem/mm_page_pcpu_drain kmem/mm_page_alloc_extfrag
	vmalloc/alloc_vmap_area vmalloc/free_vmap_area_noflush vmalloc/purge_vmap_area_lazy
	sched/sched_process_fork)
top_state() {
	for f in tracing_on current_tracer set_event trace_clock buffer_size_kb; do
		echo "$f: $(tr '\n' ' ' < $T/$f)"
	done
	grep -vc '^#' $T/trace || true
}
[ -d $T/instances ] || { echo "tracefs is not mounted at $T" >&2; exit 2; }
before=$(top_state)
if [ -n "$(cat $T/set_event)" ] || [ "$(cat $T/current_tracer)" != nop ] ||
   [ "$(grep -vc '^#' $T/trace || true)" != 0 ]; then
	echo "the top-level tracing instance is in use; not running trace-cmd extract" >&2
	exit 2
fi
enabled=()
cleanup() {
	[ -d "$I" ] || return 0
	echo 0 > "$I/tracing_on" || true
	for e in "${enabled[@]}"; do echo 0 > "$I/events/$e/enable" || true; done
	rmdir "$I" || true
}
trap cleanup EXIT
mkdir "$I"
echo 0 > "$I/tracing_on"
echo 4096 > "$I/buffer_size_kb"
for e in "${events[@]}"; do echo 1 > "$I/events/$e/enable"; enabled+=("$e"); done
for e in "$I"/events/percpu/*/; do
	e=percpu/$(basename "$e"); echo 1 > "$I/events/$e/enable"; enabled+=("$e")
done
echo 1 > "$I/tracing_on"
# the workload: a compressor and a few short-lived processes (forks)
sh -c 'head -c 50000 /dev/urandom | xz -1 > /dev/null; ls / > /dev/null'
echo 0 > "$I/tracing_on"
mkdir -p "$out"
unshare -m sh -c "mount --bind /dev/null /proc/kallsyms && trace-cmd extract -B $inst -o '$out/kmem-vmalloc-v7.dat'" >/dev/null
cleanup
trap - EXIT
trace-cmd convert --file-version 6 -i "$out/kmem-vmalloc-v7.dat" -o "$out/kmem-vmalloc-v6.dat"
trace-cmd report -t "$out/kmem-vmalloc-v7.dat" > "$out/kmem-vmalloc-v7.report.txt"
trace-cmd report -t "$out/kmem-vmalloc-v6.dat" > "$out/kmem-vmalloc-v6.report.txt"
after=$(top_state)
[ "$before" = "$after" ] || { echo "the top-level instance changed:" >&2; diff <(echo "$before") <(echo "$after") >&2; exit 1; }
ls -l "$out"
