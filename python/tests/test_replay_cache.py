"""The replay's decoded-stream cache (src/trace/evcache.c), end to end.

A replay that finds its trace's entry gives the same records as the parse
that stored it; a cut or corrupted entry is one line on stderr and a parse
(same records again), after which a good entry is back; cache=0 and
PAGELAB_NO_CACHE=1 store nothing; `pagelab replay --no-cache` passes cache=0.
"""
import json
import os
import subprocess
from pathlib import Path

from pagelab.cli import main
from pagelab.runner import bench_binary, load_results

TRACE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "traces" / \
    "pressure-ftrace-6.18.txt"


def _replay(cache_dir: Path, *extra: str, env: dict | None = None):
    e = dict(os.environ, PAGELAB_CACHE_DIR=str(cache_dir), **(env or {}))
    p = subprocess.run([str(bench_binary()), "replay", f"trace={TRACE}", "mem=1G", "dma32=256M",
                        "design=v6.18,mt-counts", "--json", *extra],
                       capture_output=True, text=True, env=e)
    assert p.returncode == 0, p.stderr
    recs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    for r in recs:     # wall times differ run to run; the rest must not
        r.pop("timings", None)
    assert recs
    # with --json the text goes to stderr; a bad entry is one line of its own there
    notes = [ln for ln in p.stderr.splitlines() if "decoded-stream cache" in ln]
    return recs, p.stderr, "\n".join(notes)


def _entries(d: Path) -> list[Path]:
    return sorted(d.glob("*.plevc"))


def test_hit_gives_the_same_records(tmp_path):
    d = tmp_path / "cache"
    first, out1, err1 = _replay(d)
    assert "parsed and scored" in out1 and err1 == "", out1
    [entry] = _entries(d)
    again, out2, err2 = _replay(d)
    assert "decoded from the cache and scored" in out2 and err2 == ""
    assert again == first
    # cut: one line, a parse, the same records, and a good entry stored over it
    size = entry.stat().st_size
    with open(entry, "r+b") as f:
        f.truncate(size - 7)
    cut, out3, err3 = _replay(d)
    assert cut == first and "parsed and scored" in out3
    assert "size differs" in err3 and "\n" not in err3, err3
    assert entry.stat().st_size == size
    # one byte of the stream changed: its checksum
    with open(entry, "r+b") as f:
        f.seek(size - 5)
        b = f.read(1)
        f.seek(size - 5)
        f.write(bytes([b[0] ^ 0x40]))
    bad, _, err4 = _replay(d)
    assert bad == first and "stream checksum" in err4 and "\n" not in err4
    _, out5, err5 = _replay(d)
    assert "decoded from the cache" in out5 and err5 == ""


def test_cache_off_stores_nothing(tmp_path):
    d = tmp_path / "cache"
    _replay(d, "cache=0")
    assert not _entries(d)
    _replay(d, env={"PAGELAB_NO_CACHE": "1"})
    assert not _entries(d)
    # cache=1 says otherwise
    _replay(d, "cache=1", env={"PAGELAB_NO_CACHE": "1"})
    assert len(_entries(d)) == 1


def test_limit_keeps_nothing_larger(tmp_path):
    d = tmp_path / "cache"
    _replay(d, env={"PAGELAB_CACHE_MAX_MB": "0"})
    assert not _entries(d)


def test_cli_no_cache_reaches_the_engine(tmp_path, monkeypatch, capsys):
    d = tmp_path / "cache"
    monkeypatch.setenv("PAGELAB_CACHE_DIR", str(d))
    out = tmp_path / "r.json"
    assert main(["replay", str(TRACE), "--no-cache", "-o", str(out)]) == 0
    assert not _entries(d)
    ms = load_results(out)["measurements"]
    assert ms and all(m.params.get("cache") == "0" for m in ms)
    assert main(["replay", str(TRACE), "-o", str(out)]) == 0
    assert len(_entries(d)) == 1
    capsys.readouterr()
