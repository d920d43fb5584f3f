"""Run pagelab-bench, collect its JSON lines, and save them with machine info.

Designs are run interleaved (A B A B ...), one process per (rep, design), so
that drift on the host falls on every design alike.  Suites that take a
design list themselves (pagetypeinfo) can instead run all designs in one
process per rep (``together=True``); the order is then reversed on odd reps.

A results file is one JSON document: {"format", "created", "command",
"machine": {cpu, cores, kernel, compiler, commit, ...}, "measurements": [...]}.
load_results() also reads the older JSON-lines files.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from . import validate

FORMAT = "pagelab-results/1"
REPO = Path(__file__).resolve().parents[2]


class BenchError(RuntimeError):
    """pagelab-bench refused the request (unknown suite, design or parameter)."""


def bench_binary() -> str:
    """Locate pagelab-bench: $PAGELAB_BENCH, ./build, or $PATH."""
    env = os.environ.get("PAGELAB_BENCH")
    if env:
        return env
    here = REPO / "build" / "pagelab-bench"
    if here.exists():
        return str(here)
    found = shutil.which("pagelab-bench")
    if found:
        return found
    raise BenchError("pagelab-bench not found: build it with `make build` or set PAGELAB_BENCH")


@dataclass
class Measurement:
    suite: str
    test: str
    design: str
    rep: int
    value: float
    unit: str
    params: dict = field(default_factory=dict)
    counters: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, rec: dict) -> "Measurement":
        """From a JSON record; keys a newer pagelab-bench adds are ignored."""
        known = {k: rec[k] for k in cls.__dataclass_fields__ if k in rec}
        return cls(**known)


def _one_line_error(stderr: str, default: str) -> str:
    lines = [x for x in stderr.strip().splitlines() if x.strip()]
    msg = lines[-1] if lines else default
    return msg.removeprefix("pagelab-bench: ")


def list_suites() -> list[str]:
    """The suites this pagelab-bench knows (from its --help)."""
    try:
        proc = subprocess.run([bench_binary(), "--help"], capture_output=True, text=True,
                              errors="replace", timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise BenchError(f"cannot run pagelab-bench ({bench_binary()}): {e}") from None
    return re.findall(r"^  (\S+) ", proc.stdout, flags=re.M)


def suite_keys() -> dict[str, list[str]]:
    """Every suite's keys, from pagelab-bench --keys (one 'suite key kind ...' per line)."""
    try:
        proc = subprocess.run([bench_binary(), "--keys"], capture_output=True, text=True,
                              errors="replace", timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise BenchError(f"cannot run pagelab-bench ({bench_binary()}): {e}") from None
    if proc.returncode != 0:
        raise BenchError(f"{bench_binary()} --keys failed (exit {proc.returncode})")
    keys: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            keys.setdefault(parts[0], []).append(parts[1])
    if not keys:
        raise BenchError(f"{bench_binary()} is not pagelab-bench (--keys lists no suites)")
    return keys


def run_raw(suite: str, params: dict[str, str], json_out: bool = True) -> str:
    """One pagelab-bench process; its stdout. Raises BenchError on refusal."""
    args = [bench_binary(), suite] + [f"{k}={v}" for k, v in params.items()]
    if json_out:
        args.append("--json")
    try:
        proc = subprocess.run(args, capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise BenchError(f"cannot run pagelab-bench ({args[0]}): {e.strerror or e}") from None
    if proc.returncode == 2:
        raise BenchError(_one_line_error(proc.stderr, "bad request"))
    if proc.returncode != 0:
        raise BenchError(f"{suite} failed (exit {proc.returncode}): "
                         f"{_one_line_error(proc.stderr, 'no message')}")
    return proc.stdout


def run_once(suite: str, params: dict[str, str], design: str | None = None) -> list[Measurement]:
    """One pagelab-bench process; returns its measurements."""
    p = dict(params)
    if design is not None:
        p["design"] = design
    out = []
    for line in run_raw(suite, p).splitlines():
        if line.strip():
            try:
                rec = validate.loads(line, suite)
                validate.measurement(rec, f"{bench_binary()} {suite}")
            except ValueError:
                raise BenchError(f"{bench_binary()} {suite}: output is not pagelab-bench's "
                                 "JSON lines") from None
            out.append(Measurement.from_dict(rec))
    return out


class Progress:
    """A one-line progress bar on stderr, drawn only on a terminal.

    Set PAGELAB_PROGRESS=1 to force it (or 0 to silence it).
    """

    def __init__(self, total: int, label: str = "", stream=None, enabled: bool | None = None):
        self.total, self.label, self.done = max(total, 1), label, 0
        self.stream = stream or sys.stderr
        force = os.environ.get("PAGELAB_PROGRESS")
        if enabled is None:
            enabled = force == "1" or (force != "0" and self.stream.isatty())
        self.enabled = enabled
        self.t0 = time.monotonic()

    def step(self, what: str = "") -> None:
        self.done += 1
        if not self.enabled:
            return
        width = 24
        fill = width * self.done // self.total
        elapsed = time.monotonic() - self.t0
        eta = elapsed / self.done * (self.total - self.done)
        self.stream.write(f"\r{self.label} [{'#' * fill}{'.' * (width - fill)}] "
                          f"{self.done}/{self.total} {what[:30]:<30} {elapsed:5.0f}s, ~{eta:4.0f}s left")
        if self.done >= self.total:
            self.stream.write("\r" + " " * 100 + "\r")
        self.stream.flush()


def run_interleaved(suite: str, params: dict[str, str], designs: list[str], reps: int,
                    together: bool = False, label: str | None = None) -> list[Measurement]:
    """Run every design @reps times in the order A B A B ...; rep numbers are ours.

    With @together, each rep is one process given the whole design list
    (A,B on even reps, B,A on odd ones).
    """
    results: list[Measurement] = []
    steps = reps if together else reps * len(designs)
    bar = Progress(steps, label or suite)
    for rep in range(reps):
        if together:
            order = designs if rep % 2 == 0 else designs[::-1]
            batches = [",".join(order)]
        else:
            batches = list(designs)
        for d in batches:
            for m in run_once(suite, params, d):
                m.rep = rep
                results.append(m)
            bar.step(f"rep {rep + 1}/{reps} {d}")
    return results


def _first_line(cmd: list[str]) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.splitlines()[0].strip() if out.strip() else None


def _compiler() -> str | None:
    cache = REPO / "build" / "CMakeCache.txt"
    cc = "cc"
    if cache.exists():
        m = re.search(r"^CMAKE_C_COMPILER:\w+=(.+)$", cache.read_text(errors="replace"), re.M)
        if m:
            cc = m.group(1).strip()
    return _first_line([cc, "--version"])


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict:
    """What the numbers were measured on."""
    commit = _first_line(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip() if commit else ""
    try:
        mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    except (OSError, AttributeError):
        mem_kb = None
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_mib": mem_kb // 1024 if mem_kb else None,
        "kernel": f"{platform.system()} {platform.release()}",
        "compiler": _compiler(),
        "commit": (commit + ("-dirty" if dirty else "")) if commit else None,
        "python": platform.python_version(),
        "bench": bench_binary(),
    }


def save_results(path: str | Path, measurements: Iterable[Measurement], command: list[str] | None = None,
                 extra: dict | None = None, info: dict | None = None) -> Path:
    """Write one results document (measurements + machine info + @extra)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": FORMAT,
        "created": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": command or sys.argv,
        "machine": info or machine_info(),
        "measurements": [m.to_dict() for m in measurements],
    }
    if extra:
        doc.update(extra)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)
    return path


def load_results(path: str | Path) -> dict:
    """Read a results document (or a JSON-lines file); measurements as objects."""
    path = Path(path)
    text = validate.read_text(path)
    if not text.strip():
        raise BenchError(f"{path}: empty, not a pagelab results file")
    try:
        doc = validate.loads(text, str(path))
        if not isinstance(doc, dict) or "measurements" not in doc:
            raise ValueError
    except ValueError:
        try:
            recs = [validate.loads(x, str(path)) for x in text.splitlines() if x.strip()]
        except ValueError:
            raise BenchError(f"{path}: not a pagelab results file") from None
        doc = {"format": "jsonl", "machine": {}, "measurements": recs}
    validate.results_doc(doc, str(path))
    doc["measurements"] = [Measurement.from_dict(m) for m in doc["measurements"]]
    doc["path"] = str(path)
    return doc
