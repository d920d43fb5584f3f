"""`pagelab replay` and its report section, against a stand-in for `pagelab-bench replay`.

The stand-in prints the JSON records CONTRACT-13.md specifies, so these tests
check the Python side alone: the fidelity arithmetic, the interleaving, the
lossy-trace flag, the saved results, the report, and the one-line errors.
The real engine's end-to-end run is in test_replay_e2e.py.
"""
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from pagelab import replay
from pagelab.cli import main
from pagelab.report import write_report
from pagelab.runner import BenchError, load_results

from test_trace_record import make_artifact

FAKE = r'''#!PYTHON
import json, os, sys
if sys.argv[1] in ("--design", "--list"):    # the design parser and the registry: the real ones
    os.execv(REAL, [REAL] + sys.argv[1:])
args = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)
if sys.argv[1] != "replay":   # trace_info (the replay's who-allocated table): refused, left out
    sys.exit(2)
log = open(LOG, "a"); log.write(" ".join(sys.argv[1:]) + "\n"); log.close()
if args.get("design") == "nope":
    print("pagelab-bench: unknown design 'nope'", file=sys.stderr); sys.exit(2)
k = {"pcp_refills": 100, "pcp_refill_pages": 3100, "pcp_drain_calls": 10,
     "pcp_drained_pages": 400, "zone_lock_acquisitions": 150, "fallback_events": 0,
     "fallback_fragmenting": 0, "fallback_change_ownership": 0, "fallback_pageblocks_claimed": 0,
     "buddy_direct_allocs": 5, "buddy_direct_frees": 7, "allocs": 5000, "frees": 4900,
     "nr_free_pages_end": 1000, "free_pages_by_order_end": [100, 100, 200, 200, 400, 0, 0, 0, 0, 0, 0],
     "pcp_refill_pages_by_order": [3100] + [0] * 10, "vmalloc_allocs": 3, "vmalloc_purges": 1}
tl = [{"t": t, "pcp_refills": [10 * t, 5 * t], "free_pages_by_order": [100 + t] * 11} for t in range(4)]
common = {"suite": "replay", "rep": 0, "value": 1.0, "unit": "events/s", "params": {},
          "events": 9900, "lost_events": int(LOST), "warnings": {"unknown_event": 2},
          "state": args.get("state", "positional")}
print(json.dumps({**common, "test": "kernel", "design": "kernel", "counters": k,
                  "timeline": [{"t": t, "pcp_refills": [9 * t, 6 * t]} for t in range(4)]}))
for design in args.get("design", "v6.18").split(","):
    f = 1.0 if design == "v6.18" else 0.5
    r = {key: (v * f if isinstance(v, (int, float)) else v) for key, v in k.items()}
    r["free_pages_by_order_end"] = [100, 100, 200, 200, 400, 0, 0, 0, 0, 0, 0] if f == 1 else \
                                   [1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    if design == "targeted-drain":     # fallbacks where the kernel made none
        r["fallback_events"] = 3
    print(json.dumps({**common, "test": "replay", "design": design, "counters": r, "timeline": tl}))
    if "emit_trace" in args:
        open(args["emit_trace"].replace("%s", design), "w").write("# tracer: nop\n")
'''


@pytest.fixture
def fake_bench(tmp_path, monkeypatch):
    def make(lost=0):
        path = tmp_path / f"fake-bench-{lost}"
        log = tmp_path / "calls.log"
        real = os.environ.get("PAGELAB_BENCH") or str(Path(__file__).resolve().parents[2]
                                                      / "build" / "pagelab-bench")
        path.write_text(FAKE.replace("PYTHON", sys.executable).replace("LOG", repr(str(log)))
                        .replace("LOST", str(lost)).replace("REAL", repr(real)))
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
        monkeypatch.setenv("PAGELAB_BENCH", str(path))
        return log
    return make


def _rows(text: str) -> dict:
    """The table's lines by metric name (the first line of each name)."""
    out: dict = {}
    for ln in text.splitlines():
        out.setdefault(ln.split(" (")[0], ln)
    return out


def test_tvd():
    assert replay.tvd([1, 1], [1, 1]) == 0
    assert replay.tvd([1, 0], [0, 1]) == 1
    assert replay.tvd([2, 2], [1, 3]) == pytest.approx(0.25)
    assert replay.tvd([0, 0], [1, 1]) is None and replay.tvd([1], [1, 2]) is None


