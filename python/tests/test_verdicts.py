"""The judging protocol: stopping rule, noisy cells, minimum runs, smoke runs, modes.

No test here measures time: every sample is given.
"""
import json
import math

import pytest

from pagelab import reproduce, runner, stats
from pagelab.seeds import common, seed001
from pagelab.cli import main
from pagelab.runner import Measurement

WALL = stats.policy_for("wall")
INSTR = stats.policy_for("instr")


def test_policies_per_mode():
    assert not WALL.deterministic and INSTR.deterministic
    assert stats.policy_for("vtime").deterministic
    assert WALL.min_runs >= 5 and WALL.max_runs > WALL.min_runs
    assert stats.policy_for("wall", quick=True).quick
    with pytest.raises(ValueError):
        stats.policy_for("cycles")


def test_stop_rule_waits_for_min_runs_then_converges():
    tight = [100.0, 100.5, 99.5, 100.2, 99.8]
    assert stats.stop_reason({"a": tight[:4]}, WALL, 4) is None        # below min_runs
    assert stats.stop_reason({"a": tight}, WALL, 5) == "converged"


def test_stop_rule_goes_on_while_any_cell_is_wide_then_caps():
    wide = [100.0, 140.0, 80.0, 120.0, 90.0]
    cells = {"a": [100.0] * 5, "b": wide}
    assert stats.stop_reason(cells, WALL, 5) is None
    assert stats.stop_reason(cells, WALL, WALL.max_runs) == "cap"


def test_converged_is_relative_to_the_mean():
    p = stats.Policy("wall", 2, 10, ci_target=0.02, noisy_cov=5, warn_cov=3)
    assert stats.converged([1000.0, 1001.0, 999.0], p)
    assert not stats.converged([10.0, 11.0, 9.0], p)
    assert not stats.converged([5.0], p)


def test_deterministic_mode_stops_after_two_equal_runs():
    assert stats.stop_reason({"a": [5e6, 5e6], "b": [7e6, 7e6]}, INSTR, 2) == "converged"


def test_clear_difference_is_marked_with_enough_runs():
    base = [100.0, 101.0, 99.0, 100.5, 99.5]
    new = [80.0, 80.5, 79.5, 80.2, 79.8]
    c = stats.judge(base, new, stats.LOWER, WALL)
    assert c.mark == "(I)" and c.text().startswith("(I) 25.")
    assert stats.judge(new, base, stats.LOWER, WALL).mark == "(R)"


def test_no_mark_below_min_runs():
    c = stats.judge([100.0, 101.0, 99.0, 100.0], [50.0, 51.0, 49.0, 50.0], stats.LOWER, WALL)
    assert c.mark == "" and c.why == "few"


def test_noisy_cell_is_shown_and_never_marked():
    base = [100.0, 130.0, 80.0, 110.0, 95.0]      # CoV ~17%
    new = [20.0, 21.0, 19.0, 20.0, 20.0]
    c = stats.judge(base, new, stats.LOWER, WALL)
    assert c.noisy and c.mark == "" and c.text().endswith("(noisy)")
    assert c.cov > WALL.noisy_cov


def test_smoke_run_never_marks():
    quick = stats.policy_for("wall", quick=True)
    c = stats.judge([100.0] * 5 + [100.1], [50.0] * 5 + [50.1], stats.LOWER, quick)
    assert c.mark == "" and c.why == "smoke" and "(" not in c.text()


def test_deterministic_mode_marks_exact_differences_above_the_floor():
    assert stats.judge([1000.0, 1000.0], [900.0, 900.0], stats.LOWER, INSTR).mark == "(I)"
    small = stats.judge([1000.0, 1000.0], [1005.0, 1005.0], stats.LOWER, INSTR)
    assert small.mark == "" and small.why == "small"
    assert stats.judge([1000.0], [900.0], stats.LOWER, INSTR).why == "few"


