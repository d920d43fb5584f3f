"""Each command end to end on a tiny machine (mem=64M dma32=16M), and its errors."""
import json

import pytest

from pagelab import compare, reproduce
from pagelab.seeds import seed000, seed001, seed002, seed004
from pagelab.cli import main
from pagelab.runner import Measurement, Progress, load_results, save_results
from pagelab.show import parse_buddyinfo

TINY = ["mem=64M", "dma32=16M"]


def _err_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_reproduce_002_quick_tiny(tmp_path, capsys):
    assert main(["reproduce", "002", "--quick", *TINY, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # The seed's layout, its numbers beside ours, and the counters.
    assert "|         Just after boot        | 700.9 us |" in out
    assert "|      After building kernel     |  28.7 ms |" in out
    assert "268.6 us 160.95%" in out
    # the booted state: loaded from the committed 6.18 snapshot
    assert "| Just after boot (booted state) | 700.9 us |" in out
    assert "tests/fixtures/booted-6.18" in out
    assert "zone->lock acquisitions per read, after the churn" in out
    # pagelab's extension beside the seed's columns, labelled as such
    assert "mt-counts+blocks" in out and "(pagelab's extension)" in out
    doc = json.loads((tmp_path / "seed-002.json").read_text())
    assert doc["seed"] == "002" and doc["mode"] == "quick" and doc["machine"]["commit"]
    reps = {m["rep"] for m in doc["measurements"] if m["test"] == "read-fresh"}
    assert reps == set(range(seed002.SEED_002_MODES["quick"]["reps"]))
    booted = [m for m in doc["measurements"] if m["test"] == "booted-read-fresh"]
    assert booted and {m["params"].get("state") for m in booted} == {"counts"}
    assert len(doc["timeline"]["snapshots"]) == seed002.SEED_002_MODES["quick"]["snapshots"] + 2
    html = (tmp_path / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3     # bars, fragmentation, buddyinfo
    assert "against vCPUs" in html and "needs seed 003 at more than one vCPU count" in html


def test_reproduce_001_quick_small(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(seed001.SEED_001_MODES, "quick", {"test_loop_count": "300", "reps": 2})
    assert main(["reproduce", "001", "--quick", "mem=256M", "dma32=64M", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # The seed's figures beside ours, scaled to its 100,000 iterations.
    assert "4,097,358 usec" in out and "729,831 usec 461.41%" in out
    for order in ("9", "3", "10"):
        assert f"order {order}, 100,000 iterations" in out
    assert "buddy merges" in out
    doc = json.loads((tmp_path / "seed-001.json").read_text())
    assert {m["design"] for m in doc["measurements"]} == {"v6.18", "contig-batch"}


def test_reproduce_003_quick_small(tmp_path, capsys):
    # 256M: big enough for 32 vCPUs, small enough to run in a second or two.
    assert main(["reproduce", "003", "--quick", "mem=256M", "dma32=64M", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for label in ("alloc many/free few: throughput, 32 vCPUs",
                  "exit avalanche: zone->lock per Mop, 32 vCPUs",
                  "kbuild: unusable index, order 9, 32 vCPUs"):
        assert label in out
    assert "+1% throughput" in out and "(claim)" in out
    doc = json.loads((tmp_path / "seed-003.json").read_text())
    suites = {m["suite"] for m in doc["measurements"]}
    assert suites == {"alloc_many_free_few", "exit_avalanche", "kbuild"}
    assert {m["design"] for m in doc["measurements"]} == {"v6.18", "pcp-owner"}
    # two vCPU counts even quick: the report's zone->lock-against-vCPUs plot
    assert {m["params"]["vcpus"] for m in doc["measurements"]} == {"8", "32"}
    assert "kbuild: unusable index, order 9, 8 vCPUs" in out


def test_reproduce_000_quick_tiny(tmp_path, capsys, monkeypatch):
    # Seed 000's 19 rows x 3 designs at toy loop counts on a small machine.
    monkeypatch.setitem(seed000.SEED_000_MODES, "quick",
                        {"div": 100000, "min_loops": 20, "reps": 2, "pcpu_objects": 100,
                         "vcpus": "4"})
    assert main(["reproduce", "000", "--quick", "mem=256M", "dma32=64M", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # Fastpath's layout, the seed's cells beside ours, every row, the counters.
    assert "+==========" in out and "| test_vmalloc benchmark" in out
    assert "| fix_size_alloc_test: p:512, h:1, l:100000 (usec)" in out
    assert "(R) -23.80%" in out and "(I) 427.65%" in out
    assert sum(1 for line in out.splitlines() if line.startswith("| ") and "(usec)" in line) == 19
    assert "zone->lock/loop" in out and "pages per free" in out
    doc = json.loads((tmp_path / "seed-000.json").read_text())
    ms = doc["measurements"]
    assert {m["design"] for m in ms} == {"v6.18", "v6.19-rc1", "v6.19-rc1+contig"}
    assert len(ms) == 19 * 3 * 2
    assert all(m["suite"] == "test_vmalloc" and m["unit"] == "usec" for m in ms)
    # vfree_batch frees 16-page areas as whole chunks, the others page by page.
    per_free = {m["design"]: m["counters"]["PGFREE_PAGES"] / m["counters"]["PGFREE"]
                for m in ms if m["test"].startswith("fix_size_alloc_test: p:16, h:0")}
    assert per_free["v6.19-rc1+contig"] > 4 * per_free["v6.19-rc1"]


def test_reproduce_004_quick_tiny(tmp_path, capsys, monkeypatch):
    # Seed 004's cases, maple against the rbtree, at toy loop counts.
    # (full_fit holds fls(smp) x 32 MiB per worker: the small cases only.)
    rows = [r for r in seed004.ROWS if r[1] in (0, 4)]
    monkeypatch.setattr(seed004, "ROWS", tuple(rows))
    monkeypatch.setitem(seed004.MODES, "quick", {"loops": 30, "reps": 2, "functional_loops": 30,
                                                 "pcpu_objects": 100})
    assert main(["reproduce", "004", "--quick", "mem=1G", "dma32=256M", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "x86_64 (seed)" in out and "+26.5%" in out and "functional sweep" in out
    body = [x for x in out.splitlines() if x.startswith("| ") and "_test " in x]
    assert len(body) == len(rows) and not any("n/a" in x for x in body)
    assert "functional sweep, maple: 12 tests ran, none failed" in out
    assert "smp=4 nt=2 rows" in out and "vmap_area bytes 48" in out
    doc = json.loads((tmp_path / "seed-004.json").read_text())
    ms = doc["measurements"]
    assert {m["design"] for m in ms} == {"v6.18", "maple"}
    size = {m["design"]: m["counters"]["VMAP_AREA_BYTES"] for m in ms}
    assert size == {"v6.18": 72, "maple": 48}


def test_reproduce_unavailable_seeds_are_skipped(tmp_path, capsys, monkeypatch):
    spec = reproduce.SEEDS["004"]
    monkeypatch.setitem(reproduce.SEEDS, "004", reproduce.SeedSpec(spec.id, spec.title, spec.needs,
                                                                   spec.suites))
    assert main(["reproduce", "004", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("SMOKE RUN (--quick)")
    assert out[1:] == ["seed 004: not yet available: needs the maple tree and vmalloc on it"]
    assert not (tmp_path / "report.html").exists()


def test_reproduce_errors(capsys):
    assert main(["reproduce", "009"]) == 2
    assert "unknown seed '009'" in _err_line(capsys)
    assert main(["reproduce", "002", "reads=5"]) == 2
    assert "unknown parameter 'reads'" in _err_line(capsys)
    assert main(["reproduce", "002", "--quick", "--full"]) == 2
    assert "not allowed with" in _err_line(capsys)


def test_compare_command(tmp_path, capsys):
    ms = [Measurement("s", "t", d, r, v, "us", metric="read-us")
          for r, (a, b) in enumerate([(10, 20), (12, 21), (14, 22)]) for d, v in (("base", a), ("new", b))]
    path = save_results(tmp_path / "r.json", ms, command=["test"])
    # the file carries the registry's entry of its metric
    assert json.loads(path.read_text())["metrics"]["read-us"]["direction"] == "lower"
    assert main(["compare", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Amean     t (us, lower is better)       12.00 (   0.00%)       21.00 * -75.00%*" in out
    assert "| t (us, lower is better) | (R) -42.86% |" in out
    assert main(["compare", str(path), "--baseline", "new"]) == 0
    assert "(I) 75.00%" in capsys.readouterr().out
    assert main(["compare", str(path), "--baseline", "nope"]) == 2
    assert "baseline 'nope'" in _err_line(capsys)
    assert main(["compare", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in _err_line(capsys)


def test_report_command(tmp_path, capsys):
    # seed 003's sweep: the vCPU count is in the test name
    ms = [Measurement("kbuild", f"zone-lock-per-Mop-v{c}", d, 0, v * c, "count",
                      params={"vcpus": "1,2,4"})
          for c in (1, 2, 4) for d, v in (("a", 5.0), ("b", 7.0))]
    path = save_results(tmp_path / "bench.json", ms, command=["test"])
    out = tmp_path / "report.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    html = out.read_text()
    assert html.count("data:image/png;base64,") == 2     # bars, zone->lock vs vCPUs
    assert "Amean" in html
    assert main(["report", str(tmp_path / "none.json"), "-o", str(out)]) == 2
    assert "cannot read" in _err_line(capsys)


def test_show_command(capsys):
    assert main(["show", "buddyinfo", *TINY, "--workload", "churn"]) == 0
    zones = parse_buddyinfo(capsys.readouterr().out)
    assert set(zones) == {"0/DMA32", "0/Normal"} and all(len(v) == 11 for v in zones.values())
    assert sum(zones["0/Normal"][:4]) > 0              # the churn left small blocks
    assert main(["show", "pagetypeinfo", *TINY]) == 0
    assert "Page block order: 9" in capsys.readouterr().out
    assert main(["show", "zoneinfo", *TINY, "--design", "mt-counts"]) == 0
    assert "zone   Normal" in capsys.readouterr().out
    # vmallocinfo is there (no stale "not yet available"): a just-booted
    # machine has no vmalloc areas, so the report is empty and that is no error
    assert main(["show", "vmallocinfo", *TINY]) == 0
    assert "not yet available" not in capsys.readouterr().err
    # pagelab's counters, the slow path's among them
    assert main(["show", "events", *TINY, "--workload", "churn"]) == 0
    events = dict(line.split() for line in capsys.readouterr().out.splitlines())
    assert int(events["pgalloc"]) > 0
    assert {"drain_retry", "highatomic_reserve", "wmark_boost", "kswapd_run"} <= set(events)
    # /proc/vmstat: the kernel's names and order, only the items pagelab keeps
    assert main(["show", "vmstat", *TINY, "--workload", "churn"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in lines]
    assert names == ["nr_free_pages", "nr_free_pages_blocks", "pgalloc_dma", "pgalloc_dma32",
                     "pgalloc_normal", "pgfree", "pgmigrate_success", "pgmigrate_fail",
                     "compact_migrate_scanned", "compact_free_scanned", "compact_isolated",
                     "compact_stall", "compact_fail", "compact_success", "compact_daemon_wake",
                     "compact_daemon_migrate_scanned", "compact_daemon_free_scanned"]
    vm = {k: int(v) for k, v in (line.split() for line in lines)}
    assert vm["pgalloc_normal"] > 0 and vm["pgfree"] > vm["pgalloc_normal"]
    # /proc/lock_stat (lock_stat=1 implied; "lockstat" spelled either way)
    for spelling in ("lock_stat", "lockstat"):
        assert main(["show", spelling, *TINY, "--workload", "churn"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == "lock_stat version 0.4" and out[1] == "-" * 221
        assert out[2].split() == ["class", "name", "con-bounces", "contentions", "waittime-min",
                                  "waittime-max", "waittime-total", "waittime-avg",
                                  "acq-bounces", "acquisitions", "holdtime-min",
                                  "holdtime-max", "holdtime-total", "holdtime-avg"]
        classes = {line.split(":")[0].strip(): line.split(":")[1].split()
                   for line in out[5:] if ":" in line}
        assert {"&zone->lock", "&pcp->lock"} <= set(classes)
        assert all(len(v) == 12 for v in classes.values())
        assert int(classes["&zone->lock"][7]) > 0          # acquisitions


def test_show_on_a_machine_profile(capsys):
    """machine=NAME boots the profile's shape: ZONE_DMA, e820 holes, the boot reserve."""
    assert main(["show", "zoneinfo", "machine=kvm-smp8"]) == 0
    out = capsys.readouterr().out
    dma = out[out.index("zone      DMA\n"):out.index("zone    DMA32")]
    assert "spanned  4095\n" in dma and "present  3998\n" in dma and "managed  3840\n" in dma
    assert out.count("    cpu: ") == 3 * 8                 # the profile's 8 CPUs, 3 zones


def test_each_seed_runs_on_its_profile():
    assert reproduce.seed_machine("000", {}) == {"machine": "m7g.metal"}
    assert reproduce.seed_machine("002", {}) == {"machine": "i7-12700"}
    assert reproduce.seed_machine("003", {"seed": "1"}) == {"seed": "1", "machine": "x86-32c-32g"}
    assert reproduce.seed_machine("001", {}) == {}
    assert reproduce.seed_machine("000", {"mem": "1G"}) == {"mem": "1G"}      # the user's wins
    assert reproduce.seed_machine("002", {"machine": "default"}) == {"machine": "default"}
    assert seed004._smp_machine({}, 8) == {"machine": "kvm-smp8"}
    assert seed004._smp_machine({}, 16) == {"machine": "kvm-smp16"}
    assert seed004._smp_machine({"mem": "256M"}, 8) == {"mem": "256M"}


@pytest.mark.parametrize("argv,msg", [
    (["show", "nope"], "unknown report 'nope'"),
    (["show", "lock_stat", "lock_stat=0", *TINY], "needs lock_stat=1"),
    (["show", "buddyinfo", "--workload", "boot"], "unknown workload 'boot'"),
    (["show", "buddyinfo", "bogus=1"], "unknown parameter 'bogus'"),
    (["show", "buddyinfo", "--design", "nope"], "unknown design 'nope'"),
    (["bench", "pagetypeinfo", "--design", "nope", *TINY], "unknown design 'nope'"),
    (["bench", "pagetypeinfo", "reads=many"], "not a number"),
    (["bench", "pagetypeinfo", "design=v6.18"], "with --design"),
    (["nosuchcommand"], "invalid choice"),
    (["show", "zoneinfo", "machine=nope"], "unknown machine 'nope'"),
    (["bench", "pagetypeinfo", "machine=", "reads=1"], "unknown machine ''"),
])
def test_one_line_errors(argv, msg, capsys):
    assert main(argv) == 2
    assert msg in _err_line(capsys)


def test_load_results_reads_json_lines(tmp_path):
    p = tmp_path / "old.jsonl"
    p.write_text(json.dumps(Measurement("s", "t", "d", 0, 1.0, "us").to_dict()) + "\n")
    doc = load_results(p)
    assert doc["measurements"][0].test == "t"
    (tmp_path / "junk.json").write_text("hello")
    with pytest.raises(Exception, match="not a pagelab results file"):
        load_results(tmp_path / "junk.json")


def test_progress_bar_draws_on_request(capsys):
    import io
    buf = io.StringIO()
    bar = Progress(2, "x", stream=buf, enabled=True)
    bar.step("one")
    assert "[############............] 1/2 one" in buf.getvalue()
    quiet = io.StringIO()
    Progress(2, "x", stream=quiet).step()                # not a terminal: silent
    assert quiet.getvalue() == ""


def test_compare_takes_direction_from_the_metric():
    ms = [Measurement("s", "rate", d, r, v, "Mops/s", metric="throughput")
          for r, (a, b) in enumerate([(10, 20), (12, 21), (14, 22)]) for d, v in (("base", a), ("new", b))]
    rows = compare.fastpath_rows(compare.group(ms), ["base", "new"])
    assert rows == [["rate (Mops/s, higher is better)", "(I) 75.00%"]]
    mm = compare.mmtests_rows(compare.group(ms), ["base", "new"])
    assert [r[0] for r in mm] == ["Min", "Hmean", "Stddev", "CoeffVar", "Max", "BAmean-95"]
