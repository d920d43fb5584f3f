"""Run pagelab-bench, collect its JSON lines, and save them with machine info.

Designs are run interleaved (A B A B ...), one process per (rep, design), so
that drift on the host falls on every design alike.  Suites that take a
design list themselves (pagetypeinfo) can instead run all designs in one
process per rep (``together=True``); the order is then reversed on odd reps.

Measurement modes (--mode): "wall" takes the suite's own figure (time of
its measured region); "instr" runs pagelab-bench under callgrind with
instrumentation on only inside the harness's measured regions
(bench/runner/harness.c) and replaces every timed figure by the instructions its
region executed (deterministic: one thread, fixed seeds); "vtime" asks
pagelab-bench for its virtual-time cost model (vtime=1) and takes the
record's "vtime" figure.  In the two deterministic modes the wall figure is
kept beside it (Measurement.wall).

run_adaptive() repeats rounds of interleaved runs until stats.stop_reason()
says the cells have converged or hit the cap.

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
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from . import files, metrics, validate
from .benchbin import BenchError, bench_binary  # noqa: F401 (callers import them from here)

FORMAT = "pagelab-results/1"
REPO = Path(__file__).resolve().parents[2]


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
    harness: dict = field(default_factory=dict)   # bench/runner/harness.c: region, faults, pinning
    mode: str = "wall"                            # what value measures: wall, instr, vtime
    wall: float | None = None                     # the wall figure, in instr/vtime modes
    metric: str | None = None                     # the registry's id (metrics.py); None: unjudged
    canonical: str | None = None                  # the design built (pl_design_canonical())

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, rec: dict) -> "Measurement":
        """From a JSON record; keys a newer pagelab-bench adds are ignored."""
        known = {k: rec[k] for k in cls.__dataclass_fields__ if k in rec}
        return cls(**known)


def _one_line_error(stderr: str, default: str) -> str:
    # valgrind's own lines ("==PID== ...") are not the bench's message
    lines = [x for x in stderr.strip().splitlines() if x.strip() and not re.match(r"==\d+==", x)]
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


MODES = ("wall", "instr", "vtime")
# Units whose figure is a time or a rate of the measured region: the ones a
# deterministic mode replaces.  Counts (lock trips, blocks) stay as they are.
TIMED_UNITS = ("ns", "us", "usec", "ms", "s", "cycles")
# Suites that run vCPUs on host threads (threads=): one thread under callgrind,
# so that the instruction counts do not depend on the host's scheduling.
THREADED = ("test_vmalloc", "alloc_many_free_few", "exit_avalanche", "kbuild")


def is_timed(unit: str) -> bool:
    """A time ("usec", "ns/pair": time per unit of work) or a rate ("Mops/s")."""
    return unit.split("/")[0] in TIMED_UNITS or unit.endswith(("/s", "/sec"))


def _bench_args(suite: str, params: dict[str, str], json_out: bool) -> list[str]:
    args = [bench_binary(), suite] + [f"{k}={v}" for k, v in params.items()]
    return args + (["--json"] if json_out else [])


def _run(args: list[str], suite: str) -> str:
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


def run_raw(suite: str, params: dict[str, str], json_out: bool = True) -> str:
    """One pagelab-bench process; its stdout. Raises BenchError on refusal."""
    return _run(_bench_args(suite, params, json_out), suite)


def callgrind_totals(out_dir: str | Path) -> dict[str, int]:
    """Instructions per harness slot label ("pagelab-slot-N.G") from callgrind's dumps."""
    totals: dict[str, int] = {}
    for f in sorted(Path(out_dir).glob("cg.*")):
        label, total = None, None
        for line in f.read_text(errors="replace").splitlines():
            if line.startswith("desc: Trigger: Client Request: "):
                label = line.split(": ", 3)[-1].strip()
            elif line.startswith("totals:"):
                total = int(line.split()[1])
        if label and label.startswith("pagelab-slot-") and total is not None:
            totals[label] = totals.get(label, 0) + total
    return totals


def _run_instr(suite: str, params: dict[str, str]) -> list[dict]:
    if shutil.which("valgrind") is None:
        raise BenchError("--mode instr needs valgrind (scripts/install-deps.sh installs it)")
    p = dict(params)
    if suite in THREADED:
        p["threads"] = "1"
    with tempfile.TemporaryDirectory(prefix="pagelab-cg-") as tmp:
        args = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                f"--callgrind-out-file={tmp}/cg.%p"] + _bench_args(suite, p, True)
        out = _run(args, suite)
        totals = callgrind_totals(tmp)
    recs = [json.loads(x) for x in out.splitlines() if x.strip().startswith("{")]
    # A suite that measures its main figures in harness regions may time a side
    # figure with its own clock (alloc_many_free_few's 1 GiB tries): that figure
    # has no instruction count, so it is left out rather than shown as wall time.
    regions = any("slot" in r.get("harness", {}) for r in recs)
    kept = []
    for rec in recs:
        h = rec.get("harness", {})
        if not is_timed(rec.get("unit", "")):
            kept.append(rec)
            continue
        if "slot" not in h:
            if regions:
                continue
            raise BenchError(f"{suite}: --mode instr: record '{rec.get('test')}' has no "
                             "measured region (the suite does not use the harness)")
        key = f"pagelab-slot-{h['slot']}.{h.get('gen', 0)}"
        if key not in totals:
            raise BenchError(f"{suite}: --mode instr: no callgrind dump for {key}")
        rec["wall"], rec["value"], rec["unit"] = rec["value"], float(totals[key]), "instructions"
        rec["mode"], rec["metric"] = "instr", "instructions"   # a cost, whatever it replaced
        kept.append(rec)
    return kept


