"""`pagelab reproduce SEED`: each seed's experiment beside its published numbers.

A seed is one entry of SEEDS: what it is, which pagelab-bench suites it
needs, and its run and render functions (each seed's experiment and table is
its own module of pagelab.seeds).  This module is the orchestration only:
which seeds run, in which measuring modes, the second opinion, where the
results are saved.  A seed whose run function or suites are missing prints
"not yet available: needs ..." and is skipped, which is not an error.

Every run saves out/seed-NNN.json (measurements, machine info, the figures'
data) and prints the seed's table in the seed's own layout, the seed's
published numbers beside ours, each change as Fastpath prints it (>0 is
better than the baseline) with (R)/(I) where our 95% confidence intervals
do not overlap, then the counters that explain the numbers.

Modes: quick (make run: a smoke run, labelled as one, never marked),
default, full (the seed's own repetition counts; long).  Measurement modes
(--mode): wall, instr (callgrind instruction counts of the measured regions),
vtime (the virtual-time model); see runner.py and, for the judging rules,
stats.judge().  The judged mode's table comes first; with --second MODE a
second opinion in another mode follows, with a line per cell where the two
disagree.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import stats
from .runner import list_suites, machine_info, save_results
from .seeds import seed000, seed001, seed002, seed003, seed004
from .seeds.common import Ctx

MODES = ("quick", "default", "full")


# ------------------------------------------------------------------ registry

# Each seed's hardware as a machine profile (pagelab-bench machines): used
# unless the command line names a machine (machine=, mem=, dma32=). Seed 004
# picks its profile per smp in seeds.seed004.run(); seed 001 names no machine.
SEED_MACHINES = {"000": "m7g.metal", "002": "i7-12700", "003": "x86-32c-32g"}


# Under callgrind (--mode instr) the host address space valgrind manages
# takes a machine of at most 32 GiB here (64 GiB fails to map): a larger
# profile keeps its shape (architecture, CPUs, zones) at that size.
INSTR_MAX_MEM = "32G"
BIG_PROFILES = {"m7g.metal"}     # profiles above INSTR_MAX_MEM


def seed_machine(sid: str, machine: dict[str, str], measure: str | None = None) -> dict[str, str]:
    """The machine parameters of seed @sid's runs: the command line's, else its profile."""
    if set(machine) & {"machine", "mem", "dma32"} or sid not in SEED_MACHINES:
        return dict(machine)
    out = dict(machine, machine=SEED_MACHINES[sid])
    if measure == "instr" and out["machine"] in BIG_PROFILES:
        out["mem"] = INSTR_MAX_MEM
    return out


@dataclass
class SeedSpec:
    id: str
    title: str
    needs: str                       # what brings it, while it is missing
    suites: tuple[str, ...] = ()
    run: Callable[[str, dict], dict] | None = None
    render: Callable[[dict], str] | None = None
    figure: Callable[[list], list] | None = None     # records for the report's bars
    notes: list[str] = field(default_factory=list)


SEEDS = {s.id: s for s in (
    SeedSpec("000", "vfree frees contiguous pfn runs as high-order blocks (vfree_batch)",
             "the test_vmalloc suite and free_contig_batch",
             ("test_vmalloc",), seed000.run_000, seed000.render_000),
    SeedSpec("001", "__free_contig_range(): order-0 runs freed as aligned chunks (free_contig_batch)",
             "the page_alloc_high_order suite", ("page_alloc_high_order",), seed001.run_001,
             seed001.render_001),
    SeedSpec("002", "per-migratetype free-block counts; /proc/pagetypeinfo without walking "
             "free lists (mt_counts)", "the pagetypeinfo suite", ("pagetypeinfo",),
             seed002.run_002, seed002.render_002),
    SeedSpec("003", "PCP pageblock ownership (pcp_owner)", "the PCP workload suites",
             ("alloc_many_free_few", "exit_avalanche", "kbuild"), seed003.run_003,
             seed003.render_003),
    SeedSpec("004", "vmalloc on a maple tree, per-CPU bump allocator (maple)",
             "the maple tree and vmalloc on it", ("test_vmalloc",), seed004.run,
             seed004.render, figure=seed004.figure_measurements),
)}


def availability(spec: SeedSpec, suites: list[str]) -> str | None:
    """None when the seed can run, else why not (one line)."""
    if spec.run is None:
        return f"not yet available: needs {spec.needs}"
    missing = [s for s in spec.suites if s not in suites]
    if missing:
        return f"not yet available: pagelab-bench has no {', '.join(missing)} suite (needs {spec.needs})"
    return None


# The judged mode of `pagelab reproduce` (README, "Verdicts that reproduce",
# says why): instruction counts, deterministic, with wall time beside them.
# A smoke run (--quick) times wall clock: it marks nothing and must be fast.
DEFAULT_MEASURE = "instr"
QUICK_MEASURE = "wall"


def second_opinion(measure: str) -> str | None:
    """The mode measured beside the judged one by default (None: none).

    None: a wall-time second opinion at the wall protocol's lengths (5-10
    runs of >= ~1 s samples) would take `reproduce all` past its 15-minute
    budget on 2 cores; `--second wall` asks for it (README, "Verdicts that
    reproduce").
    """
    del measure
    return None


def _measure_seed(spec: SeedSpec, mode: str, machine: dict, measure: str, info: dict) -> dict:
    ctx = Ctx(mode, stats.policy_for(measure, mode == "quick"))
    t0 = time.monotonic()
    res = spec.run(mode, machine, ctx)
    extra = {k: v for k, v in res.items() if k != "measurements"}
    extra.update(seed=spec.id, mode=mode, measure=measure, runs_log=ctx.log,
                 seconds=round(time.monotonic() - t0, 1))
    doc = {"measurements": res["measurements"], "machine": info, **extra}
    doc["table"] = spec.render(doc)
    return doc


def disagreements(judged: dict, other: dict) -> list[str]:
    """Cells whose mark or sign differs between two documents of one seed."""
    a = {(c["row"], c["col"]): c for c in judged.get("_cells", [])}
    out = []
    for c in other.get("_cells", []):
        j = a.get((c["row"], c["col"]))
        if j is None:
            continue
        sign = (j["change"] > 0) != (c["change"] > 0) and abs(j["change"] - c["change"]) > 0
        if j["mark"] != c["mark"] or sign:
            out.append(f"  {c['row']} [{c['col']}]: {judged['measure']} "
                       f"{stats.Cell(j['change'], j['mark'], j['noisy'], j['n'], j['cov']).text()}"
                       f", {other['measure']} "
                       f"{stats.Cell(c['change'], c['mark'], c['noisy'], c['n'], c['cov']).text()}")
    return out


def reproduce(seed_ids: list[str], mode: str, machine: dict[str, str], out_dir: Path,
              echo=print, measure: str | None = None, second: str | None = "auto") -> list[Path]:
    """Run the seeds, print their tables, save their results; return the files.

    @measure: the judged mode (default DEFAULT_MEASURE); @second: the mode of
    the second opinion ("auto": second_opinion(), None: none; never in quick).
    """
    measure = measure or (QUICK_MEASURE if mode == "quick" else DEFAULT_MEASURE)
    if second == "auto":
        second = second_opinion(measure)
    if mode == "quick" or second == measure:
        second = None
    suites = list_suites()
    saved = []
    info = machine_info()
    if mode == "quick":
        echo("SMOKE RUN (--quick): every seed at toy sizes with a few runs; the changes are "
             "shown, no (R)/(I) marks (run without --quick to judge)")
        # The smoke run (make run) stays on the built-in default machine: the
        # seeds' own profiles (up to 64 vCPUs, 256 GiB) are for judging runs.
        if not set(machine) & {"machine", "mem", "dma32"}:
            machine = dict(machine, machine="default")
    for sid in seed_ids:
        spec = SEEDS[sid]
        why = availability(spec, suites)
        if why:
            echo(f"seed {sid}: {why}")
            continue
        echo(f"seed {sid}: {spec.title} [{mode}, judged by {measure}]")
        doc = _measure_seed(spec, mode, seed_machine(sid, machine, measure), measure, info)
        echo(doc["table"])
        if second:
            other = _measure_seed(spec, mode, seed_machine(sid, machine, second), second, info)
            echo(f"second opinion, measured by {second}:")
            echo(other["table"])
            diff = disagreements(doc, other)
            echo(f"{measure} against {second}: {len(doc.get('_cells', [])) - len(diff)} of "
                 f"{len(doc.get('_cells', []))} cells agree on mark and sign"
                 + (":" if diff else ""))
            for line in diff:
                echo(line)
            doc["second"] = {k: v for k, v in other.items() if k not in ("machine",)}
            doc["second"]["measurements"] = [m.to_dict() for m in other["measurements"]]
        extra = {k: v for k, v in doc.items() if k not in ("measurements", "machine")}
        extra["cells"] = extra.pop("_cells", [])
        if "second" in extra:
            extra["second"]["cells"] = extra["second"].pop("_cells", [])
        path = save_results(out_dir / f"seed-{sid}.json", doc["measurements"], extra=extra,
                            info=info)
        echo(f"saved {path} ({doc['seconds']:.0f} s"
             + (f" + {doc['second']['seconds']:.0f} s" if second else "") + ")")
        echo("")
        saved.append(path)
    return saved


def figure_measurements(doc: dict) -> list:
    """The records a seed's bar chart shows: its own summary, or its measurements."""
    spec = SEEDS.get(doc.get("seed", ""))
    if spec is None or spec.figure is None:
        return doc["measurements"]
    return spec.figure(doc["measurements"])


def render_saved(doc: dict) -> str | None:
    """Re-render a saved seed document (the report uses this)."""
    spec = SEEDS.get(doc.get("seed", ""))
    if spec is None or spec.render is None:
        return None
    return spec.render(doc)