def test_buddyinfo_pages():
    text = ("Node 0, zone      DMA      1      0      0      1      2      1      1      0      1      1      3\n"
            "Node 0, zone   Normal      5      2      0      0      0      0      0      0      0      0      1\n")
    assert replay.buddyinfo_pages(text) == [6, 4, 0, 8, 32, 32, 64, 0, 256, 512, 4096]


def test_replay_table_interleaving_and_saved_results(tmp_path, fake_bench, capsys):
    log = fake_bench()
    art = make_artifact(tmp_path / "t.pltrace")
    out = tmp_path / "r.json"
    emit = tmp_path / "emit"
    rc = main(["replay", str(art), "--design", "v6.18", "--design", "mt-counts", "--reps", "2",
               "--state", "positional", "--emit-trace", str(emit), "-o", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    calls = [line.split() for line in log.read_text().splitlines()]
    assert [c[2] for c in calls] == ["design=v6.18", "design=mt-counts"] * 2
    assert all(f"trace={art}" in c for c in calls)
    assert sorted(p.name for p in emit.iterdir()) == ["t-mt-counts.trace", "t-v6.18.trace"]
    lines = _rows(text)
    # only the faithful design (v6.18) is judged against the kernel; mt-counts
    # is its change against v6.18, better or worse by the registry's direction
    assert "1.00x ok" in lines["PCP refills"] and "MISS" not in lines["PCP refills"]
    assert "(2 reps)" not in text and "(I) -50.0% better" in lines["PCP refills"]
    assert "31.00" in lines["pages per refill"] and "1.00x ok" in lines["pages per refill"]
    assert "LOSSY" not in text and "unknown_event 2" in text
    tvd_line = lines["buddyinfo TVD"]
    assert "0.000  <= 0.05 ok" in tvd_line and "0.900" in tvd_line and "MISS" not in tvd_line
    assert "v6.18 is the faithful design" in text
    doc = load_results(out)
    assert doc["replay"]["label"] == "t" and doc["replay"]["deterministic"]
    assert {(m.design, m.rep) for m in doc["measurements"]} == \
        {(d, r) for d in ("kernel", "v6.18", "mt-counts") for r in (0, 1)}
    assert doc["replay"]["kernel_buddyinfo_pages"]["before"] == [0] * 11   # text "before buddyinfo"
    report = write_report([out], tmp_path / "report.html")
    html = report.read_text()
    assert "buddyinfo TVD" in html and html.count("<img") == 2


def test_replay_together_is_one_process(tmp_path, fake_bench, capsys):
    log = fake_bench()
    art = make_artifact(tmp_path / "t.pltrace")
    out = tmp_path / "r.json"
    emit = tmp_path / "emit"
    assert main(["replay", str(art), "--design", "v6.18", "--design", "maple", "--together",
                 "--emit-trace", str(emit), "-o", str(out)]) == 0
    calls = log.read_text().splitlines()
    assert len(calls) == 1 and "design=v6.18,maple" in calls[0]
    assert sorted(p.name for p in emit.iterdir()) == ["t-maple.trace", "t-v6.18.trace"]
    rows = _rows(capsys.readouterr().out)
    assert "1.00x ok" in rows["zone->lock acquisitions"]
    assert rows["zone->lock acquisitions"].endswith("-50.0% better")
    assert {m.design for m in load_results(out)["measurements"]} == {"kernel", "v6.18", "maple"}


def test_replay_jobs_gives_the_same_result(tmp_path, fake_bench, capsys):
    fake_bench()
    art = make_artifact(tmp_path / "t.pltrace")
    outs = []
    for jobs in ("1", "3"):
        out = tmp_path / f"r{jobs}.json"
        assert main(["replay", str(art), "--design", "v6.18", "--design", "maple",
                     "--design", "all", "--jobs", jobs, "-o", str(out)]) == 0
        outs.append(capsys.readouterr().out)
        rep = load_results(out)["replay"]
        assert list(rep["designs"]) == ["v6.18", "maple", "all"]
    assert outs[0] == outs[1]
    assert main(["replay", str(art), "--jobs", "0"]) == 2


def test_lossy_trace_is_flagged_everywhere(tmp_path, fake_bench, capsys):
    fake_bench(lost=0)
    art = make_artifact(tmp_path / "t.pltrace", lost=42)   # the manifest says 42 were lost
    out = tmp_path / "r.json"
    assert main(["replay", str(art), "-o", str(out)]) == 0
    assert "LOSSY TRACE: the kernel lost 42 events" in capsys.readouterr().out
    assert load_results(out)["replay"]["lost_events"] == 42
    html = write_report([out], tmp_path / "report.html").read_text()
    assert "LOSSY TRACE" in html


@pytest.mark.parametrize("argv,msg", [
    (["replay"], "required"),
    (["replay", "NOFILE"], "no such trace file or artifact"),
    (["replay", "ART", "--state", "warm"], "invalid choice"),
    (["replay", "ART", "--design", "nope"], "unknown design 'nope'"),
    (["replay", "ART", "--design", "a", "--design", "a"], "a design is given twice"),
    (["replay", "ART", "--reps", "0"], "--reps must be at least 1"),
    (["replay", "BADARC"], "not a readable trace archive"),
    (["replay", "NOMANIFEST"], "no manifest.json"),
    (["replay", "ART", "--tick", "soon"], "--tick soon: want kernel, first or 0..999"),
    (["replay", "ART", "--tick", "1000"], "--tick 1000: want kernel, first or 0..999"),
])
def test_replay_errors_are_one_line(tmp_path, fake_bench, capsys, argv, msg):
    fake_bench()
    art = make_artifact(tmp_path / "t.pltrace")
    (tmp_path / "bad.tar.gz").write_bytes(b"garbage")
    (tmp_path / "empty").mkdir()
    subst = {"ART": str(art), "NOFILE": str(tmp_path / "missing"),
             "BADARC": str(tmp_path / "bad.tar.gz"), "NOMANIFEST": str(tmp_path / "empty")}
    assert main([subst.get(a, a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err, err


def test_engine_without_records_is_an_error(tmp_path, monkeypatch):
    script = tmp_path / "silent"
    real = os.environ.get("PAGELAB_BENCH")
    # the design parser is the real one; the replay prints a kernel record alone
    script.write_text(f"#!/bin/sh\ncase $1 in --*) exec {real} \"$@\";; esac\n"
                      "echo '{\"suite\": \"replay\", \"test\": \"kernel\"}'\n")
    script.chmod(0o755)
    monkeypatch.setenv("PAGELAB_BENCH", str(script))
    art = make_artifact(tmp_path / "t.pltrace")
    with pytest.raises(BenchError, match="no kernel and replay records"):
        replay.run(art, ["v6.18"])


def test_replay_table_of_saved_results(tmp_path, fake_bench, capsys):
    fake_bench()
    art = make_artifact(tmp_path / "t.pltrace")
    out = tmp_path / "r.json"
    assert main(["replay", str(art), "--design", "v6.18", "--design", "maple", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["replay-table", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [ln.split() for ln in lines]
    assert rows[0][:3] == ["trace", "state", "design"]
    kernel, v618, maple = lines[1:4]
    assert kernel.split()[:8] == ["t", "positional", "kernel", "100", "31.00", "10", "400", "150"]
    assert v618.split()[2:4] == ["v6.18", "(faithful)"]
    assert v618.count("(1.00x ok)") == 5 and "MISS" not in v618
    # maple: its change against v6.18; fewer refills and lock trips are better,
    # the same pages per refill "=", pages drained neutral: "not judged"
    assert "50 (-50.0% better)" in maple and "31.00 (=)" in maple
    assert "200 (-50.0% not judged)" in maple and "75 (-50.0% better)" in maple
    assert maple.rstrip().endswith("0.900 (up from 0 worse)")
    assert "lower is better" in lines[-2] and "higher is better" in lines[-2]
    bench_only = tmp_path / "b.json"
    bench_only.write_text('{"measurements": []}')
    assert main(["replay-table", str(bench_only)]) == 2
    assert "no replay results" in capsys.readouterr().err


def test_ratio_against_a_kernel_zero_saves_and_reloads(tmp_path, fake_bench, capsys):
    """A design with fallbacks where the kernel had none: "inf" printed, no Infinity saved."""
    fake_bench()
    art = make_artifact(tmp_path / "t.pltrace")
    out = tmp_path / "r.json"
    assert main(["replay", str(art), "--design", "v6.18", "--design", "targeted-drain",
                 "-o", str(out)]) == 0
    lines = _rows(capsys.readouterr().out)
    assert lines["fallback events"].endswith("up from 0 worse")
    assert "Infinity" not in out.read_text()
    doc = load_results(out)
    row = next(r for r in doc["replay"]["rows"] if r["metric"] == "fallback-events")
    assert row["ratios"] == {"v6.18": 1.0, "targeted-drain": None}
    assert main(["replay-table", str(out)]) == 0
    assert "targeted-drain" in capsys.readouterr().out
