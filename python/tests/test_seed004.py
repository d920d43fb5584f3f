"""Seed 004's table: its rows against the seed's text, and the per-run figures."""
import re

import pytest

from pagelab.seeds import seed004
from pagelab.seeds.common import seed_text
from pagelab.runner import Measurement


def _seed_cases(arch: str) -> dict[tuple[str, int, int], float]:
    text = seed_text("004")
    if text is None:
        pytest.skip("seed 004 text not available")
    block = text.split(f"{arch} observed faster cases (sorted by gain):")[1]
    block = re.split(r"\n(?:arm64 observed|Memory impact)", block)[0]
    cases = {}
    for m in re.finditer(r"^- (\w+), (?:smp=(\d+) nt=(\d+)|functional sweep): \+([\d.]+) %",
                         block, re.M):
        test, smp, nt, gain = m.groups()
        cases[(test, int(smp or 0), int(nt or 1))] = float(gain)
    return cases


@pytest.mark.parametrize("arch,col", [("x86_64", 3), ("arm64", 4)])
def test_rows_are_the_seeds_cases(arch, col):
    want = _seed_cases(arch)
    assert len(want) >= 16
    got = {(r[0], r[1], r[2]): r[col] for r in seed004.ROWS if r[col] is not None}
    assert got == want


def _m(design, smp, nt, test, rep, worker, value):
    name = f"{test}: p:1, h:0, l:100" + (f", worker {worker}" if nt > 1 else "")
    return Measurement("test_vmalloc", name, design, rep, value, "usec",
                       params={"smp": str(smp), "nt": str(nt)})


def test_a_run_is_the_mean_of_its_workers():
    ms = [_m("v6.18", 8, 2, "full_fit_alloc_test", 0, 0, 100.0),
          _m("v6.18", 8, 2, "full_fit_alloc_test", 0, 1, 300.0),
          _m("v6.18", 8, 2, "full_fit_alloc_test", 1, 0, 50.0),
          _m("v6.18", 8, 2, "full_fit_alloc_test", 1, 1, 70.0),
          _m("v6.18", 8, 2, "long_busy_list_alloc_test", 0, 0, 9.0),
          _m("v6.18", 16, 2, "full_fit_alloc_test", 0, 0, 9.0),
          _m("maple", 8, 2, "full_fit_alloc_test", 0, 0, 9.0)]
    assert seed004.per_run(ms, 8, 2, "full_fit_alloc_test", "v6.18") == [200.0, 60.0]


def _render_runs(reps):
    ms = []
    for rep in range(reps):
        for w in range(16):
            ms.append(_m("v6.18", 16, 16, "full_fit_alloc_test", rep, w, 200.0 + rep))
            ms.append(_m("maple", 16, 16, "full_fit_alloc_test", rep, w, 100.0 + rep))
    out = seed004.render({"measurements": ms, "settings": {"reps": reps, "loops": 100},
                          "machine": {}})
    return out, next(x for x in out.splitlines() if "full_fit_alloc_test" in x and "| 16 " in x)


def test_render_puts_ours_beside_the_seed():
    out, row = _render_runs(5)
    # 202 -> 102 usec is Fastpath's +98.0%, significant with 5 runs: (I)
    assert "+64.9%" in row and "(I) +98.0%" in row and " 202 " in row   # the rbtree mean
    assert "n/a" in out   # rows without measurements say so


def test_render_marks_nothing_below_the_minimum_runs():
    out, row = _render_runs(4)      # wall mode needs 5 runs a side
    assert "+98.5%" in row and "(I)" not in row
