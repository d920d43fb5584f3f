"""A recorded trace artifact (CONTRACT-13.md): NAME.pltrace/ with manifest.json.

The artifact is a directory holding
  manifest.json   format "pagelab-trace/1": kernel, nr_cpus, mem_bytes, seconds,
                  command, events, buffer_size_kb, entries_in_buffer,
                  entries_written, lost_events, trace (file name), before, after
  before/ after/  buddyinfo pagetypeinfo zoneinfo vmstat meminfo, verbatim
  the trace file  raw tracefs `trace` text, header kept (plain or .zst/.gz/.xz)
and may be packed as NAME.pltrace.tar.gz or NAME.pltrace.tar.zst.

This module writes and checks manifests and packs/unpacks archives; it never
parses trace events (the C engine, pagelab-bench replay, does).  Every
problem with an artifact raises TraceError with a one-line message.
"""
from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Iterator

from . import files
from .validate import ValidationError

FORMAT = "pagelab-trace/1"
SNAPSHOT_FILES = ("buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat", "meminfo")
# /proc/sys/vm settings that shape the watermarks and PCPs, copied next to the
# reports where the kernel has them; optional (older recordings lack them).
SYSCTL_FILES = ("min_free_kbytes", "watermark_scale_factor", "watermark_boost_factor",
                "percpu_pagelist_high_fraction")
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.zst")
# A manifest is a few hundred bytes; an archive unpacks to its trace (itself
# compressed) and snapshots: more than this is no trace artifact.
MANIFEST_MAX_BYTES = 1 << 20
ARCHIVE_MAX_BYTES = 16 << 30
MANIFEST_KEYS = {
    "format": str, "kernel": str, "nr_cpus": int, "mem_bytes": int, "seconds": (int, float),
    "events": list, "buffer_size_kb": int, "entries_in_buffer": int, "entries_written": int,
    "lost_events": int, "trace": str, "before": str, "after": str,
}


class TraceError(RuntimeError):
    """A trace artifact is missing, malformed, or cannot be written."""


def write_manifest(directory: Path, manifest: dict) -> Path:
    """Check @manifest against the contract and write DIRECTORY/manifest.json."""
    check_manifest(manifest)
    path = Path(directory) / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return path


def check_manifest(m: object) -> dict:
    """Raise TraceError unless @m is a pagelab-trace/1 manifest; return it."""
    if not isinstance(m, dict):
        raise TraceError("manifest.json is not a JSON object")
    if m.get("format") != FORMAT:
        raise TraceError(f"manifest.json: format is {m.get('format')!r}, expected '{FORMAT}'")
    for key, typ in MANIFEST_KEYS.items():
        if key not in m:
            raise TraceError(f"manifest.json: missing '{key}'")
        if not isinstance(m[key], typ) or isinstance(m[key], bool):
            raise TraceError(f"manifest.json: '{key}' has the wrong type")
    if m["command"] is not None and not (isinstance(m["command"], list)
                                         and all(isinstance(a, str) for a in m["command"])):
        raise TraceError("manifest.json: 'command' must be a list of strings or null")
    if m["lost_events"] < 0 or m["nr_cpus"] < 1:
        raise TraceError("manifest.json: negative lost_events or no CPUs")
    for key in ("trace", "before", "after"):
        if "/" in m[key] or m[key] in ("", ".", ".."):
            raise TraceError(f"manifest.json: '{key}' must be a plain name inside the artifact")
    # optional keys (older artifacts lack them): when there, of their own kind
    pid = m.get("command_pid")
    if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int) or
                            not 1 <= pid <= (1 << 22)):
        raise TraceError("manifest.json: 'command_pid' must be a pid (1..4194304) or null")
    if m.get("trace_format", "text") not in ("text", "trace.dat"):
        raise TraceError("manifest.json: 'trace_format' must be 'text' or 'trace.dat'")
    return m


