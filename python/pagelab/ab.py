"""`pagelab ab REV_A REV_B SUITE ...`: does my patch help?

Each revision is checked out in its own git worktree under
out/ab/wt-<commit> (kept, so a second run reuses the build; remove it with
`git worktree remove out/ab/wt-<commit>`) and its
pagelab-bench built there (Release, target pagelab-bench only). Then the
suite runs on both, interleaved A B B A A B ... so host drift falls on both
alike, and each revision's measurements are saved as a results file
labelled with the revision as given (out/ab/ab-SUITE-<label>-TIME.json),
with that build's commit, for `pagelab compare` to judge (never pooled:
their commits differ).
"""
from __future__ import annotations

import datetime as _dt
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

from .runner import REPO, BenchError, Progress, machine_info, run_once, save_results


def _git(*args: str, cwd: Path = REPO) -> str:
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["git failed"])[-1]
        raise BenchError(f"git {' '.join(args)}: {msg}")
    return proc.stdout.strip()


def resolve(rev: str) -> str:
    """The full commit of @rev in this repository (BenchError if there is none)."""
    if rev.startswith("-"):
        raise BenchError(f"ab: '{rev}' is not a revision")
    proc = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet",
                           f"{rev}^{{commit}}"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError(f"ab: '{rev}' is not a commit of this repository")
    return proc.stdout.strip()


def build(commit: str, root: Path) -> Path:
    """A worktree at @commit under @root with pagelab-bench built; its path."""
    wt = root / f"wt-{commit[:12]}"
    if not (wt / ".git").exists():
        root.mkdir(parents=True, exist_ok=True)
        _git("worktree", "prune")        # a worktree deleted by hand is re-added
        _git("worktree", "add", "--detach", str(wt), commit)
    bdir = wt / "build"
    steps = [["cmake", "-S", str(wt), "-B", str(bdir), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
              "-DPAGELAB_BUILD_TESTS=OFF", "-DPAGELAB_BUILD_BENCH=ON"],
             ["cmake", "--build", str(bdir), "--target", "pagelab-bench"]]
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no output"]
            raise BenchError(f"ab: building {commit[:12]} failed: {tail[0]}")
    bench = bdir / "pagelab-bench"
    if not bench.exists():
        raise BenchError(f"ab: {commit[:12]} built no pagelab-bench")
    return bench


@contextmanager
def _bench(path: Path):
    """Run pagelab-bench from @path inside the block (runner reads $PAGELAB_BENCH)."""
    old = os.environ.get("PAGELAB_BENCH")
    os.environ["PAGELAB_BENCH"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PAGELAB_BENCH", None)
        else:
            os.environ["PAGELAB_BENCH"] = old


def run_ab(rev_a: str, rev_b: str, suite: str, params: dict[str, str], design: str, reps: int,
           out: Path) -> list[dict]:
    """Build both revisions, run them interleaved; one saved results document per revision."""
    revs = [(rev_a, resolve(rev_a)), (rev_b, resolve(rev_b))]
    if rev_a == rev_b:
        raise BenchError("ab: REV_A and REV_B are the same name")
    root = out / "ab"
    benches = {}
    for name, commit in revs:
        print(f"ab: {name} = {commit[:12]}: building in {root / ('wt-' + commit[:12])}", flush=True)
        benches[name] = build(commit, root)
    results: dict[str, list] = {name: [] for name, _ in revs}
    bar = Progress(reps * 2, f"ab {suite}")
    for rep in range(reps):
        order = revs if rep % 2 == 0 else revs[::-1]        # A B, B A, A B, ...
        for name, _ in order:
            with _bench(benches[name]):
                for m in run_once(suite, params, design):
                    m.rep = rep
                    results[name].append(m)
            bar.step(f"rep {rep + 1}/{reps} {name}")
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    docs = []
    for name, commit in revs:
        info = machine_info()
        info["commit"] = commit
        info["bench"] = str(benches[name])
        safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in name)
        path = save_results(root / f"ab-{suite}-{safe}-{stamp}.json", results[name],
                            command=["pagelab", "ab", rev_a, rev_b, suite], info=info,
                            extra={"label": name})
        print(f"ab: saved {path}")
        docs.append({"label": name, "machine": info, "measurements": results[name],
                     "path": str(path)})
    return docs


def instr_ab(rev_a: str, rev_b: str, suite: str | None, params: dict[str, str], design: str | None,
             out: Path, table: Path | None = None, jobs: int | None = None) -> str:
    """Instructions per operation on both revisions (cgcount, the budget check's code).

    With @suite: that loop (params may give key=N1:N2 and per=X, else the
    suite's cgcount.LOOPS entry).  Without: every path of the budget table
    @table, with its budget beside the counts.  Counts are deterministic, so
    one run per revision and loop length is the whole measurement.  A path
    the older build cannot run shows its one-line reason instead.
    """
    from . import budgets, cgcount
    if rev_a == rev_b:
        raise BenchError("ab: REV_A and REV_B are the same name")
    revs = [(rev_a, resolve(rev_a)), (rev_b, resolve(rev_b))]
    if suite:
        p = dict(params)
        if design:
            p["design"] = design
        rows = [("", None, cgcount.parse_path(suite, p))]
        cwd = REPO
    else:
        table = table or budgets.TABLE
        rows = [(r.path, r.budget, r.loop) for r in budgets.load(table)]
        cwd = budgets.root(table)
    root = out / "ab"
    benches = {}
    for name, commit in revs:
        print(f"ab: {name} = {commit[:12]}: building in {root / ('wt-' + commit[:12])}", flush=True)
        benches[name] = build(commit, root)
    jobsl = [(benches[name], loop) for _, _, loop in rows for name, _ in revs]
    counts = cgcount.per_op_many(jobsl, jobs, cwd=cwd, keep_errors=True)
    head = ["path", rev_a, rev_b, "change", "budget"]
    table_rows = [head]
    notes = []
    for i, (name, budget, loop) in enumerate(rows):
        a, b = counts[2 * i], counts[2 * i + 1]
        cells = []
        for rev, c in ((rev_a, a), (rev_b, b)):
            if isinstance(c, BenchError):
                cells.append("-")
                notes.append(f"{name or loop.suite} on {rev}: {c}")
            else:
                cells.append(f"{c:.1f}")
        ch = "" if isinstance(a, BenchError) or isinstance(b, BenchError) or not a \
            else f"{b / a - 1:+.1%}"
        table_rows.append([name or loop.text(), *cells, ch, "" if budget is None else f"{budget:g}"])
    widths = [max(len(r[i]) for r in table_rows) for i in range(len(head))]
    lines = ["instructions per operation (callgrind, difference of two loop lengths; "
             "lower is better)"]
    for r in table_rows:
        lines.append("  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                               for j, (c, w) in enumerate(zip(r, widths))).rstrip())
    lines += notes
    if suite:
        lines.append(f"loop: {rows[0][2].text()}")
    return "\n".join(lines) + "\n"
