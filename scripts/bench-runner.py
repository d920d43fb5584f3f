#!/usr/bin/env python3
"""bench-runner.py - what `pagelab run` costs and what a second worker buys.

Two figures (docs/experiments.md, "What the runner costs"):

1. A 9-trace x 3-design replay experiment (the fixture traces of
   tests/fixtures/traces, the dd-xz artifact copied under new names until
   there are nine) run on a local pool of 1 worker, then of 2, --rounds
   times alternately (1 2 1 2 ...): the wall time of each, and their ratio.
   Each run writes a fresh store in a temporary directory.
2. The runner's overhead per cell: --cells replays of one trace as an
   experiment on 1 worker, against the same pagelab-bench commands run one
   after another by a plain loop (alternately, --rounds times): (runner -
   loop) / cells, and that as a share of a one-second cell. Both in wall
   time and in CPU time (getrusage(2) of this process and of its children):
   on a shared host the wall difference is mostly other processes' load,
   while the CPU the runner spends beside its cells is its own cost.

It is a benchmark, not a test: the figures depend on the host and its load
(kept with them: the 1-minute load average before and after each run).
With --json it writes the figures, the commit, host and date as data
(default results/runner/bench-runner.json); with --doc it rewrites the
generated block of docs/experiments.md from that file.

usage: scripts/bench-runner.py [--rounds 2] [--cells 20] [--designs v6.18,pcp-owner,all]
                               [--json [FILE]] [--doc [FILE]] [--only-doc]
       (PAGELAB_BENCH: the pagelab-bench to use, default build/pagelab-bench)
"""
import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from pagelab import experiments, exprun  # noqa: E402
from pagelab.runner import bench_binary  # noqa: E402
from pagelab.store import Store  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "traces"


def nine_traces(into: Path) -> list[Path]:
    """The fixture traces, and copies of the dd-xz artifact until there are nine."""
    got = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".txt", ".pltrace"))
    out = []
    for p in got:
        dest = into / p.name
        (shutil.copytree if p.is_dir() else shutil.copy)(p, dest)
        out.append(dest)
    k = 2
    while len(out) < 9:
        dest = into / f"dd-xz-copy{k}.pltrace"
        shutil.copytree(FIXTURES / "dd-xz.pltrace", dest)
        out.append(dest)
        k += 1
    return out[:9]


def experiment(tmp: Path, name: str, traces: str, designs: list[str], reps: int = 1):
    text = (f'title = "{name}"\nkind = "replay"\ndesigns = {designs!r}\nreps = {reps}\n'
            f'retries = 0\n[replay]\ntraces = "{traces}"\n').replace("'", '"')
    p = tmp / f"{name}.toml"
    p.write_text(text)
    return experiments.load(str(p))


def quiet(*_a, **_k):
    pass


def cpu_now() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its reaped children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, ch.ru_utime + ch.ru_stime


def timed_run(exp, store_path: Path, jobs: int) -> dict:
    """One run of @exp into a fresh store: wall, own and children's CPU, load."""
    if store_path.exists():
        store_path.unlink()
    load = os.getloadavg()[0]
    c0 = cpu_now()
    t0 = time.monotonic()
    with Store(store_path) as s:
        res = exprun.run(exp, s, jobs=jobs, echo=quiet)
    secs = time.monotonic() - t0
    c1 = cpu_now()
    if res["failed"]:
        sys.exit(f"bench-runner: {len(res['failed'])} cells failed")
    out = {"wall_s": secs, "self_cpu_s": c1[0] - c0[0], "cells_cpu_s": c1[1] - c0[1],
           "load_before": load, "load_after": os.getloadavg()[0], "cells": len(res["ok"])}
    print(f"  {jobs} worker{'s' if jobs > 1 else ' '}: {secs:7.1f} s wall, runner CPU "
          f"{out['self_cpu_s']:.2f} s, cells' CPU {out['cells_cpu_s']:.2f} s "
          f"({len(res['ok'])} cells; load {load:.1f} -> {out['load_after']:.1f})", flush=True)
    return out


def bare_loop(exp) -> dict:
    """The experiment's pagelab-bench commands, one after another, nothing else."""
    cmds = []
    for c in experiments.cells(exp):
        s = c.spec
        cmds.append([bench_binary(), "replay", f"trace={experiments.REPO / s['trace']}",
                     f"design={s['design']}", "--json"])
    c0 = cpu_now()
    t0 = time.monotonic()
    for cmd in cmds:
        subprocess.run(cmd, capture_output=True, check=True)
    secs = time.monotonic() - t0
    c1 = cpu_now()
    return {"wall_s": secs, "self_cpu_s": c1[0] - c0[0], "cells_cpu_s": c1[1] - c0[1]}


def overhead_figures(over: list[dict], cells: int) -> dict:
    """Per-cell medians over the rounds. The overhead in CPU is the runner
    process's own CPU against the plain loop's (both spawn the same
    commands); the cells' CPU is shown, not subtracted, as it varies from
    run to run by more than the runner costs."""
    def med(side, *keys):
        return statistics.median(sum(o[side][k] for k in keys) for o in over) / cells * 1000

    f = {"cells": cells,
         "runner_wall_ms": med("runner", "wall_s"), "loop_wall_ms": med("loop", "wall_s"),
         "runner_cpu_ms": med("runner", "self_cpu_s"), "loop_cpu_ms": med("loop", "self_cpu_s"),
         "runner_cells_cpu_ms": med("runner", "cells_cpu_s"),
         "loop_cells_cpu_ms": med("loop", "cells_cpu_s")}
    f["wall_ms"] = f["runner_wall_ms"] - f["loop_wall_ms"]
    f["cpu_ms"] = f["runner_cpu_ms"] - f["loop_cpu_ms"]
    return f


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty",
                               "--abbrev=12"], capture_output=True, text=True, check=True)
        return head.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


