"""Comparison tables for measurements of several designs.

For each suite: mmtests' compare layout (every summary statistic of every
test, percentages against the baseline, asterisks when significant) and
then a Fastpath-style table (one row per test, one column per non-baseline
design, "(R) -12.34%" / "(I) 56.78%" against the baseline).

The baseline is the first design seen unless named.  Samples of one
(test, design) are its repetitions; params that differ between results
files make different tests.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable, Sequence

from . import metrics, stats, tables
from .runner import Measurement

# mmtests' summary statistics in its row order; the comparison row is the
# mean (Amean, or Hmean when higher is better).
STATS = ("Min", "Amean", "Stddev", "CoeffVar", "Max", "BAmean-95")


@dataclass
class TestGroup:
    suite: str
    test: str
    unit: str
    samples: "OrderedDict[str, list[float]]"
    metric: str | None = None     # the registry's id; None: a record naming none

    @property
    def better(self) -> str:
        """The metric's direction (metrics.py); neutral when the records name none."""
        m = metrics.find(self.metric)
        return m.direction if m else stats.NEUTRAL

    @property
    def label(self) -> str:
        way = {stats.LOWER: "lower is better", stats.HIGHER: "higher is better"}.get(
            self.better, "not judged")
        return f"{self.test} ({self.unit}, {way})"


def group(measurements: Iterable[Measurement]) -> list[TestGroup]:
    """Gather samples by (suite, test, unit), designs in first-seen order; the
    group's metric is the one its records name (an older pagelab-bench's
    records, as `pagelab ab` may run, name none and take the others')."""
    groups: "OrderedDict[tuple, TestGroup]" = OrderedDict()
    for m in measurements:
        key = (m.suite, m.test, m.unit)
        g = groups.get(key)
        if g is None:
            g = groups[key] = TestGroup(m.suite, m.test, m.unit, OrderedDict())
        g.metric = g.metric or getattr(m, "metric", None)
        g.samples.setdefault(m.design, []).append(float(m.value))
    return list(groups.values())


def designs_of(groups: Sequence[TestGroup], baseline: str | None = None) -> list[str]:
    seen: list[str] = []
    for g in groups:
        for d in g.samples:
            if d not in seen:
                seen.append(d)
    if baseline:
        if baseline not in seen:
            raise ValueError(f"baseline '{baseline}' is not among the designs ({', '.join(seen)})")
        seen.remove(baseline)
        seen.insert(0, baseline)
    return seen


def _stat_value(s: stats.Summary, name: str) -> float:
    return {"Min": s.min, "Amean": s.amean, "Hmean": s.hmean, "Stddev": s.stddev,
            "CoeffVar": s.coeffvar, "Max": s.max, "BAmean-95": s.bamean95}[name]


def mmtests_rows(groups: Sequence[TestGroup], designs: Sequence[str]):
    """Rows for tables.mmtests(): every stat of every test, baseline first."""
    rows = []
    for stat in STATS:
        for g in groups:
            if designs[0] not in g.samples:
                continue
            better = g.better
            name = "Hmean" if (stat == "Amean" and better == stats.HIGHER) else stat
            summ = {d: stats.summarize(v, better) for d, v in g.samples.items()}
            base = summ[designs[0]]
            vals, pcts, sig = [], [], []
            for d in designs:
                s = summ.get(d)
                if s is None:
                    vals.append(float("nan")), pcts.append(float("nan")), sig.append(False)
                    continue
                v, bv = _stat_value(s, name), _stat_value(base, name)
                lower = stat in ("Stddev", "CoeffVar") or better == stats.LOWER
                vals.append(v)
                pcts.append(0.0 if d == designs[0] else
                            (stats.pndiff(v, bv) if lower else stats.pdiff(v, bv)))
                # a neutral figure is shown, never marked significant
                sig.append(stat == "Amean" and d != designs[0] and better != stats.NEUTRAL
                           and abs(stats.cidiff(s.amean, s.ci_half, base.amean, base.ci_half)) > 1)
            rows.append((name, g.label, vals, pcts, sig))
    return rows


def fastpath_rows(groups: Sequence[TestGroup], designs: Sequence[str]) -> list[list[str]]:
    rows = []
    for g in groups:
        base = g.samples.get(designs[0])
        if base is None:
            continue
        cells = [g.label]
        for d in designs[1:]:
            new = g.samples.get(d)
            if new is None:
                cells.append("-")
                continue
            mark = stats.verdict(base, new, g.better)
            pct = stats.fastpath_change(stats.summarize(base).amean, stats.summarize(new).amean, g.better)
            tail = " (not judged)" if g.better == stats.NEUTRAL else ""
            cells.append(f"{mark} {stats.fmt_change(pct)}{tail}".strip())
        rows.append(cells)
    return rows


def compare_text(measurements: Iterable[Measurement], baseline: str | None = None) -> str:
    """Both comparison layouts, per suite."""
    groups = group(measurements)
    if not groups:
        raise ValueError("no measurements to compare")
    out = []
    for suite in OrderedDict.fromkeys(g.suite for g in groups):
        gs = [g for g in groups if g.suite == suite]
        designs = designs_of(gs, baseline)
        n = {d: max((len(g.samples.get(d, [])) for g in gs), default=0) for d in designs}
        out.append(f"{suite}: {', '.join(f'{d} (n={n[d]})' for d in designs)}; baseline {designs[0]}")
        out.append("")
        out.append(tables.mmtests(designs, mmtests_rows(gs, designs)))
        if len(designs) > 1:
            out.append("")
            out.append("Fastpath: >0 is better than the baseline, <0 worse (each figure's "
                       "direction from the metric registry; a figure marked not judged: >0 is up); "
                       "(R)/(I) = 95% confidence intervals do not overlap")
            head = [[f"{suite} benchmark"] + designs[1:],
                    [""] + [f"vs {designs[0]}"] * (len(designs) - 1)]
            out.append(tables.fastpath(head, fastpath_rows(gs, designs)))
        out.append("")
    return "\n".join(out).rstrip() + "\n"
