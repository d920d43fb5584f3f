"""Which run a result came from, and comparing runs without pooling them.

A results file records its run: the --label it was given, the git commit
of the build (machine.commit) and the machine it ran on (CPU, cores,
memory, kernel). `pagelab compare` pools files only when all three agree;
otherwise every (design, run) is its own column, named design@tag where
the tag is made of whichever of label, commit and machine differ, and the
command says so above the tables. It never silently pools two commits.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass


@dataclass(frozen=True)
class RunKey:
    label: str | None
    commit: str | None
    machine: str | None


def _machine_of(info: dict) -> str | None:
    if not info or not info.get("cpu"):
        return None
    return (f"{info.get('cpu')} x{info.get('cores')}, {info.get('memory_mib')} MiB, "
            f"{info.get('kernel')}")


def run_key(doc: dict) -> RunKey:
    info = doc.get("machine") or {}
    return RunKey(doc.get("label"), info.get("commit"), _machine_of(info))


def _short(commit: str | None) -> str:
    if not commit:
        return "commit?"
    base, dirty = (commit[:-6], "-dirty") if commit.endswith("-dirty") else (commit, "")
    return base[:12] + dirty


def group_runs(docs: list[dict]) -> tuple[list, list[str]]:
    """(measurements, notes): pooled when every file is the same run, else
    each measurement's design renamed design@tag; notes say which."""
    keys = [run_key(d) for d in docs]
    distinct = list(dict.fromkeys(keys))
    if len(distinct) <= 1:
        ms = [m for d in docs for m in d["measurements"]]
        k = distinct[0] if distinct else RunKey(None, None, None)
        notes = []
        if len(docs) > 1:
            notes.append(f"pooled {len(docs)} files of one run (label {k.label or '-'}, "
                         f"commit {_short(k.commit)}, machine {k.machine or '?'})")
        return ms, notes
    differ = [f for f in ("label", "commit", "machine")
              if len({getattr(k, f) for k in distinct}) > 1]
    machines = list(dict.fromkeys(k.machine for k in distinct))

    fields = {"label": lambda k: k.label or "unlabelled",
              "commit": lambda k: _short(k.commit),
              "machine": lambda k: f"m{machines.index(k.machine) + 1}"}
    # The shortest tags that tell the runs apart: the label first, then the
    # commit, then the machine, each only if it differs between runs.
    used: list[str] = []
    for f in differ:
        used.append(f)
        tags = {k: "+".join(fields[u](k) for u in used) for k in distinct}
        if len(set(tags.values())) == len(distinct):
            break

    ms = []
    for d, k in zip(docs, keys):
        for m in d["measurements"]:
            m2 = copy.copy(m)
            m2.design = f"{m.design}@{tags[k]}"
            ms.append(m2)
    notes = [f"runs differ in {' and '.join(differ)}: not pooled, one column per design and run"]
    for k in distinct:
        files = [d.get("path", "?") for d, kk in zip(docs, keys) if kk == k]
        notes.append(f"  @{tags[k]}: label {k.label or '-'}, commit {_short(k.commit)}, "
                     f"machine {k.machine or '?'} ({', '.join(files)})")
    for i, mach in enumerate(machines):
        if "machine" in differ:
            notes.append(f"  m{i + 1} = {mach or 'unknown machine'}")
    return ms, notes
