"""Input a user can get wrong reaches them as its own one-line message and
exit status 2, never the catch-all "internal error": results files without
the section a command needs, or with a record or key missing; a design or
state the trace cannot run; a damaged reproduce document."""
import json
from pathlib import Path

import pytest

from pagelab.cli import main

TRACE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "traces" / "ftrace-6.18.txt"
GOOD = {"kernel": {"counters": {"pcp_refills": 1}},
        "designs": {"v6.18": {"counters": {"pcp_refills": 1}}},
        "label": "t", "state": "fresh", "events": 1, "lost_events": 0, "trace": "t"}


def _doc(tmp_path, replay, name="r.json"):
    path = tmp_path / name
    doc = {"format": "pagelab-results/1", "measurements": []}
    if replay is not None:
        doc["replay"] = replay
    path.write_text(json.dumps(doc))
    return str(path)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "internal error" not in err[0]
    return err[0]


@pytest.mark.parametrize("replay,msg", [
    (None, "no replay results among the files given"),
    ({k: v for k, v in GOOD.items() if k != "kernel"}, "has no kernel record ('kernel')"),
    ({**GOOD, "kernel": []}, "has no kernel record ('kernel')"),
    ({**GOOD, "designs": {}}, "has no design records ('designs')"),
    ({**GOOD, "designs": {"v6.18": {}}}, "replay record 'v6.18' has no 'counters' object"),
    ({**GOOD, "kernel": {"counters": {"pcp_refills": "many"}}},
     "replay record 'kernel' counter 'pcp_refills' is not a number"),
    ({**GOOD, "faithful": "v6.19"}, "faithful design 'v6.19' has no record"),
    ({**GOOD, "events": "lots"}, "replay 'events' is not a number"),
    ("replay", "its 'replay' section is not an object"),
])
def test_replay_results_missing_a_part(tmp_path, capsys, replay, msg):
    path = _doc(tmp_path, replay)
    for argv in (["replay-table", path], ["report", path, "-o", str(tmp_path / "o.html")]):
        if argv[0] == "report" and replay is None:
            continue        # a bench file without a replay section is a fine report input
        assert main(argv) == 2, argv
        assert msg in _one_line(capsys), argv


def test_a_whole_replay_result_is_accepted(tmp_path, capsys):
    assert main(["replay-table", _doc(tmp_path, GOOD)]) == 0
    assert "v6.18 (faithful)" in capsys.readouterr().out


@pytest.mark.parametrize("argv,msg", [
    (["replay", str(TRACE), "--faithful", "bogus"],
     "unknown design 'bogus': unknown design preset or switch 'bogus'"),
    (["replay", str(TRACE), "--design", "v6.18+pcp_owner=maybe"],
     "design switch pcp_owner takes no value, or 0/1"),
    (["replay", str(TRACE), "--state", "positional"], "state=positional needs a snapshot"),
    (["replay", str(TRACE), "--design", "pcp-owner", "--design", "pcp_owner"],
     "are the same design (v6.18+pcp_owner)"),
])
def test_a_design_or_state_the_trace_cannot_run(tmp_path, capsys, argv, msg):
    assert main(argv + ["-o", str(tmp_path / "r.json")]) == 2
    assert msg in _one_line(capsys)
    assert not (tmp_path / "r.json").exists()


def test_a_damaged_reproduce_document(tmp_path, capsys):
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "seed-003.json").write_text(json.dumps(
            {"seed": "003", "cells": [{"row": "r", "col": "c", "change": 1.0}]}))
    assert main(["agree", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "a judged cell has no 'mark'" in _one_line(capsys)
    (tmp_path / "a" / "seed-003.json").write_text(json.dumps({"seed": "003", "cells": 7}))
    assert main(["agree", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "'cells' is not a list of judged cells" in _one_line(capsys)


def test_a_measurement_with_a_bad_metric(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"measurements": [{"suite": "s", "test": "t", "design": "d",
                                                  "unit": "ns", "value": 1, "metric": 5}]}))
    assert main(["compare", str(path)]) == 2
    assert "measurement field 'metric' is not a string" in _one_line(capsys)
    path.write_text(json.dumps({"measurements": [], "metrics": {"x": {"id": "x",
                                                                      "direction": "up"}}}))
    assert main(["compare", str(path)]) == 2
    assert "direction 'up' is not one of lower, higher, neutral" in _one_line(capsys)


FIXTURE = TRACE.parent / "dd-xz.pltrace"


@pytest.mark.parametrize("key,val,msg", [
    ("command_pid", "abc", "'command_pid' must be a pid"),
    ("command_pid", -5, "'command_pid' must be a pid"),
    ("command_pid", True, "'command_pid' must be a pid"),
    ("trace_format", "perf.data", "'trace_format' must be 'text' or 'trace.dat'"),
])
def test_a_manifest_with_a_bad_optional_key(tmp_path, capsys, key, val, msg):
    import shutil
    art = tmp_path / "a.pltrace"
    shutil.copytree(FIXTURE, art)
    m = json.loads((art / "manifest.json").read_text())
    m[key] = val
    (art / "manifest.json").write_text(json.dumps(m))
    for argv in (["trace", "info", str(art)],
                 ["replay", str(art), "--state", "fresh", "-o", str(tmp_path / "r.json")]):
        assert main(argv) == 2, argv
        assert msg in _one_line(capsys), argv
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("doc,msg", [
    ({}, "not a pagelab seed document (no 'seed' name)"),
    ({"seed": 3, "cells": []}, "not a pagelab seed document (no 'seed' name)"),
    ({"seed": "003", "settings": 5, "measurements": [
        {"suite": "s", "test": "t", "design": "d", "unit": "ns", "value": 1.0}]},
     "'settings' is not an object"),
    ({"seed": "003", "measure": 7, "cells": [{"row": "r", "col": "c", "mark": "", "change": 1}]},
     "'measure' is not a string"),
    ({"seed": "003", "measurements": []}, "no judged cells and no measurements"),
])
def test_a_seed_document_that_is_not_one(tmp_path, capsys, doc, msg):
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "seed-003.json").write_text(json.dumps(doc))
    for argv in (["agree", str(tmp_path / "a"), str(tmp_path / "b")],
                 ["agree", "--seed", str(tmp_path / "a")]):
        assert main(argv) == 2, argv
        assert msg in _one_line(capsys), argv
    if "settings" in doc:         # report and compare read it as a results file
        for argv in (["report", str(tmp_path / "a" / "seed-003.json"), "-o",
                      str(tmp_path / "o.html")], ["compare", str(tmp_path / "a" / "seed-003.json")]):
            assert main(argv) == 2, argv
            assert msg in _one_line(capsys), argv
        assert not (tmp_path / "o.html").exists()
