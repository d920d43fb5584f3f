#!/usr/bin/env python3
"""A long trace for the replay's throughput figures: COPIES copies of a tracefs
text trace (plain or .zst), one after another, each copy's timestamps moved
past the end of the one before (by the trace's span plus one second), header
kept once. The pfns repeat, so a replay warns of reallocated blocks; what it
measures is the trace layer's and the replay's speed on a long input.

  scripts/long-trace.py tests/fixtures/traces/dd-xz.pltrace/trace.txt.zst 10 OUT.txt.zst

OUT ending in .zst is compressed with the zstd command (streamed: memory
stays small whatever COPIES is).
"""
import re
import subprocess
import sys

TS = re.compile(rb"^(.*?\]\s+\S+\s+)(\d+)\.(\d{6}):")


def lines(path):
    if path.endswith(".zst"):
        p = subprocess.Popen(["zstd", "-dc", path], stdout=subprocess.PIPE)
        yield from p.stdout
        p.wait()
    else:
        with open(path, "rb") as f:
            yield from f


def main() -> int:
    if len(sys.argv) != 4 or not sys.argv[2].isdigit() or int(sys.argv[2]) < 1:
        print("usage: long-trace.py TRACE COPIES OUT", file=sys.stderr)
        return 2
    src, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    first = last = None
    for ln in lines(src):
        m = TS.match(ln)
        if m:
            us = int(m.group(2)) * 1000000 + int(m.group(3))
            first = us if first is None else first
            last = us
    if first is None:
        print(f"long-trace.py: {src}: no tracefs event lines", file=sys.stderr)
        return 2
    shift = last - first + 1000000
    if out.endswith(".zst"):
        z = subprocess.Popen(["zstd", "-q", "-f", "-3", "-o", out], stdin=subprocess.PIPE)
        sink = z.stdin
    else:
        z, sink = None, open(out, "wb")
    for k in range(copies):
        for ln in lines(src):
            m = TS.match(ln)
            if not m:
                if k == 0:
                    sink.write(ln)
                continue
            us = int(m.group(2)) * 1000000 + int(m.group(3)) + k * shift
            sink.write(m.group(1) + b"%d.%06d:" % (us // 1000000, us % 1000000) + ln[m.end():])
    sink.close()
    if z is not None and z.wait() != 0:
        print("long-trace.py: zstd failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
