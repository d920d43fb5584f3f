"""`pagelab report`: an HTML page (out/report.html) of saved results, with plots.

Plots (matplotlib, Agg, PNGs embedded so the one file opens anywhere):

* bars per test with 95% confidence whiskers, one bar per design, for every
  results file (seed runs and `pagelab bench` runs);
* read latency against fragmentation (free blocks after the churn) from seed
  002's machine-size sweep;
* zone->lock acquisitions per million page operations against vCPUs, from
  seed 003's sweep (its tests are named ...-vN; default and full modes);
* /proc/buddyinfo over the churn as a heatmap (seed 002's timeline);
* for `pagelab replay` results, the fidelity table against the kernel and the
  kernel-vs-pagelab plots of report_replay.py.

A plot the data does not allow is replaced by a line saying what it needs.
"""
from __future__ import annotations

import base64
import html
import io
import math
import re
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402
import numpy as np  # noqa: E402

from . import files
from . import compare, stats  # noqa: E402
from .report_replay import replay_section  # noqa: E402
from .reproduce import figure_measurements, render_saved  # noqa: E402
from .runner import BenchError, Measurement  # noqa: E402
from .store import load_any  # noqa: E402


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _img(b64: str, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">'


def _plain_log_ticks(axis) -> None:
    """Label log axes 0.5, 1, 10, 100 rather than 5x10^-1."""
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())


