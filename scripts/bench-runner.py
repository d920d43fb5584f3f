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
   loop) / cells, and that as a share of a one-second cell.

It is a benchmark, not a test: the figures depend on the host and its load
(printed with them: the 1-minute load average before and after each run).

usage: scripts/bench-runner.py [--rounds 2] [--cells 20] [--designs v6.18,pcp-owner,all]
       (PAGELAB_BENCH: the pagelab-bench to use, default build/pagelab-bench)
"""
import argparse
import os
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


def timed_run(exp, store_path: Path, jobs: int) -> float:
    if store_path.exists():
        store_path.unlink()
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    with Store(store_path) as s:
        res = exprun.run(exp, s, jobs=jobs, echo=quiet)
    secs = time.monotonic() - t0
    if res["failed"]:
        sys.exit(f"bench-runner: {len(res['failed'])} cells failed")
    print(f"  {jobs} worker{'s' if jobs > 1 else ' '}: {secs:7.1f} s "
          f"({len(res['ok'])} cells; load {load:.1f} -> {os.getloadavg()[0]:.1f})", flush=True)
    return secs


def bare_loop(exp) -> float:
    """The experiment's pagelab-bench commands, one after another, nothing else."""
    cmds = []
    for c in experiments.cells(exp):
        s = c.spec
        cmds.append([bench_binary(), "replay", f"trace={experiments.REPO / s['trace']}",
                     f"design={s['design']}", "--json"])
    t0 = time.monotonic()
    for cmd in cmds:
        subprocess.run(cmd, capture_output=True, check=True)
    return time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cells", type=int, default=20)
    ap.add_argument("--designs", default="v6.18,pcp-owner,all")
    a = ap.parse_args()
    designs = a.designs.split(",")
    with tempfile.TemporaryDirectory(prefix="pagelab-bench-runner-") as d:
        tmp = Path(d)
        (tmp / "traces").mkdir()
        traces = nine_traces(tmp / "traces")
        exp = experiment(tmp, "nine-traces", str(tmp / "traces" / "*"), designs)
        n = len(experiments.cells(exp))
        print(f"1. {len(traces)} traces x {len(designs)} designs = {n} replay cells, "
              f"local pool, {a.rounds} rounds of 1 then 2 workers (cores: {os.cpu_count()})")
        one, two = [], []
        for _ in range(a.rounds):
            one.append(timed_run(exp, tmp / "s.duckdb", 1))
            two.append(timed_run(exp, tmp / "s.duckdb", 2))
        m1, m2 = statistics.median(one), statistics.median(two)
        print(f"  median: 1 worker {m1:.1f} s, 2 workers {m2:.1f} s: {m1 / m2:.2f}x")

        small = sorted(FIXTURES.glob("perf-script-6.18.txt"))[0]
        exp2 = experiment(tmp, "overhead", str(small), ["v6.18"], reps=a.cells)
        print(f"2. runner overhead: {a.cells} cells (replays of {small.name}) on 1 worker, "
              f"against the same commands in a plain loop, {a.rounds} rounds")
        runner, loop = [], []
        for _ in range(a.rounds):
            runner.append(timed_run(exp2, tmp / "o.duckdb", 1))
            loop.append(bare_loop(exp2))
            print(f"  plain loop: {loop[-1]:7.1f} s", flush=True)
        per_cell = (statistics.median(runner) - statistics.median(loop)) / a.cells
        bare = statistics.median(loop) / a.cells
        print(f"  per cell: runner {statistics.median(runner) / a.cells * 1000:.0f} ms, "
              f"plain {bare * 1000:.0f} ms: overhead {per_cell * 1000:+.0f} ms a cell, "
              f"{per_cell * 100:+.1f}% of a one-second cell")
    return 0


if __name__ == "__main__":
    sys.exit(main())
