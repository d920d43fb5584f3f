"""pagelab list, pagelab --version, and designs given as a preset plus switches."""
import json

from pagelab.cli import main
from pagelab.runner import run_once


def test_list_everything(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("suites", "presets", "switches", "pagetypeinfo", "reads", "10000",
                 "maple-index", "vmap_index=rbtree|maple", "[seed 003]"):
        assert word in out
    assert "undocumented" not in out


def test_list_json_has_every_key_documented(capsys):
    assert main(["list", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    names = {s["name"] for s in info["suites"]}
    assert {"pagetypeinfo", "buddy_alloc_free", "test_vmalloc"} <= names
    for s in info["suites"]:
        for k in s["keys"]:
            assert k["default"] != "?" and k["meaning"], (s["name"], k["key"])
    presets = {p["name"]: p["switches"] for p in info["presets"]}
    assert presets["v6.18"] == "" and presets["maple"] == "vmap_index=maple+vmap_pcpu_bump"
    assert {s["name"] for s in info["switches"]} >= {"mt_counts", "pcp_owner", "vmap_index"}


def test_list_bad_section_is_one_line(capsys):
    assert main(["list", "bogus"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    out = capsys.readouterr().out
    assert out.startswith("pagelab 0.1.0")
    assert "pagelab-bench 0.1.0 (git " in out


def test_bench_design_switches(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["bench", "buddy_alloc_free", "mem=64M", "dma32=16M", "nr=1000", "reps=1",
                 "--design", "v6.18", "--design", "v6.18+pcp_owner+mt_counts", "-o", str(out)]) == 0
    designs = {m["design"] for m in json.loads(out.read_text())["measurements"]}
    assert designs == {"v6.18", "v6.18+pcp_owner+mt_counts"}


def test_bench_bad_switch_is_one_line(capsys):
    assert main(["bench", "buddy_alloc_free", "mem=64M", "--design", "v6.18+pcp_ownr"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown design preset or switch 'pcp_ownr'" in err[0]


def test_switch_alone_is_the_baseline_plus_it():
    ms = run_once("buddy_alloc_free", {"mem": "64M", "dma32": "16M", "nr": "1000", "reps": "1"},
                  "pcp_owner")
    assert ms and all(m.design == "pcp_owner" for m in ms)
