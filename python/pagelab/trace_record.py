"""`pagelab trace record`: capture a real kernel's page-allocator trace.

  pagelab trace record [-o FILE] [--seconds N] [--buffer-kb KB] [-- CMD ...]

Needs root.  Mounts tracefs at /sys/kernel/tracing if it is not there (and
unmounts it afterwards), makes an ftrace instance of its own
(instances/pagelab-<pid>), enables exactly EVENTS (plus the percpu events and
sched_process_fork where the kernel has them) and has `pagelab-bench
trace_record` move the instance's per-CPU ring-buffer pages, in binary, with
splice(2), into a trace-cmd trace.dat while the workload runs: no text is made
or parsed during the recording, so the recorder takes next to no CPU from the
workload, and the buffer is empty within a poll interval of the workload's end.
The recorder's own tasks (this process and the drain's threads) are kept out of
the trace by the instance's set_event_notrace_pid, and listed in the manifest.
/proc/{buddyinfo,pagetypeinfo,zoneinfo,vmstat,meminfo} and the vm sysctls of
SYSCTL_FILES are copied right before tracing starts and right after it stops.

Invariants: whatever happens (CMD fails, Ctrl-C, SIGTERM, an I/O error) the
events this command enabled are disabled again, its instance is removed, and
tracefs is unmounted if this command mounted it; nothing outside the instance
is changed.  Lost events are counted from the per-CPU ring-buffer stats
(overrun + dropped) and from the pages' lost-event marks, and written to the
manifest, so every later report can flag them.
"""
from __future__ import annotations

import datetime as _dt
import contextlib
import errno
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .runner import BenchError, bench_binary
from .trace_info import bench_info
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
# who forked whom: the recorded command's tasks are its pid and its descendants
OPTIONAL_EVENTS = ("sched/sched_process_fork",)
REQUIRED = {"kmem/mm_page_alloc", "kmem/mm_page_free", "kmem/mm_page_alloc_zone_locked",
            "kmem/mm_page_pcpu_drain"}
TRACE_NAME = "trace.dat"
BYTES_PER_EVENT = 64              # ring-buffer bytes per kmem event, header included, rounded up
MIN_BUFFER_KB = 16 * 1024         # per CPU, and at least 1/256 of memory per CPU ...
MAX_FLOOR_KB = 64 * 1024          # ... up to this much per CPU
SCRATCH = "/dev/shm"              # where the drain keeps the pages until the trace.dat is written
HEADROOM_SECONDS = 2              # seconds of the probed rate x4 the buffer must absorb
MAX_SECONDS = 86400               # --seconds: a recording of at most a day


