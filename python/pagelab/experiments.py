"""Experiments declared in files: experiments/NAME.toml, validated, expanded into cells.

An experiment says what runs (a seed's table, a pagelab-bench suite over a
grid of keys, or a set of traces replayed from a state), under which
designs, how many repetitions, in which measurement mode, and how its tables
and plots are laid out.  docs/experiments.md is the schema's documentation;
SCHEMA below is its single source of truth (docs and checks read it).

load() checks every field and raises ExperimentError carrying one line per
bad field ("FILE: FIELD: what is wrong"), so that `pagelab run` can print
them all and exit 2.  cells() expands a checked experiment into Cells:

- a Cell is one unit of work for a worker: one or more pagelab-bench
  processes whose figures come back as JSON records;
- where timing needs interleaving (wall mode, more than one design), the
  designs' A B A B ... runs of every repetition form ONE cell, so that the
  interleaved group stays on one worker;
- count-only work (replays, --mode instr, --mode vtime) fans out: one cell
  per (design, repetition) so that any worker can take any of them.

Invariant: a cell's id is stable for the same declaration (a readable name
plus a hash of its spec), so the results store can tell which cells an
experiment still lacks (`pagelab run --resume`).
"""
from __future__ import annotations

import glob
import hashlib
import itertools
import json
import re
from pathlib import Path

from .expmodel import Cell, Experiment, _aslist  # noqa: F401 (Cell, Experiment: this module's API)

try:
    import tomllib
except ModuleNotFoundError:         # Python < 3.11
    tomllib = None

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS_DIR = REPO / "experiments"
KINDS = ("seed", "bench", "replay")
MODES = ("wall", "instr", "vtime")
SEED_IDS = ("000", "001", "002", "003", "004")
SEED_MODES = ("quick", "default", "full")
STATES = ("fresh", "counts", "positional")
TABLE_KINDS = ("pivot", "seed", "replay", "fleet")
PLOT_KINDS = ("lines", "bars", "seed", "cdf")
MAX_REPS = 1000
MAX_CELLS = 100000
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
DIM_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ExperimentError(RuntimeError):
    """An experiment file pagelab refuses: one line per bad field in .lines."""

    def __init__(self, lines: list[str]):
        super().__init__(lines[0] if lines else "bad experiment")
        self.lines = lines


# ------------------------------------------------------------------ schema

# Each field: (type, required, what it is).  Types: "str", "int", "bool",
# "strlist" (a string or a list of strings), "params" (a table of scalars or
# lists of scalars: a list is a grid axis), "cases" (a list of param tables),
# "enum:a|b", "table" (a sub-table checked by its own entry), "tables" (an
# array of tables).  docs/experiments.md lists the same fields.
SCHEMA = {
    "": {
        "title": ("str", True, "one line: what the experiment shows"),
        "description": ("str", False, "a paragraph for the results page"),
        "kind": ("enum:" + "|".join(KINDS), True, "what runs: a seed's table, a suite, traces"),
        "designs": ("strlist", False, "designs (PRESET[+SWITCH...]); the first is the baseline"),
        "reps": ("int", False, f"repetitions per design, 1..{MAX_REPS} (default 1)"),
        "mode": ("enum:" + "|".join(MODES), False, "measurement mode (default wall)"),
        "retries": ("int", False, "tries after a failed cell, 0..5 (default 2)"),
        "seed": ("table", False, "kind = seed: which seed, which mode"),
        "bench": ("table", False, "kind = bench: the suite and its keys"),
        "replay": ("table", False, "kind = replay: the traces and the starting state"),
        "table": ("tables", False, "the tables of the results page"),
        "plot": ("tables", False, "the plots of the results page"),
    },
    "seed": {
        "id": ("enum:" + "|".join(SEED_IDS), True, "the seed"),
        "mode": ("enum:" + "|".join(SEED_MODES), False, "quick, default or full (default quick)"),
        "machine": ("params", False, "machine keys (machine=, mem=, dma32=)"),
    },
    "bench": {
        "suite": ("strlist", True, "pagelab-bench suite(s); a list is a grid axis"),
        "params": ("params", False, "key = value; a list of values is a grid axis"),
        "cases": ("cases", False, "a list of key tables, each one point (crossed with params)"),
        "together": ("bool", False, "one process per repetition for all designs (design=A,B)"),
    },
    "replay": {
        "traces": ("strlist", True, "trace files or artifacts, paths or globs from the repo root"),
        "state": ("enum:" + "|".join(STATES), False, "starting state (default: the engine's)"),
        "tick": ("str", False, "kernel, first or 0..999 (ms into each second)"),
        "params": ("params", False, "more pagelab-bench replay keys"),
    },
    "table": {
        "title": ("str", True, "the table's heading"),
        "kind": ("enum:" + "|".join(TABLE_KINDS), False, "pivot (default), seed, replay, fleet"),
        "rows": ("strlist", False, "pivot: the dimensions that make a row"),
        "columns": ("strlist", False, "pivot: metrics (test names, counters.K, vtime.K)"),
        "labels": ("strlist", False, "pivot: a heading per column"),
        "by": ("str", False, "pivot: the dimension spread over columns (e.g. design)"),
        "change": ("bool", False, "pivot: add each value's change against the first of 'by'"),
        "format": ("str", False, "pivot: a Python format for the values (default .4g)"),
        "where": ("params", False, "only the figures whose dimensions have these values"),
        "metrics": ("strlist", False, "fleet: the metrics summarised (default zone->lock)"),
    },
    "plot": {
        "title": ("str", True, "the plot's title"),
        "kind": ("enum:" + "|".join(PLOT_KINDS), False, "lines (default), bars, seed, cdf"),
        "x": ("str", False, "lines: the dimension on the x axis"),
        "y": ("str", False, "lines/bars: the metric on the y axis"),
        "series": ("str", False, "lines: one line per value of this dimension (default design)"),
        "panels": ("str", False, "one panel per value of this dimension"),
        "logx": ("bool", False, "lines: log2 x axis"),
        "where": ("params", False, "only the figures whose dimensions have these values"),
        "metrics": ("strlist", False, "cdf: the metrics (default zone->lock)"),
    },
}