def test_cov():
    assert stats.cov([10.0, 10.0]) == 0.0
    assert math.isnan(stats.cov([3.0]))
    assert stats.cov([9.0, 11.0]) == pytest.approx(14.142, rel=1e-3)


def test_callgrind_dumps_are_summed_per_slot(tmp_path):
    for i, (label, total) in enumerate((("pagelab-slot-0.0", 10), ("pagelab-slot-1.0", 7),
                                        ("pagelab-slot-0.0", 5))):
        (tmp_path / f"cg.1.{i + 1}").write_text(
            f"version: 1\ndesc: Trigger: Client Request: {label}\nevents: Ir\nsummary: 0\n"
            f"totals: {total}\n")
    (tmp_path / "cg.1").write_text("desc: Trigger: Program termination\ntotals: 0\n")
    assert runner.callgrind_totals(tmp_path) == {"pagelab-slot-0.0": 15, "pagelab-slot-1.0": 7}


def test_instr_mode_replaces_timed_figures_only(monkeypatch, tmp_path):
    recs = [{"suite": "s", "test": "t", "design": "d", "rep": 0, "value": 12.5, "unit": "usec",
             "harness": {"slot": 0, "gen": 0}},
            {"suite": "s", "test": "locks", "design": "d", "rep": 0, "value": 3, "unit": "count",
             "harness": {}}]
    monkeypatch.setattr(runner.shutil, "which", lambda _: "/usr/bin/valgrind")
    monkeypatch.setattr(runner, "_run", lambda args, suite: "\n".join(json.dumps(r) for r in recs))
    monkeypatch.setattr(runner, "callgrind_totals", lambda d: {"pagelab-slot-0.0": 4242})
    ms = runner.run_once("s", {}, "d", mode="instr")
    assert (ms[0].value, ms[0].unit, ms[0].wall, ms[0].mode) == (4242.0, "instructions", 12.5,
                                                                 "instr")
    assert (ms[1].value, ms[1].unit) == (3, "count")


def test_instr_mode_refuses_a_suite_without_regions(monkeypatch):
    recs = [{"suite": "s", "test": "t", "design": "d", "rep": 0, "value": 1, "unit": "ns",
             "harness": {}}]
    monkeypatch.setattr(runner.shutil, "which", lambda _: "/usr/bin/valgrind")
    monkeypatch.setattr(runner, "_run", lambda args, suite: json.dumps(recs[0]))
    monkeypatch.setattr(runner, "callgrind_totals", lambda d: {})
    with pytest.raises(runner.BenchError, match="no measured region"):
        runner.run_once("s", {}, "d", mode="instr")


def test_instr_mode_leaves_out_a_side_figure_timed_by_its_own_clock(monkeypatch):
    recs = [{"suite": "s", "test": "throughput", "design": "d", "rep": 0, "value": 2.0,
             "unit": "Mops/s", "harness": {"slot": 0, "gen": 0}},
            {"suite": "s", "test": "contig-1g-us", "design": "d", "rep": 0, "value": 80.0,
             "unit": "us", "harness": {}},
            {"suite": "s", "test": "contig-1g-won", "design": "d", "rep": 0, "value": 2,
             "unit": "count", "harness": {}}]
    monkeypatch.setattr(runner.shutil, "which", lambda _: "/usr/bin/valgrind")
    monkeypatch.setattr(runner, "_run", lambda args, suite: "\n".join(json.dumps(r) for r in recs))
    monkeypatch.setattr(runner, "callgrind_totals", lambda d: {"pagelab-slot-0.0": 99})
    ms = runner.run_once("s", {}, "d", mode="instr")
    assert [(m.test, m.value) for m in ms] == [("throughput", 99.0), ("contig-1g-won", 2)]


