"""`pagelab replay` end to end: the real C engine on the committed real trace.

tests/fixtures/traces/dd-xz.pltrace is 2.8 s of a real 6.18 kernel (dd of
48 MB, sync, xz -1) recorded with `pagelab trace record`.  The kernel's side
is checked against counts taken here with zstd and a substring count (no
event parsing), the replay for determinism, and the lossy flag end to end.
"""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pagelab import replay
from pagelab.cli import main
from pagelab.runner import bench_binary, load_results

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "traces" / "dd-xz.pltrace"


@pytest.fixture(scope="module")
def trace_text() -> str:
    return subprocess.run(["zstd", "-dc", str(FIXTURE / "trace.txt.zst")], capture_output=True,
                          text=True, check=True).stdout


def test_kernel_side_counts_match_the_trace(trace_text):
    res = replay.run(FIXTURE, ["v6.18"], reps=2)
    k = res["kernel"]["counters"]
    assert k["allocs"] == trace_text.count(" mm_page_alloc: ")
    assert k["pcp_refills"] > 0 and res["events"] >= trace_text.count(" mm_page_")
    assert res["lost_events"] == 0 and res["deterministic"]
    # the kernel's end-of-trace free pages come from the after-snapshot
    assert sum(k["free_pages_by_order_end"]) == sum(res["kernel_buddyinfo_pages"]["after"])
    assert res["designs"]["v6.18"]["counters"]["allocs"] >= k["allocs"] * 0.99


