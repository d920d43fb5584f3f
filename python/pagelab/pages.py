"""Results pages from the store: `pagelab docs` and `pagelab results --tables`.

For each experiment, docs/results/NAME.md holds its tables and plots (PNG
files beside it, in docs/results/NAME/), the exact command that regenerates
it, and the commit, dirty flag, machine, date and host load of the cells it
shows, as data from the store.  docs/results/index.md lists every
experiment with its last run.

Table kinds (experiments.SCHEMA): "pivot" (rows of dimensions, columns of
metrics, optionally spread over a dimension with the change against its
first value), "seed" (the seed's own table, from seed_cells.render()),
"replay" (`pagelab replay-table`'s), "fleet" (over a set of traces, per
design: the distribution of each figure's change against the baseline
design).  Plot kinds: "lines", "bars", "seed" (the report's figures of a
seed), "cdf" (the fleet's changes as a cumulative distribution).

Plots drop panels whose values are all zero and say so under the plot; a
figure title never overlaps a panel title (constrained layout).
"""
from __future__ import annotations

import json
import math
import re
import statistics
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import experiments  # noqa: E402
from .store import Store, metric_of  # noqa: E402

# Never on a page: where the build lives on the machine that ran it.
_PRIVATE_INFO = ("bench", "host", "platform")


# ------------------------------------------------------------ selection

def _dim(f: dict, name: str):
    if name == "test":                 # without the suffixes that are dimensions
        return metric_of(f.get("test") or "")[0]
    if name in ("design", "suite", "rep", "mode", "metric", "unit"):
        return f.get(name)
    return f["dims"].get(name)


def _where(figs: list[dict], where: dict | None) -> list[dict]:
    if not where:
        return figs
    want = {k: [str(x) for x in (v if isinstance(v, list) else [v])] for k, v in where.items()}
    return [f for f in figs if all(str(_dim(f, k)) in vs for k, vs in want.items())]


def _matches(f: dict, col: str) -> bool:
    """'METRIC', 'TEST:METRIC' (a counter or vtime field of one test's records), or
    '*': every record's own figure (with "metric" as a row dimension)."""
    if col == "*":
        return not f["metric"].startswith(("counters.", "vtime."))
    if ":" in col:
        test, metric = col.split(":", 1)
        return f["metric"] == metric and metric_of(f["test"] or "")[0] == test
    return f["metric"] == col or (not f["metric"].startswith(("counters.", "vtime."))
                                  and metric_of(f["test"] or "")[0] == col)


def _natural(v):
    s = "" if v is None else str(v)
    return [(0, float(t), "") if re.fullmatch(r"\d+(\.\d+)?", t) else (1, 0.0, t)
            for t in re.findall(r"\d+(?:\.\d+)?|\D+", s)] or [(2, 0.0, "")]


def _sort_key(exp, dims: list[str]):
    order = {d: i for i, d in enumerate(exp.designs)}

    def key(row):
        return [(order.get(v, len(order)), []) if d == "design" else (0, _natural(v))
                for d, v in zip(dims, row)]
    return key


