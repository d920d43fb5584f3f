"""`pagelab agree RUN1 RUN2`: do two runs of `pagelab reproduce` give the same verdicts?

Each seed document (out/seed-NNN.json) lists its judged cells: row, column,
our change (>0 better), our mark, whether it was noisy, and the seed's own
change where the seed publishes one.  Two runs agree on a cell when the marks
are equal; the sign check covers every cell whose seed change is at least
10% in magnitude (the bar: the same mark on >= 95% of all cells and the
same sign on every such cell).

A run is a `pagelab reproduce --out` directory or the results store:
"store:[PATTERN][@FILE]" takes every seed experiment whose name matches
PATTERN (default "seed-*", e.g. `pagelab run seed-001`), its document
rendered from the stored cells exactly as `pagelab reproduce` saves it.

`pagelab agree --seed RUN` compares one run with the seeds themselves: the
seed's own verdict mark against ours on every cell where the seed publishes
a figure (the bar: >= 95% of those cells); with --markdown, one row per
seed (the README's table of verdicts).
"""
from __future__ import annotations

import json
from pathlib import Path

from . import files
from .runner import BenchError
from .validate import ValidationError

MARK_TARGET = 95.0      # % of cells with the same mark
SIGN_FLOOR = 10.0       # |seed change| (%) from which the sign must agree


def _store_docs(ref: str):
    """Each seed experiment of the results store that "store:[PATTERN][@FILE]" names
    (PATTERN a glob over experiment names, default "seed-*"), rendered from its stored
    cells as `pagelab reproduce` would have saved it: (label, document)."""
    import fnmatch
    from .seed_cells import render_seed, stored_seed
    from .store import Store, StoreError, default_path
    pattern, _, path = ref[len("store:"):].partition("@")
    pattern = pattern or "seed-*"
    found = 0
    with Store(path or default_path(), read_only=True) as st:
        _, rows = st.query("SELECT DISTINCT experiment FROM runs ORDER BY experiment")
        for (name,) in rows:
            if not fnmatch.fnmatchcase(name, pattern):
                continue
            cell_rows = st.cell_rows(name)
            seed = stored_seed(cell_rows)
            if seed is None:
                continue
            last = st.last_run(name) or {}
            try:
                info = json.loads(last.get("machine") or "{}")
            except ValueError:
                info = {}
            got = render_seed(seed, cell_rows, info if isinstance(info, dict) else {})
            if got is None:
                continue
            doc = got[1]
            doc["cells"] = doc.pop("_cells", [])
            doc["created"] = f"{last['started']:%Y-%m-%dT%H:%M:%S}" if last.get("started") \
                else "?"
            found += 1
            yield Path(f"store:{name}"), doc
    if not found:
        raise StoreError(f"{ref}: no seed experiment with results in the store matches "
                         f"'{pattern}' (run `pagelab run seed-000` ...)")


def _docs(run_dir: Path):
    """Each seed document of a reproduce --out directory, or of the results store
    ("store:[PATTERN][@FILE]"): (path or label, parsed JSON)."""
    if str(run_dir).startswith("store:"):
        yield from _store_docs(str(run_dir))
        return
    paths = sorted(Path(run_dir).glob("seed-*.json"))
    if not paths:
        raise BenchError(f"{run_dir}: no seed-*.json (run pagelab reproduce --out {run_dir})")
    for f in paths:
        try:
            doc = json.loads(files.read_text(f))
        except (OSError, ValueError, ValidationError):
            raise BenchError(f"{f}: not a pagelab seed document") from None
        yield f, _seed_doc(f, doc)


# A seed document's top-level fields a reader relies on, and their kinds.
_SEED_FIELDS = (("settings", dict, "an object"), ("measure", str, "a string"),
                ("mode", str, "a string"), ("measurements", list, "a list"),
                ("cells", list, "a list of judged cells"))


