"""Seed 001: __free_contig_range() frees order-0 runs as aligned chunks
(free_contig_batch): the seed's one published loop time beside ours.
"""
from __future__ import annotations

from .. import stats, tables
from .common import (Ctx, _values, fmt_marked_change, judge_cell, protocol_lines)

# The seed's one published figure: execution time of its loop, 100,000 x
# (alloc order 9, split_page, free_contig_range), arm64 server.
PUB_001 = {"setup": "a server-class arm64 machine", "iterations": 100000,
           "before_us": 4097358.0, "after_us": 729831.0}

SEED_001_MODES = {
    "quick": {"test_loop_count": "20000", "reps": 3},
    "default": {"test_loop_count": "100000", "reps": 3},
    "full": {"test_loop_count": "100000", "reps": 10},
}


def run_001(mode: str, machine: dict[str, str], ctx: Ctx | None = None) -> dict:
    ctx = ctx or Ctx(mode)
    cfg = SEED_001_MODES[mode]
    ms = []
    for order in ("9", "3", "10"):
        # floor=0: the "drops alone" row is for the table, not the JSON.
        params = dict(machine, order=order, test_loop_count=cfg["test_loop_count"], reps="1",
                      floor="0")
        if ctx.policy.mode == "instr":
            params["test_loop_count"] = str(max(100, int(cfg["test_loop_count"]) // 100))
        ms += ctx.run("page_alloc_high_order", params, ["v6.18", "contig-batch"], cfg["reps"],
                      together=True, label=f"seed 001 order {order}")
    return {"measurements": ms, "settings": dict(cfg, **machine)}


def b_loops(ms, order: str) -> int:
    """test_loop_count of seed 001's runs at @order (instr runs use fewer)."""
    for m in ms:
        if m.test == f"odr{order}-per-iteration":
            return int(m.params.get("test_loop_count", 1))
    return 1


def render_001(doc: dict) -> str:
    ms = doc["measurements"]
    settings = doc.get("settings", {})
    base, new = "v6.18", "contig-batch"
    loops = int(settings.get("test_loop_count", PUB_001["iterations"]))
    per = PUB_001["iterations"]
    head = [["", "before (seed)", "before (ours)", "after (seed)", "after (ours)"]]
    rows = []
    for order in ("9", "3", "10"):
        b = _values(ms, f"odr{order}-per-iteration", base)
        n = _values(ms, f"odr{order}-per-iteration", new)
        if not b or not n:
            continue
        bm, nm = stats.summarize(b).amean, stats.summarize(n).amean
        seed_b = f"{PUB_001['before_us']:,.0f} usec" if order == "9" else "-"
        seed_a = (f"{PUB_001['after_us']:,.0f} usec "
                  f"{fmt_marked_change(stats.fastpath_change(PUB_001['before_us'], PUB_001['after_us']))}"
                  if order == "9" else "-")
        u = "usec" if doc.get("measure", "wall") == "wall" else \
            ("instr" if doc.get("measure") == "instr" else "vusec")
        k = per if u != "instr" else per / max(1, int(b_loops(ms, order)))
        seed = stats.fastpath_change(PUB_001["before_us"], PUB_001["after_us"]) \
            if order == "9" else None
        rows.append([f"order {order}, {per:,} iterations", seed_b, f"{bm * k:,.0f} {u}",
                     seed_a, f"{nm * k:,.0f} {u} "
                     f"{judge_cell(doc, f'order {order}', new, b, n, 'iteration-us', seed)}"])
    loops = b_loops(ms, "9") if ms else loops
    lines = [f"Execution time of page_alloc_high_order_test (alloc, split_page, free_contig_range), "
             f"{len(_values(ms, 'odr9-per-iteration', base))} runs of {loops:,} iterations scaled "
             f"to the seed's {per:,}",
             tables.box(head, rows),
             f"seed: {PUB_001['setup']} (order 9 only); ours: a {settings.get('mem', '16G')} "
             "pagelab machine, one vCPU",
             "change: >0 is faster; (I)/(R): our 95% confidence intervals do not overlap"]
    lines += protocol_lines(doc) + ["",
             "the counters that explain them (per iteration, mean):"]
    counters = (("zone->lock acquisitions", "zone-lock-per-iteration"),)
    for order in ("9",):
        for d in (base, new):
            rec = [m for m in ms if m.test == f"odr{order}-per-iteration" and m.design == d]
            if not rec:
                continue
            c = rec[0].counters
            it = max(1, b_loops(ms, order))
            lines.append(f"  order {order} {d:<13} frees {c.get('PGFREE', 0) / it:7.1f}  "
                         f"buddy merges {c.get('BUDDY_MERGE', 0) / it:7.1f}  "
                         f"pages drained from PCPs {c.get('PCP_DRAIN_PAGES', 0) / it:7.1f}")
    del counters
    return "\n".join(lines)
