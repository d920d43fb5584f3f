"""`pagelab trace record`: capture a real kernel's page-allocator trace.

  pagelab trace record [-o FILE] [--seconds N] [--buffer-kb KB] [-- CMD ...]

Needs root.  Mounts tracefs at /sys/kernel/tracing if it is not there, makes an
ftrace instance of its own (instances/pagelab-<pid>), enables exactly EVENTS
(plus the percpu events the kernel has), and drains the instance's trace_pipe
concurrently into a zstd file while the workload runs, so the ring buffer only
has to absorb the reader's latency.  The buffer is sized from the event rate
measured in a short probe, and at least 1/32 of memory per CPU (buffer_kb_for());
the reader thread and
zstd run at nice -10 so that a workload using every CPU cannot starve them.  /proc/{buddyinfo,pagetypeinfo,zoneinfo,vmstat,
meminfo} and the vm sysctls of SYSCTL_FILES are copied right before tracing
starts and right after it stops.

Invariants: whatever happens (CMD fails, Ctrl-C, SIGTERM, an I/O error) the
events this command enabled are disabled again and its instance is removed;
nothing outside the instance is changed except mounting tracefs.  Lost events
are counted from the per-CPU ring-buffer stats (overrun + dropped) and from
"[LOST N EVENTS]" markers in the stream, and written to the manifest and to
the trace's `# entries-in-buffer/entries-written` header, so every later report
can flag them.
"""
from __future__ import annotations

import datetime as _dt
import errno
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .trace_artifact import SNAPSHOT_FILES, SYSCTL_FILES, TraceError, is_archive, pack, write_manifest, FORMAT

TRACEFS = Path("/sys/kernel/tracing")
EVENTS = [
    "kmem/mm_page_alloc", "kmem/mm_page_free", "kmem/mm_page_free_batched",
    "kmem/mm_page_alloc_zone_locked", "kmem/mm_page_pcpu_drain", "kmem/mm_page_alloc_extfrag",
    "vmalloc/alloc_vmap_area", "vmalloc/free_vmap_area_noflush", "vmalloc/purge_vmap_area_lazy",
]
# Memory pressure: compaction's and migration's work and kswapd's and direct
# reclaim's windows, where the kernel has them (a replay and the kernel-side
# score read them; a trace without them still replays).
PRESSURE_EVENTS = [
    "migrate/mm_migrate_pages", "migrate/mm_migrate_pages_start",
    "vmscan/mm_vmscan_kswapd_wake", "vmscan/mm_vmscan_kswapd_sleep",
    "vmscan/mm_vmscan_wakeup_kswapd", "vmscan/mm_vmscan_direct_reclaim_begin",
    "vmscan/mm_vmscan_direct_reclaim_end",
]
OPTIONAL_SYSTEMS = ("percpu", "compaction")   # every event of these systems, where the kernel has them
REQUIRED = {"kmem/mm_page_alloc", "kmem/mm_page_free", "kmem/mm_page_alloc_zone_locked",
            "kmem/mm_page_pcpu_drain"}
TRACE_NAME = "trace.txt.zst"
BYTES_PER_EVENT = 64              # ring-buffer bytes per kmem event, header included, rounded up
MIN_BUFFER_KB = 32 * 1024         # per CPU, and at least 1/32 of memory per CPU ...
MAX_FLOOR_KB = 512 * 1024         # ... up to this much per CPU
DRAIN_NICE = -10                  # the reader and zstd must not starve behind the workload
HEADROOM_SECONDS = 8              # seconds of the probed rate x4 the buffer must absorb
LOST_RE = re.compile(rb"\[LOST (\d+) EVENTS\]")
ENTRIES_RE = re.compile(r"^# entries-in-buffer/entries-written: \d+/\d+", re.M)