def _seed_doc(f: Path, doc) -> dict:
    """@doc if it is a pagelab reproduce document (a seed, fields of their kind)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("seed"), str):
        raise BenchError(f"{f}: not a pagelab seed document (no 'seed' name)")
    for key, kind, what in _SEED_FIELDS:
        if key in doc and not isinstance(doc[key], kind):
            raise BenchError(f"{f}: '{key}' is not {what}")
    if not doc.get("cells") and not doc.get("measurements"):
        raise BenchError(f"{f}: no judged cells and no measurements (an empty reproduce "
                         "document)")
    return doc


def _cells(run_dir: Path) -> dict:
    out = {}
    for f, doc in _docs(run_dir):
        # Judge again a document from before the cells (or the seed's marks)
        # were saved: its measurements are all the judging needs.
        if doc.get("seed") and ("cells" not in doc or (doc.get("measurements") and any(
                "seed_mark" not in c for c in doc["cells"]))):
            # A document from before the cells were saved: judge it again.
            from .reproduce import render_saved
            from .runner import load_results
            doc = load_results(f)
            doc.setdefault("measure", "wall")
            doc.pop("cells", None)
            render_saved(doc)
            doc["cells"] = doc.pop("_cells", [])
        if not isinstance(doc, dict) or not isinstance(doc.get("cells", []), list):
            raise BenchError(f"{f}: 'cells' is not a list of judged cells")
        for c in doc.get("cells", []):
            missing = [k for k in ("row", "col", "mark", "change")
                       if not isinstance(c, dict) or k not in c]
            if missing:
                raise BenchError(f"{f}: a judged cell has no '{missing[0]}' (not a pagelab "
                                 "reproduce document, or a damaged one)")
            out[(doc.get("seed", f.stem), c["row"], c["col"])] = dict(c, measure=doc.get("measure"))
    return out


def agreement(run1: Path, run2: Path) -> dict:
    """The figures: cells compared, same mark, sign-checked cells and their agreement."""
    a, b = _cells(run1), _cells(run2)
    keys = sorted(set(a) & set(b))
    same = [k for k in keys if a[k]["mark"] == b[k]["mark"]]
    big = [k for k in keys if a[k].get("seed") is not None and abs(a[k]["seed"]) >= SIGN_FLOOR]
    sign_ok = [k for k in big if (a[k]["change"] > 0) == (b[k]["change"] > 0)]
    return {"cells": len(keys), "same_mark": len(same),
            "same_mark_pct": 100.0 * len(same) / len(keys) if keys else 0.0,
            "sign_cells": len(big), "same_sign": len(sign_ok),
            "marked": (sum(bool(a[k]["mark"]) for k in keys), sum(bool(b[k]["mark"]) for k in keys)),
            "only_in_one": len(set(a) ^ set(b)),
            "differ": [(k, a[k], b[k]) for k in keys if k not in same or (k in big and k not in sign_ok)]}


def agreement_text(run1: Path, run2: Path) -> str:
    r = agreement(run1, run2)
    ok = r["same_mark_pct"] >= MARK_TARGET and r["same_sign"] == r["sign_cells"]
    lines = [f"{run1} against {run2}:",
             f"  same verdict mark: {r['same_mark']} of {r['cells']} cells "
             f"({r['same_mark_pct']:.1f}%; target >= {MARK_TARGET:g}%)",
             f"  same sign where the seed's change is >= {SIGN_FLOOR:g}%: {r['same_sign']} of "
             f"{r['sign_cells']} cells",
             f"  marked cells: {r['marked'][0]} and {r['marked'][1]}"
             + (f"; {r['only_in_one']} cells in one run only" if r["only_in_one"] else ""),
             f"  {'PASS' if ok else 'FAIL'}"]
    for (seed, row, col), x, y in r["differ"]:
        lines.append(f"  differs: seed {seed} {row} [{col}]: {x['mark'] or '-'} {x['change']:.2f}%"
                     f" / {y['mark'] or '-'} {y['change']:.2f}%")
    return "\n".join(lines)


def cells_text(run1: Path, run2: Path) -> str:
    """Every cell of both runs side by side (a markdown table): e.g. instr against wall."""
    return _side_by_side(_cells(run1), _cells(run2), f" ({run1})", f" ({run2})")


def _second_cells(run_dir: Path) -> tuple[dict, dict]:
    """The judged cells and the --second opinion's cells of every seed document."""
    first, second = {}, {}
    for f, doc in _docs(run_dir):
        sec = doc.get("second")
        if not isinstance(sec, dict):
            continue
        for d, out in ((doc, first), (sec, second)):
            for c in d.get("cells", []):
                out[(doc.get("seed", f.stem), c["row"], c["col"])] = dict(
                    c, measure=d.get("measure"))
    if not first:
        raise BenchError(f"{run_dir}: no seed document with a second opinion "
                         "(run pagelab reproduce --second wall --out DIR)")
    return first, second


def second_text(run_dir: Path) -> str:
    """One run's judged cells beside its --second opinion (the README's instr/wall table)."""
    a, b = _second_cells(run_dir)
    return _side_by_side(a, b, "", "")


def _side_by_side(a: dict, b: dict, la: str, lb: str) -> str:
    ma = next((c["measure"] for c in a.values()), "?")
    mb = next((c["measure"] for c in b.values()), "?")
    lines = [f"| seed | row | design | seed's change | {ma}{la} | {mb}{lb} | same sign |",
             "|---|---|---|---|---|---|---|"]
    for k in sorted(set(a) & set(b)):
        x, y = a[k], b[k]
        cell = lambda c: (f"{c['mark']} " if c["mark"] else "") + f"{c['change']:.2f}%" + (
            " (noisy)" if c["noisy"] else "")
        seed = "" if x.get("seed") is None else f"{x['seed']:.2f}%"
        same = "yes" if (x["change"] > 0) == (y["change"] > 0) else "**no**"
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {seed} | {cell(x)} | {cell(y)} | {same} |")
    return "\n".join(lines)


