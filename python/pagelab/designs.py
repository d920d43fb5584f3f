"""Design specs (PRESET[+SWITCH[=VALUE]...]) for the `pagelab` commands.

pagelab has one parser and validator of a design spec: pl_design_parse() in
C (src/machine/design.c).  The commands reach it through `pagelab-bench
--design SPEC...`, which prints each spec's canonical string
(pl_design_canonical(): "v6.18" plus the switches that are on, in the switch
table's order) or refuses with the parser's one-line reason; the Python API
reaches it through libpagelab (pagelab.api.design_canonical()); every
pagelab-bench suite calls it directly and writes the canonical string into
its records.  Nothing here parses a spec itself.
"""
from __future__ import annotations

import subprocess

from .runner import BenchError, _one_line_error, bench_binary


def canonical(specs: list[str]) -> list[str]:
    """Each of @specs' canonical string, in order; BenchError (the C parser's
    one line) for the first spec it refuses."""
    if not specs:
        return []
    for s in specs:
        if not isinstance(s, str) or not s:
            raise BenchError("unknown design '': empty design (see pagelab list)")
        if "," in s:
            raise BenchError(f"unknown design '{s}': one design per --design (no commas)")
    try:
        proc = subprocess.run([bench_binary(), "--design", *specs], capture_output=True,
                              text=True, errors="replace", timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise BenchError(f"cannot run pagelab-bench ({bench_binary()}): {e}") from None
    if proc.returncode != 0:
        raise BenchError(_one_line_error(proc.stderr, "bad design"))
    out = proc.stdout.split()
    if len(out) != len(specs):
        raise BenchError(f"{bench_binary()} --design printed {len(out)} designs for "
                         f"{len(specs)} (an older pagelab-bench?)")
    return out


def check(specs: list[str]) -> dict[str, str]:
    """{spec: canonical} of @specs, refusing two specs that build the same design."""
    canon = canonical(specs)
    seen: dict[str, str] = {}
    for s, c in zip(specs, canon):
        if c in seen:
            raise BenchError(f"designs '{seen[c]}' and '{s}' are the same design ({c})")
        seen[c] = s
    return dict(zip(specs, canon))
