"""The CLI contract: bad input is ONE line on stderr and exit status 2,
within a time limit, for both CLIs.

- pagelab-bench: every suite's every key, enumerated from the program itself
  (`pagelab-bench --keys` prints the kind and range of each key a suite takes,
  from the key tables), gets invalid values of every class: empty, negative,
  non-numeric, overflowing, absurd (just outside its range), malformed lists;
- pagelab: every subcommand, enumerated from its argparse parser, gets an
  unknown option and a bad positional, and each typed option bad values;
  `pagelab bench` passes each suite key's invalid values through too;
- results files: null and list fields, NaN, non-UTF-8, deep nesting,
  wrong types, empty, a directory, a missing file - for compare and report;
- unwritable outputs, a bad PAGELAB_BENCH, stdout on /dev/full.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pagelab.cli import build_parser, main
from pagelab.runner import bench_binary

TIMEOUT = 20          # seconds one refusal may take (it should take milliseconds)
U64_OVER = str(1 << 64)
HUGE = "9" * 40


def _keys() -> list[tuple[str, str, list[str]]]:
    out = subprocess.run([bench_binary(), "--keys"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if line.strip()]
    return [(r[0], r[1], r[2:]) for r in rows]


KEYS = _keys()


def _suites_from_help() -> set[str]:
    import re
    out = subprocess.run([bench_binary(), "--help"], capture_output=True, text=True).stdout
    block = out.split("\nsuites:\n", 1)[1].split("\n\n", 1)[0]    # not the designs list
    return set(re.findall(r"^  (\S+) ", block, flags=re.M))


def invalid_values(kind: str, rule: list[str]) -> list[str]:
    """Every class of invalid value for a key of @kind with @rule (range or names)."""
    if kind == "none":
        return []
    vals = [""]
    if kind in ("number", "size", "number-list", "power-of-2-list"):
        lo, hi = int(rule[0]), int(rule[1])
        vals += ["-1", "abc", "1x", " 1", "+1", "1.5", U64_OVER, HUGE, "0x", "--1"]
        if hi < (1 << 64) - 1:
            vals.append(str(hi + 1))
        if lo > 0:
            vals.append(str(lo - 1))
        if kind == "size":
            vals += [HUGE + "G", "17179869184T", "1Q", "G"]
        if kind != "size" and kind != "number":
            vals += [f"{lo},", f",{lo}", f"{lo},,{lo}", f"{lo},abc", f"{lo},-1"]
        if kind == "power-of-2-list":
            vals.append("3")
    elif kind in ("design", "design-list"):
        vals += ["nosuch", "v6.18,", ",", "V6.18", "v6.18 "]
        if kind == "design":
            vals.append("v6.18,mt-counts")
    elif kind in ("name", "name-list"):
        vals += ["nosuch", ",", rule[0].split(",")[0].upper()]
        if kind == "name-list":
            vals.append(rule[0].split(",")[0] + ",")
    return vals


CASES = [(s, k, v) for s, k, rule in KEYS for v in invalid_values(rule[0], rule[1:])]


def test_every_suite_key_has_a_rule():
    """100% of suites x keys: every suite in --help, every key with a rule."""
    assert {s for s, _, _ in KEYS} == _suites_from_help()
    missing = [(s, k) for s, k, rule in KEYS if rule[0] == "none"]
    assert not missing, f"keys without a validation rule: {missing}"
    covered = {(s, k) for s, k, _ in CASES}
    assert covered == {(s, k) for s, k, _ in KEYS}


def _one_line_exit2(proc: subprocess.CompletedProcess, what: str) -> str:
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode == 2, f"{what}: exit {proc.returncode}, stderr {proc.stderr[:300]!r}"
    assert len(lines) == 1, f"{what}: {len(lines)} lines on stderr: {proc.stderr[:300]!r}"
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize("suite,key,val", CASES)
def test_bench_key_invalid(suite, key, val):
    proc = subprocess.run([bench_binary(), suite, f"{key}={val}"], capture_output=True,
                          text=True, timeout=TIMEOUT)
    line = _one_line_exit2(proc, f"{suite} {key}={val!r}")
    assert line.startswith("pagelab-bench:") or line.startswith(f"{suite}:")


@pytest.mark.parametrize("args", [
    [], ["nosuch"], ["pagetypeinfo", "noequals"], ["pagetypeinfo", "bogus=1"],
    ["pagetypeinfo", "reads=1", "reads=2"], ["pagetypeinfo", "=1"],
    ["pagetypeinfo", "mem=4T"],                        # metadata larger than the host allows
    ["page_alloc_high_order", "order=10", "mem=2M"],   # red team: exit 1 and two lines before
    ["vmalloc_fix_size", "nr_pages=1024", "mem=2M"],   # an area larger than the machine
    ["range_workload", "peers=/tmp/x';touch /tmp/pagelab-pwned;'", "live=10"],  # red team: shell
])
def test_bench_misc_invalid(args):
    proc = subprocess.run([bench_binary()] + args, capture_output=True, text=True, timeout=TIMEOUT)
    _one_line_exit2(proc, " ".join(args))


def test_bench_stdout_full():
    with open("/dev/full", "w") as full:
        proc = subprocess.run([bench_binary(), "--help"], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=TIMEOUT)
    _one_line_exit2(proc, "--help >/dev/full")


# ---- the Python CLI ---------------------------------------------------------------------

def _subcommands() -> dict:
    ap = build_parser()
    sub = next(a for a in ap._actions if a.__class__.__name__ == "_SubParsersAction")
    return dict(sub.choices)


SUBCOMMANDS = _subcommands()


def run_cli(capsys, argv, what=None) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    what = what or " ".join(argv)
    assert rc == 2, f"{what}: exit {rc}, stderr {err[:300]!r}"
    assert len(lines) == 1, f"{what}: {len(lines)} lines: {err[:300]!r}"
    return lines[0]


def _bad_option_values(action) -> list[str]:
    if action.type is int:
        return ["abc", "", "1.5", HUGE]
    return []


def _subcommand_cases():
    cases = []
    for name, parser in SUBCOMMANDS.items():
        cases.append((name, [name, "--no-such-option"]))
        for a in parser._actions:
            if a.option_strings and a.nargs != 0 and a.dest != "help":
                for v in _bad_option_values(a):
                    cases.append((name, [name, a.option_strings[-1], v]))
    cases += [
        ("bench", ["bench", "nosuch"]),
        ("bench", ["bench", "buddy_alloc_free", "--reps", "0"]),
        ("bench", ["bench", "buddy_alloc_free", "--reps", "-1"]),
        ("bench", ["bench", "buddy_alloc_free", "--reps", "100000"]),
        ("bench", ["bench", "buddy_alloc_free", "--design", "nosuch"]),
        ("bench", ["bench", "buddy_alloc_free", "design=v6.18"]),
        ("bench", ["bench", "buddy_alloc_free", "noequals"]),
        ("bench", ["bench", "range_workload", "--design", "v6.18"]),
        ("compare", ["compare", "/nonexistent/x.json"]),
        ("reproduce", ["reproduce", "999"]),
        ("reproduce", ["reproduce", "002", "bogus=1"]),
        ("reproduce", ["reproduce", "002", "mem=lots", "--out", "/nonexistent-dir/x"]),
        ("report", ["report", "/nonexistent/x.json"]),
        ("show", ["show", "nosuch"]),
        ("show", ["show", "buddyinfo", "--workload", "nosuch"]),
        ("show", ["show", "buddyinfo", "--design", "nosuch"]),
        ("show", ["show", "buddyinfo", "mem=-1"]),
    ]
    return cases


SUB_CASES = _subcommand_cases()


def test_every_subcommand_is_covered():
    assert {name for name, _ in SUB_CASES} == set(SUBCOMMANDS)


@pytest.mark.parametrize("name,argv", SUB_CASES, ids=[" ".join(a) for _, a in SUB_CASES])
def test_subcommand_invalid(capsys, name, argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)         # nothing lands in the repository's out/
    run_cli(capsys, argv)


# `pagelab bench` passes the suites' keys through: one invalid value per key and class.
BENCH_CASES = [(s, k, v) for s, k, v in CASES if k != "design" and v != ""][::3] + \
              [(s, k, "") for s, k, _ in KEYS if k != "design"]


@pytest.mark.parametrize("suite,key,val", BENCH_CASES)
def test_cli_bench_key_invalid(capsys, tmp_path, monkeypatch, suite, key, val):
    monkeypatch.chdir(tmp_path)
    run_cli(capsys, ["bench", suite, f"{key}={val}", "-o", str(tmp_path / "r.json")])
    assert not (tmp_path / "r.json").exists()


def test_cli_bench_range_workload_runs(capsys, tmp_path):
    out = tmp_path / "rw.json"
    rc = main(["bench", "range_workload", "live=100", "align=1", "pairs=200", "reps=1",
               "peers=none", "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["measurements"] and all(m["suite"] == "range_workload" for m in doc["measurements"])


# ---- results files ------------------------------------------------------------------------

GOOD = {"suite": "s", "test": "t", "design": "d", "unit": "ns", "value": 1.0, "rep": 0}

MALFORMED = {
    "null-measurements": json.dumps({"measurements": None}),
    "null-entry": json.dumps({"measurements": [None]}),
    "list-entry": json.dumps({"measurements": [[1, 2]]}),
    "list-doc": json.dumps([1, 2, 3]),
    "null-value": json.dumps({"measurements": [dict(GOOD, value=None)]}),
    "string-value": json.dumps({"measurements": [dict(GOOD, value="fast")]}),
    "bool-value": json.dumps({"measurements": [dict(GOOD, value=True)]}),
    "nan-value": '{"measurements": [{"suite": "s", "test": "t", "design": "d", "unit": "ns", '
                 '"value": NaN}]}',
    "inf-value": '{"measurements": [{"suite": "s", "test": "t", "design": "d", "unit": "ns", '
                 '"value": 1e999}]}',
    "null-suite": json.dumps({"measurements": [dict(GOOD, suite=None)]}),
    "list-design": json.dumps({"measurements": [dict(GOOD, design=["a"])]}),
    "list-params": json.dumps({"measurements": [dict(GOOD, params=[1])]}),
    "null-counters": json.dumps({"measurements": [dict(GOOD, counters=None)]}),
    "string-counter": json.dumps({"measurements": [dict(GOOD, counters={"zone_lock_acquisitions": "y"})]}),
    "list-param": json.dumps({"measurements": [dict(GOOD, params={"vcpus": [1]})]}),
    "negative-rep": json.dumps({"measurements": [dict(GOOD, rep=-1)]}),
    "float-rep": json.dumps({"measurements": [dict(GOOD, rep=1.5)]}),
    "null-machine": json.dumps({"measurements": [GOOD], "machine": None}),
    "nested-machine": json.dumps({"measurements": [GOOD], "machine": {"cpu": {"a": [1]}}}),
    "list-created": json.dumps({"measurements": [GOOD], "created": [1]}),
    "null-sweep": json.dumps({"measurements": [GOOD], "sweep": 5}),
    "bad-sweep-entry": json.dumps({"measurements": [GOOD], "sweep": [None]}),
    "bad-timeline": json.dumps({"measurements": [GOOD], "timeline": {"snapshots": [{"label": 1}]}}),
    "ragged-timeline": json.dumps({"measurements": [GOOD], "timeline": {"snapshots": [
        {"label": "a", "zones": {"N": [1, 2]}}, {"label": "b", "zones": {"N": [1]}}]}}),
    "deep-nesting": "[" * 200000 + "]" * 200000,
    "deep-nesting-jsonl": '{"a":' * 100000 + "1" + "}" * 100000,
    "jsonl-garbage": '{"suite": "s"}\nnot json\n',
    "empty": "",
    "whitespace": "  \n\n",
    "truncated": '{"measurements": [',
}


@pytest.mark.parametrize("cmd", ["compare", "report"])
@pytest.mark.parametrize("name", sorted(MALFORMED) + ["non-utf8", "directory", "missing"])
def test_malformed_results(capsys, tmp_path, cmd, name):
    if name == "non-utf8":
        path = tmp_path / "f.json"
        path.write_bytes(b'\xff\xfe{"measurements": []}')
    elif name == "directory":
        path = tmp_path / "d.json"
        path.mkdir()
    elif name == "missing":
        path = tmp_path / "missing.json"
    else:
        path = tmp_path / "f.json"
        path.write_text(MALFORMED[name])
    argv = [cmd, str(path)] + (["-o", str(tmp_path / "r.html")] if cmd == "report" else [])
    line = run_cli(capsys, argv, f"{cmd} {name}")
    assert "Traceback" not in line
    assert not (tmp_path / "r.html").exists()


# ---- outputs, the bench binary, stdout --------------------------------------------------------

def _good_results(tmp_path: Path) -> Path:
    path = tmp_path / "good.json"
    path.write_text(json.dumps({"measurements": [GOOD, dict(GOOD, design="e")]}))
    return path


@pytest.mark.parametrize("out", ["/proc/pagelab/x.html", "/dev/null/x.html", "DIR"])
def test_unwritable_outputs(capsys, tmp_path, out):
    out = str(tmp_path) if out == "DIR" else out
    run_cli(capsys, ["report", str(_good_results(tmp_path)), "-o", out])
    run_cli(capsys, ["bench", "buddy_alloc_free", "nr=1", "reps=1", "-o", out])


@pytest.mark.parametrize("bench", ["/nonexistent/pagelab-bench", "/", "/bin/false", "/bin/echo",
                                   "NONEXEC"])
def test_bad_pagelab_bench(capsys, tmp_path, monkeypatch, bench):
    if bench == "NONEXEC":
        bench = str(tmp_path / "not-executable")
        Path(bench).write_text("#!/bin/sh\n")
    monkeypatch.setenv("PAGELAB_BENCH", bench)
    run_cli(capsys, ["bench", "buddy_alloc_free", "nr=1", "reps=1", "-o", str(tmp_path / "r.json")])
    run_cli(capsys, ["show", "buddyinfo"])


def test_stdout_on_dev_full(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "pagelab", "compare", str(_good_results(tmp_path))],
                              stdout=full, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=TIMEOUT)
    _one_line_exit2(proc, "compare >/dev/full")
