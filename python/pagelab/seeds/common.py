"""What every seed's experiment shares: the seed's own text, how a run is
measured (Ctx, the judging policy), how a cell is judged and marked, the
protocol lines under a table, and the formatting of sizes, latencies and
changes.  Each seed's module (seed000 ... seed004) builds on these; the
orchestration (which seeds run, in which modes, where results go) is
pagelab.reproduce, which imports the seed modules and never the reverse.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import metrics, stats
from ..runner import BenchError, default_cells, run_adaptive, run_interleaved


# --------------------------------------------------------------- seed texts

def seeds_dir() -> Path | None:
    """$PAGELAB_SEEDS, or the shared seeds directory next to the repo."""
    for cand in (os.environ.get("PAGELAB_SEEDS"),
                 Path(__file__).resolve().parents[4] / "shared" / "seeds"):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


def seed_text(seed: str) -> str | None:
    d = seeds_dir()
    if d is None:
        return None
    files = sorted(d.glob(f"{seed}_*.txt"))
    return files[0].read_text() if files else None


# --------------------------------------------------------- how we measure

@dataclass
class Ctx:
    """How a seed's runs are measured: the run mode, the judging policy, a log.

    run() does a smoke run's fixed repetitions, or the adaptive repetitions
    of stats.stop_reason() otherwise, in policy.mode.
    """
    mode: str = "default"                 # quick, default, full
    policy: stats.Policy = field(default_factory=lambda: stats.policy_for("wall"))
    log: list = field(default_factory=list)

    def run(self, suite: str, params: dict, designs, quick_reps: int, together: bool = False,
            label: str | None = None, cells=default_cells):
        if self.policy.quick:
            ms = run_interleaved(suite, params, list(designs), quick_reps, together=together,
                                 label=label, mode=self.policy.mode)
            self.log.append({"label": label or suite, "runs": quick_reps, "stop": "smoke"})
            return ms
        return run_adaptive(suite, params, list(designs), self.policy, together=together,
                            label=label, cells=cells, log=self.log)


def doc_policy(doc: dict) -> stats.Policy:
    """The judging policy a saved or fresh seed document was measured under."""
    return stats.policy_for(doc.get("measure", "wall"), doc.get("mode") == "quick")


def _seed_pct(text) -> float | None:
    """'(R) -40.69%' -> -40.69; None when the seed gives no number."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.search(r"(-?\d+(?:\.\d+)?)%", text or "")
    return float(m.group(1)) if m else None


# A seed that prints bare figures (001, 002, 004: no confidence intervals)
# claims a change only where it is large; pagelab draws that line at 10%.
IMPLIED_FLOOR = 10.0
MARKED_SEEDS = ("000",)     # seeds whose tables print Fastpath's (R)/(I) marks


def _seed_mark(text, marked: bool) -> str | None:
    """The seed's verdict on a cell: None when it makes none.

    @marked: the seed's table prints Fastpath's (R)/(I) marks (seed 000), so an
    unmarked figure is a verdict of "no significant change".  A seed of bare
    figures claims an improvement or a regression of >= IMPLIED_FLOOR%, and
    nothing below it.
    """
    pct = _seed_pct(text)
    if pct is None:
        return None
    if marked:
        m = re.match(r"\s*\(([RI])\)", text) if isinstance(text, str) else None
        return f"({m.group(1)})" if m else ""
    if abs(pct) < IMPLIED_FLOOR:
        return None
    return "(I)" if pct > 0 else "(R)"


def judge_cell(doc: dict, row: str, col: str, base, new, metric: str, seed=None,
               fmt: str = "{:.2f}%") -> str:
    """Judge one cell under the document's policy, log it, return its text.

    @metric: the registry's id of the row's figure; its direction decides.
    Under --mode instr a timed figure (family speed) was replaced by the
    instructions of its region, a cost whatever the wall figure was (a rate
    in seed 003): the registry's "instructions" metric decides then.
    """
    pol = doc_policy(doc)
    m = metrics.get(metric)
    if doc.get("measure") == "instr" and m.family == "speed":
        m = metrics.get("instructions")
    c = stats.judge(base, new, m.direction, pol)
    doc.setdefault("_cells", []).append({
        "row": row, "col": col, "change": c.change, "mark": c.mark, "noisy": c.noisy,
        "n": c.n, "cov": c.cov, "why": c.why, "seed": _seed_pct(seed),
        "seed_mark": _seed_mark(seed, doc.get("seed") in MARKED_SEEDS)})
    return c.text(fmt)