def _compact(v: float, _pos=None) -> str:
    """Tick labels without matplotlib's offset text (a "1e7" above the axes
    lands on the panel's title): 250k, 1.5M."""
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:g}G"
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e4:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def bars_figure(measurements: list[Measurement], title: str):
    """One panel per test: a bar per design, whiskers = 95% CI half-width.

    A test whose values are all zero under every design is left out (an empty
    panel says nothing); the figure's ``pagelab_notes`` names them.  The
    title sits above the panels' own titles (constrained layout).
    """
    groups = compare.group(measurements)
    zero = [g for g in groups if all(v == 0 for s in g.samples.values() for v in s)]
    groups = [g for g in groups if g not in zero]
    if not groups:
        return None
    ncol = min(3, len(groups))
    nrow = math.ceil(len(groups) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.2 * nrow + 0.4), squeeze=False,
                             layout="constrained")
    several_suites = len({g.suite for g in groups}) > 1
    for ax, g in zip(axes.flat, groups):
        designs = list(g.samples)
        samples = list(g.samples.values())
        means = [stats.summarize(v).amean for v in samples]
        # 95% CI whiskers, cut at zero (no measured quantity here is negative);
        # a single run has no interval: no whisker, and the bar says n=1.
        half = [stats.ci_half_width(v) if len(v) >= 2 else 0.0 for v in samples]
        half = [h if math.isfinite(h) else 0.0 for h in half]
        lower = [min(h, mu) if mu > 0 else 0.0 for h, mu in zip(half, means)]
        bars = ax.bar(designs, means, color=[f"C{i}" for i in range(len(designs))])
        with_ci = [i for i, v in enumerate(samples) if len(v) >= 2]
        if with_ci:
            ax.errorbar([designs[i] for i in with_ci], [means[i] for i in with_ci],
                        yerr=[[lower[i] for i in with_ci], [half[i] for i in with_ci]],
                        fmt="none", ecolor="black", capsize=6)
        for bar, v in zip(bars, samples):
            if len(v) < 2:
                ax.annotate("n=1", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=7, color="#555")
        positive = [m for m in means if m > 0]
        if len(positive) == len(means) and positive and max(positive) / min(positive) > 100:
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
        else:
            # counts and times are never negative: an all-zero panel starts at 0
            ax.set_ylim(bottom=0, top=None if max(means + [0]) > 0 else 1)
            ax.yaxis.set_major_formatter(ticker.FuncFormatter(_compact))
        # a test name alone ("throughput-v32") does not say which workload
        ax.set_title(f"{g.suite}: {g.test}" if several_suites else g.test, fontsize=9)
        # the unit and which way is better, from the metric registry
        ax.set_ylabel(g.label[len(g.test) + 1:].strip("()"), fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.pagelab_notes = [f"{g.suite}: {g.test}: every value is 0 under every design "
                         "(panel left out)" for g in zero]
    return fig


def fragmentation_figure(points: list[Measurement]):
    """Read latency after the churn against free blocks, per design."""
    by = defaultdict(dict)   # design -> mem -> {test: value}
    for m in points:
        by[m.design].setdefault(m.params.get("mem", "?"), {})[m.test] = m.value
    series = {}
    for d, mems in by.items():
        xy = sorted((v["free-blocks-after-churn"], v["read-fragmented"])
                    for v in mems.values() if "free-blocks-after-churn" in v and "read-fragmented" in v)
        if len(xy) >= 2:
            series[d] = xy
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for d, xy in series.items():
        ax.plot([p[0] for p in xy], [p[1] for p in xy], "o-", label=d)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_log_ticks(ax.xaxis)
    _plain_log_ticks(ax.yaxis)
    ax.set_xlabel("free blocks after the churn (fragmentation)")
    ax.set_ylabel("/proc/pagetypeinfo read (us)")
    ax.set_title("read latency against fragmentation", fontsize=10)
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    return fig


# Seed 003's vCPU sweep: its suites name the vCPU count in the test
# ("zone-lock-per-Mop-v32"); other suites' vcpus= (seed 004's test_vmalloc
# workers) are not a sweep of zone->lock and stay out of this plot.
_VCPU_TEST = re.compile(r"^zone-lock-per-Mop-v(\d+)$")


def vcpu_figure(measurements: list[Measurement]):
    """zone->lock acquisitions per million page operations against vCPUs: one
    panel per seed 003 workload, one line per design; None without a sweep."""
    series: dict = defaultdict(lambda: defaultdict(list))   # suite -> design -> [(vcpus, v)]
    for m in measurements:
        hit = _VCPU_TEST.match(m.test)
        if hit:
            series[m.suite][m.design].append((int(hit.group(1)), float(m.value)))
    panels = {s: d for s, d in series.items()
              if any(len({x for x, _ in xy}) >= 2 for xy in d.values())}
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 3.6), squeeze=False)
    for ax, (suite, designs) in zip(axes.flat, panels.items()):
        xs_all = set()
        for i, (design, xy) in enumerate(designs.items()):
            xs = sorted({x for x, _ in xy})
            xs_all.update(xs)
            ys = [float(np.mean([y for x2, y in xy if x2 == x])) for x in xs]
            ax.plot(xs, ys, "o-", label=design, color=f"C{i}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(xs_all))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_ylim(bottom=0)
        ax.set_title(suite, fontsize=9)
        ax.set_xlabel("vCPUs")
        ax.set_ylabel("zone->lock per million page ops")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def buddyinfo_figure(timeline: dict):
    """Free blocks per order (summed over zones) at each snapshot, log colour."""
    snaps = timeline.get("snapshots") or []
    if not snaps:
        return None
    rows = [np.sum(np.array(list(s["zones"].values())), axis=0) for s in snaps]
    data = np.log10(1 + np.array(rows, dtype=float))
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.6))
    im = ax.imshow(data, aspect="auto", cmap="viridis")
    ax.set_xticks(range(data.shape[1]))
    ax.set_xlabel("order")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([s["label"] for s in snaps], fontsize=8)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            ax.text(j, i, str(int(v)), ha="center", va="center", fontsize=6,
                    color="white" if data[i, j] < data.max() * 0.6 else "black")
    fig.colorbar(im, ax=ax, label="log10(1 + free blocks)")
    ax.set_title(f"/proc/buddyinfo just after boot and after N rounds of the churn "
                 f"({timeline.get('mem', '?')} machine)", fontsize=10)
    return fig