def fmt_value(v: float | None, fmt: str | None = None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if fmt:
        return format(v, fmt)
    a = abs(v)
    if a >= 1000 or (a >= 10 and float(v).is_integer()):
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def _pct(base: float | None, new: float | None) -> str:
    if base is None or new is None:
        return "-"
    if base == 0:
        return "0%" if new == 0 else "new"
    return f"{100 * (new / base - 1):+.1f}%"


# ------------------------------------------------------------ tables

def _md(head: list[str], rows: list[list[str]], right_from: int) -> str:
    rule = ["---" if i < right_from else "---:" for i in range(len(head))]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def pivot_table(exp, figs: list[dict], t: dict) -> str:
    figs = _where(figs, t.get("where"))
    rows_dims = experiments._aslist(t["rows"])
    cols = experiments._aslist(t["columns"])
    labels = experiments._aslist(t.get("labels")) or cols
    by = t.get("by")
    by_vals = sorted({_dim(f, by) for f in figs if any(_matches(f, c) for c in cols)},
                     key=_sort_key(exp, [by]) and (lambda v: _sort_key(exp, [by])([v]))) \
        if by else [None]
    cells: dict = defaultdict(list)
    rowkeys = set()
    for f in figs:
        for ci, c in enumerate(cols):
            if _matches(f, c):
                rk = tuple(_dim(f, d) for d in rows_dims)
                rowkeys.add(rk)
                cells[(rk, ci, _dim(f, by) if by else None)].append(f["value"])
    if not rowkeys:
        return "_no figures yet: run the experiment (`pagelab run " + exp.name + "`)_"
    head = list(rows_dims)
    for lab in labels:
        for i, bv in enumerate(by_vals):
            head.append(f"{lab} {bv}" if by else lab)
            if by and t.get("change") and i > 0:
                head.append(f"vs {by_vals[0]}")
    out_rows = []
    for rk in sorted(rowkeys, key=_sort_key(exp, rows_dims)):
        line = ["" if v is None else str(v) for v in rk]
        for ci in range(len(cols)):
            means = []
            for bv in by_vals:
                vals = cells.get((rk, ci, bv))
                means.append(statistics.fmean(vals) if vals else None)
            for i, m in enumerate(means):
                line.append(fmt_value(m, t.get("format")))
                if by and t.get("change") and i > 0:
                    line.append(_pct(means[0], m))
        out_rows.append(line)
    return _md(head, out_rows, len(rows_dims))


def _replay_docs(exp, cell_rows: list[dict]) -> list[dict]:
    """replay.presets_text()'s documents, one per trace, from the stored records."""
    by_trace: dict = {}
    for row in cell_rows:
        if row["status"] != "ok":
            continue
        for rec in row["records"]:
            if rec.get("rep", 0) != 0:
                continue
            label = (rec.get("params") or {}).get("label") or row["dims"].get("trace")
            d = by_trace.setdefault(label, {"label": label, "designs": {}, "kernel": None,
                                            "state": rec.get("state") or "",
                                            "lost_events": rec.get("lost_events", 0)})
            if rec["design"] == "kernel":
                d["kernel"] = rec
            else:
                d["designs"][rec["design"]] = rec
    docs = []
    for label in sorted(by_trace, key=_natural):
        d = by_trace[label]
        if d["kernel"] is None or not d["designs"]:
            continue
        d["designs"] = {k: d["designs"][k] for k in exp.designs if k in d["designs"]}
        docs.append({"replay": d})
    return docs


def replay_table(exp, cell_rows: list[dict]) -> str:
    from .replay import presets_text
    docs = _replay_docs(exp, cell_rows)
    if not docs:
        return "_no replays yet_"
    return "```\n" + presets_text(docs) + "```"


def _counter(metric: str) -> str:
    """The replay counter behind a registry id (or 'counters.NAME')."""
    from . import metrics
    if metric.startswith("counters."):
        return metric.removeprefix("counters.")
    m = metrics.find(metric)
    return m.counter if m and m.counter and not m.per else metric


def fleet_changes(exp, cell_rows: list[dict], metric: str) -> dict:
    """design -> [(trace, baseline value, value, change %)] over the traces."""
    base = exp.designs[0]
    out: dict = defaultdict(list)
    for doc in _replay_docs(exp, cell_rows):
        rep = doc["replay"]
        key = _counter(metric)
        b = (rep["designs"].get(base) or {}).get("counters", {}).get(key)
        if not isinstance(b, (int, float)):
            continue
        for d, rec in rep["designs"].items():
            if d == base:
                continue
            v = rec.get("counters", {}).get(key)
            if not isinstance(v, (int, float)):
                continue
            ch = (0.0 if v == 0 else math.inf) if b == 0 else 100.0 * (v / b - 1)
            out[d].append((rep["label"], float(b), float(v), ch))
    return out


def _metric_label(metric: str, unit: bool = False) -> str:
    """The registry's name of @metric (with unit and direction when @unit)."""
    from . import metrics
    m = metrics.find(metric)
    if m is None:
        return metric
    return m.label if unit else m.name


def fleet_table(exp, cell_rows: list[dict], t: dict) -> str:
    metrics = experiments._aslist(t.get("metrics")) or ["zone-lock-est"]
    base = exp.designs[0]
    parts = []
    for metric in metrics:
        ch = fleet_changes(exp, cell_rows, metric)
        if not ch:
            continue
        name = _metric_label(metric)
        rows, lines = [], []
        for d in exp.designs[1:]:
            pts = ch.get(d, [])
            finite = sorted(c for _, _, _, c in pts if math.isfinite(c))
            if not pts:
                continue
            q = statistics.quantiles(finite, n=4, method="inclusive") if len(finite) >= 2 \
                else [finite[0]] * 3 if finite else [math.nan] * 3
            worst = sorted(pts, key=lambda p: -p[3])[:3]
            lower = [p for p in pts if p[3] < 0]
            higher = [p for p in pts if p[3] > 0]
            rows.append([d, str(len(pts)), f"{q[1]:+.1f}%", f"{q[0]:+.1f}% .. {q[2]:+.1f}%",
                         str(len(lower)), str(len(higher)),
                         ", ".join(f"{p[0]} ({'from 0' if not math.isfinite(p[3]) else f'{p[3]:+.1f}%'})"
                                   for p in worst if p[3] > 0) or "none"])
            if not lower and not higher:
                lines.append(f"- {d}: the same {name} as {base} on all {len(pts)} traces")
                continue
            lines.append(f"- {d} lowers {name} on {len(lower)} of {len(pts)} traces, raises it "
                         f"on {len(higher)}" + (": " + ", ".join(p[0] for p in higher)
                                                if higher else ""))
        parts.append(f"**{_metric_label(metric, unit=True)}**, change against {base} per trace:\n\n"
                     + _md(["design", "traces", "median", "quartiles", "lower on",
                            "higher on", "worst traces (highest change)"], rows, 1)
                     + "\n\n" + "\n".join(lines))
    return "\n\n".join(parts) or "_no replays yet_"


def seed_table(exp, cell_rows: list[dict], info: dict) -> str:
    from .seed_cells import render
    got = render(exp, cell_rows, info)
    if got is None:
        return "_no figures yet: run the experiment (`pagelab run " + exp.name + "`)_"
    text, doc = got
    note = ""
    if doc.get("missing_groups"):
        note = "\n\nmissing groups (failed or not run): " + ", ".join(doc["missing_groups"])
    return "```\n" + text + "\n```" + note


def table_text(exp, t: dict, figs: list[dict], cell_rows: list[dict], info: dict) -> str:
    kind = t.get("kind", "pivot")
    if kind == "seed":
        return seed_table(exp, cell_rows, info)
    if kind == "replay":
        return replay_table(exp, cell_rows)
    if kind == "fleet":
        return fleet_table(exp, cell_rows, t)
    return pivot_table(exp, figs, t)


def tables_text(exp, store: Store) -> str:
    figs = store.figures(exp.name)
    rows = store.cell_rows(exp.name)
    info = _run_info(store, exp)
    out = []
    for t in exp.tables():
        out.append(f"## {t['title']}\n\n" + table_text(exp, t, figs, rows, info))
    return "\n\n".join(out) if out else f"{exp.name}: declares no table"


# ------------------------------------------------------------ plots

def _mean_by(figs, keyfn) -> dict:
    acc: dict = defaultdict(list)
    for f in figs:
        acc[keyfn(f)].append(f["value"])
    return {k: statistics.fmean(v) for k, v in acc.items()}


def _panels_grid(n: int):
    ncol = min(3, n)
    nrow = math.ceil(n / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.4 * ncol, 3.4 * nrow + 0.5), squeeze=False,
                             layout="constrained")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    return fig, list(axes.flat)[:n]


