"""Every option of every `pagelab` subcommand, walked from the argparse parser,
gets every class of bad value its kind has.

Each case starts from a valid command line for its subcommand (BASE) and
replaces ONE argument with a bad value: empty, negative, huge, nan/inf, the
wrong type, a missing path, a directory, /dev/zero, a FIFO, /dev/full as an
output, control bytes. The contract for each:

- exit status 2 and exactly one line on stderr, not the catch-all
  "internal error", no traceback;
- no hang (a per-case alarm that the CLI cannot swallow);
- no work started: the points where a command starts its real work (a
  build, a seed's runs, a recording, a worker) are replaced by a sentinel, so
  a bad value that slips past validation fails here instead of running (a
  replay of the small fixture trace runs for real: its trace is checked there);
- nothing created, replaced or removed in the case's directory, and the
  special files (/dev/full, the FIFO) still what they were.

The kind of each argument comes from the parser (type=int, type=float,
choices) or, for a string, from KINDS; an argument without a kind fails
test_every_argument_has_a_kind, so a new option is swept as soon as it exists.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from pagelab import ab, cgcount, cli, exprun, reproduce, trace_record
from pagelab.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "tests/fixtures/traces/ftrace-6.18.txt"
SNAPSHOT = REPO / "tests/fixtures/traces/snapshot-6.18"
TIMEOUT = 30
HUGE = "9" * 40

# ---- the arguments and their kinds --------------------------------------------------------

# A string argument's kind, by "SUBCOMMAND dest" (the parser gives int, float and choices).
KINDS = {
    "bench suite": "name", "bench params": "params", "bench design": "design",
    "bench output": "outfile", "bench label": "text",
    "compare results": "results", "compare baseline": "text",
    "reproduce targets": "targets", "reproduce out": "outdir",
    "agree run1": "indir", "agree run2": "indir",
    "report results": "results", "report output": "outfile",
    "show report": "name", "show params": "params", "show workload": "name",
    "show design": "design",
    "ab rev_a": "name", "ab rev_b": "name", "ab suite": "name", "ab params": "params",
    "ab design": "design", "ab budgets": "infile", "ab out": "outdir",
    "budgets paths": "name", "budgets table": "infile", "budgets bench": "program",
    "trace record output": "outnew",
    "trace snapshot dir": "outnew",
    "trace info trace": "trace", "trace info tasks": "text",
    "trace convert input": "trace", "trace convert output": "outnew",
    "replay trace": "trace", "replay design": "design", "replay snapshot": "indir",
    "replay after": "indir", "replay emit_trace": "outdir", "replay tick": "name",
    "replay faithful": "design", "replay label": "text", "replay tasks": "text",
    "replay output": "outfile",
    "replay-table results": "results",
    "run name": "name", "run cells": "text", "run cluster": "name", "run store": "store",
    "worker address": "name", "worker name": "text",
    "results name": "name", "results sql": "text", "results where": "where",
    "results store": "store",
    "docs names": "name", "docs out": "outdir", "docs store": "store",
}

# Values every kind refuses. {tmp} is the case's directory; {fifo}, {file}, {dir},
# {missing}, {garbage} are made in it.
CTRL = "a\x01\nb"
BAD = {
    "int": ["", "-1", "abc", "1.5", "nan", "inf", HUGE, CTRL],
    "float": ["", "-1", "0", "abc", "nan", "inf", "-inf", "1e400", HUGE, CTRL],
    "choice": ["", "nosuch", CTRL],
    "name": ["", "nosuch-x", CTRL, "x" * 5000],
    "text": ["", CTRL, "x" * 5000],
    "design": ["", "nosuch", "v6.18+nosuch", "v6.18+", CTRL],
    "params": ["noequals", "=1", "nosuchkey=1", f"k={CTRL}"],
    "targets": ["999", "bogus=1", CTRL],
    "where": ["", "noequals", CTRL],
    "infile": ["", "{missing}", "{dir}", "/dev/zero", "{fifo}", "{garbage}", "{missing}" + CTRL],
    "results": ["", "{missing}", "{dir}", "/dev/zero", "{fifo}", "{garbage}",
                "{missing}" + CTRL],
    "trace": ["", "{missing}", "{dir}", "/dev/zero", "{fifo}", "{garbage}", "{missing}" + CTRL],
    "indir": ["", "{missing}", "{file}", "/dev/zero", "{fifo}"],
    "store": ["", "{dir}", "/dev/zero", "{fifo}", "{garbage}"],
    "program": ["", "{missing}", "{dir}", "{file}", "/dev/zero"],
    "outfile": ["", "/dev/full", "{dir}", "{fifo}", "/proc/pagelab/x", "{tmp}/" + CTRL],
    "outdir": ["", "/dev/full", "{file}", "{fifo}", "/proc/pagelab/x", "{tmp}/" + CTRL],
    "outnew": ["", "/dev/full", "{file}", "{fifo}", "/proc/pagelab/x", "{tmp}/" + CTRL],
}


def _walk(parser, prefix=()):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from _walk(sp, prefix + (name,))
        elif prefix and a.dest != "help" and a.nargs != 0:
            yield " ".join(prefix), a


def kind_of(cmd: str, a: argparse.Action) -> str | None:
    if a.choices is not None:
        return "choice"
    if a.type is int:
        return "int"
    if a.type is float:
        return "float"
    return KINDS.get(f"{cmd} {a.dest}")


ARGS = list(_walk(build_parser()))


def test_every_argument_has_a_kind():
    missing = [f"{cmd} {a.dest}" for cmd, a in ARGS if kind_of(cmd, a) is None]
    assert not missing, f"give these arguments a kind in KINDS: {missing}"
    stale = set(KINDS) - {f"{cmd} {a.dest}" for cmd, a in ARGS}
    assert not stale, f"KINDS names arguments the parser no longer has: {stale}"


# ---- valid command lines, one per subcommand --------------------------------------------------

GOOD_RESULT = {"suite": "s", "test": "t", "design": "d", "unit": "ns", "value": 1.0, "rep": 0}

# dest -> value for each subcommand: a command line that is valid and cheap (or stops at the
# sentinel). A list is a nargs='*'/'+' argument or an append option.
BASE = {
    "bench": {"suite": "buddy_alloc_free", "params": ["nr=1", "reps=1"], "design": ["v6.18"],
              "reps": "1", "output": "{tmp}/r.json", "mode": "wall", "label": "L"},
    "compare": {"results": ["{good}"], "baseline": "d"},
    "reproduce": {"targets": ["002"], "out": "{tmp}/rep", "mode": "instr", "second": "none"},
    "agree": {"run1": "{run1}", "run2": "{run2}"},
    "report": {"results": ["{good}"], "output": "{tmp}/r.html"},
    "show": {"report": "buddyinfo", "params": ["mem=64M"], "workload": "fresh",
             "design": "v6.18"},
    "ab": {"rev_a": "HEAD", "rev_b": "HEAD~1", "suite": "buddy_alloc_free", "params": ["nr=1"],
           "design": "v6.18", "mode": "wall", "jobs": "1", "reps": "1", "out": "{tmp}/ab"},
    "budgets": {"paths": ["pcp_pair"], "table": str(REPO / "tests/budgets/budgets.tsv"),
                "bench": "{bench}", "jobs": "1"},
    "list": {"what": "suites"},
    "trace record": {"output": "{tmp}/t.pltrace", "seconds": "1", "buffer_kb": "1024"},
    "trace snapshot": {"dir": "{tmp}/snap"},
    "trace info": {"trace": str(TRACE), "tasks": "command", "command_pid": "1", "top": "3"},
    "trace convert": {"input": str(TRACE), "output": "{tmp}/c.txt"},
    "replay": {"trace": str(TRACE), "design": ["v6.18"], "state": "fresh",
               "snapshot": str(SNAPSHOT), "after": str(SNAPSHOT), "emit_trace": "{tmp}/emit",
               "tick": "first", "faithful": "v6.18", "label": "L", "tasks": "command",
               "reps": "1", "jobs": "1", "output": "{tmp}/r.json"},
    "replay-table": {"results": ["{replayed}"]},
    "run": {"name": "test-vmalloc", "cells": "x", "jobs": "1", "store": "{tmp}/s.duckdb"},
    "worker": {"address": "tcp://127.0.0.1:1", "nworkers": "1", "name": "w"},
    "results": {"name": "test-vmalloc", "where": ["design=v6.18"], "limit": "5",
                "store": "{store}"},
    "docs": {"names": ["test-vmalloc"], "out": "{tmp}/docs", "store": "{store}"},
}
# Options whose base is left out when another is swept (they exclude each other).
EXCLUSIVE = {("results", "sql"): ("name", "where"), ("run", "cluster"): ("jobs",),
             ("ab", "budgets"): ("suite", "params")}
# Extra options a swept one needs to be read at all.
NEEDS = {("results", "sql"): {}, ("ab", "budgets"): {"mode": "instr"},
         ("ab", "jobs"): {"mode": "instr"}}


def _parser_of(cmd: str):
    p = build_parser()
    for word in cmd.split():
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        p = sub.choices[word]
    return p


def argv_for(cmd: str, values: dict) -> list[str]:
    """The command line of @cmd with @values (dest -> str or list)."""
    argv = cmd.split()
    p = _parser_of(cmd)
    for a in p._actions:
        if a.dest not in values or a.dest == "help":
            continue
        v = values[a.dest]
        vs = v if isinstance(v, list) else [v]
        if a.option_strings:
            for x in vs:
                argv += [a.option_strings[-1], x]
        else:
            argv += vs
    return argv


class WorkStarted(BaseException):
    """A bad value got past validation: the command began its real work."""


class Hang(BaseException):
    """The per-case alarm: no CLI handler catches a BaseException of its own."""


def _sentinel(*_a, **_k):
    raise WorkStarted()


@pytest.fixture
def guarded(monkeypatch):
    """The points where commands start their real work, replaced by a sentinel."""
    monkeypatch.setattr(cli, "run_interleaved", _sentinel)
    monkeypatch.setattr(reproduce, "reproduce", _sentinel)
    monkeypatch.setattr(ab, "build", _sentinel)
    monkeypatch.setattr(cgcount, "per_op_many", _sentinel)
    monkeypatch.setattr(trace_record, "ensure_tracefs", _sentinel)
    monkeypatch.setattr(exprun, "run", _sentinel)
    monkeypatch.setattr(subprocess, "call", _sentinel)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """Inputs every case reads: a good results file, two run dirs, a replay result, a store."""
    d = tmp_path_factory.mktemp("shared")
    good = d / "good.json"
    good.write_text(json.dumps({"measurements": [GOOD_RESULT, dict(GOOD_RESULT, design="e")]}))
    run1, run2 = d / "run1", d / "run2"
    from pagelab import metrics
    from pagelab.runner import Measurement, save_results
    for r in (run1, run2):
        r.mkdir()
        unit = metrics.get("throughput").unit
        ms = [Measurement("kbuild", "throughput-v32", design, rep, value, unit,
                          metric="throughput")
              for rep in range(3) for design, value in (("v6.18", 10.0 + rep),
                                                        ("pcp-owner", 5.0 + rep))]
        save_results(r / "seed-003.json", ms, command=["t"],
                     extra={"seed": "003", "mode": "default", "measure": "wall",
                            "settings": {"vcpus": "32", "ops": "1000", "reps": 3}})
    replayed = d / "replayed.json"
    assert main(["replay", str(TRACE), "--state", "fresh", "-o", str(replayed)]) == 0
    from pagelab.store import Store
    store = d / "store.duckdb"
    with Store(store):
        pass
    from pagelab.runner import bench_binary
    return {"good": str(good), "run1": str(run1), "run2": str(run2),
            "replayed": str(replayed), "store": str(store), "bench": bench_binary()}


def _fill(v, env: dict):
    if isinstance(v, list):
        return [_fill(x, env) for x in v]
    return v.format(**env) if "{" in v else v


def _make_env(tmp: Path, shared: dict) -> dict:
    os.mkfifo(tmp / "fifo")
    (tmp / "file").write_text("a regular file\n")
    (tmp / "dir").mkdir()
    (tmp / "garbage").write_bytes(bytes(range(256)) * 4)
    return {**shared, "tmp": str(tmp), "fifo": str(tmp / "fifo"), "file": str(tmp / "file"),
            "dir": str(tmp / "dir"), "missing": str(tmp / "missing"),
            "garbage": str(tmp / "garbage")}


def _tree(root: Path) -> dict:
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(root))] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns)
    return out


def _run(argv: list[str], capfd) -> tuple[int, str]:
    def alarm(*_):
        raise Hang()
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(TIMEOUT)
    try:
        rc = main(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return rc, capfd.readouterr().err


def _cases():
    cases = []
    for cmd, a in ARGS:
        kind = kind_of(cmd, a)
        if kind is None:
            continue
        for v in BAD[kind]:
            cases.append(pytest.param(cmd, a.dest, kind, v,
                                      id=f"{cmd}-{a.dest}-{kind}-{v[:12]!r}"))
    return cases


def _with(cmd: str, dest: str, value, env: dict) -> dict:
    values = {k: _fill(v, env) for k, v in BASE[cmd].items()}
    for k in EXCLUSIVE.get((cmd, dest), ()):
        values.pop(k, None)
    values.update(NEEDS.get((cmd, dest), {}))
    a = next(x for x in _parser_of(cmd)._actions if x.dest == dest)
    multi = a.nargs in ("*", "+") or isinstance(a, argparse._AppendAction)
    values[dest] = [value] if multi else value
    return values


@pytest.mark.parametrize("cmd", sorted(BASE))
def test_base_command_lines_are_valid(cmd, shared, tmp_path, monkeypatch, capfd, guarded):
    """Each base reaches its work (the sentinel) or succeeds: the sweep is not vacuous."""
    monkeypatch.chdir(tmp_path)
    env = _make_env(tmp_path, shared)
    argv = argv_for(cmd, {k: _fill(v, env) for k, v in BASE[cmd].items()})
    try:
        rc, err = _run(argv, capfd)
    except WorkStarted:
        return
    assert rc == 0, f"{' '.join(argv)}: exit {rc}: {err[:300]!r}"


@pytest.mark.parametrize("cmd,dest,kind,value", _cases())
def test_bad_value(cmd, dest, kind, value, shared, tmp_path, monkeypatch, capfd, guarded):
    monkeypatch.chdir(tmp_path)
    env = _make_env(tmp_path, shared)
    bad = value.format(**env) if "{" in value else value
    argv = argv_for(cmd, _with(cmd, dest, bad, env))
    before, full = _tree(tmp_path), os.stat("/dev/full").st_rdev
    try:
        rc, err = _run(argv, capfd)
    except WorkStarted:
        pytest.fail(f"{cmd} {dest}={bad!r} was accepted: the command started its work")
    except Hang:
        pytest.fail(f"{cmd} {dest}={bad!r}: no answer in {TIMEOUT} s")
    lines = [x for x in err.splitlines() if x.strip()]
    assert rc == 2, f"{cmd} {dest}={bad!r}: exit {rc}, stderr {err[:300]!r}"
    assert len(lines) == 1, f"{cmd} {dest}={bad!r}: {len(lines)} lines: {err[:300]!r}"
    assert "internal error" not in lines[0] and "Traceback" not in err, lines[0]
    assert _tree(tmp_path) == before, f"{cmd} {dest}={bad!r} changed {tmp_path}"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode) and os.stat("/dev/full").st_rdev == full
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)


# ---- pagelab-bench: every suite's every key, from the program's own key tables ----------------

def _bench_keys() -> list[tuple[str, str, str]]:
    from pagelab.runner import bench_binary
    out = subprocess.run([bench_binary(), "--keys"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [tuple(line.split()[:3]) for line in out.stdout.splitlines() if line.strip()]


BENCH_KEYS = _bench_keys()

# A text key's class, by key name: what kind of path (or text) it takes.
TEXT_KEYS = {
    "trace": "infile", "after": "indir", "snapshot": "indir", "tracefs": "indir",
    "instance": "indir", "emit_trace": "outfile", "show_state": "outfile", "out": "outfile",
    "snapshot_dir": "outdir", "scratch": "outdir",
    "machine": "word", "topology": "word", "peers": "peersdir", "events": "word",
    "tasks": "text",
}
BENCH_BAD = {
    "number": ["nan", "inf", "-inf", "1e3", CTRL], "size": ["nan", "inf", "1e3G", CTRL],
    "number-list": ["nan", "1,inf", CTRL], "power-of-2-list": ["nan", CTRL],
    "design": [CTRL, "v6.18+" + "x" * 5000], "design-list": [CTRL, "v6.18," * 2000],
    "name": [CTRL, "x" * 5000], "name-list": [CTRL],
    "infile": ["{missing}", "{dir}", "/dev/zero", "{fifo}", "{garbage}", "{missing}" + CTRL],
    "indir": ["{missing}", "{file}", "/dev/zero", "{fifo}", "{dir}"],
    "outfile": ["/dev/full", "{dir}", "{fifo}", "/proc/pagelab/x", "{tmp}/" + CTRL],
    "outdir": ["{file}", "/dev/full", "{fifo}", "/proc/pagelab/x", "{tmp}/" + CTRL],
    "peersdir": ["{missing}", "{file}", "/dev/zero", "{fifo}", CTRL],
    "word": ["nosuch-x", CTRL, "x" * 5000],
    "text": [CTRL, "x" * 5000],
}
# The keys a suite needs before a bad value of another is looked at.
BENCH_BASE = {
    "replay": {"trace": str(TRACE), "state": "fresh"},
    "trace_throughput": {"trace": str(TRACE)},
    "trace_info": {"trace": str(TRACE)},
    "trace_convert": {"trace": str(TRACE), "out": "{tmp}/o.txt"},
    "trace_record": {"instance": "{dir}", "out": "{tmp}/o.dat", "events": "kmem/mm_page_alloc"},
}
BENCH_NEEDS = {"snapshot_dir": {"snapshot_ms": "10"}}


def bench_kind(kind: str, key: str) -> str | None:
    return TEXT_KEYS.get(key) if kind == "text" else kind if kind in BENCH_BAD else None


def test_every_bench_key_has_a_class():
    missing = sorted({(k, kind) for _, k, kind in BENCH_KEYS if bench_kind(kind, k) is None})
    assert not missing, f"give these pagelab-bench keys a class in TEXT_KEYS/BENCH_BAD: {missing}"


def _bench_cases():
    seen, cases = set(), []
    for suite, key, kind in BENCH_KEYS:
        cls = bench_kind(kind, key)
        # keys shared by many suites: one suite of each kind of key, the rest sampled
        for v in BENCH_BAD.get(cls, []):
            tag = (key, cls, v)
            if tag in seen and suite not in BENCH_BASE:
                continue
            seen.add(tag)
            cases.append(pytest.param(suite, key, v, id=f"{suite}-{key}-{v[:12]!r}"))
    return cases


@pytest.mark.parametrize("suite,key,value", _bench_cases())
def test_bench_bad_value(suite, key, value, shared, tmp_path):
    from pagelab.runner import bench_binary
    env = _make_env(tmp_path, shared)
    params = {k: v.format(**env) for k, v in BENCH_BASE.get(suite, {}).items()}
    params.update(BENCH_NEEDS.get(key, {}))
    params[key] = value.format(**env) if "{" in value else value
    before = _tree(tmp_path)
    try:
        proc = subprocess.run([bench_binary(), suite] + [f"{k}={v}" for k, v in params.items()],
                              capture_output=True, text=True, errors="replace", timeout=TIMEOUT,
                              cwd=tmp_path, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{suite} {key}={value!r}: no answer in {TIMEOUT} s")
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    what = f"{suite} {key}={value[:40]!r}"
    assert proc.returncode == 2, f"{what}: exit {proc.returncode}, stderr {proc.stderr[:300]!r}"
    assert len(lines) == 1, f"{what}: {len(lines)} lines: {proc.stderr[:300]!r}"
    assert _tree(tmp_path) == before, f"{what} changed {tmp_path}"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)
