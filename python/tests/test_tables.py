"""The table layouts against the seeds' own tables ($PAGELAB_SEEDS: the seeds' mails as text, NNN_*.txt)."""
import re

import pytest

from pagelab import stats, tables
from pagelab.seeds.common import seed_text


def _seed(n):
    text = seed_text(n)
    if text is None:
        pytest.skip(f"seed {n} text not available")
    return text.splitlines()


def test_box_is_seed_002_table_byte_for_byte():
    lines = _seed("002")
    start = lines.index("1. Average latency over 10,000 /proc/pagetypeinfo accesses") + 1
    want = "\n".join(lines[start:start + 7])
    got = tables.box([["", "no-patch", "with-patch"]],
                     [["Just after boot", "700.9 us", "268.6 us"],
                      ["After building kernel", "28.7 ms", "269.8 us"]])
    assert got == want


def test_fastpath_is_seed_000_table():
    # The archived mail collapsed runs of spaces inside the rows (not in the
    # rules), so rows are compared with whitespace squeezed, rules exactly.
    lines = _seed("000")
    start = next(i for i, x in enumerate(lines) if x.startswith("| test_vmalloc benchmark"))
    want = lines[start - 1:start + 23]
    body = [re.match(r"\| (.*?) \| (.*?) \| (.*?) \|$", x).groups() for x in want[4:-1]]
    got = tables.fastpath([["test_vmalloc benchmark", "v6.19-rc1", "v6.19-rc1"],
                           ["", "", "+ change"]], body).splitlines()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if g.startswith("+"):
            assert g == w
        else:
            assert re.sub(r" +", " ", g) == w


def test_mmtests_is_seed_002_compare_layout():
    lines = _seed("002")
    start = lines.index("Without patch test results:") + 1
    want = lines[start:start + 4]
    rows = []
    for x in want[2:]:
        m = re.match(r"(\S+)\s+(\S+)\s+([\d.]+) \(\s*([-\d.]+)%\)\s+([\d.]+) \(\s*([-\d.]+)%\)", x)
        stat, test, b, bp, n, np_ = m.groups()
        # our pndiff reproduces the seed's percentage
        assert stats.pndiff(float(n), float(b)) == pytest.approx(float(np_), abs=0.005)
        rows.append((stat, test, [float(b), float(n)], [0.0, stats.pndiff(float(n), float(b))],
                     [False, False]))
    got = tables.mmtests(["vanilla-no-monitor", "vanilla-monitor"], rows, stat_width=9,
                         test_width=len("alloc-odr4-1024")).splitlines()
    assert got[2:] == want[2:]
    # Header: the names split at the first '-', right-aligned over the columns.
    # (The seed's second header line sits one column right of its first; we
    # align both, so compare words and right edges of the first line.)
    assert got[0] == want[0]
    assert got[1].split() == want[1].split()


def test_mmtests_asterisks_replace_parentheses():
    out = tables.mmtests(["a", "b"], [("Amean", "t", [1.0, 2.0], [0.0, -100.0], [False, True])])
    assert out.splitlines()[2] == "Amean t        1.00 (   0.00%)        2.00 *-100.00%*"
