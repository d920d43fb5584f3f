"""Each front end judges a figure by its metric's direction from the registry.

Three kinds of figure, each moved the same way (the new design's value is
half the baseline's, three distinct reps each):
* a lower-is-better count: zone->lock acquisitions -> an improvement;
* higher-is-better counts: pages per zone->lock, free pageblocks, 1 GiB
  ranges won -> a regression (a unit-based guess called these improvements);
* a neutral count: pages moved under zone->lock -> shown, never judged.
Front ends: compare, ab, reproduce (its judged cells), agree (which compares
those cells), replay and replay-table (pcp-refills lower, pages-per-refill
higher, pages drained neutral), report.
"""
import json
from pathlib import Path

import pytest

from pagelab import ab, agree, compare, metrics, replay, report
from pagelab.seeds.common import judge_cell
from pagelab.cli import main
from pagelab.runner import Measurement, save_results

LOWER = ["zone-lock"]
HIGHER = ["pages-per-zone-lock", "free-pageblocks", "contig-1g-won"]
NEUTRAL = ["zone-lock-pages"]
BASE, NEW = [100.0, 102.0, 104.0], [50.0, 51.0, 52.0]


def _ms(label_design=("v6.18", "pcp-owner"), metric_of_old=True):
    out = []
    for mid in LOWER + HIGHER + NEUTRAL:
        unit = metrics.get(mid).unit
        for r, (b, n) in enumerate(zip(BASE, NEW)):
            out.append(Measurement("kbuild", f"{mid}-v8", label_design[0], r, b, unit,
                                   metric=mid if metric_of_old else None))
            out.append(Measurement("kbuild", f"{mid}-v8", label_design[1], r, n, unit, metric=mid))
    return out


def test_registry_directions():
    for mid in LOWER:
        assert metrics.get(mid).direction == "lower"
    for mid in HIGHER:
        assert metrics.get(mid).direction == "higher"
    for mid in NEUTRAL:
        assert metrics.get(mid).direction == "neutral"


def _fastpath_cells(text: str) -> dict:
    cells = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.strip("|").split("|")]
        if len(parts) == 2 and parts[0].split(" (")[0].rsplit("-v", 1)[0] in \
                LOWER + HIGHER + NEUTRAL:
            cells[parts[0].split(" (")[0].rsplit("-v", 1)[0]] = parts[1]
    return cells


def _check(cells: dict):
    for mid in LOWER:
        assert cells[mid].startswith("(I)"), (mid, cells[mid])
    for mid in HIGHER:
        assert cells[mid].startswith("(R)"), (mid, cells[mid])
    for mid in NEUTRAL:
        assert "(I)" not in cells[mid] and "(R)" not in cells[mid] and "not judged" in cells[mid]


def test_compare(tmp_path, capsys):
    path = save_results(tmp_path / "r.json", _ms(), command=["t"])
    assert main(["compare", str(path)]) == 0
    out = capsys.readouterr().out
    _check(_fastpath_cells(out))
    assert "pages-per-zone-lock-v8 (pages, higher is better)" in out
    assert "zone-lock-pages-v8 (pages, not judged)" in out
    # mmtests' layout: significance asterisks only on judged figures
    amean = {ln.split()[1]: ln for ln in out.splitlines() if ln.startswith(("Amean", "Hmean"))}
    assert "*" in amean["zone-lock-v8"] and "*" in amean["pages-per-zone-lock-v8"]
    assert "*" not in amean["zone-lock-pages-v8"]


def test_ab(tmp_path, monkeypatch, capsys):
    """The two revisions' runs; the old one from before the registry names no metric."""
    def fake_run_ab(rev_a, rev_b, suite, params, design, reps, out):
        ms = _ms(("v6.18", "v6.18"), metric_of_old=False)
        a = [m for i, m in enumerate(ms) if i % 2 == 0]
        b = [m for i, m in enumerate(ms) if i % 2 == 1]
        return [{"label": rev_a, "machine": {"commit": "a" * 40}, "measurements": a, "path": "a"},
                {"label": rev_b, "machine": {"commit": "b" * 40}, "measurements": b, "path": "b"}]
    monkeypatch.setattr(ab, "run_ab", fake_run_ab)
    assert main(["ab", "HEAD~1", "HEAD", "kbuild", "--out", str(tmp_path)]) == 0
    _check(_fastpath_cells(capsys.readouterr().out))


B5, N5 = BASE + [101.0, 103.0], NEW + [50.5, 51.5]     # five runs: wall time's minimum