def seed_match(run: Path) -> dict:
    """Our mark against the seed's own on every cell where the seed gives a figure."""
    cells = _cells(run)
    keys = sorted(k for k, c in cells.items() if c.get("seed_mark") is not None)
    same = [k for k in keys if cells[k]["mark"] == cells[k]["seed_mark"]]
    per_seed: dict[str, list[int]] = {}
    for k in keys:
        t = per_seed.setdefault(k[0], [0, 0])
        t[0] += k in same
        t[1] += 1
    return {"cells": len(keys), "same_mark": len(same),
            "same_mark_pct": 100.0 * len(same) / len(keys) if keys else 0.0,
            "per_seed": per_seed,
            "differ": [(k, cells[k]) for k in keys if k not in same]}


def seed_match_text(run: Path) -> str:
    r = seed_match(run)
    lines = [f"{run} against the seeds' own tables:",
             f"  same verdict mark as the seed: {r['same_mark']} of {r['cells']} cells "
             f"({r['same_mark_pct']:.1f}%; target >= {MARK_TARGET:g}%)",
             "  per seed: " + ", ".join(f"{s} {a}/{n}" for s, (a, n) in
                                        sorted(r["per_seed"].items())),
             f"  {'PASS' if r['same_mark_pct'] >= MARK_TARGET else 'FAIL'}"]
    for (seed, row, col), c in r["differ"]:
        ours = (c["mark"] or "-") + f" {c['change']:.2f}%" + (" (noisy)" if c["noisy"] else "")
        lines.append(f"  differs: seed {seed} {row} [{col}]: seed {c['seed_mark'] or '-'} "
                     f"{c['seed']:.2f}%, ours {ours}")
    return "\n".join(lines)


def _marks(cells, key: str) -> str:
    """'3 (I), 1 (R), 2 none' for the marks under key of cells."""
    n_i = sum(c.get(key) == "(I)" for c in cells)
    n_r = sum(c.get(key) == "(R)" for c in cells)
    return f"{n_i} (I), {n_r} (R), {len(cells) - n_i - n_r} none"


def _short(commit) -> str:
    """A commit as git abbreviates it, keeping a -dirty mark."""
    if not commit:
        return "?"
    c = str(commit)
    return c[:12] + ("-dirty" if c.endswith("-dirty") else "")


def seed_table_markdown(run: Path) -> str:
    """The seeds' verdicts beside ours, one row per seed (the README's table).

    Per seed: the cells where the seed publishes a figure, its marks and ours
    on them, and how many agree; seed 003 publishes claims in words, so only
    our marks are counted. The run's commit, host and date are printed as data.
    """
    from .reproduce import SEEDS
    cells = _cells(run)
    machine, mode, created = {}, "?", "?"
    for _, doc in _docs(run):
        machine = doc.get("machine") or machine
        mode = doc.get("measure") or doc.get("mode") or mode
        created = str(doc.get("created", created))[:10]
    lines = ["| seed | design | cells with a seed figure | the seed's marks | ours | same verdict |",
             "|---|---|---|---|---|---|"]
    seeds = sorted({k[0] for k in cells})
    tot_same = tot = 0
    for s in seeds:
        mine = [c for k, c in cells.items() if k[0] == s]
        judged = [c for c in mine if c.get("seed_mark") is not None]
        title = SEEDS[s].title if s in SEEDS else s
        if judged:
            same = sum(c["mark"] == c["seed_mark"] for c in judged)
            tot_same += same
            tot += len(judged)
            lines.append(f"| {s} | {title} | {len(judged)} | {_marks(judged, 'seed_mark')} | "
                         f"{_marks(judged, 'mark')} | {same} of {len(judged)} |")
        else:
            lines.append(f"| {s} | {title} | 0 (claims in words) | - | "
                         f"{_marks(mine, 'mark')} over {len(mine)} cells | - |")
    pct = 100.0 * tot_same / tot if tot else 0.0
    lines += ["", f"Same verdict on {tot_same} of {tot} cells ({pct:.1f}%). "
              f"Judged by {mode}; commit {_short(machine.get('commit'))}, "
              f"{machine.get('cpu', '?')} x{machine.get('cores', '?')}, "
              f"{created}. "
              + ("Regenerate: `pagelab run seed-000` ... `seed-004`, then "
                 f"`pagelab agree --seed {run} --markdown`." if str(run).startswith("store:") else
                 "Regenerate: `pagelab reproduce all --out DIR && "
                 "pagelab agree --seed DIR --markdown`.")]
    return "\n".join(lines)