def lines_plot(exp, figs: list[dict], p: dict):
    """(figure or None, notes): y against x, a line per series, a panel per value."""
    figs = [f for f in _where(figs, p.get("where")) if _matches(f, p["y"])]
    series, panels, x = p.get("series", "design"), p.get("panels"), p["x"]
    vals = _mean_by(figs, lambda f: (_dim(f, panels) if panels else "", _dim(f, series),
                                     _dim(f, x)))
    by_panel: dict = defaultdict(lambda: defaultdict(list))
    for (pn, s, xv), v in vals.items():
        try:
            by_panel[pn][s].append((float(xv), v))
        except (TypeError, ValueError):
            continue
    return _draw(exp, by_panel, p, x, lines=True)


def bars_plot(exp, figs: list[dict], p: dict):
    figs = [f for f in _where(figs, p.get("where")) if _matches(f, p["y"])]
    panels = p.get("panels")
    vals = _mean_by(figs, lambda f: (_dim(f, panels) if panels else "", f["design"]))
    by_panel: dict = defaultdict(dict)
    for (pn, d), v in vals.items():
        by_panel[pn][d] = v
    return _draw(exp, by_panel, p, "design", lines=False)


def _draw(exp, by_panel: dict, p: dict, xlabel: str, lines: bool):
    notes = []
    keep = {}
    for pn in sorted(by_panel, key=_natural):
        data = by_panel[pn]
        values = [v for s in data.values() for _, v in (s if lines else [(0, s)])]
        if values and all(v == 0 for v in values):
            notes.append(f"{pn or p['y']}: every value is 0 (panel left out)")
            continue
        if values:
            keep[pn] = data
    if not keep:
        return None, notes or ["no figures to plot"]
    fig, axes = _panels_grid(len(keep))
    order = {d: i for i, d in enumerate(exp.designs)}
    for ax, (pn, data) in zip(axes, keep.items()):
        if lines:
            for i, s in enumerate(sorted(data, key=lambda s: (order.get(s, 99), _natural(s)))):
                pts = sorted(data[s])
                ax.plot([a for a, _ in pts], [b for _, b in pts], "o-", label=str(s),
                        color=f"C{i}")
            if p.get("logx"):
                ax.set_xscale("log", base=2)
                xs = sorted({a for s in data.values() for a, _ in s})
                ax.set_xticks(xs, [f"{v:g}" for v in xs])
            ax.set_xlabel(xlabel)
            ax.legend(fontsize=7)
        else:
            ds = sorted(data, key=lambda d: order.get(d, 99))
            ax.bar(ds, [data[d] for d in ds], color=[f"C{i}" for i in range(len(ds))])
            ax.tick_params(axis="x", labelsize=7, rotation=30)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(p["y"], fontsize=8)
        if pn:
            ax.set_title(str(pn), fontsize=9)
    fig.suptitle(p["title"], fontsize=10)
    return fig, notes


