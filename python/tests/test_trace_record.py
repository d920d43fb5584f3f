"""`pagelab trace record` and the trace artifact.

The manifest, archive round trip and error paths run anywhere; one real
recording runs when we are root and tracefs is mounted.
"""
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from pagelab import trace_record
from pagelab.trace_info import bench_info
from pagelab.cli import main
from pagelab.trace_artifact import (SNAPSHOT_FILES, SYSCTL_FILES, TraceError, check_manifest, load_manifest,
                                    opened, pack, unpack, write_manifest)

HAVE_ROOT_TRACEFS = os.geteuid() == 0 and Path("/sys/kernel/tracing/instances").is_dir() \
    and shutil.which("zstd") is not None


def make_artifact(d: Path, lost: int = 0) -> Path:
    """A small valid artifact written by hand (the fields the contract names)."""
    d.mkdir()
    for snap in ("before", "after"):
        (d / snap).mkdir()
        for name in SNAPSHOT_FILES:
            (d / snap / name).write_text(f"{snap} {name}\n")
    (d / "trace.txt").write_text(
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: 1/1   #P:2\n"
        "  cc1-1 [000] ..... 1.000000: mm_page_alloc: page=0 pfn=0x1000 order=0 "
        "migratetype=0 gfp_flags=GFP_KERNEL\n")
    m = {"format": "pagelab-trace/1", "kernel": "6.18.0", "nr_cpus": 2, "mem_bytes": 1 << 30,
         "seconds": 1.0, "command": ["true"], "events": ["kmem/mm_page_alloc"],
         "buffer_size_kb": 1024, "entries_in_buffer": 1, "entries_written": 1 + lost,
         "lost_events": lost, "trace": "trace.txt", "before": "before", "after": "after"}
    write_manifest(d, m)
    return d


def test_snapshot_copies_reports_and_sysctls(tmp_path):
    """snapshot() copies every /proc report and each vm sysctl the kernel has."""
    proc = tmp_path / "proc"
    (proc / "sys" / "vm").mkdir(parents=True)
    for name in SNAPSHOT_FILES:
        (proc / name).write_text(f"report {name}\n")
    (proc / "sys" / "vm" / "min_free_kbytes").write_text("67584\n")
    (proc / "sys" / "vm" / "watermark_scale_factor").write_text("125\n")
    trace_record.snapshot(tmp_path / "before", proc)
    for name in SNAPSHOT_FILES:
        assert (tmp_path / "before" / name).read_text() == f"report {name}\n"
    assert (tmp_path / "before" / "min_free_kbytes").read_text() == "67584\n"
    assert (tmp_path / "before" / "watermark_scale_factor").read_text() == "125\n"
    # a sysctl this kernel lacks is left out, not an error
    assert not (tmp_path / "before" / "watermark_boost_factor").exists()
    assert set(SYSCTL_FILES) >= {"min_free_kbytes", "watermark_scale_factor"}


