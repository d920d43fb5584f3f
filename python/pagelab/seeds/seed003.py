"""Seed 003: PCP pageblock ownership (pcp_owner): the RFC's claims, each beside
our figure on its workload.
"""
from __future__ import annotations

from .. import stats, tables
from .common import (Ctx, judge_cell, machine_phrase, protocol_lines)

# The RFC publishes claims, not a table: each row puts our figure beside one.
CLAIMS_003 = {
    "setup": "32-way, 32G test machine",
    "rows": (  # (label, suite, test stem (its metric's id too), seed's claim)
        ("alloc many/free few: throughput", "alloc_many_free_few", "throughput",
         "+1% throughput"),
        ("alloc many/free few: zone->lock per Mop", "alloc_many_free_few",
         "zone-lock-per-Mop", "fewer zone->lock trips"),
        ("exit avalanche: zone->lock per Mop", "exit_avalanche", "zone-lock-per-Mop",
         "coarser transactions"),
        ("kbuild: throughput", "kbuild", "throughput", "-3..4% %sys"),
        ("kbuild: zone->lock per Mop", "kbuild", "zone-lock-per-Mop", ""),
        ("kbuild: unusable index, order 9", "kbuild", "unusable-index-9",
         "no worse fragmentation"),
    ),
}

SEED_003_MODES = {
    # two vCPU counts even in a smoke run: the report's zone->lock-against-vCPUs plot
    "quick": {"vcpus": "8,32", "ops": "300000", "reps": 3},
    "default": {"vcpus": "8,32,128", "ops": "2000000", "reps": 3},
    "full": {"vcpus": "8,32,128", "ops": "10000000", "reps": 5},
}


def run_003(mode: str, machine: dict[str, str], ctx: Ctx | None = None) -> dict:
    ctx = ctx or Ctx(mode)
    cfg = SEED_003_MODES[mode]
    designs = ["v6.18", "pcp-owner"]
    ms = []
    for suite in dict.fromkeys(r[1] for r in CLAIMS_003["rows"]):
        params = dict(machine, vcpus=cfg["vcpus"], ops=cfg["ops"])
        if ctx.policy.mode == "instr":
            params["ops"] = str(max(10000, int(cfg["ops"]) // 20))
        ms += ctx.run(suite, params, designs, cfg["reps"], together=True,
                      label=f"seed 003 {suite}", cells=_cells_003)
    ops = cfg["ops"] if ctx.policy.mode != "instr" else str(max(10000, int(cfg["ops"]) // 20))
    return {"measurements": ms, "settings": dict(cfg, **machine, ops=ops)}


def _cells_003(ms) -> dict:
    """Seed 003's judged figures: every row's test (timed or counted) per design."""
    stems = {r[2] for r in CLAIMS_003["rows"]}
    cells: dict = {}
    for m in ms:
        if m.test.rsplit("-v", 1)[0] in stems:
            cells.setdefault((m.suite, m.test, m.design), []).append(m.value)
    return cells


def _shown(doc: dict, label: str, stem: str) -> str:
    """A row's label as measured: under --mode instr a throughput row holds the
    instructions of its region (judged lower-better), and says so."""
    if doc.get("measure") == "instr" and stem == "throughput":
        return label.replace("throughput", "instructions (for throughput)")
    return label


def render_003(doc: dict) -> str:
    ms = doc["measurements"]
    settings = doc.get("settings", {})
    base, new = "v6.18", "pcp-owner"
    head = [["", "seed", base, new], ["", "(claim)", "(ours)", "(ours)"]]
    rows = []
    for vcpus in settings.get("vcpus", "32").split(","):
        for label, suite, stem, claim in CLAIMS_003["rows"]:
            test = f"{stem}-v{vcpus}"
            b = [m.value for m in ms if m.suite == suite and m.test == test and m.design == base]
            n = [m.value for m in ms if m.suite == suite and m.test == test and m.design == new]
            if not b or not n:
                continue
            bm, nm = stats.summarize(b).amean, stats.summarize(n).amean
            cell = judge_cell(doc, f"{label}, {vcpus} vCPUs", new, b, n, stem)
            rows.append([f"{_shown(doc, label, stem)}, {vcpus} vCPUs", claim, f"{bm:.3g}",
                         f"{nm:.3g} {cell}"])
    reps = settings.get("reps", "?")
    return "\n".join([
        f"PCP pageblock ownership, {settings.get('ops', '?')} page operations per run, "
        f"{reps} runs, vCPUs interleaved on one thread",
        tables.box(head, rows),
        f"seed: {CLAIMS_003['setup']} (claims from the RFC text); ours: "
        f"{machine_phrase(settings)}",
        "change vs v6.18: >0 is better; (I)/(R): our 95% confidence intervals do not overlap",
    ] + protocol_lines(doc))
