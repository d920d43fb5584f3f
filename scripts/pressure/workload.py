#!/usr/bin/env python3
"""Memory-pressure workloads for recording kernel traces (docs/pressure.md).

  workload.py fill-cache DIR      page cache until kswapd wakes (untraced prep)
  workload.py kswapd DIR MiB      anon working set + more page cache than is free: kswapd reclaims
  workload.py fragment MiB        anon pages, every other one freed: order-0 holes
  workload.py thp MiB             MADV_HUGEPAGE faults (direct compaction)
  workload.py hugetlb N           nr_hugepages = N, then back to its old value

Safety (the machine is shared): page cache is clean and reclaimable, read from
sparse files (no disk I/O); every anonymous size is capped so that
MemAvailable stays above FLOOR_MIB; the hugetlb reservation is restored in a
finally block whatever happens, and refused if it would take memory below
FLOOR_MIB.  Each command prints one line of the vmstat counters it moved.
"""
import mmap
import os
import sys
import time

FLOOR_MIB = 6 * 1024 + 512
PAGE = 4096
COUNTERS = ("pgscan_kswapd", "pgsteal_kswapd", "pgsteal_direct", "compact_stall",
            "compact_success", "pgmigrate_success", "thp_fault_alloc", "thp_fault_fallback")


def vmstat() -> dict:
    with open("/proc/vmstat") as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def mem_available_mib() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    raise SystemExit("no MemAvailable")


def cap(mib: int) -> int:
    room = mem_available_mib() - FLOOR_MIB
    if room <= 0:
        raise SystemExit(f"workload: MemAvailable is under {FLOOR_MIB} MiB; refusing")
    return min(mib, room)


def report(what: str, v0: dict) -> None:
    v1 = vmstat()
    print(what + ": " + " ".join(f"{k}={v1.get(k, 0) - v0.get(k, 0)}" for k in COUNTERS),
          file=sys.stderr)


def read_sparse(path: str, mib: int, offset_mib: int = 0, until_kswapd: bool = False) -> int:
    """Read @mib MiB of a sparse file into the page cache; stop early once
    kswapd has scanned (until_kswapd). Return: MiB read."""
    with open(path, "ab") as f:
        f.truncate(max(os.path.getsize(path), (offset_mib + mib) << 20))
    k0 = vmstat()["pgscan_kswapd"]
    done = 0
    with open(path, "rb", buffering=0) as f:
        f.seek(offset_mib << 20)
        while done < mib:
            if not f.read(64 << 20):
                break
            done += 64
            if until_kswapd and vmstat()["pgscan_kswapd"] > k0:
                break
    return done


def touch_anon(mib: int, advice=None) -> mmap.mmap:
    m = mmap.mmap(-1, mib << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if advice is not None:
        m.madvise(advice)
    for off in range(0, mib << 20, PAGE):
        m[off] = 1
    return m


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else ""
    v0 = vmstat()
    if cmd == "fill-cache":
        d = argv[2]
        got = read_sparse(os.path.join(d, "cache0"), 64 << 10, until_kswapd=True)
        report(f"fill-cache {got} MiB", v0)
    elif cmd == "kswapd":
        d, mib = argv[2], int(argv[3])
        a = touch_anon(cap(mib))
        # more page cache than is free, whatever other tasks freed meanwhile:
        # the zones go under their low watermark and kswapd reclaims
        free_mib = vmstat()["nr_free_pages"] * PAGE >> 20
        read_sparse(os.path.join(d, "cache1"), min(16 << 10, max(mib, free_mib + 512)))
        del a
        report("kswapd", v0)
    elif cmd == "fragment":
        mib = cap(int(argv[2]))
        m = touch_anon(mib, mmap.MADV_NOHUGEPAGE)
        for off in range(0, mib << 20, 2 * PAGE):    # every other page back
            m.madvise(mmap.MADV_DONTNEED, off, PAGE)
        report(f"fragment {mib} MiB", v0)
        time.sleep(float(argv[3]) if len(argv) > 3 else 3600)
    elif cmd == "thp":
        mib = cap(int(argv[2]))
        m = touch_anon(mib, mmap.MADV_HUGEPAGE)
        report(f"thp {mib} MiB", v0)
        del m
    elif cmd == "hugetlb":
        n = int(argv[2])
        path = "/proc/sys/vm/nr_hugepages"
        old = int(open(path).read())
        if n * 2 > mem_available_mib() - FLOOR_MIB:
            raise SystemExit("workload: the reservation would leave too little memory; refusing")
        try:
            with open(path, "w") as f:
                f.write(str(n))
            got = int(open(path).read())
        finally:
            with open(path, "w") as f:
                f.write(str(old))
        report(f"hugetlb {got}/{n} pages, restored to {int(open(path).read())}", v0)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
