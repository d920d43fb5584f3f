"""`pagelab trace info` and who allocated: the trace-cmd fixture (a kmem + vmalloc
capture made with trace-cmd on a 6.18 kernel) read from trace.dat and from its
report text gives the same table; the replay header carries it; a bad trace.dat
is one line on stderr and exit 2."""
import json
from pathlib import Path

import pytest

from pagelab.cli import main

FIX = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "traces"
V7, V6, TEXT = FIX / "trace-cmd-6.18-v7.dat", FIX / "trace-cmd-6.18-v6.dat.xz", \
    FIX / "trace-cmd-6.18-v7.report.txt.xz"
COMMAND = "21569"     # the fixture's recorded command: sh -c (it forked head, xz, ls)


def info_json(path, capsys, *extra):
    assert main(["trace", "info", str(path), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_info_same_from_dat_and_report(capsys):
    """Events, losses and the by-task table agree between trace.dat v7, v6 and the report text."""
    got = [info_json(p, capsys, "--command-pid", COMMAND, "--tasks", "xz,command")
           for p in (V7, V6, TEXT)]
    keys = ("events", "by_type", "lost_events", "forks", "total", "tasks", "rest", "command",
            "selected", "nr_tasks")
    for g in got[1:]:
        assert {k: g[k] for k in keys} == {k: got[0][k] for k in keys}
    assert (got[0]["format"], got[0]["dat_version"]) == ("trace.dat", 7)
    assert got[1]["dat_version"] == 6 and got[2]["format"] == "trace-cmd"
    assert got[0]["events"] == 13503 and got[0]["total"]["allocs"] == 5017
    # the command's share: its own and its children's tasks, a part of the whole
    cmd = got[0]["command"]
    assert 0 < cmd["allocs"] < got[0]["total"]["allocs"] and cmd["tasks"] >= 2
    assert got[0]["selected"]["allocs"] >= cmd["allocs"]      # "command" is in the selection


def test_info_text(capsys):
    assert main(["trace", "info", str(V7), "--command-pid", COMMAND, "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "trace.dat v7, 13503 events" in out and "no events lost" in out
    assert "page allocations and frees by task (53 tasks; " in out
    # the shares name their registry metrics
    assert "task-alloc-share and task-free-share" in out
    assert "task-alloc-share 18.8%, task-free-share 23.8%" in out
    assert "(50 other tasks)" in out and "\n  all " in out
    assert "the recorded command (pid 21569, 4 tasks):" in out and "other processes'" in out


def test_replay_header_names_the_tasks(tmp_path, capsys):
    assert main(["replay", str(V7), "--state", "fresh", "--tasks", "xz",
                 "-o", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "page allocations and frees by task" in out and "tasks xz (1 tasks):" in out


@pytest.mark.parametrize("cut,msg", [(20, "truncated"), (150000, "truncated")])
def test_bad_tracedat_is_one_line(tmp_path, capsys, cut, msg):
    bad = tmp_path / "cut.dat"
    bad.write_bytes(V7.read_bytes()[:cut])
    assert main(["trace", "info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err and "Traceback" not in err
    assert main(["replay", str(bad), "-o", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err


def test_perf_data_names_perf_script(tmp_path, capsys):
    p = tmp_path / "perf.data"
    p.write_bytes(b"PERFILE2" + bytes(200))
    assert main(["trace", "info", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "perf script" in err


def test_convert_dat_to_text_reads_back_the_same(tmp_path, capsys):
    """trace.dat -> pagelab's text: the same events, types and tasks (forks aside)."""
    out = tmp_path / "t.txt.zst"
    assert main(["trace", "convert", str(V7), str(out)]) == 0
    assert "13503 events" in capsys.readouterr().out
    a, b = info_json(V7, capsys, "--tasks", "xz"), info_json(out, capsys, "--tasks", "xz")
    for k in ("events", "by_type", "lost_events", "total", "tasks", "selected", "nr_tasks"):
        assert a[k] == b[k], k
    assert main(["trace", "convert", str(V7), str(tmp_path / "x.dat")]) == 2
    assert "text only" in capsys.readouterr().err
    assert main(["trace", "convert", str(V7), str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
