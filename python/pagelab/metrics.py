"""The metric registry, read from its one declaration in C (src/machine/metric.c).

Every figure pagelab prints is a metric: id, name, unit, direction (which way
is better: "lower", "higher", or "neutral": shown, never judged), family
(speed, lock traffic, fragmentation, fidelity, state) and whether a replay
judges it against the kernel.  pagelab-bench prints the table in
`--list --json` ("metrics") and names a metric in every record ("metric": ID);
this module reads both, so compare, ab, agree, reproduce, replay,
replay-table and report take direction and labels from here and nothing
guesses them from a unit.

A results file embeds the entries of the metrics it holds (save_results()),
so it is judged by the registry of the pagelab-bench that produced it even
where no pagelab-bench is at hand; register() adds those entries.
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass

from .benchbin import BenchError, bench_binary

LOWER, HIGHER, NEUTRAL = "lower", "higher", "neutral"
DIRECTIONS = (LOWER, HIGHER, NEUTRAL)
FAMILIES = ("speed", "lock traffic", "fragmentation", "fidelity", "state")


class MetricError(RuntimeError):
    """A figure names no metric of the registry (or the registry cannot be read)."""


@dataclass(frozen=True)
class Metric:
    id: str
    name: str
    unit: str
    direction: str
    family: str
    kernel: bool = False
    counter: str | None = None
    per: str | None = None
    meaning: str = ""

    @property
    def judged(self) -> bool:
        """Whether a change of this figure is ever called better or worse."""
        return self.direction != NEUTRAL

    @property
    def label(self) -> str:
        """The name with its unit and direction, as tables print it."""
        arrow = {LOWER: "lower is better", HIGHER: "higher is better"}.get(self.direction,
                                                                         "not judged")
        return f"{self.name} ({self.unit}; {arrow})"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Metric":
        if not isinstance(d, dict) or not isinstance(d.get("id"), str):
            raise MetricError("a metric entry without an id")
        if d.get("direction") not in DIRECTIONS:
            raise MetricError(f"metric {d['id']}: direction '{d.get('direction')}' is not one of "
                              f"{', '.join(DIRECTIONS)}")
        return cls(id=d["id"], name=str(d.get("name") or d["id"]), unit=str(d.get("unit") or ""),
                   direction=d["direction"], family=str(d.get("family") or "state"),
                   kernel=bool(d.get("kernel")), counter=d.get("counter"), per=d.get("per"),
                   meaning=str(d.get("meaning") or ""))


_REGISTRY: dict[str, Metric] = {}
_LOADED = False


def _load_from_bench() -> None:
    global _LOADED
    try:
        proc = subprocess.run([bench_binary(), "--list", "--json"], capture_output=True,
                              text=True, timeout=60)
        info = json.loads(proc.stdout) if proc.returncode == 0 else {}
    except (OSError, subprocess.SubprocessError, ValueError, BenchError):
        info = {}
    for d in info.get("metrics") or []:
        m = Metric.from_dict(d)
        _REGISTRY.setdefault(m.id, m)
    _LOADED = bool(info.get("metrics"))


def registry() -> dict[str, Metric]:
    """Every metric by id: pagelab-bench's table, plus those results files brought."""
    if not _LOADED:
        _load_from_bench()
    if not _REGISTRY:
        raise MetricError("the metric registry is unavailable: pagelab-bench --list --json "
                          "lists no metrics (run `make build`, or set PAGELAB_BENCH)")
    return dict(_REGISTRY)


def register(entries) -> None:
    """Add the metrics a results file carries ({id: entry} or [entry, ...])."""
    if isinstance(entries, dict):
        entries = list(entries.values())
    for d in entries or []:
        m = Metric.from_dict(d)
        _REGISTRY.setdefault(m.id, m)


def get(metric_id: str) -> Metric:
    """The metric @metric_id; MetricError when the registry has none."""
    m = _REGISTRY.get(metric_id)
    if m is None:
        m = registry().get(metric_id)
    if m is None:
        raise MetricError(f"unknown metric '{metric_id}' (pagelab list --metrics)")
    return m


def find(metric_id: str | None) -> Metric | None:
    """The metric @metric_id, or None (no id, or none in the registry)."""
    if not metric_id:
        return None
    try:
        return get(metric_id)
    except MetricError:
        return None


def of(measurement) -> Metric | None:
    """The metric of a Measurement (or a record dict), None when it names none."""
    mid = measurement.get("metric") if isinstance(measurement, dict) \
        else getattr(measurement, "metric", None)
    return find(mid)


def direction_of(measurement) -> str:
    """Which way is better for a measurement: its metric's direction; NEUTRAL
    (shown, not judged) for a record naming no metric, e.g. one from a
    pagelab-bench older than the registry."""
    m = of(measurement)
    return m.direction if m else NEUTRAL


def embed(metric_ids) -> dict:
    """{id: entry} of @metric_ids, for a results file (unknown ids left out)."""
    out = {}
    for mid in sorted({i for i in metric_ids if i}):
        m = find(mid)
        if m is not None:
            out[mid] = m.to_dict()
    return out


def replay_metrics() -> list[Metric]:
    """The replay figures in the registry's order (rows of the replay tables)."""
    return [m for m in registry().values() if m.counter]


def list_text(metrics: dict[str, Metric] | None = None) -> str:
    """`pagelab list --metrics`: the registry as a table, grouped by family."""
    metrics = metrics or registry()
    out = ["metrics (id: name, unit; which way is better; compared with the kernel in a replay):"]
    for fam in FAMILIES + tuple(sorted({m.family for m in metrics.values()} - set(FAMILIES))):
        rows = [m for m in metrics.values() if m.family == fam]
        if not rows:
            continue
        out.append(f"  {fam}:")
        w = max(len(m.id) for m in rows)
        for m in rows:
            better = {LOWER: "lower is better", HIGHER: "higher is better",
                      NEUTRAL: "neutral (shown, not judged)"}[m.direction]
            out.append(f"    {m.id:<{w}}  {m.name} ({m.unit}); {better}"
                       + ("; vs the kernel" if m.kernel else ""))
    return "\n".join(out) + "\n"