def buffer_kb_for(per_cpu_rate: float, mem_kb: int, ncpu: int) -> int:
    """Per-CPU buffer_size_kb for a probed rate of @per_cpu_rate events/s per CPU.

    HEADROOM_SECONDS of 4x the probed rate, and at least a floor for the burst
    no probe sees: a process that exits frees all its memory on one CPU, two
    events a page (mm_page_free and its mm_page_pcpu_drain) in a second or two,
    faster than the reader turns them into text.  A 21 GiB python hog on this
    2-CPU, 24 GiB VM lost 7.7 M of 33 M events with 1/64 of memory over all CPUs
    (188 MiB per CPU) and none with 512 MiB per CPU.  So the floor is 1/32 of
    memory per CPU (two 64-byte events a page), at least MIN_BUFFER_KB, at most
    MAX_FLOOR_KB; and never more than 1/8 of memory over all CPUs (1 MiB per CPU
    at the least, on a machine of many CPUs and little memory).
    """
    ncpu = max(1, ncpu)
    want = int(per_cpu_rate * 4 * HEADROOM_SECONDS * BYTES_PER_EVENT / 1024)
    cap = max(1024, mem_kb // 8 // ncpu)
    floor = min(MAX_FLOOR_KB, cap, max(MIN_BUFFER_KB, mem_kb // 32))
    return min(cap, max(floor, want))


def _w(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def ensure_tracefs(root: Path = TRACEFS) -> Path:
    """Mount tracefs at @root unless it is already there; return @root."""
    if (root / "instances").is_dir():
        return root
    r = subprocess.run(["mount", "-t", "tracefs", "nodev", str(root)],
                       capture_output=True, text=True)
    if r.returncode or not (root / "instances").is_dir():
        raise TraceError(f"cannot mount tracefs at {root}: "
                         f"{(r.stderr.strip().splitlines() or ['no instances directory'])[-1]}")
    return root


def available_events(root: Path = TRACEFS) -> list[str]:
    """EVENTS and PRESSURE_EVENTS that this kernel has, plus every event of OPTIONAL_SYSTEMS."""
    ev = root / "events"
    have = [e for e in EVENTS + PRESSURE_EVENTS if (ev / e / "enable").exists()]
    missing = REQUIRED - set(have)
    if missing:
        raise TraceError(f"this kernel lacks the tracepoint {sorted(missing)[0]}")
    for system in OPTIONAL_SYSTEMS:
        d = ev / system
        if d.is_dir():
            have += sorted(f"{system}/{p.name}" for p in d.iterdir() if (p / "enable").exists())
    return have


def snapshot(dest: Path, proc: Path = Path("/proc")) -> None:
    """Copy the /proc reports of SNAPSHOT_FILES verbatim into @dest, and the
    vm sysctls of SYSCTL_FILES that this kernel has (the watermarks after a
    memory hotplug are computed from them). Everything is read before anything
    is written: a report that cannot be read leaves no partial snapshot."""
    files = {name: (proc / name).read_bytes() for name in SNAPSHOT_FILES}
    for name in SYSCTL_FILES:
        src = proc / "sys" / "vm" / name
        if src.is_file():
            files[name] = src.read_bytes()
    dest.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (dest / name).write_bytes(data)


def snapshot_cmd(dest: Path, proc: Path = Path("/proc")) -> Path:
    """`pagelab trace snapshot DIR`: the same snapshot as a recording's
    before/ and after/, for traces made by hand (perf record, trace-cmd).
    Take it inside the recorded command, right before and after the
    workload: perf allocates its ring buffers after it starts, and a
    snapshot taken before that is not the state the trace starts from.
    Refuses a DIR that already holds a snapshot file (nothing is changed)."""
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise TraceError(f"{dest} exists and is not a directory")
    taken = [n for n in SNAPSHOT_FILES + SYSCTL_FILES if (dest / n).exists()]
    if taken:
        raise TraceError(f"{dest} already holds a snapshot ({taken[0]}); give a new directory")
    try:
        snapshot(dest, proc)
    except OSError as e:
        if e.filename and Path(e.filename).is_relative_to(proc):   # snapshot() reads first
            raise TraceError(f"cannot read {e.filename}: {e.strerror or e}"
                             + (" (run as root)" if isinstance(e, PermissionError) else "")) from None
        raise TraceError(f"cannot write the snapshot in {dest}: {e.strerror or e}") from None
    return dest


def cpu_stats(inst: Path) -> dict[str, int]:
    """Sum of the per-CPU ring-buffer stats that count events."""
    tot = {"entries": 0, "overrun": 0, "dropped events": 0, "read events": 0}
    for cpu in sorted((inst / "per_cpu").glob("cpu*")):
        for line in (cpu / "stats").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in tot:
                tot[k] += int(v.split()[0])
    return tot


def mem_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    raise TraceError("/proc/meminfo has no MemTotal")


def _boost(tid: int) -> None:
    """Raise a reader thread's or zstd's priority (nice is per thread on Linux); best effort."""
    try:
        os.setpriority(os.PRIO_PROCESS, tid, DRAIN_NICE)
    except OSError:
        pass


class PipeDrain(threading.Thread):
    """Copy an instance's trace_pipe into `zstd` until stop() and the buffer is empty.

    Counts lines (events) and "[LOST N EVENTS]" markers on the way.  The pipe is
    read non-blocking so that stop() never waits on a read that cannot end.
    """

    def __init__(self, inst: Path, out: Path):
        super().__init__(name="pagelab-trace-drain", daemon=True)
        self.inst = inst
        self.out = open(out, "wb")
        self.z = subprocess.Popen(["zstd", "-q", "-1", "-c"], stdin=subprocess.PIPE, stdout=self.out)
        _boost(self.z.pid)
        self.fd = os.open(inst / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
        self.lines = 0
        self.lost_markers = 0        # events the markers say were lost
        self.marker_lines = 0        # lines that are markers, not events
        self.bytes = 0
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        tail = b""
        _boost(threading.get_native_id())
        try:
            while True:
                try:
                    chunk = os.read(self.fd, 1 << 20)
                except BlockingIOError:
                    chunk = b""
                if chunk:
                    self.z.stdin.write(chunk)
                    self.bytes += len(chunk)
                    self.lines += chunk.count(b"\n")
                    scan = tail + chunk
                    cut = scan.rfind(b"\n") + 1
                    found = LOST_RE.findall(scan[:cut])
                    self.lost_markers += sum(int(n) for n in found)
                    self.marker_lines += len(found)
                    tail = scan[cut:][-256:]
                    continue
                if self._halt.is_set() and cpu_stats(self.inst)["entries"] == 0:
                    break
                time.sleep(0.02)
        except BaseException as e:   # reported by finish(); the recorder cleans up
            self.error = e

    def abort(self) -> None:
        """On an error path: stop reading, release trace_pipe, kill zstd (never raises)."""
        self._halt.set()
        self.join(timeout=10)
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.z.poll() is None:
            self.z.kill()
            self.z.wait()
        self.out.close()

    def finish(self) -> None:
        """Stop after the ring buffer is empty; close zstd; re-raise a reader error."""
        self._halt.set()
        self.join()
        os.close(self.fd)
        self.fd = -1
        try:
            self.z.stdin.close()
        except OSError:
            pass
        rc = self.z.wait()
        self.out.close()
        if self.error:
            raise TraceError(f"reading trace_pipe failed: {self.error}")
        if rc:
            raise TraceError(f"zstd exited with status {rc} while writing the trace")


class Recorder:
    """One recording: instance setup, the run, the artifact, and the cleanup."""

    def __init__(self, root: Path = TRACEFS, buffer_kb: int | None = None):
        self.root = root
        self.inst = root / "instances" / f"pagelab-{os.getpid()}"
        self.enabled: list[str] = []
        self.buffer_kb = buffer_kb
        self.drain: PipeDrain | None = None

    # -- setup and teardown ---------------------------------------------------
    def setup(self) -> None:
        self.events = available_events(self.root)
        try:
            self.inst.mkdir()
        except FileExistsError:
            raise TraceError(f"{self.inst} already exists (another recording?)") from None
        _w(self.inst / "tracing_on", "0")
        for e in self.events:
            _w(self.inst / "events" / e / "enable", "1")
            self.enabled.append(e)
        if self.buffer_kb is None:
            self.buffer_kb = self._size_buffer()
        _w(self.inst / "buffer_size_kb", str(self.buffer_kb))
        self.buffer_kb = int((self.inst / "buffer_size_kb").read_text().split()[0])
        _w(self.inst / "trace", "")          # clear the probe's events
        self.header = (self.inst / "trace").read_text()

    def _size_buffer(self, probe_s: float = 0.3) -> int:
        """Per-CPU buffer_size_kb: HEADROOM_SECONDS of 4x the probed per-CPU rate."""
        _w(self.inst / "buffer_size_kb", str(MIN_BUFFER_KB))
        _w(self.inst / "trace", "")
        _w(self.inst / "tracing_on", "1")
        time.sleep(probe_s)
        _w(self.inst / "tracing_on", "0")
        st = cpu_stats(self.inst)
        ncpu = max(1, len(list((self.inst / "per_cpu").glob("cpu*"))))
        per_cpu_rate = (st["entries"] + st["overrun"] + st["dropped events"]) / probe_s / ncpu
        return buffer_kb_for(per_cpu_rate, mem_bytes() // 1024, ncpu)

    def cleanup(self) -> None:
        """Disable exactly the events we enabled and remove the instance (never raises)."""
        try:
            _w(self.inst / "tracing_on", "0")
        except OSError:
            pass
        if self.drain is not None and self.drain.fd >= 0:
            try:
                self.drain.abort()
            except Exception:
                pass
        for e in reversed(self.enabled):
            try:
                _w(self.inst / "events" / e / "enable", "0")
            except OSError:
                pass
        self.enabled.clear()
        for _ in range(50):
            try:
                self.inst.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError as e:         # EBUSY while a reader still holds trace_pipe
                if e.errno != errno.EBUSY:
                    break
                time.sleep(0.1)

    # -- the run ---------------------------------------------------------------
    def record(self, workdir: Path, seconds: float | None, command: list[str] | None) -> dict:
        stats0 = cpu_stats(self.inst)
        body = workdir / "trace.body.zst"
        self.drain = PipeDrain(self.inst, body)
        self.drain.start()
        snapshot(workdir / "before")
        t0 = time.monotonic()
        _w(self.inst / "tracing_on", "1")
        status, interrupted = None, False
        try:
            status = run_workload(seconds, command)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            _w(self.inst / "tracing_on", "0")
            elapsed = time.monotonic() - t0
            snapshot(workdir / "after")
        self.drain.finish()
        stats1 = cpu_stats(self.inst)
        d = {k: stats1[k] - stats0[k] for k in stats1}
        ring_lost = d["overrun"] + d["dropped events"]
        captured = self.drain.lines - self.drain.marker_lines
        lost = max(ring_lost, self.drain.lost_markers)
        written = captured + lost
        header = ENTRIES_RE.sub(f"# entries-in-buffer/entries-written: {captured}/{written}",
                                self.header, count=1)
        trace = workdir / TRACE_NAME
        with open(trace, "wb") as out:
            subprocess.run(["zstd", "-q", "-c"], input=header.encode(), stdout=out, check=True)
            with open(body, "rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
        body.unlink()
        return {
            "format": FORMAT, "kernel": platform.release(),
            "nr_cpus": os.sysconf("SC_NPROCESSORS_ONLN"), "mem_bytes": mem_bytes(),
            "seconds": round(elapsed, 3), "command": command, "events": list(self.events),
            "buffer_size_kb": self.buffer_kb, "entries_in_buffer": captured,
            "entries_written": written, "lost_events": lost, "trace": TRACE_NAME,
            "before": "before", "after": "after", "command_status": status,
            "interrupted": interrupted,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }


def run_workload(seconds: float | None, command: list[str] | None) -> int | None:
    """Run @command (until it exits, or @seconds), or just sleep @seconds; Ctrl-C ends it.

    Returns the command's exit status (None without a command).
    """
    if not command:
        if seconds is None:
            print("pagelab: recording; Ctrl-C to stop", file=sys.stderr)
            while True:
                time.sleep(3600)
        time.sleep(seconds)
        return None
    try:
        # its own process group, so that stopping it reaches make's children too
        proc = subprocess.Popen(command, process_group=0)
    except OSError as e:
        raise TraceError(f"cannot run {command[0]}: {e.strerror}") from None
    try:
        return proc.wait(timeout=seconds)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        _signal_group(proc, signal.SIGINT)
    try:
        return proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        return proc.wait()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def default_output() -> Path:
    return Path(_dt.datetime.now().strftime("trace-%Y%m%d-%H%M%S.pltrace"))


def record(output: Path | None, seconds: float | None, command: list[str] | None,
           buffer_kb: int | None = None, root: Path = TRACEFS) -> tuple[Path, dict]:
    """Record a trace artifact at @output (a directory, or .tar.gz/.tar.zst); return it and its manifest."""
    if output is not None and str(output) == "":
        raise TraceError("-o: an empty path names no artifact")
    if os.geteuid() != 0:
        raise TraceError("trace record needs root (tracefs and its instances are root-only)")
    if seconds is not None and not seconds > 0:
        raise TraceError("--seconds must be positive")
    if buffer_kb is not None and buffer_kb < 64:
        raise TraceError("--buffer-kb must be at least 64")
    if not shutil.which("zstd"):
        raise TraceError("zstd not found (apt-get install zstd)")
    out = Path(output) if output else default_output()
    if out.exists():
        raise TraceError(f"{out} already exists")
    if not out.parent.is_dir():
        raise TraceError(f"{out.parent}: no such directory")
    ensure_tracefs(root)
    if is_archive(out):
        stem = out.name
        for suf in (".tar.gz", ".tgz", ".tar.zst"):
            stem = stem.removesuffix(suf)
        tmp = Path(tempfile.mkdtemp(prefix=".pagelab-rec-", dir=out.parent))
        workdir = tmp / (stem if stem.endswith(".pltrace") else stem + ".pltrace")
    else:
        tmp, workdir = None, out
    workdir.mkdir()
    rec = Recorder(root, buffer_kb)
    old_term = signal.signal(signal.SIGTERM, _sigterm)
    try:
        rec.setup()
        manifest = rec.record(workdir, seconds, command)
        write_manifest(workdir, manifest)
        if tmp is not None:
            pack(workdir, out)
    except BaseException as e:
        shutil.rmtree(tmp if tmp is not None else workdir, ignore_errors=True)
        if isinstance(e, OSError):
            raise TraceError(f"tracefs or /proc: {e.strerror or e} "
                             f"({getattr(e, 'filename', None) or 'no file'})") from None
        raise
    finally:
        rec.cleanup()
        signal.signal(signal.SIGTERM, old_term)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    return out, manifest


def _sigterm(signum, frame):
    raise KeyboardInterrupt


def summary(path: Path, m: dict) -> str:
    lost = m["lost_events"]
    flag = f"LOST {lost} EVENTS: replays of this trace are flagged" if lost else "no events lost"
    return (f"{path}: {m['entries_in_buffer']} events in {m['seconds']:.1f} s "
            f"on {m['nr_cpus']} CPUs, buffer {m['buffer_size_kb']} KB/CPU; {flag}")