def test_trace_snapshot_command(tmp_path, monkeypatch, capsys):
    """`pagelab trace snapshot DIR` writes the recorder's snapshot; a DIR that holds one already,
    a file in its place or an unreadable /proc are one line on stderr, exit 2, nothing written."""
    proc = tmp_path / "proc"
    (proc / "sys" / "vm").mkdir(parents=True)
    for name in SNAPSHOT_FILES:
        (proc / name).write_text(f"report {name}\n")
    (proc / "sys" / "vm" / "min_free_kbytes").write_text("67584\n")
    real = trace_record.snapshot_cmd
    monkeypatch.setattr(trace_record, "snapshot_cmd", lambda d: real(d, proc))
    dest = tmp_path / "cap" / "before"
    assert main(["trace", "snapshot", str(dest)]) == 0
    assert str(dest) in capsys.readouterr().out
    for name in SNAPSHOT_FILES:
        assert (dest / name).read_text() == f"report {name}\n"
    assert (dest / "min_free_kbytes").read_text() == "67584\n"

    (dest / "vmstat").write_text("kept\n")
    assert main(["trace", "snapshot", str(dest)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds a snapshot" in err
    assert (dest / "vmstat").read_text() == "kept\n"

    f = tmp_path / "afile"
    f.write_text("x")
    assert main(["trace", "snapshot", str(f)]) == 2
    assert "not a directory" in capsys.readouterr().err

    (proc / "pagetypeinfo").unlink()
    fresh = tmp_path / "cap" / "after"
    assert main(["trace", "snapshot", str(fresh)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read" in err and "pagetypeinfo" in err
    assert not fresh.exists() or not any(fresh.iterdir())
    assert main(["trace", "snapshot"]) == 2          # DIR is required
    assert capsys.readouterr().err.count("\n") == 1


def test_manifest_round_trip(tmp_path):
    d = make_artifact(tmp_path / "a.pltrace", lost=3)
    m = load_manifest(d)
    assert m["lost_events"] == 3 and m["entries_written"] == 4
    assert json.loads((d / "manifest.json").read_text())["format"] == "pagelab-trace/1"


@pytest.mark.parametrize("change,msg", [
    ({"format": "other/1"}, "format"),
    ({"nr_cpus": "2"}, "'nr_cpus' has the wrong type"),
    ({"lost_events": True}, "'lost_events' has the wrong type"),
    ({"command": "make"}, "'command'"),
    ({"trace": "../etc/passwd"}, "plain name"),
    ({"lost_events": -1}, "negative"),
])
def test_manifest_rejects(change, msg):
    m = {"format": "pagelab-trace/1", "kernel": "k", "nr_cpus": 1, "mem_bytes": 1, "seconds": 0.5,
         "command": None, "events": [], "buffer_size_kb": 1, "entries_in_buffer": 0,
         "entries_written": 0, "lost_events": 0, "trace": "t", "before": "b", "after": "a"}
    check_manifest(m)
    m.update(change)
    with pytest.raises(TraceError, match=msg):
        check_manifest(m)
    del m["kernel"]
    with pytest.raises(TraceError):
        check_manifest(m)


def test_load_manifest_missing_pieces(tmp_path):
    with pytest.raises(TraceError, match="no manifest.json"):
        load_manifest(tmp_path)
    d = make_artifact(tmp_path / "a.pltrace")
    (d / "after" / "zoneinfo").unlink()
    with pytest.raises(TraceError, match="after/zoneinfo is missing"):
        load_manifest(d)
    (d / "manifest.json").write_text("{not json")
    with pytest.raises(TraceError, match="unreadable manifest"):
        load_manifest(d)


@pytest.mark.parametrize("suffix", [".tar.gz", ".tar.zst"])
def test_archive_round_trip(tmp_path, suffix):
    if suffix == ".tar.zst" and not shutil.which("zstd"):
        pytest.skip("no zstd")
    d = make_artifact(tmp_path / "a.pltrace")
    arc = pack(d, tmp_path / ("a.pltrace" + suffix))
    out = tmp_path / "x"
    out.mkdir()
    got = unpack(arc, out)
    assert got.name == "a.pltrace"
    assert (got / "trace.txt").read_text() == (d / "trace.txt").read_text()
    assert load_manifest(got) == load_manifest(d)
    # opened() unpacks into a temporary directory and removes it afterwards
    with opened(arc) as (path, m):
        assert m["kernel"] == "6.18.0" and (path / "before" / "buddyinfo").exists()
        tmp = path.parent
    assert not tmp.exists()


def test_archive_rejects_escaping_members(tmp_path):
    evil = tmp_path / "evil.tar.gz"
    (tmp_path / "f").write_text("x")
    with tarfile.open(evil, "w:gz") as tf:
        tf.add(tmp_path / "f", arcname="../escape")
    out = tmp_path / "o"
    out.mkdir()
    with pytest.raises(TraceError, match="outside the archive"):
        unpack(evil, out)
    assert not (tmp_path / "escape").exists()
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(b"not a tarball")
    with pytest.raises(TraceError, match="not a readable trace archive"):
        unpack(bad, out)


def test_opened_passes_bare_trace_files(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("x\n")
    with opened(f) as (path, m):
        assert path == f and m is None
    with pytest.raises(TraceError, match="no such trace"):
        with opened(tmp_path / "nope"):
            pass


@pytest.mark.parametrize("rate,mem_gib,ncpu,want_kb", [
    (0, 24, 2, 64 * 1024),            # this VM: the floor, MAX_FLOOR_KB
    (0, 1, 1, 16 * 1024),             # MIN_BUFFER_KB
    (0, 256, 64, 64 * 1024),          # the floor
    (0, 4, 256, 2 * 1024),            # many CPUs, little memory: 1/8 over all CPUs
    (5e5, 24, 2, 250000),             # a high probed rate: 2 s of 4x it
    (1e8, 24, 2, 24 * 1024 * 1024 // 8 // 2),   # ... at most 1/8 of memory over all CPUs
])
def test_buffer_kb_for(rate, mem_gib, ncpu, want_kb):
    """The per-CPU ring buffer holds an exiting process's burst of frees and the probed rate's
    headroom, never more than 1/8 of memory in all."""
    got = trace_record.buffer_kb_for(rate, mem_gib << 20, ncpu)
    assert got == want_kb
    assert got * ncpu <= max(ncpu * 1024, (mem_gib << 20) // 8)


def test_record_needs_root(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["trace", "record", "--seconds", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs root" in err


@pytest.mark.parametrize("argv,msg", [
    (["trace", "record", "--seconds", "x"], "invalid float"),
    (["trace", "record", "--", ], "nothing after '--'"),
    (["trace"], "required"),
    (["trace", "record", "--bogus"], "unrecognized"),
])
def test_record_usage_errors(argv, msg, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err


def test_record_refuses_existing_output_and_bad_seconds(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    (tmp_path / "t.pltrace").mkdir()
    assert main(["trace", "record", "-o", str(tmp_path / "t.pltrace"), "--seconds", "1"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["trace", "record", "-o", str(tmp_path / "u.pltrace"), "--seconds", "0"]) == 2
    assert "--seconds must be positive" in capsys.readouterr().err
    assert main(["trace", "record", "-o", str(tmp_path / "no" / "u.pltrace")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_tracefs_errors_are_trace_errors_and_leave_no_output(tmp_path, monkeypatch):
    """An instance whose event files are missing: a TraceError, no artifact left behind."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    root = tmp_path / "tracefs"
    (root / "instances").mkdir(parents=True)
    for e in trace_record.EVENTS:
        (root / "events" / e).mkdir(parents=True)
        (root / "events" / e / "enable").write_text("0")
    out = tmp_path / "t.pltrace"
    with pytest.raises(TraceError, match="tracefs or /proc: No such file"):
        trace_record.record(out, 1.0, None, root=root)
    assert not out.exists()
    # the events of the system-wide tracefs were never touched
    assert all((root / "events" / e / "enable").read_text() == "0" for e in trace_record.EVENTS)


def test_missing_required_tracepoint(tmp_path):
    root = tmp_path / "tracefs"
    (root / "instances").mkdir(parents=True)
    with pytest.raises(TraceError, match="lacks the tracepoint kmem/"):
        trace_record.available_events(root)


def test_pressure_events_where_the_kernel_has_them(tmp_path):
    """compaction/*, migrate/ and the vmscan wake/sleep/direct-reclaim events are
    recorded where the kernel has them; a kernel without them still records."""
    root = tmp_path / "tracefs"
    for e in trace_record.EVENTS:
        (root / "events" / e).mkdir(parents=True)
        (root / "events" / e / "enable").write_text("0")
    assert not any(e.startswith(("compaction/", "migrate/", "vmscan/"))
                   for e in trace_record.available_events(root))
    extra = trace_record.PRESSURE_EVENTS + ["compaction/mm_compaction_begin",
                                            "compaction/mm_compaction_end"]
    for e in extra + ["vmscan/mm_vmscan_lru_isolate"]:
        (root / "events" / e).mkdir(parents=True)
        (root / "events" / e / "enable").write_text("0")
    have = trace_record.available_events(root)
    assert set(extra) <= set(have)
    assert "vmscan/mm_vmscan_lru_isolate" not in have   # one event a page: not recorded


@pytest.mark.skipif(not HAVE_ROOT_TRACEFS, reason="needs root and tracefs")
def test_real_short_record(tmp_path, capsys):
    """Record 1 s around a command that allocates; the instance is gone afterwards."""
    before = set(os.listdir("/sys/kernel/tracing/instances"))
    out = tmp_path / "r.pltrace.tar.zst"
    rc = main(["trace", "record", "-o", str(out), "--seconds", "10", "--",
               "dd", "if=/dev/zero", f"of={tmp_path / 'z'}", "bs=1M", "count=32", "status=none"])
    assert rc == 0
    assert set(os.listdir("/sys/kernel/tracing/instances")) == before
    enabled = Path("/sys/kernel/tracing/events/kmem/mm_page_alloc/enable").read_text().strip()
    assert enabled == "0" or "pagelab" not in "".join(before)
    assert "events in" in capsys.readouterr().out
    with opened(out) as (d, m):
        assert m["command"][0] == "dd" and m["command_status"] == 0
        assert "kmem/mm_page_alloc" in m["events"] and m["nr_cpus"] == os.cpu_count()
        # binary: a trace.dat, the recorder's own tasks kept out and listed, drained at once
        assert m["trace"] == "trace.dat" and (d / "trace.dat").read_bytes()[:10] == b"\x17\x08Dtracing"
        assert os.getpid() in m["recorder_pids"] and m["command_pid"] > 0
        assert m["drain_seconds"] <= max(m["seconds"], 1.0)
        info = bench_info(d / "trace.dat", m["command_pid"])
        assert info["records"] == m["entries_in_buffer"]
        assert not any(t["pid"] in m["recorder_pids"] for t in info["tasks"])
        assert info["command"]["allocs"] > 0
        # dd wrote 32 MB of page cache: count pages, not events, since the
        # page cache may come in large folios (order > 0)
        assert info["command"]["alloc_pages"] >= 32 * 256 // 2
        assert m["entries_written"] - m["entries_in_buffer"] == m["lost_events"]
        for snap in ("before", "after"):
            assert (d / snap / "buddyinfo").read_text().startswith("Node 0, zone")
