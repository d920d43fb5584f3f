"""Instructions per operation, counted by callgrind: the difference of two loop lengths.

A path is one pagelab-bench suite with its parameters and one loop key
(nr=, test_loop_count=, pairs=, ...) given two lengths, ``key=N1:N2``.
The suite runs twice under ``valgrind --tool=callgrind`` with everything
counted (boot, setup, teardown, output), once per length; the two totals
differ only by the N2 - N1 extra turns of the loop, so

    instructions per operation = (total(N2) - total(N1)) / ((N2 - N1) * per)

where @per is how many operations one turn of the loop is (buddy_alloc_free
runs its pair loop and its batch loop nr times each: 2 blocks per nr).  Boot
and setup cancel, so a small machine (mem=256M) gives the same figure as a
big one in a fraction of the time.  A suite's harness regions
(bench/harness.c) switch instrumentation off outside them and dump each
region apart; the totals of every dump of a run are summed, so both ways
of running give the loop's own instructions.

Instruction counts are deterministic (one host thread, fixed seeds, no
timing in any decision under valgrind) but for the printing of a run's own
wall times, a few hundred instructions a run: at the budget table's loop
lengths the same binary gives the same count to 0.01 instructions per
operation, so a committed budget can be checked (`pagelab budgets`,
python/pagelab/budgets.py), and `pagelab ab REV_A REV_B ... --mode instr`
compares two builds with the same code.

Invariants: N1 < N2; both runs use the same binary and every other
parameter; a run that fails or prints no callgrind totals is an error, never
a figure.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .runner import BenchError

# Each suite's loop: (key, N1, N2, operations per turn), used when the
# parameters give no key=N1:N2 themselves.
LOOPS = {
    "buddy_alloc_free": ("nr", 20000, 40000, 2),      # pair loop + batch loop
    "vmalloc_fix_size": ("test_loop_count", 5000, 10000, 1),
    "page_alloc_high_order": ("test_loop_count", 200, 400, 1),
    "pagetypeinfo": ("reads", 50, 100, 2),               # fresh reads + fragmented reads
    "range_workload": ("pairs", 5000, 10000, 1),
    "trace_throughput": ("max_events", 50000, 100000, 1),
}


@dataclass
class Loop:
    """One measured path: a suite, its fixed parameters and its loop."""
    suite: str
    params: dict[str, str]
    key: str
    n1: int
    n2: int
    per: float = 1.0

    def command(self, n: int) -> list[str]:
        """pagelab-bench's arguments for loop length @n (the binary left out)."""
        return [self.suite] + [f"{k}={v}" for k, v in {**self.params, self.key: n}.items()]

    def text(self) -> str:
        """The path as a parameter line, e.g. 'buddy_alloc_free order=0 nr=20000:40000'."""
        words = [f"{k}={v}" for k, v in self.params.items()] + [f"{self.key}={self.n1}:{self.n2}"]
        return " ".join([self.suite] + words + ([f"per={self.per:g}"] if self.per != 1 else []))


def parse_path(suite: str, params: dict[str, str]) -> Loop:
    """A Loop from a suite and key=value parameters.

    One parameter may be a range ``key=N1:N2`` (the loop); ``per=X`` says how
    many operations one turn is. Without a range the suite's LOOPS entry is
    used (an error for a suite not listed there).
    """
    params = dict(params)
    per = params.pop("per", None)
    ranges = [k for k, v in params.items() if ":" in str(v)]
    if len(ranges) > 1:
        raise BenchError(f"{suite}: more than one loop range ({', '.join(ranges)})")
    if ranges:
        key = ranges[0]
        a, _, b = params.pop(key).partition(":")
        try:
            n1, n2 = int(a), int(b)
        except ValueError:
            raise BenchError(f"{suite}: {key}={a}:{b}: want two integers N1:N2") from None
        known = LOOPS.get(suite)
        dper = known[3] if known and known[0] == key else 1
    elif suite in LOOPS:
        key, n1, n2, dper = LOOPS[suite]
        if key in params:
            raise BenchError(f"{suite}: {key}= is the loop: give it as {key}=N1:N2")
    else:
        raise BenchError(f"{suite}: no loop known for instruction counts: give one key=N1:N2")
    if not 0 < n1 < n2:
        raise BenchError(f"{suite}: {key}={n1}:{n2}: want 0 < N1 < N2")
    try:
        per_v = float(per) if per is not None else float(dper)
    except ValueError:
        raise BenchError(f"{suite}: per={per}: not a number") from None
    if per_v <= 0:
        raise BenchError(f"{suite}: per={per}: must be positive")
    return Loop(suite, params, key, n1, n2, per_v)


