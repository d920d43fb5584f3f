"""The instruction budgets: the table's format, the loop arithmetic, the verdict, the CLI."""
import shutil

import pytest

from pagelab import budgets, cgcount
from pagelab.cli import main
from pagelab.runner import BenchError

ROW = "pcp_pair\t{b}\tbuddy_alloc_free order=0 batch=1 mem=64M dma32=16M reps=1 nr=2000:4000\tper pair"


def test_committed_table_loads():
    rows = budgets.load()
    names = [r.path for r in rows]
    for want in ("pcp_pair", "buddy_pair", "contig_batch", "vmalloc_p1", "vmalloc_p16",
                 "maple_insert_erase", "pagetypeinfo_mt", "pagetypeinfo_mt_blocks",
                 "trace_parse_event", "trace_decode_event", "replay_event"):
        assert want in names
    assert all(r.budget > 0 and r.reason for r in rows)


def test_loop_from_range_and_per():
    loop = cgcount.parse_line("pagetypeinfo design=mt-counts reads=50:100 per=2")
    assert (loop.suite, loop.key, loop.n1, loop.n2, loop.per) == ("pagetypeinfo", "reads", 50, 100, 2)
    assert loop.command(50) == ["pagetypeinfo", "design=mt-counts", "reads=50"]
    # the suite's own loop key keeps its operations per turn unless per= says otherwise
    assert cgcount.parse_line("buddy_alloc_free nr=10:20").per == 2
    assert cgcount.parse_path("vmalloc_fix_size", {}).key == "test_loop_count"


@pytest.mark.parametrize("line,msg", [
    ("buddy_alloc_free nr=20:10", "0 < N1 < N2"),
    ("buddy_alloc_free nr=a:b", "two integers"),
    ("buddy_alloc_free nr=1:2 order=1:2", "more than one loop range"),
    ("buddy_alloc_free nr=5", "give it as nr=N1:N2"),
    ("machines", "no loop known"),
    ("buddy_alloc_free nr=1:2 per=0", "must be positive"),
])
def test_loop_errors(line, msg):
    with pytest.raises(BenchError, match=msg):
        cgcount.parse_line(line)


@pytest.mark.parametrize("text,msg", [
    ("a\t1\tbuddy_alloc_free nr=1:2\n", "4 tab-separated columns"),
    (ROW.format(b=5) + "\n" + ROW.format(b=6) + "\n", "listed twice"),
    (ROW.format(b="many") + "\n", "not a number"),
    (ROW.format(b=-1) + "\n", "must be positive"),
    ("x\t1\tbuddy_alloc_free nr=1:2\t \n", "no reason"),
    ("# only a comment\n", "no budgets"),
])
def test_table_errors(tmp_path, text, msg):
    t = tmp_path / "b.tsv"
    t.write_text(text)
    with pytest.raises(BenchError, match=msg):
        budgets.load(t)


def test_judge_tolerance():
    row = budgets.Budget("p", 1000, cgcount.parse_line("buddy_alloc_free nr=1:2"), "r")
    assert budgets.judge(row, 1030)[0]
    ok, line = budgets.judge(row, 1031)
    assert not ok and "p:" in line and "1031.0" in line and "budget 1000" in line
    assert "tightened" in budgets.judge(row, 850)[1]


def test_count_is_deterministic_and_cancels_setup():
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is missing: scripts/install-deps.sh installs it")
    loop = cgcount.parse_line("buddy_alloc_free order=0 batch=1 mem=64M dma32=16M reps=1 "
                              "nr=2000:4000")
    a = cgcount.per_op_many([(budgets.bench_binary(), loop)] * 2)
    # equal but for the printing of the run's wall times (a few hundred
    # instructions a run, spread over 4000 pairs)
    assert abs(a[0] - a[1]) < 0.5
    # a pair is hundreds of instructions, not the machine's boot spread over it
    assert 100 < a[0] < 5000


def test_over_budget_fails_naming_path_budget_count(tmp_path, capsys):
    t = tmp_path / "b.tsv"
    t.write_text(ROW.format(b=50) + "\n")
    assert main(["budgets", "--table", str(t)]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("FAIL"))
    assert "pcp_pair" in line and "budget 50 " in line and "instructions per operation" in line
    t.write_text(ROW.format(b=100000) + "\n")
    assert main(["budgets", "--table", str(t)]) == 0


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["budgets", "--table", str(tmp_path / "none.tsv")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["budgets", "no_such_path"]) == 2
    assert "no path 'no_such_path'" in capsys.readouterr().err
    assert main(["ab", "HEAD", "HEAD", "--budgets"]) == 2
    assert main(["ab", "HEAD", "HEAD~1", "--mode", "instr"]) == 2
    assert "needs a SUITE" in capsys.readouterr().err
