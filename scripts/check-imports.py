#!/usr/bin/env python3
"""check-imports.py PKG_DIR [OBJECT...] - no import cycle in the Python
package at PKG_DIR (every `import`/`from` of the package's own modules,
at module level or inside a function, is an edge: an import moved into a
function to dodge a cycle is still a cycle) and, given the compiled objects
of pagelab-bench, no cycle between its source files (file A -> file B when
A uses a symbol B defines).  Prints each cycle found; exit 1 if any.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path


def module_name(pkg: Path, f: Path) -> str:
    rel = f.relative_to(pkg.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_graph(pkg: Path) -> dict[str, set[str]]:
    mods = {module_name(pkg, f): f for f in sorted(pkg.rglob("*.py"))}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, f in mods.items():
        is_pkg = f.name == "__init__.py"
        base = mod.split(".") if is_pkg else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                    prefix = ".".join(anchor + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                targets = [prefix] + [f"{prefix}.{a.name}" for a in node.names]
            for t in targets:
                # the longest known module the name resolves to
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != mod and not mod.startswith(t + "."):
                    graph[mod].add(t)
    # a package's __init__ is imported with each of its submodules: not an edge back
    return graph


def object_graph(objects: list[str]) -> dict[str, set[str]]:
    def name(o: str) -> str:
        p = Path(o)
        return str(Path(p.parent.name) / p.name.removesuffix(".o"))
    defs: dict[str, str] = {}
    for o in objects:
        out = subprocess.run(["nm", "-g", "--defined-only", o], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3:
                defs[f[2]] = name(o)
    graph: dict[str, set[str]] = {name(o): set() for o in objects}
    for o in objects:
        out = subprocess.run(["nm", "-u", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            sym = line.split()[-1]
            if sym in defs and defs[sym] != name(o):
                graph[name(o)].add(defs[sym])
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: check-imports.py PKG_DIR [OBJECT...]", file=sys.stderr)
        return 2
    pkg = Path(argv[1])
    bad = 0
    py = python_graph(pkg)
    for c in cycles(py):
        print(f"import cycle in {pkg.name}: {' <-> '.join(c)}")
        bad = 1
    objs = [o for a in argv[2:] for o in a.split(";") if o]
    ob = object_graph(objs) if objs else {}
    for c in cycles(ob):
        print(f"call cycle between bench files: {' <-> '.join(c)}")
        bad = 1
    if not bad:
        print(f"imports: {len(py)} modules of {pkg.name}, {len(ob)} bench objects, no cycle")
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