def parse_line(text: str) -> Loop:
    """A Loop from 'SUITE key=value ... key=N1:N2 [per=X]' (a budget table's column)."""
    words = shlex.split(text)
    if not words:
        raise BenchError("empty path")
    params = {}
    for w in words[1:]:
        k, sep, v = w.partition("=")
        if not sep or not k:
            raise BenchError(f"{words[0]}: expected key=value, got '{w}'")
        params[k] = v
    return parse_path(words[0], params)


def totals(out_dir: Path) -> int:
    """The sum of the 'totals:' line of every callgrind dump in @out_dir."""
    total, seen = 0, False
    for f in sorted(out_dir.glob("cg.*")):
        for line in f.read_text(errors="replace").splitlines():
            if line.startswith("totals:"):
                total += int(line.split()[1])
                seen = True
    if not seen:
        raise BenchError("callgrind wrote no totals")
    return total


def run_total(bench: str | Path, args: list[str], cwd: str | Path | None = None) -> int:
    """Instructions of one whole pagelab-bench run of @args (in @cwd) under callgrind."""
    if shutil.which("valgrind") is None:
        raise BenchError("instruction counts need valgrind (scripts/install-deps.sh installs it)")
    with tempfile.TemporaryDirectory(prefix="pagelab-cg-") as tmp:
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.%p",
               str(bench), *args]
        env = dict(os.environ, PAGELAB_PROGRESS="0")
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env,
                                  cwd=cwd)
        except OSError as e:
            raise BenchError(f"cannot run valgrind: {e.strerror or e}") from None
        if proc.returncode != 0:
            lines = [x for x in proc.stderr.splitlines() if x.strip() and not x.startswith("==")]
            why = lines[-1] if lines else f"exit {proc.returncode}"
            raise BenchError(f"{Path(str(bench)).name} {' '.join(args)}: {why}")
        return totals(Path(tmp))


def per_op(bench: str | Path, path: Loop, cwd: str | Path | None = None) -> float:
    """Instructions per operation of @path with the pagelab-bench at @bench."""
    t1 = run_total(bench, path.command(path.n1), cwd)
    t2 = run_total(bench, path.command(path.n2), cwd)
    return (t2 - t1) / ((path.n2 - path.n1) * path.per)


def per_op_many(jobs: list[tuple[str | Path, Loop]], workers: int | None = None,
                cwd: str | Path | None = None, keep_errors: bool = False) -> list:
    """per_op() of each (bench, path), up to @workers callgrind processes at once.

    The 2 x len(@jobs) runs are independent, so they are spread over the
    workers one run each.  With @keep_errors a path whose run fails gets its
    BenchError in its place instead of raising (ab: a path the older build
    cannot run).
    """
    workers = max(1, workers or os.cpu_count() or 1)
    runs = [(b, p.command(n)) for b, p in jobs for n in (p.n1, p.n2)]

    def one(ba):
        try:
            return run_total(ba[0], ba[1], cwd)
        except BenchError as e:
            if not keep_errors:
                raise
            return e
    if workers == 1:
        t = [one(r) for r in runs]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            t = list(pool.map(one, runs))
    out = []
    for i, (_, p) in enumerate(jobs):
        a, b = t[2 * i], t[2 * i + 1]
        err = a if isinstance(a, BenchError) else b if isinstance(b, BenchError) else None
        out.append(err if err else (b - a) / ((p.n2 - p.n1) * p.per))
    return out
