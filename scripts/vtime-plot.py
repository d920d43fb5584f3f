#!/usr/bin/env python3
"""vtime-plot.py - plot scripts/vtime-seeds.py's seed 003 table: predicted
throughput (virtual time) of v6.18 and pcp-owner against vCPUs, one panel
per workload.

Usage: scripts/vtime-seeds.py --part 003 > t.md; scripts/vtime-plot.py t.md out.png
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        print("usage: vtime-plot.py TABLE.md OUT.png", file=sys.stderr)
        sys.exit(2)
    rows = {}
    for line in open(sys.argv[1]):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[1].isdigit():
            rows.setdefault(cells[0], []).append((int(cells[1]), float(cells[2]),
                                                  float(cells[3])))
    if not rows:
        print("vtime-plot.py: no seed 003 rows in the table", file=sys.stderr)
        sys.exit(2)
    fig, axes = plt.subplots(1, len(rows), figsize=(4 * len(rows), 3.2))
    for ax, (wl, pts) in zip(axes, rows.items()):
        v = [p[0] for p in pts]
        ax.plot(v, [p[1] for p in pts], "o-", label="v6.18")
        ax.plot(v, [p[2] for p in pts], "s-", label="pcp-owner")
        ax.set_xscale("log", base=2)
        ax.set_xticks(v, [str(x) for x in v])
        ax.set_title(wl)
        ax.set_xlabel("vCPUs")
        ax.set_ylabel("Mops/s (virtual time)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
