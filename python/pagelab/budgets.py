"""`pagelab budgets`: the hot paths' instruction budgets, checked.

The table (tests/budgets/budgets.tsv, tab-separated; '#' starts a comment)
has one row per path: its name, its budget in instructions per operation,
how it is measured (a cgcount loop: 'SUITE key=value ... key=N1:N2
[per=X]') and a one-line reason for the budget.  `pagelab budgets` counts
every path with callgrind (python/pagelab/cgcount.py, the code `pagelab ab
--mode instr` uses) and fails when one is more than TOLERANCE over its
budget, naming the path, the budget and the count.  Instruction counts are
deterministic, so this is a count check, not a timing test: a change that
makes a path dearer fails it on any host with the same compiler.  Raising
a budget is an edit of the table with its reason.

Invariants: every row names a distinct path; a budget is a positive number;
the check's verdict depends only on the counts and the table.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from . import cgcount, files
from .runner import REPO, BenchError, bench_binary

TABLE = REPO / "tests" / "budgets" / "budgets.tsv"
TOLERANCE = 0.03        # over budget by more than this fails
SLACK = 0.10            # under budget by more than this: say the budget can be tightened


@dataclass
class Budget:
    """One row of the table."""
    path: str
    budget: float
    loop: cgcount.Loop
    reason: str


def load(table: Path = TABLE) -> list[Budget]:
    """The rows of @table (BenchError on a malformed one, naming its line)."""
    try:        # a regular file, size-capped: --table /dev/zero must not fill memory
        text = files.read_text(table)
    except files.ValidationError as e:
        raise BenchError(str(e)) from None
    rows, seen = [], set()
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 4:
            raise BenchError(f"{table}:{no}: want 4 tab-separated columns "
                             f"(path, budget, measure, reason), got {len(cols)}")
        name, budget, measure, reason = (c.strip() for c in cols)
        if name in seen:
            raise BenchError(f"{table}:{no}: path '{name}' is listed twice")
        seen.add(name)
        try:
            b = float(budget)
        except ValueError:
            raise BenchError(f"{table}:{no}: budget '{budget}' is not a number") from None
        if b <= 0:
            raise BenchError(f"{table}:{no}: budget {budget} must be positive")
        if not reason:
            raise BenchError(f"{table}:{no}: path '{name}' has no reason for its budget")
        try:
            loop = cgcount.parse_line(measure)
        except BenchError as e:
            raise BenchError(f"{table}:{no}: {e}") from None
        rows.append(Budget(name, b, loop, reason))
    if not rows:
        raise BenchError(f"{table}: no budgets")
    return rows


def root(table: Path) -> Path:
    """The directory a table's relative paths (trace=tests/...) start from: its repository."""
    return Path(table).resolve().parents[2]


def judge(row: Budget, count: float) -> tuple[bool, str]:
    """(passed, one line) for @count against @row's budget."""
    over = count / row.budget - 1
    line = f"{row.path}: {count:.1f} instructions, budget {row.budget:g} ({over:+.1%})"
    if count > row.budget * (1 + TOLERANCE):
        return False, (f"{row.path}: {count:.1f} instructions per operation is over its budget "
                       f"{row.budget:g} by {over:.1%} (more than {TOLERANCE:.0%}): "
                       f"{row.loop.text()}")
    if over < -SLACK:
        line += f"; more than {SLACK:.0%} under: the budget can be tightened"
    return True, line


def check(table: Path = TABLE, bench: str | None = None, only: list[str] | None = None,
          jobs: int | None = None, out=None) -> int:
    """Count every path of @table (or those in @only); 0 when all are within budget, else 1."""
    out = out or sys.stdout
    rows = load(table)
    if only:
        unknown = sorted(set(only) - {r.path for r in rows})
        if unknown:
            raise BenchError(f"no path '{unknown[0]}' in {table}")
        rows = [r for r in rows if r.path in only]
    bench = bench or bench_binary()
    counts = cgcount.per_op_many([(bench, r.loop) for r in rows], jobs, cwd=root(table))
    failed = 0
    for r, c in zip(rows, counts):
        ok, line = judge(r, c)
        failed += not ok
        print(("ok    " if ok else "FAIL  ") + line, file=out)
    print(f"budgets: {len(rows) - failed} of {len(rows)} paths within budget "
          f"(+{TOLERANCE:.0%} allowed)", file=out)
    return 1 if failed else 0

