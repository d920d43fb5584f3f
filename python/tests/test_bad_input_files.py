"""Untrusted files on every surface: inputs must be regular files (a FIFO,
/dev/zero, a socket or a directory is one line and exit 2, never a hang or a
read without end), outputs regular files or new paths (a device node, FIFO
or directory is refused and left as it was), archives and manifests read
with caps, and the timeline of a trace with huge time gaps stays small.
"""
import json
import os
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from pagelab import files
from pagelab.cli import main
from pagelab.runner import bench_binary
from pagelab.validate import ValidationError

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "traces"
ARTIFACT = FIXTURES / "dd-xz.pltrace"
FTRACE = FIXTURES / "ftrace-6.18.txt"


@pytest.fixture
def specials(tmp_path):
    """A FIFO, a listening socket, a directory and /dev/zero."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock_path))
    s.listen(1)
    d = tmp_path / "dir"
    d.mkdir()
    yield {"fifo": fifo, "socket": sock_path, "dir": d, "zero": Path("/dev/zero")}
    s.close()


def _one_line(capsys, rc, want=2):
    err = capsys.readouterr().err
    assert rc == want, err
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err
    return err


@pytest.mark.parametrize("kind", ["fifo", "socket", "dir", "zero"])
@pytest.mark.parametrize("cmd", [["compare"], ["replay-table"], ["report", "-o", "{tmp}/r.html"]])
def test_results_readers_refuse_non_regular_inputs(specials, tmp_path, capsys, kind, cmd):
    argv = [c.format(tmp=tmp_path) for c in cmd]
    rc = main(argv[:1] + [str(specials[kind])] + argv[1:])
    err = _one_line(capsys, rc)
    assert "cannot read" in err


@pytest.mark.parametrize("kind", ["fifo", "socket", "zero"])
def test_replay_refuses_non_regular_traces(specials, capsys, kind):
    err = _one_line(capsys, main(["replay", str(specials[kind])]))
    assert "cannot read" in err
    p = subprocess.run([str(bench_binary()), "replay", f"trace={specials[kind]}"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "not a regular file" in p.stderr


@pytest.mark.parametrize("kind", ["fifo", "zero", "dir"])
def test_outputs_never_replace_a_special_file(specials, tmp_path, capsys, kind):
    target = specials[kind]
    before = os.lstat(target)
    for argv in (["replay", str(FTRACE), "-o", str(target)],
                 ["report", "-o", str(target)],
                 ["bench", "buddy_alloc_free", "mem=64M", "nr=10", "-o", str(target)]):
        err = _one_line(capsys, main(argv))
        assert "cannot write" in err
        after = os.lstat(target)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode)
        assert after.st_ino == before.st_ino and after.st_rdev == before.st_rdev
    assert not Path(str(target) + ".tmp").exists()


def test_dev_full_stays_a_device(capsys):
    before = os.stat("/dev/full")
    err = _one_line(capsys, main(["replay", str(FTRACE), "-o", "/dev/full"]))
    assert "character device" in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode) and os.stat("/dev/full").st_ino == before.st_ino


def test_empty_output_paths_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (["replay", str(FTRACE), "-o", ""], ["report", "-o", ""],
                 ["trace", "record", "-o", "", "--seconds", "1"]):
        _one_line(capsys, main(argv))
    assert list(tmp_path.iterdir()) == []      # nothing written where nobody asked


def test_bench_outputs_refuse_special_files(specials, tmp_path):
    for key in ("emit_trace", "show_state"):
        p = subprocess.run([str(bench_binary()), "replay", f"trace={FTRACE}", "design=v6.18",
                            f"{key}={specials['fifo']}"], capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
        assert "not a regular file" in p.stderr
        assert stat.S_ISFIFO(os.lstat(specials["fifo"]).st_mode)


def _artifact(tmp_path, **manifest):
    d = tmp_path / "a.pltrace"
    shutil.copytree(ARTIFACT, d)
    m = json.loads((d / "manifest.json").read_text())
    m.update(manifest)
    (d / "manifest.json").write_text(json.dumps(m))
    return d


@pytest.mark.parametrize("manifest, msg", [
    ({"trace": "/dev/zero"}, "outside the artifact"),
    ({"trace": "../../etc/passwd"}, "outside the artifact"),
    ({"before": "/proc"}, "outside the artifact"),
    ({"nr_cpus": 4294967298}, "nr_cpus 4294967298 is not in"),
    ({"mem_bytes": 99999999999999999999999}, "mem_bytes"),
    ({"lost_events": -1}, "lost_events"),
])
def test_bench_refuses_bad_manifests(tmp_path, manifest, msg):
    d = _artifact(tmp_path, **manifest)
    p = subprocess.run([str(bench_binary()), "replay", f"trace={d}"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
    assert msg in p.stderr, p.stderr


@pytest.mark.parametrize("text, msg", [
    ('{"trace": "trace.txt\n.zst"}', "control character"),
    ('{"trace": "x""lost_events""\n}\n', "lost_events"),
])
def test_bench_manifest_with_control_bytes_is_one_line(tmp_path, text, msg):
    # A raw newline in a manifest value must not reach the message (two lines) or a path.
    d = _artifact(tmp_path)
    (d / "manifest.json").write_text(text)
    p = subprocess.run([str(bench_binary()), "replay", f"trace={d}"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
    assert msg in p.stderr, p.stderr


def test_manifest_that_is_a_fifo_or_huge(tmp_path, capsys):
    d = _artifact(tmp_path)
    (d / "manifest.json").unlink()
    os.mkfifo(d / "manifest.json")
    p = subprocess.run([str(bench_binary()), "replay", f"trace={d}"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "not a regular file" in p.stderr
    _one_line(capsys, main(["replay", str(d)]))
    (d / "manifest.json").unlink()
    (d / "manifest.json").write_text("{" + " " * (2 << 20) + "}")
    p = subprocess.run([str(bench_binary()), "replay", f"trace={d}"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "over 1 MiB" in p.stderr
    _one_line(capsys, main(["replay", str(d)]))


def test_files_helper_api(specials, tmp_path):
    with pytest.raises(ValidationError):
        files.read_bytes(specials["zero"])
    with pytest.raises(ValidationError):
        files.check_input(specials["fifo"])
    assert files.check_input(specials["dir"], dir_ok=True) == specials["dir"]
    with pytest.raises(ValidationError):
        files.check_output("")
    with pytest.raises(TypeError):
        files.check_input(3.5)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(ValidationError, match="larger than"):
        files.read_bytes(big, 4096)
    assert files.read_bytes(big, 5000) == b"x" * 5000
    out = files.write_text(tmp_path / "new" / "f.txt", "hi")
    assert out.read_text() == "hi" and not (tmp_path / "new" / "f.txt.tmp").exists()


def test_trace_with_huge_time_gaps_has_a_small_timeline(tmp_path):
    """Six days between events, 300 times: the replay skips the idle time
    and the timeline stays within its cap (a per-second one would be 155 M
    samples)."""
    lines, t = [], 10
    for i in range(300):
        lines.append(f"  a-1 [000] ..... {t}.000001: mm_page_alloc: page=x pfn={0x1000 + i} "
                     "order=0 migratetype=1 gfp_flags=GFP_KERNEL")
        t += 6 * 24 * 3600
    lines.append(f"  a-1 [000] ..... {10 ** 12}.000001: mm_page_free: page=x pfn=0x1000 order=0")
    tr = tmp_path / "gaps.txt"
    tr.write_text("\n".join(lines) + "\n")
    p = subprocess.run([str(bench_binary()), "replay", f"trace={tr}", "mem=256M", "--json"],
                       capture_output=True, text=True, timeout=300, check=True)
    recs = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    for r in recs:
        tl = r["timeline"]
        assert 0 < len(tl) <= 4096
        assert [s["t"] for s in tl] == sorted(s["t"] for s in tl)
        assert tl[-1]["t"] > 100_000_000          # the whole trace, at a coarser step
    kernel = [r for r in recs if r["test"] == "kernel"][0]
    assert kernel["warnings"]["malformed_line"] == 1     # the jump of 30,000 years


def test_huge_vmap_area_and_lazy_backlog(tmp_path):
    tr = tmp_path / "vmap.txt"
    tr.write_text(
        "  a-1 [000] ..... 10.000001: alloc_vmap_area: va_start: 18446683600570023936 "
        "size=1099511631872 align=4096 vstart=0xffffc90000000000 vend=0xffffe8ffffffffff failed=0\n"
        "  a-1 [000] ..... 10.000002: free_vmap_area_noflush: va_start=0xffffc90000000000 "
        "nr_lazy=9223372036854775807 nr_lazy_max=32768\n")
    p = subprocess.run([str(bench_binary()), "replay", f"trace={tr}", "mem=256M", "--json"],
                       capture_output=True, text=True, timeout=120, check=True)
    recs = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    rep = [r for r in recs if r["test"] == "replay"][0]
    assert rep["warnings"]["alloc_failed"] == 1 and rep["counters"]["allocs"] == 0
