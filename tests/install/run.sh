#!/usr/bin/env bash
# run.sh BUILD_DIR - the install check, from a built tree:
#  1. `cmake --install BUILD_DIR --prefix TMP`: headers, libraries, man pages;
#  2. tests/install/example.c built with pkg-config: pagelab (shared; with
#     cc -static and --static, fully static), pagelab-static (the archive,
#     with and without --static: no libpagelab.so needed),
#     and with find_package(pagelab) (pagelab::pagelab, pagelab::pagelab_shared),
#     each run: it must print buddyinfo and "ok";
#  3. the example built through add_subdirectory() of the source tree: the
#     outside project gets no tests and never looks for cmocka.
# Nothing is written outside a temporary directory, removed at the end.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

run() {	# run NAME BINARY: the example must say ok
	local out
	out=$("$2") || { echo "test-install: $1 failed:"; echo "$out"; exit 1; }
	grep -q "^Node 0, zone   Normal" <<<"$out" || { echo "test-install: $1: no buddyinfo"; exit 1; }
	grep -q ": ok$" <<<"$out" || { echo "test-install: $1: $out"; exit 1; }
	echo "test-install: $1 ok"
}

cmake --install "$build" --prefix "$prefix" >/dev/null
# Every public header of the source tree is installed and compiles on its own
# from the prefix (so none relies on a header that was left out).
for h in "$src"/include/pagelab/*.h; do
	f=include/pagelab/$(basename "$h")
	[ -f "$prefix/$f" ] || { echo "test-install: $f not installed"; exit 1; }
	echo "#include <pagelab/$(basename "$h")>" |
		cc -fsyntax-only -Wall -Werror -I"$prefix/include" -x c - ||
		{ echo "test-install: $f does not compile alone"; exit 1; }
done
for f in share/man/man1/pagelab.1 share/man/man1/pagelab-bench.1; do
	[ -f "$prefix/$f" ] || { echo "test-install: $f not installed"; exit 1; }
done
# The man pages render (groff's man macros, when man is here) and name their commands.
for p in pagelab pagelab-bench; do
	grep -q "^\.TH ${p^^} 1" "$prefix/share/man/man1/$p.1" || { echo "test-install: $p.1 is not its man page"; exit 1; }
	if command -v man >/dev/null; then
		MANWIDTH=80 man -l "$prefix/share/man/man1/$p.1" 2>/dev/null | grep -q "^NAME" ||
			{ echo "test-install: $p.1 does not render"; exit 1; }
	fi
done
pcdir=$(dirname "$(find "$prefix" -name pagelab.pc | head -1)")
libdir=$(dirname "$pcdir")
[ -f "$libdir/libpagelab.a" ] && [ -e "$libdir/libpagelab.so" ] && [ -f "$pcdir/pagelab-static.pc" ] ||
	{ echo "test-install: libpagelab.a/.so or pagelab-static.pc not in $libdir"; exit 1; }

# pkg-config, shared (the default) and static
export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
cc -o "$tmp/ex_pc" "$src/tests/install/example.c" $(pkg-config --cflags --libs pagelab)
readelf -d "$tmp/ex_pc" | grep -q 'libpagelab.so' || { echo "test-install: pkg-config did not link the shared library"; exit 1; }
LD_LIBRARY_PATH=$libdir run "pkg-config (shared)" "$tmp/ex_pc"
# pagelab-static: libpagelab.a in a dynamic program, with or without --static
for flags in "" --static; do
	cc -o "$tmp/ex_pc_static" "$src/tests/install/example.c" \
		$(pkg-config --cflags --libs $flags pagelab-static)
	if readelf -d "$tmp/ex_pc_static" | grep -q 'libpagelab\.so'; then
		echo "test-install: pkg-config ${flags:+$flags }pagelab-static linked the shared library"; exit 1
	fi
	run "pkg-config ${flags:+$flags }pagelab-static" "$tmp/ex_pc_static"
done
# cc -static with pagelab.pc's --static line: a fully static program (where
# the system has the dependencies' archives, as Debian's -dev packages do)
cc -static -o "$tmp/ex_pc_full" "$src/tests/install/example.c" \
	$(pkg-config --cflags --libs --static pagelab)
if readelf -d "$tmp/ex_pc_full" 2>/dev/null | grep -q NEEDED; then
	echo "test-install: cc -static with pkg-config --static pagelab is not static"; exit 1
fi
run "cc -static, pkg-config --static pagelab" "$tmp/ex_pc_full"

# find_package(pagelab)
cmake -S "$src/tests/install" -B "$tmp/fp" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/fp" >/dev/null
run "find_package pagelab::pagelab" "$tmp/fp/example"
run "find_package pagelab::pagelab_shared" "$tmp/fp/example_shared"

# add_subdirectory(): no tests, no cmocka; builds the static library only
cmake -S "$src/tests/install" -B "$tmp/sub" -G Ninja -DPAGELAB_SOURCE_DIR="$src" >/dev/null
if grep -q '^CMOCKA_FOUND' "$tmp/sub/CMakeCache.txt" || [ -n "$(find "$tmp/sub" -name CTestTestfile.cmake)" ]; then
	echo "test-install: add_subdirectory pulled in the tests"; exit 1
fi
cmake --build "$tmp/sub" --target example >/dev/null
run "add_subdirectory" "$tmp/sub/example"
