"""vtime=1: every record of a run carries a deterministic "vtime"
figure, the same on two runs of the same command, and bad vtime parameters
are one line on stderr with exit status 2."""
import json
import os
import subprocess
from pathlib import Path

import pytest

BENCH = os.environ.get("PAGELAB_BENCH",
                       str(Path(__file__).resolve().parents[2] / "build" / "pagelab-bench"))
KEYS = {"value", "ns_per_op", "ops_per_s", "lock_wait_share", "contention_rate",
        "transfers_per_op"}


def run(args):
    out = subprocess.run([BENCH] + args + ["--json"], capture_output=True, text=True,
                         check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("args", [
    ["alloc_many_free_few", "vcpus=8", "ops=20000", "mem=1G", "design=v6.18,pcp-owner"],
    ["test_vmalloc", "nr_threads=4", "run_test_mask=1", "test_loop_count=300", "mem=1G"],
    ["llfree_anchors", "threads=4", "allocs=2000", "mem=1G", "pcp_autotune=0"],
])
def test_vtime_records_are_deterministic(args):
    a = run(args + ["vtime=1"])
    b = run(args + ["vtime=1"])
    assert a and len(a) == len(b)
    for ra, rb in zip(a, b):
        assert set(ra["vtime"]) == KEYS
        assert ra["vtime"] == rb["vtime"]          # bit-identical figures
        assert ra["vtime"]["value"] is not None
    # the time-valued records' vtime is a time, not the count of something
    assert any(r["vtime"]["value"] > 0 for r in a)


def test_no_vtime_without_the_key():
    for r in run(["buddy_alloc_free", "nr=1000", "reps=1", "mem=1G"]):
        assert "vtime" not in r


@pytest.mark.parametrize("bad", ["vtime=x", "topology=2x26"])
def test_bad_vtime_parameters(bad):
    p = subprocess.run([BENCH, "llfree_anchors", bad], capture_output=True, text=True)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1


XFER = str(Path(BENCH).with_name("pagelab-xfer"))


@pytest.mark.parametrize("args", [
    ["vt_costs=host"],                      # needs vtime=1
    ["vtime=1", "vt_costs=Host"],
    ["vtime=1", "vt_costs="],
    ["vtime=1", "vt_costs=anchors,host"],
])
def test_bad_vt_costs(args):
    p = subprocess.run([BENCH, "llfree_anchors", "allocs=100", "mem=256M"] + args,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1
    assert "vt_costs" in p.stderr


def test_vt_costs_host_is_deterministic_and_differs():
    args = ["llfree_anchors", "threads=2", "allocs=2000", "mem=1G", "pcp_autotune=0",
            "workload=bulk,rand", "vtime=1"]
    a = run(args + ["vt_costs=host"])
    b = run(args + ["vt_costs=host"])
    c = run(args + ["vt_costs=anchors"])
    d = run(args)
    assert [r["vtime"] for r in a] == [r["vtime"] for r in b]
    assert [r["vtime"] for r in c] == [r["vtime"] for r in d]    # anchors: the default
    assert [r["vtime"]["value"] for r in a] != [r["vtime"]["value"] for r in c]


@pytest.mark.parametrize("bad", ["rounds=x", "rounds=10", "trials=0", "trials=", "--nope", "x"])
def test_xfer_bad_input(bad):
    p = subprocess.run([XFER, bad], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1
    assert p.stdout == ""


def test_xfer_json():
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two CPUs")
    p = subprocess.run([XFER, "rounds=1000", "trials=1", "--json"], capture_output=True,
                       text=True, timeout=120, check=True)
    rec = json.loads(p.stdout)
    for k in ("xfer_q1_ns", "handoff_ns", "per_handover_q1_ns", "miss_own_ns",
              "miss_other_ns"):
        assert rec[k] >= 0
    assert rec["cpus"][0] != rec["cpus"][1]


def test_anchors_run_on_the_profiles_machine():
    """machine=PROFILE gives llfree_anchors the profile's CPUs and memory: pcp->high_min
    is split over all 52 of the anchor machine's CPUs even when one thread runs."""
    base = ["llfree_anchors", "threads=1", "allocs=2000", "workload=bulk", "pcp_autotune=0",
            "machine=xeon-5320-2s", "vtime=1"]

    def values(recs):
        return [(r["test"], r["vtime"]["value"]) for r in recs]

    prof = values(run(base))
    assert prof == values(run(base + ["vcpus=52"]))
    assert prof != values(run(base + ["vcpus=1", "mem=16G"]))