BEGIN = "<!-- runner-figures: begin (generated by scripts/bench-runner.py --doc) -->"
END = "<!-- runner-figures: end -->"


def render(r: dict) -> str:
    """The generated block of docs/experiments.md from a result file's dict."""
    one, two = r["pool"]["one_worker_s"], r["pool"]["two_workers_s"]
    o = r["overhead"]
    n = len(r["pool"]["runs"])
    rounds = f"median of {n} rounds" if n > 1 else "one round"
    lines = [BEGIN,
             f"Last run: commit `{r['commit']}`, {r['host']['cores']} cores, "
             f"kernel {r['host']['kernel']}, {r['date']}; 1-minute load average "
             f"{r['load_min']:.1f}-{r['load_max']:.1f} during the runs.",
             "",
             "| figure | 1 worker | 2 workers |",
             "|---|---:|---:|",
             f"| {r['pool']['cells']} replay cells, wall time ({rounds}) | "
             f"{one:.1f} s | {two:.1f} s "
             f"({one / two:.2f}x) |",
             "",
             "| per cell | wall | the runner's own CPU | the cells' CPU |",
             "|---|---:|---:|---:|",
             f"| {o['cells']} cells through `pagelab run` (1 worker) | "
             f"{o['runner_wall_ms']:.0f} ms | {o['runner_cpu_ms']:.0f} ms | "
             f"{o['runner_cells_cpu_ms']:.0f} ms |",
             f"| the same `pagelab-bench` commands in a plain loop | "
             f"{o['loop_wall_ms']:.0f} ms | {o['loop_cpu_ms']:.0f} ms | "
             f"{o['loop_cells_cpu_ms']:.0f} ms |",
             f"| the runner's overhead (share of a one-second cell) | {o['wall_ms']:+.0f} ms "
             f"({o['wall_ms'] / 10:+.1f}%) | {o['cpu_ms']:+.0f} ms ({o['cpu_ms'] / 10:+.1f}%) | |",
             END]
    return "\n".join(lines)


def write_doc(result: Path, doc: Path) -> None:
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"bench-runner: {doc} has no generated block ({BEGIN})")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(head + render(json.loads(result.read_text())) + tail)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cells", type=int, default=20)
    ap.add_argument("--designs", default="v6.18,pcp-owner,all")
    ap.add_argument("--json", nargs="?", const=str(REPO / "results/runner/bench-runner.json"))
    ap.add_argument("--doc", nargs="?", const=str(REPO / "docs/experiments.md"))
    ap.add_argument("--only-doc", action="store_true",
                    help="rewrite the doc block from --json's file, run nothing")
    a = ap.parse_args()
    if a.only_doc:
        write_doc(Path(a.json or REPO / "results/runner/bench-runner.json"),
                  Path(a.doc or REPO / "docs/experiments.md"))
        return 0
    designs = a.designs.split(",")
    with tempfile.TemporaryDirectory(prefix="pagelab-bench-runner-") as d:
        tmp = Path(d)
        (tmp / "traces").mkdir()
        traces = nine_traces(tmp / "traces")
        exp = experiment(tmp, "nine-traces", str(tmp / "traces" / "*"), designs)
        n = len(experiments.cells(exp))
        print(f"1. {len(traces)} traces x {len(designs)} designs = {n} replay cells, "
              f"local pool, {a.rounds} rounds of 1 then 2 workers (cores: {os.cpu_count()})")
        pool = []
        for _ in range(a.rounds):
            pool.append({"one": timed_run(exp, tmp / "s.duckdb", 1),
                         "two": timed_run(exp, tmp / "s.duckdb", 2)})
        m1 = statistics.median(r["one"]["wall_s"] for r in pool)
        m2 = statistics.median(r["two"]["wall_s"] for r in pool)
        print(f"  median: 1 worker {m1:.1f} s, 2 workers {m2:.1f} s: {m1 / m2:.2f}x")

        small = sorted(FIXTURES.glob("perf-script-6.18.txt"))[0]
        exp2 = experiment(tmp, "overhead", str(small), ["v6.18"], reps=a.cells)
        print(f"2. runner overhead: {a.cells} cells (replays of {small.name}) on 1 worker, "
              f"against the same commands in a plain loop, {a.rounds} rounds")
        over = []
        for _ in range(a.rounds):
            r = timed_run(exp2, tmp / "o.duckdb", 1)
            lp = bare_loop(exp2)
            print(f"  plain loop: {lp['wall_s']:7.1f} s wall, cells' CPU "
                  f"{lp['cells_cpu_s']:.2f} s", flush=True)
            over.append({"runner": r, "loop": lp})

    overhead = overhead_figures(over, a.cells)
    print(f"  per cell: wall {overhead['wall_ms']:+.0f} ms, the runner's own CPU "
          f"{overhead['cpu_ms']:+.0f} ms ({overhead['cpu_ms'] / 10:+.1f}% of a one-second cell)")
    loads = [x for r in pool for k in ("one", "two") for x in
             (r[k]["load_before"], r[k]["load_after"])] + \
        [x for o in over for x in (o["runner"]["load_before"], o["runner"]["load_after"])]
    result = {"commit": git_commit(), "date": time.strftime("%Y-%m-%d", time.gmtime()),
              "host": {"cores": os.cpu_count(), "kernel": platform.release()},
              "load_min": min(loads), "load_max": max(loads),
              "pool": {"cells": n, "runs": pool, "one_worker_s": m1, "two_workers_s": m2},
              "overhead": dict(overhead, runs=over)}
    if a.json:
        out = Path(a.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1) + "\n")
        if a.doc:
            write_doc(out, Path(a.doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
