"""One design model: the same specs, valid and invalid, through every front end.

pl_design_parse() (src/machine/design.c) is the only parser of a design spec.
Each front end here builds a design from each spec and reports what it built
as pl_design_canonical()'s string; the test compares them: the C API (through
cffi), the Python API (Machine.design), pagelab-bench --design, a plain
pagelab-bench suite (show), pagelab-bench replay and trace_throughput, and
the pagelab commands bench and replay.  A refused spec is refused by every
one of them with the parser's own reason, on one line, exit 2.
"""
import json
from pathlib import Path

import pytest

import pagelab
from pagelab import designs
from pagelab.cli import main
from pagelab.runner import BenchError, run_once, run_raw

TRACE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "traces" / "ftrace-6.18.txt"
TINY = {"mem": "64M", "dma32": "16M"}

VALID = {
    "v6.18": "v6.18",
    "pcp-owner": "v6.18+pcp_owner",
    "pcp_owner": "v6.18+pcp_owner",
    "v6.18+pcp_owner": "v6.18+pcp_owner",
    "v6.19-rc1+contig+mt_counts": "v6.18+mt_counts+free_contig_batch+vmalloc_high_order+vfree_batch",
    "all+pcp_owner=0+vmap_index=rbtree":
        "v6.18+mt_counts+free_contig_batch+vmalloc_high_order+vfree_batch+vmap_pcpu_bump",
    "v6.18+economy_ramp": "v6.18+pcp_owner+pcp_block_economy+economy_batch+economy_ramp",
    "maple": "v6.18+vmap_index=maple+vmap_pcpu_bump",
}
INVALID = ["bogus", "v6.18+", "v6.18+pcp_owner=2", "vmap_index", "v6.18++mt_counts",
           "v6.18+no_such_switch"]


def _reason(spec: str) -> str:
    """The C parser's reason for refusing @spec (the C API)."""
    with pytest.raises(ValueError) as e:
        pagelab.design_canonical(spec)
    return str(e.value).split(": ", 1)[1]


@pytest.mark.parametrize("spec", list(VALID))
def test_c_and_python_api(spec):
    assert pagelab.design_canonical(spec) == VALID[spec]
    with pagelab.Machine(design=spec, **TINY) as m:
        assert m.design == VALID[spec]


def test_bench_design_query():
    assert designs.canonical(list(VALID)) == list(VALID.values())


@pytest.mark.parametrize("spec", list(VALID))
def test_bench_suites(spec):
    """A plain suite, replay and trace_throughput write what they built."""
    show = run_once("show", dict(TINY), spec)
    assert {m.canonical for m in show} == {VALID[spec]}
    tp = run_once("trace_throughput", {"trace": str(TRACE), **TINY}, spec)
    assert {m.canonical for m in tp} == {VALID[spec]}


def test_bench_replay_all_at_once():
    specs = ["v6.18", "pcp_owner", "v6.18+economy_ramp", "all+pcp_owner=0+vmap_index=rbtree"]
    out = run_raw("replay", {"trace": str(TRACE), "state": "fresh", "design": ",".join(specs)})
    recs = [json.loads(x) for x in out.splitlines() if x.strip()]
    got = {r["design"]: r["canonical"] for r in recs if r["test"] == "replay"}
    assert got == {s: VALID[s] for s in specs}


@pytest.mark.parametrize("spec", ["pcp-owner", "v6.18+pcp_owner", "v6.18+economy_ramp"])
def test_pagelab_bench_and_replay_commands(spec, tmp_path, capsys):
    assert main(["bench", "show", "mem=64M", "dma32=16M", "--design", spec,
                 "-o", str(tmp_path / "b.json")]) == 0
    doc = json.loads((tmp_path / "b.json").read_text())
    assert {m["canonical"] for m in doc["measurements"]} == {VALID[spec]}
    assert main(["replay", str(TRACE), "--state", "fresh", "--design", spec,
                 "-o", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["replay"]["designs"][spec]["canonical"] == VALID[spec]
    capsys.readouterr()


@pytest.mark.parametrize("spec", INVALID)
def test_invalid_refused_alike_everywhere(spec, tmp_path, capsys):
    why = _reason(spec)
    with pytest.raises(ValueError, match="design"):
        pagelab.Machine(design=spec, **TINY)
    with pytest.raises(BenchError) as e:
        designs.canonical([spec])
    assert why in str(e.value)
    for suite, params in (("show", dict(TINY)), ("replay", {"trace": str(TRACE), "state": "fresh"}),
                          ("trace_throughput", {"trace": str(TRACE)})):
        with pytest.raises(BenchError) as e:
            run_raw(suite, dict(params, design=spec))
        assert why in str(e.value), suite
    for argv in (["bench", "show", "mem=64M", "--design", spec, "-o", str(tmp_path / "x.json")],
                 ["replay", str(TRACE), "--design", spec, "-o", str(tmp_path / "y.json")],
                 ["ab", "HEAD", "HEAD", "show", "--design", spec, "--out", str(tmp_path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and why in err[0] and "internal error" not in err[0], (argv, err)
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()


def test_same_design_twice_is_refused(capsys):
    assert main(["replay", str(TRACE), "--design", "pcp-owner", "--design", "v6.18+pcp_owner"]) == 2
    assert "the same design (v6.18+pcp_owner)" in capsys.readouterr().err
