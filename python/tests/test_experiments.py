"""Experiment files: every committed one is valid, every kind of bad field is one
line and exit status 2, and the cells they expand to are what the runner needs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pagelab import experiments as E

GOOD = """
title = "t"
kind = "bench"
designs = ["v6.18", "pcp-owner"]
reps = 2
[bench]
suite = "kbuild"
params = { vcpus = "8", mem = ["1G", "2G"] }
"""


def _write(tmp_path: Path, text: str, name: str = "x") -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return p


def _errors(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(E.ExperimentError) as e:
        E.load(str(_write(tmp_path, text)))
    return e.value.lines


def test_committed_experiments_are_valid():
    names = E.names()
    assert {"seed-000", "seed-001", "seed-002", "seed-003", "seed-004", "designs-seed003",
            "replay-fixtures", "vtime-seed003", "vtime-seed004", "vtime-anchors",
            "test-vmalloc"} <= set(names)
    for n in names:
        exp = E.load(n)
        assert exp.tables(), f"{n} declares no table"


def test_good_file_expands_to_grid_cells(tmp_path):
    exp = E.load(str(_write(tmp_path, GOOD)))
    cells = E.cells(exp)
    # wall time, two designs: one interleaved group (both reps) per grid point
    assert len(cells) == 2
    assert all(not c.fanout and c.spec["designs"] == ["v6.18", "pcp-owner"] and
               c.spec["reps"] == [0, 1] for c in cells)
    assert sorted(c.spec["params"]["mem"] for c in cells) == ["1G", "2G"]
    # the same declaration gives the same ids (what --resume relies on)
    assert [c.id for c in E.cells(E.load(str(tmp_path / "x.toml")))] == [c.id for c in cells]


def test_count_only_cells_fan_out(tmp_path):
    exp = E.load(str(_write(tmp_path, GOOD.replace('reps = 2', 'reps = 2\nmode = "instr"'))))
    cells = E.cells(exp)
    assert len(cells) == 2 * 2 * 2 and all(c.fanout for c in cells)
    assert {tuple(c.spec["designs"]) for c in cells} == {("v6.18",), ("pcp-owner",)}


@pytest.mark.parametrize("text, field", [
    ('kind = "bench"\ndesigns = ["a"]\n[bench]\nsuite = "kbuild"\n', "title: missing"),
    (GOOD.replace('kind = "bench"', 'kind = "sweep"'), "kind: must be one of"),
    (GOOD.replace("reps = 2", "reps = 0"), "reps: must be 1..1000"),
    (GOOD.replace("reps = 2", 'reps = "two"'), "reps: must be an integer"),
    (GOOD.replace("reps = 2", "reps = 2\ncolour = 1"), "colour: unknown field"),
    (GOOD.replace('designs = ["v6.18", "pcp-owner"]', 'designs = ["a", "a"]'),
     "designs: a design is given twice"),
    (GOOD.replace('designs = ["v6.18", "pcp-owner"]', "designs = [1]"),
     "designs: must be a string or a non-empty list"),
    (GOOD.replace('designs = ["v6.18", "pcp-owner"]\n', ""), "designs: missing"),
    (GOOD.replace('suite = "kbuild"', ""), "bench.suite: missing"),
    (GOOD.replace('mem = ["1G", "2G"]', "mem = []"), "bench.params.mem: must be a value"),
    (GOOD.replace('[bench]', '[replay]\ntraces = "x"\n[bench]'), "replay: only for kind = replay"),
    (GOOD + '[[table]]\ntitle = "t"\nrows = ["design"]\n', "table[0].columns: missing"),
    (GOOD + '[[table]]\ntitle = "t"\nrows = ["d"]\ncolumns = ["a"]\nformat = "%d"\n',
     "table[0].format: not a Python number format"),
    (GOOD + '[[plot]]\ntitle = "p"\nkind = "lines"\ny = "a"\n', "plot[0].x: missing"),
    (GOOD + '[[plot]]\ntitle = "p"\nkind = "cdf"\n', "plot[0].kind: cdf is only for kind = replay"),
    ('title = "t"\nkind = "seed"\n[seed]\nid = "009"\n', "seed.id: must be one of"),
    ('title = "t"\nkind = "seed"\nreps = 3\n[seed]\nid = "001"\n', "reps: a seed experiment"),
    ('title = "t"\nkind = "replay"\ndesigns = ["v6.18"]\n[replay]\ntraces = "nothing/*.txt"\n',
     "replay.traces: 'nothing/*.txt' matches no file"),
    ('title = "t"\nkind = "replay"\ndesigns = ["v6.18"]\n[replay]\ntraces = "x"\ntick = "noon"\n',
     "replay.tick: must be kernel, first or 0..999"),
    ("title = [", "not TOML"),
])
def test_bad_field_is_one_line(tmp_path, text, field):
    lines = _errors(tmp_path, text)
    assert any(field in line for line in lines), lines
    assert all(line.startswith(str(tmp_path)) and "\n" not in line for line in lines)


def test_each_bad_field_gets_its_own_line(tmp_path):
    text = GOOD.replace("reps = 2", "reps = 0\nretries = 9\ncolour = 1")
    lines = _errors(tmp_path, text)
    assert len(lines) == 3
    assert [any(k in x for x in lines) for k in ("reps:", "retries:", "colour:")] == [True] * 3


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pagelab", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_cli_bad_file_exit_2_one_line_per_field(tmp_path):
    p = _write(tmp_path, GOOD.replace("reps = 2", "reps = 0\ncolour = 1"))
    r = _cli("run", str(p), "--store", str(tmp_path / "s.duckdb"))
    assert r.returncode == 2
    err = r.stderr.strip().splitlines()
    assert len(err) == 2 and all(x.startswith("pagelab: ") for x in err), err
    assert "Traceback" not in r.stderr and not (tmp_path / "s.duckdb").exists()


@pytest.mark.parametrize("args, msg", [
    (["run"], "needs an experiment name"),
    (["run", "no-such-experiment"], "no experiment 'no-such-experiment'"),
    (["run", "../etc/passwd"], "not an experiment name"),
    (["run", "seed-001", "--jobs", "0"], "--jobs 0"),
    (["run", "seed-001", "--cells", "nothing-matches-this"], "matches none"),
    (["results", "--sql", "SELEC 1"], "query refused"),
])
def test_cli_bad_requests(tmp_path, capfd, args, msg):
    from pagelab.cli import main
    store = tmp_path / "s.duckdb"
    if args[0] == "results":
        from pagelab.store import Store
        Store(store).close()
    rc = main([*args, "--store", str(store)])
    err = capfd.readouterr().err
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and msg in err, err


def test_run_list_names_every_experiment(tmp_path, capsys):
    from pagelab.cli import main
    assert main(["run", "--list", "--store", str(tmp_path / "none.duckdb")]) == 0
    out = capsys.readouterr().out
    for n in E.names():
        assert n in out
    assert "never run" in out


def test_every_schema_field_is_documented():
    doc = (E.REPO / "docs" / "experiments.md").read_text()
    for section, fields in E.SCHEMA.items():
        for name, (_, _, what) in fields.items():
            assert f"| `{name}` |" in doc and what in doc, f"{section}.{name} not in docs"


def test_compare_and_report_read_from_the_store(tmp_path, capsys):
    from pagelab.cli import main
    from pagelab.store import Store
    exp = E.load(str(_write(tmp_path, GOOD, "tiny")))
    cell = E.cells(exp)[0]
    recs = [{"suite": "kbuild", "test": "zone-lock-v8", "design": d, "rep": r,
             "value": v + r, "unit": "acquisitions", "metric": "zone-lock", "params": {}}
            for d, v in (("v6.18", 100.0), ("pcp-owner", 60.0)) for r in range(3)]
    store = tmp_path / "s.duckdb"
    with Store(store) as s:
        rid = s.begin_run("tiny", ["pagelab", "run", "tiny"], {"commit": "abc"}, 1, "test")
        s.write_cell("tiny", rid, cell.to_dict(), {"status": "ok", "records": recs,
                                                   "machine": {"commit": "abc"}})
        s.end_run(rid, 1, 0, [], "done")
    assert main(["compare", f"store:tiny@{store}"]) == 0
    out = capsys.readouterr().out
    assert "zone-lock-v8" in out and "pcp-owner" in out
    assert main(["report", f"store:tiny@{store}", "-o", str(tmp_path / "r.html")]) == 0
    assert "zone-lock-v8" in (tmp_path / "r.html").read_text()
    assert main(["compare", f"store:nothing@{store}"]) == 2


def test_seed_cells_name_no_path_of_this_checkout():
    # A seed group's key hashes its parameters: with a file of the checkout named by
    # its absolute path, a store written from one clone would not match the groups
    # another clone (a Dask worker's, the one that renders the pages) asks for.
    import os
    from pagelab import seed_cells
    for name in ("seed-002",):
        for cell in E.cells(E.load(name)):
            for k, v in cell.spec.get("params", {}).items():
                assert not os.path.isabs(v), f"{name}: {cell.id} {k}={v}"
    here = str(E.REPO / "tests" / "fixtures" / "booted-6.18")
    p = seed_cells.portable_params({"snapshot": here, "mem": 4})
    assert p == {"snapshot": "tests/fixtures/booted-6.18", "mem": "4"}
    assert seed_cells.local_params(p)["snapshot"] == here
    assert seed_cells.portable_params({"snapshot": "/elsewhere/x"})["snapshot"] == "/elsewhere/x"
