#!/usr/bin/env bash
# Build the range_workload peers from Debian's linux-source-6.12 into
# build/peers/ (or $PEERS_DIR): the kernel's maple tree (lib/maple_tree.c with
# tools/testing/radix-tree's shims) and drm_mm (drivers/gpu/drm/drm_mm.c with
# the small shims in bench/peers/drm_shim). Installs the package if missing.
# The kernel source is unpacked under the build directory only; it is never
# part of pagelab. Usage: scripts/build-peers.sh [peers-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
OUT=$(realpath -m "${1:-${PEERS_DIR:-build/peers}}")
TAR=/usr/src/linux-source-6.12.tar.xz
CC=${CC:-cc}

if [ ! -f "$TAR" ]; then
	echo "build-peers: installing linux-source-6.12"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get install -y -qq --no-install-recommends linux-source-6.12 >/dev/null || {
		echo "build-peers: linux-source-6.12 is not installable here; no peers" >&2
		exit 1
	}
fi

K=$OUT/linux-6.12
mkdir -p "$K"
if [ ! -f "$K/.unpacked" ] || [ "$TAR" -nt "$K/.unpacked" ]; then
	echo "build-peers: unpacking the parts of $TAR the peers need"
	tar -xJf "$TAR" -C "$K" --strip-components=1 \
		linux-source-6.12/tools linux-source-6.12/lib linux-source-6.12/include \
		linux-source-6.12/drivers/gpu/drm/drm_mm.c
	touch "$K/.unpacked"
fi

# 1. The kernel's maple tree, built like tools/testing/radix-tree but -O2,
#    without sanitizers and without CONFIG_DEBUG_MAPLE_TREE.
RT=$K/tools/testing/radix-tree
BFLAGS="-I../shared -I. -I../../include -I../../../lib -O2 -g -Wall -D_LGPL_SOURCE"
LIBS="xarray-shared.o radix-tree.o idr.o linux.o slab.o find_bit.o bitmap.o hweight.o vsprintf.o"
make -s -C "$RT" generated/map-shift.h generated/bit-length.h generated/autoconf.h $LIBS \
	CFLAGS="$BFLAGS" LDFLAGS= >/dev/null
# The shim's kmem_cache has no free list for aligned caches (every node a
# posix_memalign + free); bench/peers/kmaple_slab.c gives the nodes a slab-like
# free list, as the kernel (and pagelab) have.
( cd "$RT" && $CC $BFLAGS -I"$REPO/bench/suites" -w -c "$REPO/bench/peers/range_kmaple.c" -o range_kmaple.o &&
  $CC -O2 -g -Wall -c "$REPO/bench/peers/kmaple_slab.c" -o kmaple_slab.o &&
  $CC range_kmaple.o kmaple_slab.o $LIBS -lpthread -lurcu \
	-Wl,--wrap=posix_memalign,--wrap=free -o "$OUT/range_kmaple" )
echo "build-peers: $OUT/range_kmaple"

# 2. drm_mm, with pagelab's shims for the few kernel headers it needs.
D=$OUT/drm
mkdir -p "$D"
CF="-O2 -g -I$REPO/bench/peers/drm_shim -I$K/tools/include -I$K/include/uapi -include $REPO/bench/peers/drm_shim/prelude.h -w"
$CC $CF -I"$K/include" -c "$K/drivers/gpu/drm/drm_mm.c" -o "$D/drm_mm.o"
$CC $CF -c "$K/tools/lib/rbtree.c" -o "$D/rbtree.o"
$CC $CF -c "$REPO/bench/peers/drm_shim/shim.c" -o "$D/shim.o"
$CC $CF -I"$K/include" -I"$REPO/bench/suites" -c "$REPO/bench/peers/range_drmmm.c" -o "$D/range_drmmm.o"
$CC "$D/range_drmmm.o" "$D/drm_mm.o" "$D/rbtree.o" "$D/shim.o" -o "$OUT/range_drmmm"
echo "build-peers: $OUT/range_drmmm"