def protocol_lines(doc: dict) -> list[str]:
    """What the table above was measured under, and its warnings."""
    pol = doc_policy(doc)
    cells = doc.get("_cells", [])
    what = {"wall": "wall time of the measured region",
            "instr": "instructions executed in the measured region (callgrind, deterministic)",
            "vtime": "virtual time (the deterministic cost model)"}[pol.mode]
    out = []
    if pol.quick:
        out.append("SMOKE RUN (--quick): too few and too short runs to judge; no (R)/(I) "
                   "marks are printed")
    out.append(f"measured: {what}; " + (
        "fixed repetitions" if pol.quick else
        f"runs per cell {pol.min_runs}..{pol.max_runs}, stop when every 95% CI half-width "
        f"<= {pol.ci_target * 100:g}% of its mean; marks need >= {pol.min_runs} runs and "
        f"CoV <= {pol.noisy_cov:g}%" + (f" and |change| >= {pol.min_change:g}%"
                                        if pol.min_change else "")))
    log = doc.get("runs_log", [])
    if log:
        stops = {}
        for e in log:
            stops.setdefault(e["stop"], []).append(e["runs"])
        out.append("repetitions: " + "; ".join(f"{k} {len(v)} (runs {min(v)}-{max(v)})"
                                                for k, v in sorted(stops.items())))
    hi = [c for c in cells if not math.isnan(c.get("cov", math.nan)) and c["cov"] > pol.warn_cov]
    if hi and not pol.quick:
        worst = sorted(hi, key=lambda c: -c["cov"])[:6]
        out.append(f"warning: {len(hi)} of {len(cells)} cells have CoV > {pol.warn_cov:g}%"
                   + (f" ({sum(c['noisy'] for c in cells)} noisy, unmarked)" if
                      any(c["noisy"] for c in cells) else "") + ": "
                   + ", ".join(f"{c['row'][:40]} [{c['col']}] {c['cov']:.1f}%" for c in worst))
    faults = [m.harness.get("minflt_in") for m in doc.get("measurements", [])
              if getattr(m, "harness", None) and "minflt_in" in m.harness]
    if faults:
        out.append(f"host minor faults inside the measured regions: max {max(faults)}, "
                   f"total {sum(faults)} over {len(faults)} records")
    return out


# ------------------------------------------------------------------ helpers

def parse_size(text: str) -> int:
    """'16G' -> bytes (K/M/G are powers of 1024, as pagelab-bench reads them)."""
    t = text.strip()
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(t[-1:].lower(), 1)
    try:
        return int(t[:-1] if mult > 1 else t, 0) * mult
    except ValueError:
        raise BenchError(f"'{text}' is not a size") from None


def fmt_size(n: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def fmt_latency(us: float) -> str:
    """The seed's notation: '700.9 us', '28.7 ms'."""
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.1f} us"


def fmt_fig(v: float, doc: dict) -> str:
    """A latency in the document's unit: us/ms for wall and vtime, instructions for instr."""
    if doc.get("measure") == "instr":
        return f"{v / 1e6:.2f} Minstr" if v >= 1e6 else f"{v / 1e3:.1f} Kinstr"
    return fmt_latency(v)


def fmt_marked_change(pct: float, mark: str = "") -> str:
    """stats.fmt_change() of @pct behind a (R)/(I) @mark, if any."""
    return f"{mark} {stats.fmt_change(pct)}".strip()


def _values(ms, test, design) -> list[float]:
    return [m.value for m in ms if m.test == test and m.design == design]


def machine_phrase(settings: dict, shape: str = "") -> str:
    """How a table's footer names our machine: its profile, or its size."""
    if settings.get("machine"):
        at = f" at {settings['mem']}" if settings.get("mem") else ""
        return f"the {settings['machine']} machine profile{at}"
    return f"a {settings.get('mem', '16G')} {shape}pagelab machine"
