"""Snapshots written during a pagelab-bench run (snapshot_ms=/snapshot_ops= with
snapshot_dir=DIR, bench/runner/snapshot.c), read back for plots and notebooks.

DIR/index has one line per snapshot, `NNNN SUITE DESIGN MACHINE T_MS PAGE_OPS WHY`,
and DIR/NNNN/ holds that moment's /proc/buddyinfo, pagetypeinfo, vmstat and zoneinfo.
Each snapshot comes back in the shape of show.buddyinfo_timeline()'s entries
("label", "zones"), so report.buddyinfo_figure({"snapshots": ...}) draws it.
"""
from __future__ import annotations

from pathlib import Path

from . import files
from .show import parse_buddyinfo
from .validate import ValidationError


def _read(path: Path) -> str:
    """A snapshot file through files.read_text(); a refusal is a ValueError here."""
    try:
        return files.read_text(path)
    except ValidationError as e:
        raise ValueError(str(e)) from None


def read_dir(path: str | Path, machine: int | None = None) -> list[dict]:
    """Every snapshot in @path, in index order (only machine @machine's if given).

    Each: nr, suite, design, machine, t_ms, page_ops, why (start, time, ops, end),
    label, zones ({"0/Normal": free blocks per order}), vmstat ({name: value}), dir.
    Raises ValueError for a directory without a well-formed index.
    """
    root = Path(path)
    try:
        lines = _read(root / "index").splitlines()
    except ValueError as e:
        raise ValueError(f"{root}: no snapshot index ({e})") from None
    out = []
    for n, line in enumerate(lines, 1):
        f = line.split()
        if len(f) != 7:
            raise ValueError(f"{root}/index line {n}: expected 7 fields, got {len(f)}")
        nr, suite, design, mach, t_ms, ops, why = f
        if machine is not None and int(mach) != machine:
            continue
        d = root / nr
        vmstat = {k: int(v) for k, v in
                  (x.split() for x in _read(d / "vmstat").splitlines() if x.strip())}
        out.append({"nr": nr, "suite": suite, "design": design, "machine": int(mach),
                    "t_ms": float(t_ms), "page_ops": int(ops), "why": why,
                    "label": f"{design} {why} {float(t_ms):.0f} ms",
                    "zones": parse_buddyinfo(_read(d / "buddyinfo")),
                    "vmstat": vmstat, "dir": str(d)})
    return out