def _check_field(where: str, kind: str, v, errs: list[str]) -> None:
    def bad(what: str) -> None:
        errs.append(f"{where}: {what}, got {json.dumps(v, default=str)[:60]}")

    scalar = (str, int, float, bool)
    if kind == "str":
        if not isinstance(v, str) or not v.strip():
            bad("must be a non-empty string")
    elif kind == "int":
        if not isinstance(v, int) or isinstance(v, bool):
            bad("must be an integer")
    elif kind == "bool":
        if not isinstance(v, bool):
            bad("must be true or false")
    elif kind == "strlist":
        items = [v] if isinstance(v, str) else v
        if not isinstance(items, list) or not items or \
                not all(isinstance(x, str) and x.strip() for x in items):
            bad("must be a string or a non-empty list of strings")
    elif kind.startswith("enum:"):
        choices = kind[5:].split("|")
        if v not in choices:
            bad(f"must be one of {', '.join(choices)}")
    elif kind == "params":
        if not isinstance(v, dict):
            bad("must be a table of key = value")
            return
        for k, x in v.items():
            ok = isinstance(x, scalar) or (isinstance(x, list) and x and
                                           all(isinstance(y, scalar) for y in x))
            if not DIM_RE.match(k):
                errs.append(f"{where}.{k}: not a key name")
            elif not ok:
                errs.append(f"{where}.{k}: must be a value or a non-empty list of values")
    elif kind == "cases":
        if not isinstance(v, list) or not v or not all(isinstance(c, dict) for c in v):
            bad("must be a non-empty list of key tables")
            return
        for i, c in enumerate(v):
            for k, x in c.items():
                if not DIM_RE.match(k) or not isinstance(x, scalar):
                    errs.append(f"{where}[{i}].{k}: must be key = a single value")


def _check_table(where: str, section: str, t, errs: list[str]) -> None:
    if not isinstance(t, dict):
        errs.append(f"{where}: must be a table")
        return
    spec = SCHEMA[section]
    for k, v in t.items():
        if k not in spec:
            errs.append(f"{where}.{k}: unknown field (known: {', '.join(spec)})")
            continue
        kind = spec[k][0]
        if kind not in ("table", "tables"):
            _check_field(f"{where}.{k}" if where else k, kind, v, errs)
    for k, (_, required, _) in spec.items():
        if required and k not in t:
            errs.append(f"{where + '.' if where else ''}{k}: missing (required)")