def _machine_table(info: dict) -> str:
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in info.items())
    return f"<div class='scroll'><table>{rows}</table></div>"


CSS = """body{font-family:sans-serif;max-width:min(1500px,96vw);margin:2em auto;color:#222}
pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:12px}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:2px 8px;text-align:left}
img{max-width:100%;margin:.5em 0}.note{color:#777;font-style:italic}
.scroll{overflow-x:auto;max-width:100%}pre{max-width:100%;box-sizing:border-box}"""


def build_html(docs: list[dict]) -> str:
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>pagelab report</title>"
             f"<style>{CSS}</style></head><body><h1>pagelab report</h1>"]
    if docs:
        parts.append("<h2>Machine</h2>" + _machine_table(docs[0].get("machine", {})))
    all_ms: list[Measurement] = []
    sweep: list[Measurement] = []
    timeline = None
    for doc in docs:
        name = f"seed {doc['seed']}" if doc.get("seed") else Path(doc["path"]).name
        parts.append(f"<h2>{html.escape(name)}</h2>")
        parts.append(f"<p class='note'>{html.escape(doc['path'])}, {html.escape(doc.get('created', ''))}"
                     f"{', mode ' + html.escape(doc['mode']) if doc.get('mode') else ''}</p>")
        if doc.get("replay"):
            parts.append(replay_section(doc, _png, _img))
            continue
        text = render_saved(doc) if doc.get("seed") else None
        if text is None:
            try:
                text = compare.compare_text(doc["measurements"])
            except ValueError:
                text = "(no measurements)"
        parts.append(f"<pre>{html.escape(text)}</pre>")
        fig = bars_figure(figure_measurements(doc), f"{name}: mean per design, 95% CI whiskers")
        if fig is not None:
            notes = getattr(fig, "pagelab_notes", [])
            parts.append(_img(_png(fig), f"{name} bars"))
            parts += [f"<p class='note'>{html.escape(n)}</p>" for n in notes]
        all_ms += doc["measurements"]
        sweep += [Measurement.from_dict(m) for m in doc.get("sweep", [])]
        if doc.get("sweep"):
            sweep += [m for m in doc["measurements"] if m.rep == 0]
        timeline = doc.get("timeline") or timeline
    parts.append("<h2>Read latency against fragmentation</h2>")
    fig = fragmentation_figure(sweep)
    parts.append(_img(_png(fig), "latency vs fragmentation") if fig else
                 "<p class='note'>needs seed 002's sweep (pagelab reproduce 002)</p>")
    parts.append("<h2>zone->lock acquisitions against vCPUs</h2>")
    fig = vcpu_figure(all_ms)
    parts.append(_img(_png(fig), "zone lock vs vcpus") if fig else
                 "<p class='note'>needs seed 003 at more than one vCPU count "
                 "(pagelab reproduce 003: the default mode sweeps 8, 32, 128)</p>")
    parts.append("<h2>/proc/buddyinfo over time</h2>")
    fig = buddyinfo_figure(timeline or {})
    parts.append(_img(_png(fig), "buddyinfo heatmap") if fig else
                 "<p class='note'>needs seed 002's buddyinfo timeline (pagelab reproduce 002)</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def default_inputs(out_dir: Path) -> list[Path]:
    """Seed results first (in seed order), then other results files."""
    files = sorted(out_dir.glob("seed-*.json")) + sorted(
        p for p in out_dir.glob("*.json") if not p.name.startswith("seed-"))
    return files


def write_report(inputs: list[Path], out: Path) -> Path:
    docs = []
    for p in inputs:
        docs.append(load_any(p))          # a file, or store:NAME (the results store)
    if not docs:
        raise BenchError("no results to report (run `pagelab reproduce` or `pagelab bench` first)")
    out.parent.mkdir(parents=True, exist_ok=True)
    files.write_text(out, build_html(docs))
    return out