def cdf_plot(exp, cell_rows: list[dict], p: dict):
    metrics = experiments._aslist(p.get("metrics")) or ["zone-lock-est"]
    notes = []
    fig, axes = _panels_grid(len(metrics))
    drawn = False
    for ax, metric in zip(axes, metrics):
        ch = fleet_changes(exp, cell_rows, metric)
        for i, d in enumerate(exp.designs[1:]):
            pts = sorted(c for _, _, _, c in ch.get(d, []) if math.isfinite(c))
            if not pts:
                continue
            ys = [(k + 1) / len(pts) for k in range(len(pts))]
            ax.step(pts, ys, where="post", label=d, color=f"C{i + 1}")
            drawn = True
            if all(c == 0 for c in pts):
                notes.append(f"{d}: the same {_metric_label(metric)} as {exp.designs[0]} on "
                             "every trace (a step at 0%)")
        ax.axvline(0, color="#888", lw=0.8)
        ax.set_xlabel(f"{_metric_label(metric)}: change against {exp.designs[0]} (%)")
        ax.set_ylabel("share of traces")
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=7)
    if not drawn:
        plt.close(fig)
        return None, ["no replays yet"]
    fig.suptitle(p["title"], fontsize=10)
    return fig, notes


def seed_plots(exp, cell_rows: list[dict], info: dict, p: dict) -> list:
    """The report's figures of a seed: bars per test, and the sweeps it has."""
    from . import report
    from .reproduce import figure_measurements
    from .runner import Measurement
    from .seed_cells import render
    got = render(exp, cell_rows, info)
    if got is None:
        return []
    _, doc = got
    out = []
    fig = report.bars_figure(figure_measurements(doc), p["title"])
    if fig is not None:
        out.append((fig, list(getattr(fig, "pagelab_notes", []))))
    fig = report.vcpu_figure(doc["measurements"])
    if fig is not None:
        out.append((fig, []))
    if doc.get("sweep"):
        sweep = [Measurement.from_dict(m) if isinstance(m, dict) else m for m in doc["sweep"]]
        sweep += [m for m in doc["measurements"] if m.rep == 0]
        fig = report.fragmentation_figure(sweep)
        if fig is not None:
            out.append((fig, []))
    if doc.get("timeline"):
        fig = report.buddyinfo_figure(doc["timeline"])
        if fig is not None:
            out.append((fig, []))
    return out


