#!/bin/bash
# record.sh OUTDIR [CACHEDIR] - record the three memory-pressure traces of
# docs/pressure.md with `pagelab trace record` (root; a 6.18 kernel with
# tracefs). Each trace starts from a machine whose memory is full of clean
# page cache (kswapd has just balanced), made untraced by reading a sparse
# file (no disk I/O); then:
#   kswapd.tar.zst   an anonymous working set and more page cache: kswapd reclaims
#   hugetlb.tar.zst  nr_hugepages 256 (512 MiB of order-9 pages), restored at once
#   thp.tar.zst      MADV_HUGEPAGE faults over memory fragmented by order-0 holes
# Safety: anonymous sizes are capped to keep MemAvailable above 6.5 GiB
# (workload.py); nr_hugepages is restored by the workload whatever happens;
# the sparse cache files are deleted at the end, which frees their cache.
set -euo pipefail
out=${1:?usage: record.sh OUTDIR [CACHEDIR]}
cache=${2:-/var/tmp/pagelab-pressure-cache}
here=$(cd "$(dirname "$0")" && pwd)
pagelab=${PAGELAB:-$here/../../.venv/bin/python -m pagelab}
wl="python3 $here/workload.py"
mkdir -p "$out" "$cache"
frag=
cleanup() {
	[ -n "$frag" ] && kill "$frag" 2>/dev/null || true
	rm -f "$cache"/cache0 "$cache"/cache1
	rmdir "$cache" 2>/dev/null || true
}
trap cleanup EXIT

$wl fill-cache "$cache"
$pagelab trace record -o "$out/kswapd.tar.zst" -- $wl kswapd "$cache" 384

$wl fill-cache "$cache"
$pagelab trace record -o "$out/hugetlb.tar.zst" -- $wl hugetlb 256

$wl fill-cache "$cache"
$wl fragment 1024 900 & frag=$!
sleep 20		# the fragmenter touches and punches its pages
$pagelab trace record -o "$out/thp.tar.zst" -- $wl thp 256
kill "$frag"; wait "$frag" 2>/dev/null || true; frag=
