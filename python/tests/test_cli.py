"""The CLI drives pagelab-bench on tiny machines: JSON records, interleaving, errors."""
import json

import pytest

from pagelab.cli import main
from pagelab.runner import BenchError, run_interleaved, run_once

TINY = {"mem": "64M", "dma32": "16M", "reads": "5", "rounds": "1000"}


def test_pagetypeinfo_records():
    ms = run_once("pagetypeinfo", TINY, "v6.18,mt-counts")
    tests = {(m.test, m.design) for m in ms}
    assert tests == {("read-fresh", "v6.18"), ("read-fresh", "mt-counts"),
                     ("read-fragmented", "v6.18"), ("read-fragmented", "mt-counts")}
    for m in ms:
        assert m.unit == "us" and m.value > 0
        assert m.counters["PGALLOC"] > 0
        assert m.counters["zone_lock_acquisitions"] > 0


def test_interleaved_order():
    ms = run_interleaved("buddy_alloc_free", {"mem": "16M", "nr": "1000", "reps": "1"},
                         ["v6.18", "mt-counts"], reps=2)
    order = [(m.rep, m.design) for m in ms if m.test == "pair-odr0"]
    assert order == [(0, "v6.18"), (0, "mt-counts"), (1, "v6.18"), (1, "mt-counts")]


@pytest.mark.parametrize("suite,params,msg", [
    ("no_such_suite", {}, "unknown suite"),
    ("pagetypeinfo", {"bogus": "1"}, "unknown parameter 'bogus'"),
    ("pagetypeinfo", {"design": "nope"}, "unknown design 'nope'"),
    ("pagetypeinfo", {"mem": "lots"}, "not a number"),
])
def test_bench_errors(suite, params, msg):
    with pytest.raises(BenchError, match=msg):
        run_once(suite, params)


def test_cli_bench_saves_json(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    rc = main(["bench", "buddy_alloc_free", "mem=16M", "nr=500", "reps=1",
               "--design", "v6.18", "--design", "mt-counts", "-o", str(out)])
    assert rc == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert {x["design"] for x in lines} == {"v6.18", "mt-counts"}
    assert "pair-odr0" in capsys.readouterr().out


def test_cli_unknown_suite_is_one_line(capsys):
    assert main(["bench", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown suite" in err[0]
