"""A design and a loaded state: the design's rules are applied after the load.

The committed fixture dd-xz.pltrace is replayed from its positional state
(the snapshot sets every PCP's batch and high as the 6.18 kernel reported
them). pcp_batch2x computes another batch: it must reach the replay (its
refills differ from v6.18's) and every output must say what it changed;
pcp_owner's ownership cannot be loaded and every output says that instead.
"""
import json
from pathlib import Path

from pagelab.cli import main
from pagelab.report import write_report

TRACE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "traces" / "dd-xz.pltrace"
BATCH = "pcp->batch as the design computes it for the loaded zone: Normal 63 -> 127"
OWNER = "pcp_owner: the loaded PCP pages lie in no owned pageblock"


def test_batch_rule_reaches_a_positional_replay(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["replay", str(TRACE), "--state", "positional", "--tick", "0",
                 "--design", "v6.18", "--design", "v6.18+pcp_batch2x", "--design", "pcp-owner",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    designs = doc["replay"]["designs"]
    refills = {d: r["counters"]["pcp_refills"] for d, r in designs.items()}
    assert refills["v6.18+pcp_batch2x"] != refills["v6.18"], refills
    # every output says what the design changed in the loaded state
    assert designs["v6.18"]["design_notes"] == []
    assert any(BATCH in n for n in designs["v6.18+pcp_batch2x"]["design_notes"])
    assert any(OWNER in n for n in designs["pcp-owner"]["design_notes"])
    assert f"design v6.18+pcp_batch2x: {BATCH}" in text
    assert f"design pcp-owner: {OWNER}" in text
    assert main(["replay-table", str(out)]) == 0
    table = capsys.readouterr().out
    assert BATCH in table and OWNER in table
    html = write_report([out], tmp_path / "report.html").read_text()
    assert BATCH.replace(">", "&gt;") in html and OWNER in html


def test_each_engine_warning_once_per_design():
    """Tick probing replays each design four times, quietly after the first:
    each warning of the trace is printed once per design, no more, no less."""
    import os
    import subprocess
    from collections import Counter
    bench = os.environ.get("PAGELAB_BENCH") or str(Path(__file__).resolve().parents[2] / "build"
                                                   / "pagelab-bench")
    trace = TRACE.parent / "ftrace-6.18.txt"
    proc = subprocess.run([bench, "replay", f"trace={trace}", "state=fresh",
                           "design=v6.18,v6.18+pcp_premerge,pcp-owner"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = Counter(ln for ln in proc.stderr.splitlines() if ln.startswith("pagelab: replay: line"))
    assert lines and set(lines.values()) == {3}, lines
