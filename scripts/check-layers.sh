#!/usr/bin/env bash
# check-layers.sh SRC_DIR OBJECT... - the layering rule (docs/concepts/machine.md,
# "The layers"; CONTRIBUTING.md), checked
# on the sources and on the compiled objects of libpagelab:
#
#   base (0) < lib (1) < mm (2) < vmalloc (3) < machine (4) < trace (5)
#
# A file of src/LAYER/ may include, and its object may reference, only what
# belongs to its own layer or a lower one:
#  - includes: "pagelab/H.h" is ranked by the header (table below), "DIR/x.h"
#    by DIR, a bare "x.h" is the file's own directory;
#  - symbols: every undefined symbol of an object in src/LAYER/ that another
#    object of the library defines must be defined in LAYER or below.
# So, in particular, nothing in src/mm/ includes or calls anything in
# src/vmalloc/ or src/machine/. Prints one line per violation; exit 1 if any.
set -euo pipefail

src=${1:?usage: check-layers.sh SRC_DIR OBJECT...}
shift

rank_of_dir() {
	case "$1" in
	base) echo 0 ;; lib) echo 1 ;; mm) echo 2 ;; vmalloc) echo 3 ;; machine) echo 4 ;;
	trace) echo 5 ;;
	*) echo "" ;;
	esac
}

# The public headers, each with the layer that implements it.
rank_of_header() {
	case "$1" in
	base.h | compiler.h | list.h | rcu.h | fault_inject.h | metric.h) echo 0 ;;
	maple_tree.h | gfp_types.h) echo 1 ;;
	mm.h | mm_types.h | config.h | compaction.h) echo 2 ;;
	vmalloc.h | percpu.h | kvfree_rcu.h) echo 3 ;;
	machine.h | pagelab.h) echo 4 ;;
	trace.h | snapshot.h | replay.h | evstream.h | evcache.h) echo 5 ;;
	*) echo "" ;;
	esac
}

bad=0
complain() {
	echo "layering: $*"
	bad=1
}

# ---- includes ----------------------------------------------------------------
for f in "$src"/*/*.[ch]; do
	dir=$(basename "$(dirname "$f")")
	mine=$(rank_of_dir "$dir")
	[ -n "$mine" ] || { complain "$f: directory $dir has no layer"; continue; }
	while IFS= read -r inc; do
		case "$inc" in
		pagelab/*) r=$(rank_of_header "${inc#pagelab/}") ;;
		*/*) r=$(rank_of_dir "${inc%%/*}") ;;
		*) r=$mine ;;
		esac
		if [ -z "$r" ]; then
			complain "$f includes \"$inc\", which belongs to no layer"
		elif [ "$r" -gt "$mine" ]; then
			complain "$f ($dir) includes \"$inc\" from a higher layer"
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done

# ---- bench: the runner below its suites ------------------------------------
# pagelab-bench (bench/ next to SRC_DIR, when there) sits on top of every
# layer; inside it, bench/runner/ (harness, parameters, records, main) may not
# include a header of bench/suites/: suites call the runner, not the reverse.
bench=$(dirname "$src")/bench
if [ -d "$bench/runner" ] && [ -d "$bench/suites" ]; then
	for f in "$bench"/runner/*.[ch]; do
		while IFS= read -r inc; do
			if [ -e "$bench/suites/$(basename "$inc")" ] || [[ "$inc" == */suites/* ]]; then
				complain "$f (bench runner) includes \"$inc\" from bench/suites"
			fi
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
fi

# ---- symbols -----------------------------------------------------------------
# Where each global symbol is defined: "symbol rank".
defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
layer_of_object() {
	# .../src/LAYER/file.c.o
	rank_of_dir "$(basename "$(dirname "$1")")"
}
for o in "$@"; do
	r=$(layer_of_object "$o")
	[ -n "$r" ] || { complain "$o: object outside the layers"; continue; }
	nm -g --defined-only "$o" | awk -v r="$r" 'NF == 3 { print $3, r }' >>"$defs"
done
sort -u -k1,1 "$defs" -o "$defs"
for o in "$@"; do
	r=$(layer_of_object "$o")
	[ -n "$r" ] || continue
	while read -r sym dr; do
		if [ "$dr" -gt "$r" ]; then
			complain "$(basename "$o") uses $sym, defined in a higher layer"
		fi
	done < <(nm -u "$o" | awk '{ print $NF }' | sort -u | join - "$defs")
done

if [ "$bad" -eq 0 ]; then
	echo "layering: $# objects and $(ls "$src"/*/*.[ch] | wc -l) sources follow base < lib < mm < vmalloc < machine"
fi
exit "$bad"