def test_vtime_mode_takes_the_model_figure_or_says_it_is_missing(monkeypatch):
    with_vt = {"suite": "s", "test": "t", "design": "d", "rep": 0, "value": 9.0, "unit": "us",
               "vtime": {"value": 4.0}}
    monkeypatch.setattr(runner, "run_raw", lambda suite, p, json_out=True: json.dumps(with_vt))
    m = runner.run_once("s", {}, "d", mode="vtime")[0]
    assert (m.value, m.wall, m.mode, m.unit) == (4.0, 9.0, "vtime", "us")
    without = dict(with_vt)
    del without["vtime"]
    monkeypatch.setattr(runner, "run_raw", lambda suite, p, json_out=True: json.dumps(without))
    with pytest.raises(runner.BenchError, match="no vtime figure"):
        runner.run_once("s", {}, "d", mode="vtime")


def test_adaptive_runs_until_converged(monkeypatch):
    seq = iter([100.0, 50.0, 120.0, 50.0, 80.0, 50.0] + [100.0, 50.0] * 20)
    calls = []

    def fake(suite, params, design, mode):
        calls.append(design)
        return [Measurement("s", "t", design, 0, next(seq), "us")]
    monkeypatch.setattr(runner, "run_once", fake)
    pol = stats.Policy("wall", min_runs=3, max_runs=6, ci_target=0.02, noisy_cov=5, warn_cov=3)
    log = []
    ms = runner.run_adaptive("s", {}, ["a", "b"], pol, log=log)
    assert log == [{"label": "s", "runs": 6, "stop": "cap"}]
    assert len(ms) == 12 and calls[:4] == ["a", "b", "a", "b"]


def test_mode_selection_on_the_command_line(monkeypatch, tmp_path):
    seen = {}

    def fake(seeds, mode, machine, out_dir, echo=print, measure=None, second="auto"):
        seen.update(mode=mode, measure=measure, second=second)
        return []
    monkeypatch.setattr(reproduce, "reproduce", fake)
    assert main(["reproduce", "001", "--mode", "instr", "--out", str(tmp_path)]) == 0
    assert seen == {"mode": "default", "measure": "instr", "second": "auto"}
    assert main(["reproduce", "001", "--quick", "--second", "none", "--out", str(tmp_path)]) == 0
    assert seen == {"mode": "quick", "measure": None, "second": None}
    assert main(["reproduce", "001", "--mode", "cycles"]) == 2


def test_default_judge_is_deterministic_and_quick_is_wall():
    assert stats.policy_for(reproduce.DEFAULT_MEASURE).deterministic
    assert reproduce.QUICK_MEASURE == "wall"
    assert reproduce.second_opinion("instr") is None     # --second wall asks for one


def test_quick_tables_are_labelled_and_unmarked():
    ms = [Measurement("page_alloc_high_order", "odr9-per-iteration", d, r, v, "us",
                      params={"test_loop_count": "10"})
          for r in range(6) for d, v in (("v6.18", 40.0 + r * 0.01), ("contig-batch", 4.0))]
    doc = {"measurements": ms, "settings": {"test_loop_count": "10"}, "mode": "quick",
           "measure": "wall"}
    row = lambda text: next(x for x in text.splitlines() if x.startswith("| order 9"))
    out = seed001.render_001(doc)
    assert "SMOKE RUN" in out and "(I)" not in row(out)
    doc = dict(doc, mode="default")
    doc.pop("_cells", None)
    out = seed001.render_001(doc)
    assert "SMOKE RUN" not in out and "(I) 9" in row(out)


def _seed_doc(path, cells):
    path.mkdir(parents=True, exist_ok=True)
    (path / "seed-000.json").write_text(json.dumps(
        {"seed": "000", "measure": "instr", "measurements": [], "cells": cells}))


def _c(row, change, mark="", seed=None):
    return {"row": row, "col": "d", "change": change, "mark": mark, "noisy": False, "n": 2,
            "cov": 0.0, "why": "", "seed": seed}