def validate_doc(doc: dict, src: str = "experiment") -> list[str]:
    """Every problem of one parsed experiment file, one line each ([] when good)."""
    errs: list[str] = []
    _check_table("", "", doc, errs)
    kind = doc.get("kind")
    if kind in KINDS:
        section = doc.get(kind)
        if section is None:
            errs.append(f"{kind}: missing (kind = {kind} needs a [{kind}] table)")
        else:
            _check_table(kind, kind, section, errs)
        for other in KINDS:
            if other != kind and other in doc:
                errs.append(f"{other}: only for kind = {other} (this is kind = {kind})")
        if kind in ("bench", "replay") and "designs" not in doc:
            errs.append(f"designs: missing (kind = {kind} needs at least one design)")
        if kind == "seed":
            for k in ("designs", "mode", "reps"):
                if k in doc:
                    errs.append(f"{k}: a seed experiment takes its designs, mode and reps "
                                "from the seed ([seed] mode =)")
        if kind == "replay" and doc.get("mode") not in (None, "wall"):
            errs.append("mode: replays count events; they take no measurement mode")
    reps = doc.get("reps")
    if isinstance(reps, int) and not isinstance(reps, bool) and not 1 <= reps <= MAX_REPS:
        errs.append(f"reps: must be 1..{MAX_REPS}, got {reps}")
    retries = doc.get("retries")
    if isinstance(retries, int) and not isinstance(retries, bool) and not 0 <= retries <= 5:
        errs.append(f"retries: must be 0..5, got {retries}")
    designs = doc.get("designs")
    if isinstance(designs, list) and len(set(designs)) != len(designs):
        errs.append("designs: a design is given twice")
    for section, key in (("table", "table"), ("plot", "plot")):
        items = doc.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            errs.append(f"{key}: must be an array of tables ([[{key}]])")
            continue
        for i, t in enumerate(items):
            _check_table(f"{key}[{i}]", section, t, errs)
            if not isinstance(t, dict):
                continue
            tk = t.get("kind", "pivot" if key == "table" else "lines")
            if key == "table" and tk == "pivot" and isinstance(t, dict):
                for need in ("rows", "columns"):
                    if need not in t:
                        errs.append(f"table[{i}].{need}: missing (a pivot table needs rows "
                                    "and columns)")
                labels, cols = t.get("labels"), t.get("columns")
                if isinstance(labels, list) and isinstance(cols, list) and \
                        len(labels) != len(cols):
                    errs.append(f"table[{i}].labels: {len(labels)} labels for {len(cols)} "
                                "columns")
                fmt = t.get("format")
                if isinstance(fmt, str):
                    try:
                        format(1.5, fmt)
                    except ValueError:
                        errs.append(f"table[{i}].format: not a Python number format, "
                                    f"got \"{fmt}\"")
            if key == "plot" and tk in ("lines", "bars"):
                for need in (("x", "y") if tk == "lines" else ("y",)):
                    if need not in t:
                        errs.append(f"plot[{i}].{need}: missing (a {tk} plot needs it)")
            if tk in ("seed",) and kind != "seed":
                errs.append(f"{key}[{i}].kind: seed is only for kind = seed")
            if tk in ("replay", "fleet", "cdf") and kind != "replay":
                errs.append(f"{key}[{i}].kind: {tk} is only for kind = replay")
    if kind == "replay" and isinstance(doc.get("replay"), dict):
        tick = doc["replay"].get("tick")
        if isinstance(tick, str) and tick not in ("kernel", "first") and \
                not (tick.isdigit() and int(tick) <= 999):
            errs.append(f"replay.tick: must be kernel, first or 0..999, got \"{tick}\"")
        traces = doc["replay"].get("traces")
        if isinstance(traces, (str, list)) and not errs:
            for pat in _aslist(traces):
                if not _expand_traces([pat]):
                    errs.append(f"replay.traces: '{pat}' matches no file")
    return [f"{src}: {e}" for e in errs]


# ---------------------------------------------------------------- loading



def _read_toml(path: Path) -> dict:
    if tomllib is None:
        raise ExperimentError([f"{path}: reading TOML needs Python >= 3.11 (tomllib)"])
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ExperimentError([f"{path}: cannot read: {e.strerror or e}"]) from None
    if len(raw) > 1 << 20:
        raise ExperimentError([f"{path}: larger than 1 MiB, not an experiment file"])
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ExperimentError([f"{path}: not UTF-8 text"]) from None
    except tomllib.TOMLDecodeError as e:
        raise ExperimentError([f"{path}: not TOML: {e}"]) from None


def find(name: str, root: Path | None = None) -> Path:
    """experiments/NAME.toml, or a path given as it is."""
    p = Path(name)
    if p.suffix == ".toml" and p.is_file():
        return p
    if not NAME_RE.match(name):
        raise ExperimentError([f"'{name}' is not an experiment name (a-z, 0-9, - and _)"])
    path = (root or EXPERIMENTS_DIR) / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(names(root)) or "none"
        raise ExperimentError([f"no experiment '{name}' (known: {known})"])
    return path