def test_reproduce_cells():
    doc = {"measure": "wall", "mode": "default"}
    BASE, NEW = B5, N5
    for mid in LOWER:
        assert judge_cell(doc, mid, "new", BASE, NEW, mid).startswith("(I)")
    for mid in HIGHER:
        assert judge_cell(doc, mid, "new", BASE, NEW, mid).startswith("(R)")
    for mid in NEUTRAL:
        assert judge_cell(doc, mid, "new", BASE, NEW, mid).endswith("(not judged)")
    marks = {c["row"]: c["mark"] for c in doc["_cells"]}
    assert marks == {"zone-lock": "(I)", "pages-per-zone-lock": "(R)", "free-pageblocks": "(R)",
                     "contig-1g-won": "(R)", "zone-lock-pages": ""}
    # under --mode instr a rate is a count of instructions: lower is better
    instr = {"measure": "instr", "mode": "default"}
    BASE, NEW = [100.0, 100.0], [50.0, 50.0]
    assert judge_cell(instr, "t", "new", BASE, NEW, "throughput").startswith("(I)")
    assert judge_cell(doc, "t", "new", B5, N5, "throughput").startswith("(R)")


def test_agree(tmp_path):
    """agree compares the judged cells of two reproduce runs: seed 003's rows,
    throughput (higher) halved is (R) and zone->lock per Mop (lower) halved (I)."""
    for run in ("a", "b"):
        d = tmp_path / run
        d.mkdir()
        ms = []
        for suite, stem in (("kbuild", "throughput"), ("kbuild", "zone-lock-per-Mop")):
            for r, (b, n) in enumerate(zip([10.0, 10.2, 10.4, 10.1, 10.3],
                                           [5.0, 5.1, 5.2, 5.05, 5.15])):
                unit = metrics.get(stem).unit
                ms.append(Measurement(suite, f"{stem}-v32", "v6.18", r, b, unit, metric=stem))
                ms.append(Measurement(suite, f"{stem}-v32", "pcp-owner", r, n, unit, metric=stem))
        save_results(d / "seed-003.json", ms, command=["t"],
                     extra={"seed": "003", "mode": "default", "measure": "wall",
                            "settings": {"vcpus": "32", "ops": "1000", "reps": 5}})
    cells = agree._cells(tmp_path / "a")
    marks = {k[1]: c["mark"] for k, c in cells.items()}
    assert marks["kbuild: throughput, 32 vCPUs"] == "(R)"
    assert marks["kbuild: zone->lock per Mop, 32 vCPUs"] == "(I)"
    assert "same verdict mark: 2 of 2 cells" in agree.agreement_text(tmp_path / "a", tmp_path / "b")


def _replay_result():
    k = {"pcp_refills": 100, "pcp_refill_pages": 3200, "pcp_drained_pages": 400}
    f = {"pcp_refills": 100, "pcp_refill_pages": 3200, "pcp_drained_pages": 400}
    # the other design: half the refills (better), half the pages each (worse), half the
    # pages drained (neutral)
    o = {"pcp_refills": 50, "pcp_refill_pages": 800, "pcp_drained_pages": 200}
    return {"trace": "t", "label": "t", "state": "positional", "events": 10, "lost_events": 0,
            "kernel": {"counters": k}, "faithful": "v6.18",
            "designs": {"v6.18": {"counters": f}, "pcp-owner": {"counters": o}}}


def test_replay_and_replay_table(tmp_path, capsys):
    res = _replay_result()
    rows = {r["metric"]: r for r in replay.fidelity_rows(res["kernel"], res["designs"], "v6.18")}
    assert rows["pcp-refills"]["judged"]["pcp-owner"] == "better"
    assert rows["pages-per-refill"]["judged"]["pcp-owner"] == "worse"
    assert rows["pcp-drained-pages"]["judged"]["pcp-owner"] == "not judged"
    assert rows["pcp-refills"]["ok"] == {"v6.18": True}        # only the faithful design
    text = replay.fidelity_text(res)
    line = {ln.split(" (")[0]: ln for ln in reversed(text.splitlines())}
    assert line["PCP refills"].endswith("-50.0% better")
    assert line["pages per refill"].endswith("-50.0% worse")
    assert line["pages drained"].endswith("-50.0% not judged")
    doc = {"replay": res, "measurements": [], "path": "x"}
    table = replay.presets_text([doc]).splitlines()
    other = next(ln for ln in table if " pcp-owner " in ln)
    assert "50 (-50.0% better)" in other and "16.00 (-50.0% worse)" in other
    assert "200 (-50.0% not judged)" in other


def test_report(tmp_path):
    path = save_results(tmp_path / "r.json", _ms(), command=["t"])
    html = report.build_html([json.loads(path.read_text()) | {
        "measurements": _ms(), "path": str(path)}])
    assert "pages-per-zone-lock-v8 (pages, higher is better)" in html
    cells = _fastpath_cells(html.replace("&gt;", ">"))
    _check(cells)
