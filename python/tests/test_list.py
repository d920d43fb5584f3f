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
    assert out.startswith("pagelab 0.10.0")
    assert "pagelab-bench 0.10.0 (git " in out


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


def test_list_metrics(capsys):
    """The registry, declared once in C, printed by `pagelab list --metrics` and
    read by pagelab.metrics: the same ids, directions and units."""
    from pagelab import metrics
    assert main(["list", "--metrics"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("metrics (")
    assert "pages-per-zone-lock" in out and "higher is better" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("zone-lock-pages "))
    assert "neutral (shown, not judged)" in line
    assert main(["list", "metrics", "--json"]) == 0
    listed = {d["id"]: d for d in json.loads(capsys.readouterr().out)["metrics"]}
    reg = metrics.registry()
    assert set(listed) == set(reg)
    for mid, d in listed.items():
        assert (d["direction"], d["unit"], d["family"]) == \
            (reg[mid].direction, reg[mid].unit, reg[mid].family)
    assert reg["free-pageblocks"].direction == "higher"
    assert reg["zone-lock"].direction == "lower"
    assert reg["buddyinfo-tvd"].kernel and not reg["zone-lock-actual"].kernel


def test_every_record_names_a_registered_metric():
    """pagelab-bench names the metric of each figure it emits; its unit is the registry's."""
    from pagelab import metrics
    ms = run_once("kbuild", {"mem": "64M", "dma32": "16M", "vcpus": "2", "ops": "3000",
                             "gig_probe": "0"}, "v6.18")
    assert ms
    for m in ms:
        assert m.metric, m.test
        assert metrics.get(m.metric).unit == m.unit
    by = {m.test.rsplit("-v", 1)[0]: m.metric for m in ms}
    assert by["pages-per-zone-lock"] == "pages-per-zone-lock"
    assert by["free-pageblocks"] == "free-pageblocks"
