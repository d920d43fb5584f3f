"""snapshot_ms= / snapshot_ops= with snapshot_dir= (every pagelab-bench suite):
/proc/buddyinfo, pagetypeinfo, vmstat and zoneinfo written while a suite runs, at the
harness's pause points only (never inside a measured region), numbered on in one
directory, readable by snapshot=DIR/NNNN; bad values are one line and exit 2."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pagelab.runner import bench_binary

TINY = ["mem=64M", "dma32=16M"]


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([bench_binary(), *args], capture_output=True, text=True, timeout=120)


def index(d: Path) -> list[list[str]]:
    return [line.split() for line in (d / "index").read_text().splitlines()]


def test_snapshot_ops_is_deterministic_and_counted(tmp_path):
    runs = []
    for name in ("a", "b"):
        d = tmp_path / name
        p = bench("show", "what=buddyinfo", "workload=churn", "rounds=5000", *TINY,
                  "snapshot_ops=1000", f"snapshot_dir={d}")
        assert p.returncode == 0, p.stderr
        runs.append(d)
    a, b = (index(d) for d in runs)
    # start at the machine's birth, one at the record (the churn passed 1000 ops),
    # one at its end: three, and the same three both times (t_ms aside)
    assert [r[6] for r in a] == ["start", "ops", "end"]
    assert [r[:4] + r[5:] for r in a] == [r[:4] + r[5:] for r in b]
    assert int(a[0][5]) == 0 and int(a[1][5]) >= 1000 and int(a[2][5]) >= int(a[1][5])
    for nr, *_ in a:
        for f in ("buddyinfo", "pagetypeinfo", "vmstat", "zoneinfo"):
            assert (runs[0] / nr / f).read_bytes() == (runs[1] / nr / f).read_bytes()
    vm = dict(line.split() for line in (runs[0] / "0001" / "vmstat").read_text().splitlines())
    assert int(vm["pgalloc_normal"]) + int(vm["pgalloc_dma32"]) > 0
    # a period longer than the run: only the start and the end
    d = tmp_path / "long"
    assert bench("show", "workload=churn", "rounds=5000", *TINY, "snapshot_ops=100000000000",
                 f"snapshot_dir={d}").returncode == 0
    assert [r[6] for r in index(d)] == ["start", "end"]
    # a second run into the same directory numbers on
    assert bench("show", *TINY, "snapshot_ops=1", f"snapshot_dir={d}").returncode == 0
    assert [r[0] for r in index(d)] == ["0000", "0001", "0002", "0003"]


def test_snapshot_is_a_kernel_state(tmp_path):
    d = tmp_path / "s"
    assert bench("show", "workload=churn", "rounds=5000", *TINY, "snapshot_ops=1000",
                 f"snapshot_dir={d}").returncode == 0
    # the directory is what `pagelab trace record` writes: snapshot= boots a machine from it
    p = bench("show", "what=buddyinfo", f"snapshot={d / '0001'}", "state=counts")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Node 0, zone    DMA32")


def test_snapshot_ms_counts_by_wall_time(tmp_path):
    d = tmp_path / "ms"
    p = bench("pagetypeinfo", *TINY, "reads=400", "rounds=5000", "snapshot_ms=2",
              f"snapshot_dir={d}")
    assert p.returncode == 0, p.stderr
    rows = index(d)
    for m in {r[3] for r in rows}:
        mine = [r for r in rows if r[3] == m]
        whys = [r[6] for r in mine]
        assert whys[0] == "start" and whys[-1] == "end" and set(whys[1:-1]) <= {"time"}
        times = [float(r[4]) for r in mine]
        assert times == sorted(times)
        # the k-th periodic snapshot comes at or after k periods, never more often
        for k, t in enumerate(times[1:-1], start=1):
            assert t >= 2 * k
        assert len(whys) - 2 <= times[-1] / 2
    # with a period longer than the run: only the start and the end of each machine
    d = tmp_path / "long"
    assert bench("pagetypeinfo", *TINY, "reads=50", "rounds=5000", "snapshot_ms=86400000",
                 f"snapshot_dir={d}").returncode == 0
    assert [r[6] for r in index(d)] == ["start", "end"] * 3 or \
        sorted(r[6] for r in index(d)) == ["end"] * 3 + ["start"] * 3


def _records(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("suite,args", [
    ("pagetypeinfo", ["reads=50", "rounds=5000"]),
    ("kbuild", ["vcpus=4", "ops=20000", "vtime=1"]),
])
def test_snapshots_do_not_disturb_the_figures(tmp_path, suite, args):
    """Counters (zone->lock acquisitions included) and virtual-time figures are the same
    with snapshots as without: a snapshot reads, puts zone->lock's numbers back, and runs
    outside virtual time."""
    plain = bench(suite, *TINY, *args, "--json")
    snap = bench(suite, *TINY, *args, "snapshot_ops=500", f"snapshot_dir={tmp_path / 'd'}",
                 "--json")
    assert plain.returncode == 0 and snap.returncode == 0, snap.stderr
    assert len(index(tmp_path / "d")) > 4
    a, b = _records(plain.stdout), _records(snap.stdout)
    assert [r["test"] for r in a] == [r["test"] for r in b]
    def counts(r):      # wall-clock lock times differ run to run, snapshots or not
        return {k: v for k, v in r["counters"].items() if not k.endswith("_ns")}

    for x, y in zip(a, b):
        assert counts(x) == counts(y)
        if "vtime" in x:
            assert x["vtime"] == y["vtime"]
        if x["unit"] in ("count", "pages", "acquisitions/read") or x["test"].startswith("zone-lock"):
            assert x["value"] == y["value"]


@pytest.mark.parametrize("args,msg", [
    (["snapshot_ms=0", "snapshot_dir=DIR"], "not in 1..86400000"),
    (["snapshot_ms=-1", "snapshot_dir=DIR"], "not a number"),
    (["snapshot_ms=abc", "snapshot_dir=DIR"], "not a number"),
    (["snapshot_ms=86400001", "snapshot_dir=DIR"], "not in 1..86400000"),
    (["snapshot_ops=0", "snapshot_dir=DIR"], "not in 1.."),
    (["snapshot_ms=10"], "needs snapshot_dir=DIR"),
    (["snapshot_ops=10"], "needs snapshot_dir=DIR"),
    (["snapshot_dir=DIR"], "needs snapshot_ms=N or snapshot_ops=K"),
    (["snapshot_ms=10", "snapshot_dir="], "empty value"),
    (["snapshot_ms=10", "snapshot_dir=/proc/no/such/dir"], "cannot create it"),
    (["snapshot_ms=10", "snapshot_dir=FILE"], "not a writable directory"),
])
def test_bad_snapshot_keys_are_one_line_exit_2(tmp_path, args, msg):
    f = tmp_path / "file"
    f.write_text("x")
    args = [a.replace("DIR", str(tmp_path / "d")).replace("FILE", str(f)) for a in args]
    for suite in ("show", "buddy_alloc_free", "test_vmalloc"):
        p = bench(suite, *args)
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        assert p.returncode == 2 and len(lines) == 1 and msg in lines[0], (suite, p.stderr)
        assert not (tmp_path / "d" / "index").exists()


def test_pagelab_list_shows_the_snapshot_keys(capsys):
    from pagelab.cli import main
    assert main(["list", "suites"]) == 0
    out = capsys.readouterr().out
    every = out[out.index("  every suite:"):]
    for key in ("snapshot_ms", "snapshot_ops", "snapshot_dir"):
        assert f"      {key} " in every
    keys = subprocess.run([bench_binary(), "--keys"], capture_output=True, text=True).stdout
    assert "kbuild snapshot_ms number 1 86400000" in keys.splitlines()


def test_read_snapshots_back(tmp_path):
    """pagelab.snapshots reads the directory; report.buddyinfo_figure draws it."""
    from pagelab import snapshots
    d = tmp_path / "s"
    assert bench("show", "workload=churn", "rounds=5000", *TINY, "snapshot_ops=1000",
                 f"snapshot_dir={d}").returncode == 0
    snaps = snapshots.read_dir(d)
    assert [s["why"] for s in snaps] == ["start", "ops", "end"]
    assert set(snaps[0]["zones"]) == {"0/DMA32", "0/Normal"}
    free = [sum(n << o for z in s["zones"].values() for o, n in enumerate(z)) for s in snaps]
    assert free[0] > free[1]                       # the churn's survivors hold pages
    assert snaps[1]["vmstat"]["pgalloc_normal"] > 0
    assert snaps[0]["vmstat"]["nr_free_pages"] == free[0]   # nothing on a PCP at boot
    pytest.importorskip("matplotlib")
    from pagelab.report import buddyinfo_figure
    assert buddyinfo_figure({"snapshots": snaps}) is not None
    with pytest.raises(ValueError, match="no snapshot index"):
        snapshots.read_dir(tmp_path / "none")