def plots(exp, figs, cell_rows, info) -> list[tuple]:
    """[(title, figure, notes)] of the experiment's declared plots."""
    out = []
    for p in exp.plots():
        kind = p.get("kind", "lines")
        if kind == "seed":
            for i, (fig, notes) in enumerate(seed_plots(exp, cell_rows, info, p)):
                out.append((p["title"] if i == 0 else fig.axes[0].get_title() or p["title"],
                            fig, notes))
            continue
        if kind == "cdf":
            fig, notes = cdf_plot(exp, cell_rows, p)
        elif kind == "bars":
            fig, notes = bars_plot(exp, figs, p)
        else:
            fig, notes = lines_plot(exp, figs, p)
        out.append((p["title"], fig, notes))
    return out


# ------------------------------------------------------------ pages

def _run_info(store: Store, exp) -> dict:
    last = store.last_run(exp.name)
    if not last:
        return {}
    try:
        return json.loads(last["machine"])
    except (TypeError, ValueError):
        return {}


def _provenance(store: Store, exp) -> list[str]:
    _, rows = store.query(
        "SELECT count(*), count(DISTINCT c.cell), min(f.time), max(f.time), min(f.host_load), "
        "max(f.host_load), string_agg(DISTINCT f.commit || CASE WHEN f.dirty THEN ' (dirty)' "
        "ELSE '' END, ', '), string_agg(DISTINCT f.machine, ', ') FROM figures f JOIN cells c "
        "ON f.experiment = c.experiment AND f.cell = c.cell WHERE f.experiment = ?",
        [exp.name])
    n, ncells, t0, t1, l0, l1, commits, _machines = rows[0]
    _, cst = store.query("SELECT status, count(*) FROM cells WHERE experiment = ? GROUP BY "
                         "status ORDER BY status", [exp.name])
    info = {k: v for k, v in _run_info(store, exp).items() if k not in _PRIVATE_INFO}
    total = len(experiments.cells(exp))
    ok = dict(cst).get("ok", 0)
    lines = [f"| | |", "|---|---|",
             f"| command | `pagelab run {exp.name}` then `pagelab docs {exp.name}` |",
             f"| experiment | [experiments/{exp.name}.toml](../../experiments/{exp.name}.toml) "
             f"({exp.kind}, mode {exp.mode}) |",
             f"| cells | {ok} of {total} in the store"
             + (f", {dict(cst).get('failed')} failed" if dict(cst).get("failed") else "") + " |"]
    if n:
        lines += [f"| figures | {n} |",
                  f"| commit | {commits} |",
                  f"| measured | {t0:%Y-%m-%d %H:%M} .. {t1:%Y-%m-%d %H:%M} |",
                  f"| host load (1-min average, per cell) | {l0:.1f} .. {l1:.1f} |"]
    if info:
        lines.append(f"| machine | {info.get('cpu')}, {info.get('cores')} cores, "
                     f"{info.get('memory_mib')} MiB, {info.get('kernel')}, "
                     f"{info.get('compiler')}, Python {info.get('python')} |")
    return lines


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "plot"