def test_agree_counts_marks_and_signs(tmp_path, capsys):
    from pagelab import agree
    one = [_c(f"r{i}", 5.0, "(I)") for i in range(19)] + [_c("big", 12.0, "", seed=-20.0)]
    two = [_c(f"r{i}", 5.0, "(I)") for i in range(19)] + [_c("big", -1.0, "", seed=-20.0)]
    _seed_doc(tmp_path / "a", one)
    _seed_doc(tmp_path / "b", two)
    r = agree.agreement(tmp_path / "a", tmp_path / "b")
    assert (r["cells"], r["same_mark"], r["sign_cells"], r["same_sign"]) == (20, 20, 1, 0)
    assert main(["agree", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "20 of 20 cells (100.0%" in out and "FAIL" in out and "differs: seed 000 big" in out
    _seed_doc(tmp_path / "c", [dict(c, mark="") for c in one[:2]] + one[2:])
    r = agree.agreement(tmp_path / "a", tmp_path / "c")
    assert r["same_mark"] == 18 and r["same_mark_pct"] == 90.0


def test_agree_seed_counts_our_marks_against_the_seeds(tmp_path, capsys):
    from pagelab import agree
    cells = [dict(_c(f"r{i}", -20.0, "(R)", seed=-22.0), seed_mark="(R)") for i in range(18)]
    cells += [dict(_c("quiet", -4.0, "(R)", seed=-1.0), seed_mark=""),
              dict(_c("none", 3.0, "(I)"), seed_mark=None)]
    _seed_doc(tmp_path / "a", cells)
    r = agree.seed_match(tmp_path / "a")
    assert (r["cells"], r["same_mark"]) == (19, 18)
    assert main(["agree", "--seed", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "18 of 19 cells (94.7%" in out and "FAIL" in out
    assert "differs: seed 000 quiet [d]: seed - -1.00%, ours (R) -4.00%" in out
    assert main(["agree", "--seed", str(tmp_path / "a"), str(tmp_path / "a")]) == 2
    assert main(["agree", str(tmp_path / "a")]) == 2


def test_agree_second_puts_the_second_opinion_beside(tmp_path, capsys):
    doc = {"seed": "001", "measure": "instr", "measurements": [],
           "cells": [_c("order 9", 1270.0, "(I)", seed=461.0)],
           "second": {"measure": "wall", "cells": [_c("order 9", -5.0, "", seed=461.0)]}}
    (tmp_path / "seed-001.json").write_text(json.dumps(doc))
    assert main(["agree", "--second", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| seed | row | design | seed's change | instr | wall | same sign |" in out
    assert "| 001 | order 9 | d | 461.00% | (I) 1270.00% | -5.00% | **no** |" in out
    _seed_doc(tmp_path / "plain", [_c("r", 1.0)])
    assert main(["agree", "--second", str(tmp_path / "plain")]) == 2
    assert "no seed document with a second opinion" in capsys.readouterr().err


def test_seed_marks_printed_or_implied():
    assert common._seed_mark("(R) -40.69%", True) == "(R)"
    assert common._seed_mark("0.10%", True) == ""
    assert common._seed_mark("64.9%", False) == "(I)"
    assert common._seed_mark("-12%", False) == "(R)"
    assert common._seed_mark("4.0%", False) is None       # a bare small figure claims nothing
    assert common._seed_mark("fewer zone->lock trips", False) is None


def test_agree_refuses_a_directory_without_results(tmp_path, capsys):
    assert main(["agree", str(tmp_path), str(tmp_path)]) == 2
    assert "no seed-*.json" in capsys.readouterr().err


def test_disagreements_between_judged_and_second_opinion():
    j = {"measure": "instr", "_cells": [_c("a", -4.0, "(R)"), _c("b", 20.0, "(I)")]}
    w = {"measure": "wall", "_cells": [_c("a", -50.0, "(R)"), _c("b", 3.0, "")]}
    out = reproduce.disagreements(j, w)
    assert len(out) == 1 and "b [d]: instr (I) 20.00%, wall 3.00%" in out[0]


def test_error_line_skips_valgrinds_own_lines():
    err = "pagelab-bench: cannot create the machine\n==15768== \n==15768== I   refs:      0\n"
    assert runner._one_line_error(err, "x") == "cannot create the machine"
