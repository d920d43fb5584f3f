"""`pagelab list` and `pagelab --version`: what this pagelab offers, read
from `pagelab-bench --list --json` (the C tables: suites and their keys with
defaults and meanings, design presets with their switches, the switches,
machine profiles, the metric registry),
so the CLI never keeps a second copy that could drift.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from . import __version__, metrics
from .runner import BenchError, bench_binary


def bench_list() -> dict:
    """pagelab-bench's --list --json, parsed."""
    proc = subprocess.run([bench_binary(), "--list", "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError("pagelab-bench --list failed: "
                         + (proc.stderr.strip().splitlines() or ["no message"])[-1])
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise BenchError("pagelab-bench --list --json printed no JSON (an older pagelab-bench?)") from None


def list_text(info: dict, what: str = "all") -> str:
    """The human form of @info; @what is all, suites, presets, switches or machines."""
    out: list[str] = []
    if what in ("all", "suites"):
        out.append("suites (pagelab bench SUITE key=value ...; key: default, meaning):")
        for s in info["suites"]:
            out.append(f"  {s['name']}: {s['summary']}")
            for k in s["keys"]:
                out.append(f"      {k['key']:<22} {k['default']:<16} {k['meaning']}")
        if info.get("common_keys"):
            out.append("  every suite:")
            for k in info["common_keys"]:
                out.append(f"      {k['key']:<22} {k['default']:<16} {k['meaning']}")
        out.append("")
    if what in ("all", "presets"):
        out.append("presets (--design PRESET[+SWITCH...]):")
        for p in info["presets"]:
            out.append(f"  {p['name']:<18} {p['meaning']}")
            out.append(f"  {'':<18}   switches: {p['switches'] or '(none)'}")
        out.append("")
    if what in ("all", "switches"):
        out.append("switches (NAME, NAME=0, NAME=VALUE; e.g. --design v6.18+pcp_owner+mt_counts):")
        for s in info["switches"]:
            out.append(f"  {s['syntax']:<28} [{s['origin']}] {s['meaning']}")
        out.append("")
    if what in ("all", "machines"):
        machines = info.get("machines")
        if machines:
            out.append("machine profiles (machine=NAME):")
            for m in machines:
                out.append(f"  {m['name']:<18} {m.get('meaning', '')}")
        elif what == "machines":
            out.append("machine profiles: none in this pagelab-bench")
        out.append("")
    if what in ("all", "metrics"):
        if not info.get("metrics"):
            raise BenchError("this pagelab-bench lists no metrics (an older build?)")
        out.append(metrics.list_text({d["id"]: metrics.Metric.from_dict(d)
                                      for d in info["metrics"]}))
    return "\n".join(out).rstrip("\n") + "\n"


def _git_commit() -> str | None:
    """The commit of the checkout this package runs from, if it is one."""
    here = Path(__file__).resolve().parent
    if here != Path(__file__).resolve().parents[2] / "python" / "pagelab" or "site-packages" in here.parts:
        return None     # an installed copy: its commit is pagelab-bench's (printed below)
    try:
        proc = subprocess.run(["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def version_text() -> str:
    """`pagelab --version`: this package, its checkout's commit, and pagelab-bench's version."""
    commit = _git_commit()
    lines = [f"pagelab {__version__}" + (f" (git {commit})" if commit else "")]
    try:
        proc = subprocess.run([bench_binary(), "--version"], capture_output=True, text=True)
        bench = proc.stdout.strip() if proc.returncode == 0 else None
    except BenchError:
        bench = None
    lines.append(bench or "pagelab-bench: not found")
    return "\n".join(lines) + "\n"
