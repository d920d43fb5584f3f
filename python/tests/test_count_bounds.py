"""Every count option of `pagelab` that sizes memory, processes or time is
bounded: a value outside its range is ONE line on stderr and exit status 2,
refused before any work starts (no build, no recording, no process). The
pagelab-bench keys' ranges are tested key by key in test_contract.py."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pagelab.cli import main

TRACE = Path(__file__).resolve().parents[2] / "tests/fixtures/traces/ftrace-6.18.txt"
HUGE = str(10 ** 30)

CASES = [
    (["ab", "HEAD", "HEAD", "buddy_alloc_free", "--reps", "0"], "--reps 0"),
    (["ab", "HEAD", "HEAD", "buddy_alloc_free", "--reps", "1001"], "--reps 1001"),
    (["ab", "HEAD", "HEAD", "buddy_alloc_free", "--reps", HUGE], "--reps"),
    (["replay", str(TRACE), "--reps", "0"], "--reps must be at least 1"),
    (["replay", str(TRACE), "--reps", "1001"], "--reps 1001"),
    (["replay", str(TRACE), "--jobs", "0"], "--jobs must be at least 1"),
    (["replay", str(TRACE), "--jobs", "257"], "--jobs 257"),
    (["replay", str(TRACE), "--jobs", HUGE], "--jobs"),
    (["bench", "buddy_alloc_free", "--reps", "1001"], "--reps 1001"),
    (["worker", "tcp://127.0.0.1:1", "--nworkers", "0"], "--nworkers 0"),
    (["worker", "tcp://127.0.0.1:1", "--nworkers", "100000"], "--nworkers 100000"),
    (["results", "--limit", "0"], "--limit 0"),
]

# trace record's are checked after the root check: as root (CI, make test) they are reached
ROOT_CASES = [
    (["trace", "record", "--seconds", "inf"], "--seconds inf"),
    (["trace", "record", "--seconds", "nan"], "--seconds must be positive"),
    (["trace", "record", "--seconds", "1e9"], "--seconds 1000000000"),
    (["trace", "record", "--seconds", "0"], "--seconds must be positive"),
    (["trace", "record", "--seconds", "1", "--buffer-kb", str(1 << 40)], "--buffer-kb"),
    (["trace", "record", "--seconds", "1", "--buffer-kb", "1"], "--buffer-kb"),
]


def _refused(capsys, argv, text):
    rc = main(argv)
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert rc == 2, f"{argv}: exit {rc}, stderr {err[:300]!r}"
    assert len(lines) == 1, f"{argv}: {err[:300]!r}"
    assert text in lines[0], lines[0]


@pytest.mark.parametrize("argv,text", CASES, ids=[" ".join(a[:1] + a[-2:]) for a, _ in CASES])
def test_count_option_out_of_range(capsys, tmp_path, monkeypatch, argv, text):
    monkeypatch.chdir(tmp_path)             # nothing lands in the repository's out/
    monkeypatch.setenv("PAGELAB_STORE", str(tmp_path / "store.duckdb"))
    _refused(capsys, argv, text)


@pytest.mark.skipif(os.geteuid() != 0, reason="trace record refuses non-root first")
@pytest.mark.parametrize("argv,text", ROOT_CASES, ids=[" ".join(a[-2:]) for a, _ in ROOT_CASES])
def test_trace_record_bounds(capsys, tmp_path, argv, text):
    _refused(capsys, argv + ["-o", str(tmp_path / "t.pltrace")], text)
    assert not (tmp_path / "t.pltrace").exists()


@pytest.mark.parametrize("table", ["/dev/zero", "/dev/full"])
def test_budgets_table_must_be_a_regular_file(capsys, table):
    """--table is read through pagelab.files: a device is refused before a byte is read."""
    _refused(capsys, ["budgets", "--table", table, "pcp_pair"], "it is")