def buffer_kb_for(per_cpu_rate: float, mem_kb: int, ncpu: int) -> int:
    """Per-CPU buffer_size_kb for a probed rate of @per_cpu_rate events/s per CPU.

    HEADROOM_SECONDS of 4x the probed rate, and at least a floor for the burst
    no probe sees: a process that exits frees all its memory on one CPU, two
    events a page (mm_page_free and its mm_page_pcpu_drain) in a second or two.
    The binary drain moves whole pages with splice as fast as memory copies, so
    the buffer only has to cover one poll interval of that burst, not (as the
    text reader it replaced needed) seconds of it: the floor is 1/256 of memory
    per CPU, at least MIN_BUFFER_KB, at most MAX_FLOOR_KB; and never more than
    1/8 of memory over all CPUs (1 MiB per CPU at the least, on a machine of
    many CPUs and little memory).
    """
    ncpu = max(1, ncpu)
    want = int(per_cpu_rate * 4 * HEADROOM_SECONDS * BYTES_PER_EVENT / 1024)
    cap = max(1024, mem_kb // 8 // ncpu)
    floor = min(MAX_FLOOR_KB, cap, max(MIN_BUFFER_KB, mem_kb // 256))
    return min(cap, max(floor, want))


def max_buffer_kb() -> int:
    """The largest --buffer-kb: buffer_kb_for()'s cap, 1/8 of memory over all CPUs."""
    return max(1024, mem_bytes() // 1024 // 8 // max(1, os.cpu_count() or 1))


def _w(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def ensure_tracefs(root: Path = TRACEFS) -> bool:
    """Mount tracefs at @root unless it is already there; True if this call mounted it."""
    if (root / "instances").is_dir():
        return False
    r = subprocess.run(["mount", "-t", "tracefs", "nodev", str(root)],
                       capture_output=True, text=True)
    if r.returncode or not (root / "instances").is_dir():
        raise TraceError(f"cannot mount tracefs at {root}: "
                         f"{(r.stderr.strip().splitlines() or ['no instances directory'])[-1]}")
    return True


def unmount_tracefs(root: Path = TRACEFS) -> None:
    """Undo ensure_tracefs()'s mount (never raises: a busy tracefs stays, said on stderr)."""
    r = subprocess.run(["umount", str(root)], capture_output=True, text=True)
    if r.returncode:
        print(f"pagelab: could not unmount {root} (mounted for this recording): "
              f"{(r.stderr.strip().splitlines() or ['busy'])[-1]}", file=sys.stderr)


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
    have += [e for e in OPTIONAL_EVENTS if (ev / e / "enable").exists()]
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


def _tids(pid: int) -> list[int]:
    """The threads of process @pid (its own pid first)."""
    try:
        return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return [pid]


class BinaryDrain:
    """`pagelab-bench trace_record`: the instance's per-CPU pages into a trace.dat.

    It prints "ready PID" once every CPU's trace_pipe_raw is open and stops when
    its standard input closes; the caller turns tracing off first.
    """

    def __init__(self, inst: Path, out: Path, events: list[str], root: Path):
        try:
            bench = bench_binary()
        except BenchError as e:
            raise TraceError(str(e)) from None
        self.out = out
        argv = [bench, "trace_record", f"instance={inst}", f"out={out}",
                f"events={','.join(events)}", f"tracefs={root}"]
        if os.access(SCRATCH, os.W_OK):     # tmpfs: no disk writeback during the workload
            argv.append(f"scratch={SCRATCH}")
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            err = self.proc.stderr.read().strip().splitlines()
            self.proc.wait()
            raise TraceError(err[-1] if err else "pagelab-bench trace_record did not start")
        # no priority boost: the drain wakes a few times a second and moves pages
        # without copying them, where the text reader needed -10 to keep up
        self.pids = _tids(self.proc.pid)

    def finish(self) -> float:
        """Stop (tracing is off), wait for the trace.dat; return the seconds it took."""
        t0 = time.monotonic()
        out, err = self.proc.communicate()     # closes its stdin: the drain's signal to stop
        if self.proc.returncode:
            lines = err.strip().splitlines()
            raise TraceError(lines[-1] if lines else
                             f"pagelab-bench trace_record exited with {self.proc.returncode}")
        return time.monotonic() - t0

    def abort(self) -> None:
        """On an error path: stop the drain (never raises); it removes its own scratch files."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        with contextlib.suppress(OSError):
            self.out.unlink()


class Recorder:
    """One recording: instance setup, the run, the artifact, and the cleanup."""

    def __init__(self, root: Path = TRACEFS, buffer_kb: int | None = None):
        self.root = root
        self.inst = root / "instances" / f"pagelab-{os.getpid()}"
        self.enabled: list[str] = []
        self.buffer_kb = buffer_kb
        self.drain: BinaryDrain | None = None

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
        if self.drain is not None:
            try:
                self.drain.abort()
            except Exception:
                pass
            self.drain = None
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
            except OSError as e:         # EBUSY while a reader still holds a buffer
                if e.errno != errno.EBUSY:
                    break
                time.sleep(0.1)

    # -- the run ---------------------------------------------------------------
    def record(self, workdir: Path, seconds: float | None, command: list[str] | None) -> dict:
        trace = workdir / TRACE_NAME
        self.drain = BinaryDrain(self.inst, trace, self.events, self.root)
        # the recorder's own tasks stay out of the trace: this process and the drain's threads
        recorder = [os.getpid()] + self.drain.pids
        _w(self.inst / "set_event_notrace_pid", " ".join(str(p) for p in recorder))
        stats0 = cpu_stats(self.inst)
        snapshot(workdir / "before")
        started: list[int] = []
        t0 = time.monotonic()
        _w(self.inst / "tracing_on", "1")
        status, interrupted = None, False
        try:
            status = run_workload(seconds, command, started)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            _w(self.inst / "tracing_on", "0")
            elapsed = time.monotonic() - t0
            snapshot(workdir / "after")
        drain_s = self.drain.finish()
        self.drain = None
        stats1 = cpu_stats(self.inst)
        d = {k: stats1[k] - stats0[k] for k in stats1}
        info = bench_info(trace)
        lost = max(d["overrun"] + d["dropped events"], info["lost_events"])
        return {
            "format": FORMAT, "kernel": platform.release(),
            "nr_cpus": os.sysconf("SC_NPROCESSORS_ONLN"), "mem_bytes": mem_bytes(),
            "seconds": round(elapsed, 3), "command": command, "events": list(self.events),
            "buffer_size_kb": self.buffer_kb, "entries_in_buffer": info["records"],
            "entries_written": info["records"] + lost, "lost_events": lost, "trace": TRACE_NAME,
            "trace_format": "trace.dat", "before": "before", "after": "after",
            "command_status": status, "command_pid": started[0] if started else None,
            "recorder_pids": recorder, "drain_seconds": round(drain_s, 3),
            "interrupted": interrupted,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }


def run_workload(seconds: float | None, command: list[str] | None,
                 started: list[int] | None = None) -> int | None:
    """Run @command (until it exits, or @seconds), or just sleep @seconds; Ctrl-C ends it.

    Returns the command's exit status (None without a command); its pid is
    appended to @started.
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
    if started is not None:
        started.append(proc.pid)
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
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))):
        raise TypeError(f"seconds: a number, not {type(seconds).__name__}")
    if seconds is not None and not seconds > 0:
        raise TraceError("--seconds must be positive")
    if seconds is not None and not seconds <= MAX_SECONDS:     # inf
        raise TraceError(f"--seconds {seconds}: at most {MAX_SECONDS} (a day)")
    if buffer_kb is not None and (isinstance(buffer_kb, bool) or not isinstance(buffer_kb, int)):
        raise TypeError(f"buffer_kb: an int, not {type(buffer_kb).__name__}")
    if buffer_kb is not None and buffer_kb < 64:
        raise TraceError("--buffer-kb must be at least 64")
    if buffer_kb is not None and buffer_kb > max_buffer_kb():
        raise TraceError(f"--buffer-kb {buffer_kb}: more than 1/8 of memory over the CPUs "
                         f"(at most {max_buffer_kb()} per CPU here)")
    out = Path(output) if output else default_output()
    if out.exists():
        raise TraceError(f"{out} already exists")
    if not out.parent.is_dir():
        raise TraceError(f"{out.parent}: no such directory")
    if is_archive(out) and str(out).endswith(".tar.zst") and not shutil.which("zstd"):
        raise TraceError("zstd not found (apt-get install zstd)")
    mounted = ensure_tracefs(root)
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
        if mounted:
            unmount_tracefs(root)
        signal.signal(signal.SIGTERM, old_term)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    return out, manifest


def _sigterm(signum, frame):
    raise KeyboardInterrupt


def summary(path: Path, m: dict) -> str:
    lost = m["lost_events"]
    flag = f"LOST {lost} EVENTS: replays of this trace are flagged" if lost else "no events lost"
    drain = f", drained {m['drain_seconds']:.2f} s after" if "drain_seconds" in m else ""
    return (f"{path}: {m['entries_in_buffer']} events in {m['seconds']:.1f} s{drain} "
            f"on {m['nr_cpus']} CPUs, buffer {m['buffer_size_kb']} KB/CPU; {flag}")