def _run_vtime(suite: str, params: dict[str, str]) -> list[dict]:
    out = run_raw(suite, dict(params, vtime="1"))
    recs = [json.loads(x) for x in out.splitlines() if x.strip()]
    for rec in recs:
        vt = rec.get("vtime")
        if isinstance(vt, dict) and "value" in vt and is_timed(rec.get("unit", "")):
            rec["wall"], rec["value"], rec["mode"] = rec["value"], float(vt["value"]), "vtime"
        elif is_timed(rec.get("unit", "")):
            raise BenchError(f"{suite}: --mode vtime: this pagelab-bench gives no vtime figure "
                             "(the virtual-time model has not landed)")
    return recs


def run_once(suite: str, params: dict[str, str], design: str | None = None,
             mode: str = "wall") -> list[Measurement]:
    """One pagelab-bench process in @mode; returns its measurements."""
    p = dict(params)
    if design is not None:
        p["design"] = design
    if mode == "wall":
        recs = []
        for line in run_raw(suite, p).splitlines():
            if line.strip():
                try:
                    recs.append(validate.loads(line, suite))
                except ValueError:
                    raise BenchError(f"{bench_binary()} {suite}: output is not pagelab-bench's "
                                     "JSON lines") from None
    elif mode == "instr":
        recs = _run_instr(suite, p)
    elif mode == "vtime":
        recs = _run_vtime(suite, p)
    else:
        raise BenchError(f"unknown mode '{mode}' ({', '.join(MODES)})")
    for r in recs:
        validate.measurement(r, f"{bench_binary()} {suite}")
    return [Measurement.from_dict(r) for r in recs]


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


def _one_round(suite, params, designs, rep, together, mode) -> list[Measurement]:
    out = []
    if together:
        order = designs if rep % 2 == 0 else designs[::-1]
        batches = [",".join(order)]
    else:
        batches = list(designs)
    for d in batches:
        for m in run_once(suite, params, d, mode):
            m.rep = rep
            out.append(m)
    return out


def parallel_jobs() -> int:
    """Processes a deterministic mode runs at once: $PAGELAB_JOBS, else the host's CPUs."""
    try:
        return max(1, int(os.environ.get("PAGELAB_JOBS", "0"))) if os.environ.get(
            "PAGELAB_JOBS") else max(1, os.cpu_count() or 1)
    except ValueError:
        raise BenchError("PAGELAB_JOBS must be a number") from None


def _parallel_rounds(suite, params, designs, rounds, together, mode) -> list[Measurement]:
    """@rounds rounds at once (deterministic modes only: nothing here is timed)."""
    from concurrent.futures import ThreadPoolExecutor
    jobs = []
    for rep in range(rounds):
        if together:
            order = designs if rep % 2 == 0 else designs[::-1]
            jobs += [(rep, ",".join(order))]
        else:
            jobs += [(rep, d) for d in designs]
    with ThreadPoolExecutor(parallel_jobs()) as pool:
        outs = list(pool.map(lambda j: run_once(suite, params, j[1], mode), jobs))
    results = []
    for (rep, _), got in zip(jobs, outs):
        for m in got:
            m.rep = rep
            results.append(m)
    return results


def run_interleaved(suite: str, params: dict[str, str], designs: list[str], reps: int,
                    together: bool = False, label: str | None = None,
                    mode: str = "wall") -> list[Measurement]:
    """Run every design @reps times in the order A B A B ...; rep numbers are ours.

    With @together, each rep is one process given the whole design list
    (A,B on even reps, B,A on odd ones).
    """
    results: list[Measurement] = []
    bar = Progress(reps, label or suite)
    for rep in range(reps):
        results += _one_round(suite, params, designs, rep, together, mode)
        bar.step(f"rep {rep + 1}/{reps}")
    return results


def default_cells(ms: list[Measurement]) -> dict:
    """Cell key -> samples: every timed figure per (suite, test, design)."""
    cells: dict = {}
    for m in ms:
        if is_timed(m.unit) or m.unit == "instructions":
            cells.setdefault((m.suite, m.test, m.design), []).append(m.value)
    return cells


def run_adaptive(suite: str, params: dict[str, str], designs: list[str], policy,
                 together: bool = False, label: str | None = None, cells=default_cells,
                 log: list | None = None) -> list[Measurement]:
    """Rounds of interleaved runs until stats.stop_reason() stops them.

    @policy: a stats.Policy (its mode, min_runs, max_runs, CI target);
    @cells: measurements -> {cell key: samples}, the figures the tables
    judge; @log: gets one {"label", "runs", "stop"} entry.
    """
    from .stats import stop_reason
    results: list[Measurement] = []
    bar = Progress(policy.max_runs, label or suite)
    why, rep = None, 0
    if policy.deterministic:
        # No timing to disturb: the first min_runs rounds run side by side.
        results += _parallel_rounds(suite, params, designs, policy.min_runs, together,
                                    policy.mode)
        rep = policy.min_runs
        why = stop_reason(cells(results), policy, rep)
    while why is None:
        results += _one_round(suite, params, designs, rep, together, policy.mode)
        rep += 1
        bar.step(f"run {rep}")
        why = stop_reason(cells(results), policy, rep)
    if log is not None:
        log.append({"label": label or suite, "runs": rep, "stop": why})
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
    # the registry's entries of the figures held: the file is judged by them
    doc["metrics"] = metrics.embed(m["metric"] for m in doc["measurements"])
    return files.write_text(path, json.dumps(doc, indent=1) + "\n")


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
    try:
        metrics.register(doc.get("metrics"))
    except metrics.MetricError as e:
        raise BenchError(f"{path}: {e}") from None
    doc["measurements"] = [Measurement.from_dict(m) for m in doc["measurements"]]
    doc["path"] = str(path)
    return doc
