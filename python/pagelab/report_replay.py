"""The replay part of out/report.html: fidelity tables and kernel-vs-pagelab plots.

For every saved `pagelab replay` result (a results document with a "replay"
key, see replay.save()) the report shows
* the fidelity table (replay.fidelity_text), with the lossy-trace flag;
* per-CPU PCP refills over trace time, the kernel's beside each design's;
* free pages by order over trace time: pagelab's timeline per design, with
  the kernel's before/after snapshots (and its timeline, when the engine gives
  one) as markers on the same axes.
A plot the data does not allow is replaced by a line saying what it lacks.
"""
from __future__ import annotations

import html

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .replay import fidelity_text, stale_snapshot_text  # noqa: E402

MAX_CPU_PANELS = 8


def _series(timeline: list[dict], key: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(t, values[sample, i]) of a timeline key holding a list per sample."""
    pts = [(p["t"], p[key]) for p in timeline or [] if isinstance(p.get(key), list)]
    if len(pts) < 1:
        return None
    width = max(len(v) for _, v in pts)
    vals = np.array([list(v) + [0] * (width - len(v)) for _, v in pts], dtype=float)
    return np.array([t for t, _ in pts], dtype=float), vals


def _cumulative(vals: np.ndarray) -> np.ndarray:
    """Per-second counts become running totals; running totals stay as they are."""
    if len(vals) > 1 and (np.diff(vals, axis=0) >= 0).all():
        return vals
    return np.cumsum(vals, axis=0)


def refills_figure(rep: dict):
    """Running total of PCP refills per CPU against trace time: kernel solid, designs dashed."""
    sources = [("kernel", rep["kernel"].get("timeline"))] + \
              [(d, r.get("timeline")) for d, r in rep["designs"].items()]
    series = {name: s for name, tl in sources if (s := _series(tl, "pcp_refills"))}
    if not series:
        return None
    ncpu = max(v.shape[1] for _, v in series.values())
    per_cpu = ncpu <= MAX_CPU_PANELS
    panels = ncpu if per_cpu else 1
    fig, axes = plt.subplots(1, panels, figsize=(min(4.5 * panels, 14), 3.4), squeeze=False)
    for i, (name, (t, v)) in enumerate(series.items()):
        v = _cumulative(v)
        style = "-" if name == "kernel" else "--"
        for c in range(panels):
            y = v[:, c] if per_cpu else v.sum(axis=1)
            axes[0][c].plot(t, y, style, color=f"C{i}", label=name)
    for c in range(panels):
        ax = axes[0][c]
        ax.set_title(f"CPU {c}" if per_cpu else f"all {ncpu} CPUs", fontsize=9)
        ax.set_xlabel("trace time (s)")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("PCP refills (running total)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"{rep['label']}: PCP refills per CPU, kernel vs pagelab ({rep['state']} state)",
                 fontsize=10)
    fig.tight_layout()
    return fig


def free_by_order_figure(rep: dict):
    """Free pages per order over time: one panel per design, kernel markers on each."""
    designs = {d: s for d, r in rep["designs"].items()
               if (s := _series(r.get("timeline"), "free_pages_by_order"))}
    if not designs:
        return None
    ktl = _series(rep["kernel"].get("timeline"), "free_pages_by_order")
    snaps = rep.get("kernel_buddyinfo_pages")
    n = len(designs)
    fig, axes = plt.subplots(1, n, figsize=(min(6 * n, 14), 4), squeeze=False, sharey=True)
    colours = plt.get_cmap("tab20")
    t_end = rep["kernel"].get("seconds")
    for ax, (d, (t, v)) in zip(axes[0], designs.items()):
        t_end = t_end or (t[-1] if len(t) else 1.0)
        for order in range(v.shape[1]):
            col = colours(order * 2 % 20 + order * 2 // 20)
            ax.plot(t, np.maximum(v[:, order], 0.5), "-", color=col,
                    lw=1.2, label=f"order {order}")
            if ktl is not None and order < ktl[1].shape[1]:
                ax.plot(ktl[0], np.maximum(ktl[1][:, order], 0.5), ":", color=col)
            if snaps:
                ax.plot([0], [max(snaps["before"][order], 0.5)], "o", color=col, ms=4)
                ax.plot([t_end], [max(snaps["after"][order], 0.5)], "s", color=col,
                        ms=5, mfc="none")
        ax.set_yscale("log")
        ax.set_xlabel("trace time (s)")
        ax.set_title(f"pagelab {d}", fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("free pages (log)")
    axes[0][-1].legend(fontsize=7, ncol=2, loc="lower right")
    fig.suptitle(f"{rep['label']}: free pages by order; lines pagelab, o kernel before, "
                 f"[] kernel after" + (", dotted kernel timeline" if ktl else ""), fontsize=10)
    fig.tight_layout()
    return fig


def replay_section(doc: dict, png, img) -> str:
    """HTML for one saved replay result; @png/@img are report.py's figure helpers."""
    rep = doc["replay"]
    parts = []
    if rep.get("lost_events"):
        parts.append(f"<p><b>LOSSY TRACE: the kernel lost {int(rep['lost_events'])} events while "
                     f"recording; the figures miss them.</b></p>")
    stale = stale_snapshot_text(rep)
    if stale:
        parts.append(f"<p><b>{html.escape(stale)}.</b></p>")
    parts.append(f"<pre>{html.escape(fidelity_text(rep))}</pre>")
    for make, alt, need in ((refills_figure, "PCP refills per CPU", "a timeline with pcp_refills"),
                            (free_by_order_figure, "free pages by order",
                             "a timeline with free_pages_by_order")):
        fig = make(rep)
        parts.append(img(png(fig), f"{rep['label']} {alt}") if fig is not None else
                     f"<p class='note'>{alt}: the results have no {need}</p>")
    return "\n".join(parts)