def write_page(exp, store: Store, out_dir: Path) -> Path:
    figs = store.figures(exp.name)
    rows = store.cell_rows(exp.name)
    info = _run_info(store, exp)
    img_dir = out_dir / exp.name
    parts = [f"# {exp.title}", ""]
    if exp.doc.get("description"):
        parts += [exp.doc["description"].strip(), ""]
    parts += _provenance(store, exp) + [""]
    failed = [r for r in rows if r["status"] == "failed"]
    if failed:
        parts += ["**Missing cells** (failed after their retries):", ""]
        parts += [f"- {r['cell'].split('#')[0]}: {(r['stderr'] or '').splitlines()[-1][:160]}"
                  for r in failed] + [""]
    for t in exp.tables():
        parts += [f"## {t['title']}", "", table_text(exp, t, figs, rows, info), ""]
    old = sorted(img_dir.glob("*.png")) if img_dir.is_dir() else []
    written = set()
    for i, (title, fig, notes) in enumerate(plots(exp, figs, rows, info)):
        parts += [f"## {title}", ""]
        if fig is not None:
            img_dir.mkdir(parents=True, exist_ok=True)
            name = f"{i:02d}-{_slug(title)}.png"
            fig.savefig(img_dir / name, dpi=80, metadata={"Software": None})
            plt.close(fig)
            written.add(name)
            parts += [f"![{title}]({exp.name}/{name})", ""]
        parts += [f"_{n}_" for n in notes] + ([""] if notes else [])
    for f in old:
        if f.name not in written:
            f.unlink()
    page = out_dir / f"{exp.name}.md"
    page.write_text("\n".join(parts).rstrip() + "\n")
    return page


def write_index(store: Store, out_dir: Path, names: list[str]) -> Path:
    lines = ["# Results", "",
             "Every page here is generated from the results store by `pagelab docs`, after "
             "`pagelab run NAME` (docs/experiments.md). Nothing is pasted by hand.", "",
             "| experiment | what | last run | cells ok | commit |", "|---|---|---|---:|---|"]
    # A page written from another store (another host, an earlier run) stays listed
    # with its own row until this store runs that experiment.
    kept = {}
    old_index = out_dir / "index.md"
    if old_index.is_file():
        for row in old_index.read_text().splitlines():
            m = re.match(r"\| \[([a-z0-9_-]+)\]\(\1\.md\) \|", row)
            if m:
                kept[m.group(1)] = row
    for name in names:
        try:
            exp = experiments.load(name)
        except experiments.ExperimentError:
            continue
        last = store.last_run(name)
        page = out_dir / f"{name}.md"
        link = f"[{name}]({name}.md)" if page.exists() else name
        if last:
            lines.append(f"| {link} | {exp.title} | {last['started']:%Y-%m-%d %H:%M} "
                         f"({last['status']}) | {len(store.ok_cells(name))} | "
                         f"{last['commit'][:10]}{' dirty' if last['dirty'] else ''} |")
        elif name in kept and page.exists():
            lines.append(kept[name])
        else:
            lines.append(f"| {name} | {exp.title} | never | 0 | |")
    path = out_dir / "index.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_pages(exps: list, store: Store, out_dir: Path, all_names: list[str]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for exp in exps:
        if store.last_run(exp.name) is None:
            continue
        written.append(write_page(exp, store, out_dir))
    written.append(write_index(store, out_dir, all_names))
    return written
