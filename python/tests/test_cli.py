"""The CLI drives pagelab-bench on tiny machines: JSON records, interleaving, errors."""
import json

import pytest

from pagelab.cli import main
from pagelab.runner import BenchError, run_interleaved, run_once

TINY = {"mem": "64M", "dma32": "16M", "reads": "5", "rounds": "1000"}


def test_pagetypeinfo_records():
    designs = ("v6.18", "mt-counts", "mt-counts+blocks")
    ms = run_once("pagetypeinfo", TINY, ",".join(designs))
    tests = {(m.test, m.design) for m in ms}
    names = ("read-fresh", "read-fragmented", "zone-lock-per-read-fresh",
             "zone-lock-per-read-fragmented", "free-blocks-after-churn")
    assert tests == {(t, d) for t in names for d in designs}
    for m in ms:
        assert m.counters["PGALLOC"] > 0
        assert m.counters["zone_lock_acquisitions"] > 0
        if m.test.startswith("read-"):
            assert m.unit == "us" and m.value > 0
    # The baseline's reads walk the free lists under zone->lock; seed 002's do
    # not, but still walk the pageblocks under it (one hold per zone: two
    # zones here); only pagelab's extension mt-counts+blocks takes no lock.
    per_read = {(m.test, m.design): m.value for m in ms if m.test.startswith("zone-lock")}
    assert per_read[("zone-lock-per-read-fresh", "v6.18")] == 2 * (1 + 5 * 11 + 1)
    assert per_read[("zone-lock-per-read-fragmented", "mt-counts")] == 2
    assert per_read[("zone-lock-per-read-fragmented", "mt-counts+blocks")] == 0
    blocks = {m.design: m.value for m in ms if m.test == "free-blocks-after-churn"}
    assert blocks["v6.18"] == blocks["mt-counts"] == blocks["mt-counts+blocks"] > 0


def test_interleaved_order():
    ms = run_interleaved("buddy_alloc_free", {"mem": "16M", "nr": "1000", "reps": "1"},
                         ["v6.18", "mt-counts"], reps=2)
    order = [(m.rep, m.design) for m in ms if m.test.startswith("pair-odr0")]
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


def test_cli_bench_saves_json_with_machine_info(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["bench", "buddy_alloc_free", "mem=16M", "nr=500", "reps=1",
               "--design", "v6.18", "--design", "mt-counts", "--reps", "2", "-o", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert {x["design"] for x in doc["measurements"]} == {"v6.18", "mt-counts"}
    assert {x["rep"] for x in doc["measurements"]} == {0, 1}
    for key in ("cpu", "cores", "kernel", "compiler", "commit"):
        assert doc["machine"][key], key
    assert doc["command"][:2] == ["pagelab", "bench"]
    assert "pair-odr0" in capsys.readouterr().out


def test_cli_unknown_suite_is_one_line(capsys):
    assert main(["bench", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown suite" in err[0]