def load_manifest(directory: Path) -> dict:
    """Read and check DIRECTORY/manifest.json and that the files it names exist."""
    path = Path(directory) / "manifest.json"
    if not path.exists() and not path.is_symlink():
        raise TraceError(f"{directory}: no manifest.json (not a pagelab trace artifact)")
    try:
        m = json.loads(files.read_text(path, MANIFEST_MAX_BYTES))
    except ValidationError as e:
        raise TraceError(str(e)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise TraceError(f"{path}: unreadable manifest ({e.__class__.__name__})") from None
    check_manifest(m)
    if not (Path(directory) / m["trace"]).is_file():
        raise TraceError(f"{directory}: trace file '{m['trace']}' is missing")
    for snap in (m["before"], m["after"]):
        for name in SNAPSHOT_FILES:
            if not (Path(directory) / snap / name).is_file():
                raise TraceError(f"{directory}: snapshot file {snap}/{name} is missing")
    return m


def is_archive(path: Path) -> bool:
    return str(path).endswith(ARCHIVE_SUFFIXES)


def pack(directory: Path, archive: Path) -> Path:
    """Pack artifact DIRECTORY as ARCHIVE (.tar.gz or .tar.zst), one top-level dir."""
    directory, archive = Path(directory), Path(archive)
    load_manifest(directory)
    if str(archive).endswith((".tar.gz", ".tgz")):
        with tarfile.open(archive, "w:gz") as tf:
            tf.add(directory, arcname=directory.name)
    elif str(archive).endswith(".tar.zst"):
        with open(archive, "wb") as out:
            tar = subprocess.Popen(["tar", "-C", str(directory.parent), "-cf", "-", directory.name],
                                   stdout=subprocess.PIPE)
            z = subprocess.run(["zstd", "-q", "-c"], stdin=tar.stdout, stdout=out)
            tar.stdout.close()
            if tar.wait() or z.returncode:
                raise TraceError(f"{archive}: tar | zstd failed")
    else:
        raise TraceError(f"{archive}: archive name must end in .tar.gz or .tar.zst")
    return archive


def _safe_members(tf: tarfile.TarFile, where: Path) -> list[tarfile.TarInfo]:
    """Members of a trace archive: regular files and dirs only, all inside @where."""
    out = []
    root = where.resolve()
    for m in tf.getmembers():
        if not (m.isfile() or m.isdir()):
            raise TraceError(f"archive member '{m.name}' is not a plain file or directory")
        dest = (where / m.name).resolve()
        if dest != root and root not in dest.parents:
            raise TraceError(f"archive member '{m.name}' points outside the archive")
        out.append(m)
    return out


def _unzstd_capped(archive: Path, out) -> None:
    """zstd -d of @archive into @out, stopped past ARCHIVE_MAX_BYTES (no disk filled)."""
    with subprocess.Popen(["zstd", "-q", "-d", "-c", str(archive)], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as z:
        n = 0
        while chunk := z.stdout.read(1 << 20):
            n += len(chunk)
            if n > ARCHIVE_MAX_BYTES:
                z.kill()
                raise TraceError(f"{archive}: unpacks to more than {ARCHIVE_MAX_BYTES >> 30} GiB")
            out.write(chunk)
        if z.wait():
            raise TraceError(f"{archive}: not a zstd archive")


def unpack(archive: Path, where: Path) -> Path:
    """Unpack ARCHIVE under WHERE; return the artifact directory inside it."""
    archive, where = Path(archive), Path(where)
    if not archive.is_file():
        raise TraceError(f"{archive}: no such file")
    try:
        if str(archive).endswith(".tar.zst"):
            tarpath = where / "artifact.tar"
            with open(tarpath, "wb") as out:
                _unzstd_capped(archive, out)
            tf = tarfile.open(tarpath, "r:")
        else:
            tf = tarfile.open(archive, "r:*")
        with tf:
            members = _safe_members(tf, where)
            if sum(m.size for m in members) > ARCHIVE_MAX_BYTES:
                raise TraceError(f"{archive}: unpacks to more than {ARCHIVE_MAX_BYTES >> 30} GiB")
            tf.extractall(where, members=members)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise TraceError(f"{archive}: not a readable trace archive ({e.__class__.__name__})") from None
    with contextlib.suppress(FileNotFoundError):
        (where / "artifact.tar").unlink()
    found = [p.parent for p in where.glob("*/manifest.json")] + \
            [p.parent for p in where.glob("manifest.json")]
    if len(found) != 1:
        raise TraceError(f"{archive}: expected one artifact directory with manifest.json inside")
    load_manifest(found[0])
    return found[0]


@contextlib.contextmanager
def opened(path: Path) -> Iterator[tuple[Path, dict | None]]:
    """Yield (path for pagelab-bench, manifest or None) for a trace argument.

    An archive is unpacked into a temporary directory removed afterwards; an
    artifact directory is checked; any other existing file is passed through
    as a bare trace (the C engine reads the three text formats).
    """
    path = Path(path)
    if path.is_dir():
        yield path, load_manifest(path)
    elif is_archive(path):
        tmp = Path(tempfile.mkdtemp(prefix="pagelab-trace-"))
        try:
            d = unpack(path, tmp)
            yield d, load_manifest(d)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        try:
            yield files.check_input(path), None     # a regular file: no FIFO or device
        except ValidationError as e:
            raise TraceError(str(e)) from None
    else:
        raise TraceError(f"{path}: no such trace file or artifact")
