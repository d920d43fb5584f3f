"""`pagelab trace convert IN OUT`: a trace in another of the formats pagelab reads.

IN is an artifact (directory or archive) or a bare trace (trace.dat, tracefs,
trace-cmd or perf text).  OUT is raw tracefs text, pagelab's text format
(OUT.txt, or OUT.txt.zst compressed), or, for an artifact IN, a new artifact
directory OUT.pltrace whose trace is that text (manifest and snapshots
copied).  The C engine (`pagelab-bench trace_convert`) reads and writes the
events; what the text reader gives back is event for event what IN gives,
except the forks (a converted trace credits the recorded command with its own
pid's events only) and events pagelab does not read.  Text cannot become a
trace.dat: it lacks the event formats that a trace.dat carries.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from .runner import BenchError, bench_binary
from .trace_artifact import TraceError, load_manifest, opened, write_manifest


def _engine(src: Path, dest: Path) -> dict:
    try:
        bench = bench_binary()
    except BenchError as e:
        raise TraceError(str(e)) from None
    r = subprocess.run([bench, "trace_convert", f"trace={src}", f"out={dest}"],
                       capture_output=True, text=True)
    if r.returncode:
        lines = (r.stderr.strip() or r.stdout.strip()).splitlines()
        raise TraceError(lines[-1].removeprefix("pagelab-bench: ") if lines else
                         f"pagelab-bench trace_convert exited with {r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _write_text(src: Path, out: Path) -> dict:
    """@src as text at @out (zstd-compressed when @out ends in .zst)."""
    if out.suffix == ".dat":
        raise TraceError(f"{out}: pagelab writes text only (a trace.dat needs the kernel's "
                         "event formats, which text does not carry)")
    if out.suffix == ".zst":
        if not shutil.which("zstd"):
            raise TraceError("zstd not found (apt-get install zstd)")
        with tempfile.TemporaryDirectory(prefix="pagelab-convert-") as t:
            plain = Path(t) / "trace.txt"
            res = _engine(src, plain)
            if subprocess.run(["zstd", "-q", "-f", str(plain), "-o", str(out)]).returncode:
                raise TraceError(f"{out}: zstd failed")
            return res
    return _engine(src, out)


def convert(src: Path, out: Path) -> tuple[dict, Path]:
    """Convert @src into @out; return the engine's counts and what was written."""
    src, out = Path(src), Path(out)
    if out.exists():
        raise TraceError(f"{out} already exists")
    if not out.parent.is_dir():
        raise TraceError(f"{out.parent}: no such directory")
    with opened(src) as (path, manifest):
        if manifest is None:
            return _write_text(path, out), out
        if out.suffix != ".pltrace":
            return _write_text(path / manifest["trace"], out), out
        out.mkdir()
        try:
            res = _write_text(path / manifest["trace"], out / "trace.txt.zst")
            for snap in (manifest["before"], manifest["after"]):
                shutil.copytree(path / snap, out / snap)
            write_manifest(out, {**manifest, "trace": "trace.txt.zst", "trace_format": "text",
                                 "converted_from": manifest.get("trace_format", "text")})
            load_manifest(out)
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise
        return res, out


def cli(args) -> int:
    res, out = convert(args.input, args.output)
    lost = f", {res['lost_events']} lost" if res["lost_events"] else ""
    print(f"{out}: {res['events']} events{lost}")
    return 0
