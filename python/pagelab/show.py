"""`pagelab show REPORT`: a machine's /proc report after a chosen workload.

Runs the C `show` suite (bench/suites/show.c), which prints the kernel's report
text byte for byte, and parses /proc/buddyinfo for the plots.  lock_stat
runs the machine with lock_stat=1 (unless the parameters say otherwise);
"lockstat" is taken as another spelling of it.
"""
from __future__ import annotations

import re

from .runner import BenchError, run_raw

REPORTS = ("buddyinfo", "pagetypeinfo", "zoneinfo", "vmallocinfo", "vmstat", "lock_stat",
           "events")
ALIASES = {"lockstat": "lock_stat"}
WORKLOADS = ("fresh", "churn")


def show_text(what: str, workload: str = "fresh", params: dict[str, str] | None = None) -> str:
    """The report text (several reports: comma-separated @what)."""
    what = ",".join(ALIASES.get(w, w) for w in what.split(","))
    for w in what.split(","):
        if w not in REPORTS:
            raise BenchError(f"unknown report '{w}' ({', '.join(REPORTS)})")
    if workload not in WORKLOADS:
        raise BenchError(f"unknown workload '{workload}' ({', '.join(WORKLOADS)})")
    p = dict(params or {})
    if "lock_stat" in what.split(","):
        p.setdefault("lock_stat", "1")
    p.update(what=what, workload=workload)
    text = run_raw("show", p, json_out=False)
    # PAGELAB_BENCH is not ours (vmallocinfo and events have no per-zone lines;
    # a just-booted machine's vmallocinfo is empty, and that is no error)
    zoned = set(what.split(",")) & {"buddyinfo", "pagetypeinfo", "zoneinfo"}
    if zoned and not re.search(r"^Node\s+0,\s+zone", text, flags=re.M):
        raise BenchError("pagelab-bench show printed no /proc report")
    return text


_BUDDY = re.compile(r"^Node (\d+), zone\s+(\S+)((?:\s+\d+)+)\s*$")


def parse_buddyinfo(text: str) -> dict[str, list[int]]:
    """{"0/DMA32": [free blocks at order 0..MAX_PAGE_ORDER], ...}"""
    out = {}
    for line in text.splitlines():
        m = _BUDDY.match(line)
        if m:
            out[f"{m.group(1)}/{m.group(2)}"] = [int(x) for x in m.group(3).split()]
    if not out:
        raise ValueError("no buddyinfo lines")
    return out


def buddyinfo_timeline(params: dict[str, str], rounds: list[int]) -> list[dict]:
    """Buddyinfo just after boot and after the churn stopped at each of @rounds.

    The churn is deterministic for a seed, so stopping it after r rounds is
    the state the longer run passed through at step r.
    """
    snaps = [{"label": "boot", "rounds": None,
              "zones": parse_buddyinfo(show_text("buddyinfo", "fresh", params))}]
    for r in rounds:
        p = dict(params, rounds=str(r))
        snaps.append({"label": f"churn {r}", "rounds": r,
                      "zones": parse_buddyinfo(show_text("buddyinfo", "churn", p))})
    return snaps