def test_lossy_fixture_copy_is_flagged(tmp_path, capsys):
    art = tmp_path / "lossy.pltrace"
    shutil.copytree(FIXTURE, art)
    m = json.loads((art / "manifest.json").read_text())
    m["lost_events"] = 1234
    m["entries_written"] = m["entries_in_buffer"] + 1234
    (art / "manifest.json").write_text(json.dumps(m))
    out = tmp_path / "r.json"
    emit = tmp_path / "emit"
    assert main(["replay", str(art), "--design", "v6.18", "--state", "counts",
                 "--emit-trace", str(emit), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "LOSSY TRACE: the kernel lost 1234 events" in text
    assert "state counts" in text
    assert load_results(out)["replay"]["lost_events"] == 1234
    emitted = (emit / "lossy-v6.18.trace").read_text()
    assert " mm_page_alloc: " in emitted


def _vmstat_plus(path: Path, key: str, add: int) -> None:
    lines = []
    for line in path.read_text().splitlines():
        k, v = line.split()
        lines.append(f"{k} {int(v) + add if k == key else v}")
    path.write_text("\n".join(lines) + "\n")


def test_stale_snapshot_is_flagged(tmp_path, capsys):
    """Snapshots that do not bracket the trace (pages allocated between them that the trace does
    not hold, as when perf allocates its ring buffers after a snapshot taken by hand) are flagged
    in the engine's text and JSON, the fidelity table, the replay table and the report; the
    fixture as recorded is not."""
    p = subprocess.run([str(bench_binary()), "replay", f"trace={FIXTURE}", "tick_ms=0", "--json"],
                       capture_output=True, text=True, check=True)
    kernel = [json.loads(line) for line in p.stdout.splitlines()
              if line.startswith("{") and '"test": "kernel"' in line][0]
    g = kernel["snapshot_gap"]
    assert not g["stale"]
    assert g["traced_free"] == g["pgfree"] - g["free_gap"]
    assert abs(g["alloc_gap"]) < 0.1 * g["pgalloc"]
    art = tmp_path / "stale.pltrace"
    shutil.copytree(FIXTURE, art)
    _vmstat_plus(art / "after" / "vmstat", "pgalloc_normal", 262144)   # a 1 GiB ring buffer
    p = subprocess.run([str(bench_binary()), "replay", f"trace={art}", "tick_ms=0"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0
    assert "WARNING: STALE SNAPSHOT: the kernel allocated " in p.stdout
    out = tmp_path / "r.json"
    assert main(["replay", str(art), "--tick", "first", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "WARNING: STALE SNAPSHOT: the kernel allocated " in text
    saved = load_results(out)
    assert saved["replay"]["kernel"]["snapshot_gap"]["stale"] is True
    assert main(["replay-table", str(out)]) == 0
    assert "(STALE)" in capsys.readouterr().out
    from pagelab.report_replay import replay_section
    html_text = replay_section(saved, lambda fig: b"", lambda data, alt: f"<img alt='{alt}'>")
    assert "STALE SNAPSHOT" in html_text


def test_engine_refuses_a_missing_trace(tmp_path, capsys):
    d = tmp_path / "x.pltrace"
    shutil.copytree(FIXTURE, d)
    (d / "trace.txt.zst").unlink()
    assert main(["replay", str(d)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trace file 'trace.txt.zst' is missing" in err


def test_text_that_is_no_trace_is_refused_in_one_line(tmp_path, capsys):
    not_trace = tmp_path / "notes.txt"
    not_trace.write_text("root:x:0:0:root:/root:/bin/bash\n" * 20)
    assert main(["replay", str(not_trace)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no page-allocator events in 20 lines" in err[0]


@pytest.mark.parametrize("arg,msg", [("tick=soon", "tick=soon"), ("tick_ms=1000", "tick_ms=1000"),
                                     ("tick_ms=-5", "tick_ms=-5"), ("tick_ms=x", "tick_ms=x")])
def test_bad_tick_phase_is_one_line(arg, msg):
    p = subprocess.run([str(bench_binary()), "replay", f"trace={FIXTURE}", arg],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and msg in p.stderr, p.stderr


def test_tick_phase_choices_replay():
    """tick=kernel (the default), tick=first and tick_ms=N each replay the whole fixture."""
    outs = []
    for arg in ["tick=kernel", "tick=first", "tick_ms=250"]:
        p = subprocess.run([str(bench_binary()), "replay", f"trace={FIXTURE}", arg, "--json"],
                           capture_output=True, text=True, check=True)
        recs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        outs.append([r for r in recs if r.get("test") == "replay"][0])
    assert all(o["counters"]["allocs"] == outs[0]["counters"]["allocs"] > 0 for o in outs)


def _replay_record(*args):
    p = subprocess.run([str(bench_binary()), "replay", f"trace={FIXTURE}", *args, "--json"],
                       capture_output=True, text=True, check=True)
    recs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    return [r for r in recs if r.get("test") == "replay"][0], p.stdout + p.stderr


def test_unknown_tick_phase_reports_the_typical_run(tmp_path):
    """The fixture shows no kworker drain, so no tick phase: tick=kernel replays at 0, 250, 500
    and 750 ms and reports one of those runs, counters and emitted trace alike, as that phase
    given outright replays; tick=first and tick_ms=N replay once."""
    rec, out = _replay_record(f"emit_trace={tmp_path}/probed.trace")
    assert "no kworker drain to read its phase from" in out
    phase = rec["tick_phase_ms"]
    assert phase in (0, 250, 500, 750) and len(rec["tick_probe_drain_calls"]) == 4
    again, _ = _replay_record(f"tick_ms={phase}", f"emit_trace={tmp_path}/given.trace")
    assert again["counters"] == rec["counters"] and "tick_phase_ms" not in again
    assert (tmp_path / "probed.trace").read_text().splitlines()[4:] == \
        (tmp_path / "given.trace").read_text().splitlines()[4:]
    first, _ = _replay_record("tick=first")
    assert "tick_phase_ms" not in first


def test_cli_tick_reaches_the_engine(tmp_path, capsys):
    """--tick first / --tick 250 run the fixture; the saved records carry the engine's params."""
    for tick, key in [("first", "tick"), ("250", "tick_ms")]:
        out = tmp_path / f"r-{tick}.json"
        assert main(["replay", str(FIXTURE), "--tick", tick, "-o", str(out)]) == 0
        ms = load_results(out)["measurements"]
        assert ms and all(m.params.get(key) == tick for m in ms), ms[0].params
        assert "vmstat tick" not in capsys.readouterr().out
    # the default, with no phase in the fixture: the table says which of four was reported
    assert main(["replay", str(FIXTURE), "-o", str(tmp_path / "r.json")]) == 0
    assert "vmstat tick (v6.18): replayed at 0/250/500/750 ms" in capsys.readouterr().out


@pytest.mark.parametrize("name,value,msg", [
    ("watermark_scale_factor", "5000", "watermark_scale_factor 5000: want 1..3000"),
    ("percpu_pagelist_high_fraction", "3", "percpu_pagelist_high_fraction 3"),
    ("min_free_kbytes", "lots", "min_free_kbytes line 1: malformed"),
])
def test_bad_snapshot_sysctl_is_one_line(tmp_path, capsys, name, value, msg):
    """A recorded vm sysctl the kernel itself would refuse stops the replay in
    one line, before the trace is read (pagelab-bench and pagelab replay)."""
    d = tmp_path / "bad.pltrace"
    shutil.copytree(FIXTURE, d)
    (d / "before" / name).write_text(value + "\n")
    p = subprocess.run([str(bench_binary()), "replay", f"trace={d}"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "", p.stdout
    assert p.stderr.count("\n") == 1 and msg in p.stderr, p.stderr
    assert main(["replay", str(d)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err, err


def test_machine_too_big_for_pagelab_is_one_line_or_clamped(tmp_path):
    """A manifest naming more CPUs than a pagelab machine has is refused in one
    line before the trace is read; a bare trace whose CPU ids run past them
    replays on the largest machine and counts the rest cpu_out_of_range."""
    d = tmp_path / "big.pltrace"
    shutil.copytree(FIXTURE, d)
    m = json.loads((d / "manifest.json").read_text())
    m["nr_cpus"] = 5000
    (d / "manifest.json").write_text(json.dumps(m))
    p = subprocess.run([str(bench_binary()), "replay", f"trace={d}"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "", p.stdout
    assert p.stderr.count("\n") == 1 and "nr_cpus 5000 is not in 0..4096" in p.stderr, p.stderr
    t = tmp_path / "bigcpu.txt"
    t.write_text("  a-1 [5000] ..... 1.0: mm_page_alloc: page=x pfn=0x1000 order=0 migratetype=0 "
                 "gfp_flags=GFP_KERNEL\n  a-1 [000] ..... 1.1: mm_page_alloc: page=x pfn=0x1001 "
                 "order=0 migratetype=0 gfp_flags=GFP_KERNEL\n")
    p = subprocess.run([str(bench_binary()), "replay", f"trace={t}", "--json"],
                       capture_output=True, text=True, check=True)
    rec = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    rep = [r for r in rec if r.get("test") == "replay"][0]
    assert rep["warnings"]["cpu_out_of_range"] == 1 and rep["counters"]["allocs"] == 1, rep


def test_pcp_busy_switch_reaches_the_engine(tmp_path, capsys):
    """The engine says how many frees found their PCP busy; --no-pcp-busy
    passes pcp_busy=0 (and the engine then names none); pcp_busy=2 is one line."""
    p = subprocess.run([str(bench_binary()), "replay", f"trace={FIXTURE}"],
                       capture_output=True, text=True, check=True)
    assert "frees found their PCP busy and went to the buddy" in p.stdout
    p = subprocess.run([str(bench_binary()), "replay", f"trace={FIXTURE}", "pcp_busy=0"],
                       capture_output=True, text=True, check=True)
    assert "found their PCP busy" not in p.stdout
    p = subprocess.run([str(bench_binary()), "replay", f"trace={FIXTURE}", "pcp_busy=2"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
    out = tmp_path / "r.json"
    assert main(["replay", str(FIXTURE), "--no-pcp-busy", "-o", str(out)]) == 0
    ms = load_results(out)["measurements"]
    assert ms and all(m.params.get("pcp_busy") == "0" for m in ms), ms[0].params
    capsys.readouterr()


def _pcp_counts(zoneinfo: str) -> list[int]:
    """The Normal zone's per-CPU `count:` values of a zoneinfo text."""
    normal = zoneinfo.split("zone   Normal\n", 1)[1].split("Node 0, zone", 1)[0]
    return [int(line.split()[1]) for line in normal.splitlines() if line.strip().startswith("count:")]


def test_positional_state_holds_the_reported_pcp_counts(tmp_path):
    """The fixture's VM had 30,503 and 62,894 pages on its Normal PCPs and few
    allocated pages to put them in (most memory free): the loader used to find
    room for half of them, so the replay refilled 28 times against the kernel's
    11.  Every reported page is on a list now, and the refills are the kernel's."""
    shown = tmp_path / "state.txt"
    p = subprocess.run([str(bench_binary()), "replay", f"trace={FIXTURE}", "state=positional",
                        "design=v6.18", f"show_state={shown}"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    loaded = shown.read_text().split("# v6.18, end of the replay")[0]
    want = _pcp_counts((FIXTURE / "before" / "zoneinfo").read_text())
    got = _pcp_counts(loaded)
    assert len(want) == 2 and len(got) == len(want)
    for w, g in zip(want, got):
        assert abs(g - w) <= 4, (want, got)
    res = replay.run(FIXTURE, ["v6.18"], state="positional")
    k, d = res["kernel"]["counters"], res["designs"]["v6.18"]["counters"]
    assert k["pcp_refills"] == 11 and d["pcp_refills"] == k["pcp_refills"]


def test_bare_trace_with_snapshot_replays_positional(tmp_path, capsys):
    """A bare trace file and a separate /proc copy (--snapshot) load the positional state."""
    bare = tmp_path / "trace.txt.zst"
    shutil.copy(FIXTURE / "trace.txt.zst", bare)
    out = tmp_path / "r.json"
    assert main(["replay", str(bare), "--snapshot", str(FIXTURE / "before"), "-o", str(out)]) == 0
    assert "state positional" in capsys.readouterr().out
    res = load_results(out)
    assert res["replay"]["state"] == "positional"


@pytest.mark.parametrize("case,msg", [
    ("nosnap", "needs a snapshot: "),
    ("numa", "node 1: pagelab models one NUMA node"),
    ("notdir", "--snapshot"),
    ("cut", "decompression error after line"),
    ("numa-after", "node 1: pagelab models one NUMA node"),
])
def test_replay_input_errors_are_one_line(tmp_path, capsys, case, msg):
    bare = tmp_path / "trace.txt.zst"
    data = (FIXTURE / "trace.txt.zst").read_bytes()
    bare.write_bytes(data[: len(data) // 2] if case == "cut" else data)
    argv = ["replay", str(bare), "-o", str(tmp_path / "r.json")]
    if case == "nosnap":
        argv += ["--state", "positional"]
    elif case in ("numa", "numa-after"):
        snap = tmp_path / "numa"
        shutil.copytree(FIXTURE / "before", snap)
        lines = (snap / "buddyinfo").read_text().splitlines()
        (snap / "buddyinfo").write_text("\n".join(lines + [lines[-1].replace("Node 0", "Node 1")])
                                        + "\n")
        argv += ["--snapshot" if case == "numa" else "--after", str(snap)]
    elif case == "notdir":
        argv += ["--snapshot", str(tmp_path / "missing")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err, err
    assert not (tmp_path / "r.json").exists()


def test_cpu_beyond_the_snapshot_is_counted(tmp_path, capsys):
    """A bare trace's CPUs come from the snapshot's pagesets: an event of a CPU the
    snapshot's machine does not have is a counted cpu_out_of_range, not a new vCPU."""
    text = subprocess.run(["zstd", "-dc", str(FIXTURE / "trace.txt.zst")], check=True,
                          capture_output=True, text=True).stdout.splitlines(keepends=True)
    events = [i for i, line in enumerate(text) if "[001]" in line][:50]
    for i in events:
        text[i] = text[i].replace("[001]", "[017]", 1)
    bare = tmp_path / "trace.txt"
    bare.write_text("".join(text))
    out = tmp_path / "r.json"
    assert main(["replay", str(bare), "--snapshot", str(FIXTURE / "before"), "-o", str(out)]) == 0
    rec = load_results(out)["replay"]["designs"]["v6.18"]
    assert rec["warnings"]["cpu_out_of_range"] == 50, rec["warnings"]


def test_bare_trace_with_both_snapshots_scores_like_the_artifact(tmp_path, capsys):
    """--snapshot and --after give a bare trace what an artifact's before/ and after/ give:
    the same table rows and the same kernel end state."""
    bare = tmp_path / "trace.txt.zst"
    shutil.copy(FIXTURE / "trace.txt.zst", bare)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["replay", str(bare), "--snapshot", str(FIXTURE / "before"),
                 "--after", str(FIXTURE / "after"), "-o", str(a)]) == 0
    assert main(["replay", str(FIXTURE), "-o", str(b)]) == 0
    ra, rb = load_results(a)["replay"], load_results(b)["replay"]
    assert ra["rows"] == rb["rows"]
    assert ra["kernel_buddyinfo_pages"] == rb["kernel_buddyinfo_pages"] is not None
    assert "buddyinfo TVD" in capsys.readouterr().out