def names(root: Path | None = None) -> list[str]:
    d = root or EXPERIMENTS_DIR
    return sorted(p.stem for p in d.glob("*.toml")) if d.is_dir() else []


def load(name: str, root: Path | None = None) -> Experiment:
    """Read and check experiments/NAME.toml (or a .toml path); ExperimentError if bad."""
    path = find(name, root)
    doc = _read_toml(path)
    try:
        src = str(path.resolve().relative_to(REPO))
    except ValueError:
        src = str(path)
    errs = validate_doc(doc, src)
    if errs:
        raise ExperimentError(errs)
    return Experiment(path.stem, path, doc)


# ------------------------------------------------------------------ cells



def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:10]


def _str(v) -> str:
    return ("1" if v else "0") if isinstance(v, bool) else str(v)


def grid(params: dict, cases: list[dict] | None = None) -> list[dict[str, str]]:
    """Every point of @params (list values are axes) crossed with @cases."""
    axes = [(k, [_str(x) for x in (v if isinstance(v, list) else [v])])
            for k, v in params.items()]
    points = [dict(zip([k for k, _ in axes], combo))
              for combo in itertools.product(*[vals for _, vals in axes])]
    cases = [{k: _str(v) for k, v in c.items()} for c in (cases or [{}])]
    return [dict(p, **c) for p in points for c in cases]


def _expand_traces(patterns: list[str]) -> list[Path]:
    out: list[Path] = []
    for pat in patterns:
        hits = sorted(glob.glob(str(REPO / pat))) if any(c in pat for c in "*?[") \
            else ([str(REPO / pat)] if (REPO / pat).exists() else [])
        out += [Path(h) for h in hits if Path(h) not in out]
    return out


TRACE_SUFFIXES = (".pltrace", ".tar.gz", ".tar.zst", ".txt", ".trace")


def trace_label(path: Path) -> str:
    """A trace's name in tables: its file name without the artifact or text suffix."""
    name = path.name
    for suffix in TRACE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _short(params: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())[:80]


def cells(exp: Experiment) -> list[Cell]:
    """The experiment's cells, in the order a single worker would run them."""
    if exp.kind == "seed":
        from .seed_cells import seed_cells
        out = seed_cells(exp)
    elif exp.kind == "bench":
        out = _bench_cells(exp)
    else:
        out = _replay_cells(exp)
    if len(out) > MAX_CELLS:
        raise ExperimentError([f"{exp.name}: {len(out)} cells, more than {MAX_CELLS}"])
    return out


def split_reps(suite: str, params: dict, designs: list[str], reps: int, together: bool,
               mode: str, base_dims: dict, name: str, label: str | None = None) -> list[Cell]:
    """One interleaved group (wall time, several designs) or its fanned-out parts."""
    spec = {"kind": "bench", "suite": suite, "params": params, "mode": mode,
            "together": together, "label": label}
    deterministic = mode in ("instr", "vtime") or len(designs) <= 1
    if not deterministic:
        s = dict(spec, designs=designs, reps=list(range(reps)))
        return [Cell(f"{name}#{_hash(s)}", s, dict(base_dims), fanout=False)]
    out = []
    for rep in range(reps):
        batches = [designs] if together else [[d] for d in designs]
        if together and rep % 2:
            batches = [designs[::-1]]
        for batch in batches:
            s = dict(spec, designs=batch, reps=[rep])
            tag = ",".join(batch)
            out.append(Cell(f"{name} {tag} rep {rep}#{_hash(s)}", s, dict(base_dims)))
    return out


def _bench_cells(exp: Experiment) -> list[Cell]:
    b = exp.doc["bench"]
    out = []
    for suite in _aslist(b["suite"]):
        for point in grid(b.get("params", {}), b.get("cases")):
            name = f"{suite} {_short(point)}".strip()
            out += split_reps(suite, point, exp.designs, exp.reps, bool(b.get("together")),
                              exp.mode, {"suite": suite, **point}, name)
    return out


def _replay_cells(exp: Experiment) -> list[Cell]:
    r = exp.doc["replay"]
    extra = {k: _str(v) for k, v in r.get("params", {}).items()}
    out = []
    for path in _expand_traces(_aslist(r["traces"])):
        rel = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
        label = trace_label(path)
        for rep in range(exp.reps):
            for d in exp.designs:
                spec = {"kind": "replay", "trace": rel, "design": d, "state": r.get("state"),
                        "tick": r.get("tick"), "params": extra, "reps": [rep]}
                out.append(Cell(f"{label} {d} rep {rep}#{_hash(spec)}", spec,
                                {"trace": label, "state": r.get("state") or ""}))
    return out
