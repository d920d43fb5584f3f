"""The experiment commands of `pagelab`: run, worker, results, docs.

  pagelab run NAME [--cells FILTER] [--resume] [--jobs N] [--cluster ADDRESS] [--store FILE]
  pagelab run --list
  pagelab worker ADDRESS [--nthreads N]
  pagelab results [NAME] [--sql SQL] [--where KEY=VALUE ...] [--tables] [--store FILE]
  pagelab docs [NAME ...] [--out docs/results] [--store FILE]

cli.py builds the parser and calls add_parsers(); every error is one line
(per bad field, for an experiment file) and exit status 2.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from . import experiments, exprun, validate
from .experiments import ExperimentError
from .store import Store, StoreError, default_path


# A Dask scheduler: [SCHEME://]HOST:PORT, HOST a name, an IPv4 address or [IPv6].
_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?(?:[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$")
MAX_LIMIT = 1_000_000


def address(s: str) -> str:
    """argparse type of a Dask scheduler address (tcp://HOST:PORT)."""
    s = validate.text(s)
    m = _ADDRESS.match(s)
    if not m or not 1 <= int(m.group(1)) <= 65535:
        raise argparse.ArgumentTypeError(f"'{s[:80]}' is not a scheduler address "
                                         "(tcp://HOST:PORT)")
    return s


def _store_path(args) -> Path:
    return Path(args.store) if args.store else default_path()


def cmd_run(args: argparse.Namespace) -> int:
    if args.list:
        if args.name:
            raise exprun.RunError("run --list takes no experiment name")
        return _list(args)
    if not args.name:
        raise exprun.RunError("run needs an experiment name (pagelab run --list shows them)")
    if args.jobs is not None and not 1 <= args.jobs <= 1024:
        raise exprun.RunError(f"--jobs {args.jobs}: must be 1..1024")
    if args.cluster and args.jobs:
        raise exprun.RunError("--jobs is for the local pool; a Dask cluster has its own workers")
    exp = experiments.load(args.name)
    with Store(_store_path(args)) as store:
        res = exprun.run(exp, store, args.cells, args.resume, args.jobs, args.cluster,
                         command=args.argv)
    return 0 if not res["failed"] else 1


def _list(args) -> int:
    path = _store_path(args)
    store = Store(path, read_only=True) if path.exists() else None
    try:
        rows = []
        for name in experiments.names():
            try:
                exp = experiments.load(name)
                title, kind = exp.title, exp.kind
            except ExperimentError as e:
                title, kind = f"INVALID: {e.lines[0]}", "?"
            last = store.last_run(name) if store else None
            when = "never run" if not last else (
                f"last run {last['started']:%Y-%m-%d %H:%M}, {last['status']}, "
                f"{last['ok']}/{last['cells']} cells ok, {last['commit'][:10]}"
                + (" dirty" if last["dirty"] else ""))
            rows.append((name, kind, title, when))
    finally:
        if store:
            store.close()
    w = max((len(r[0]) for r in rows), default=4)
    for name, kind, title, when in rows:
        print(f"{name:<{w}}  {kind:<6}  {title}\n{'':<{w}}          {when}")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """A Dask worker for pagelab cells: Dask's own worker command, this venv's Python."""
    import subprocess
    if not 1 <= args.nworkers <= 1024:
        raise exprun.RunError(f"--nworkers {args.nworkers}: must be 1..1024")
    cmd = [sys.executable, "-m", "distributed.cli.dask_worker", args.address,
           "--nthreads", "1", "--nworkers", str(args.nworkers)]
    if args.name:
        cmd += ["--name", args.name]
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return 130


def _print_rows(cols: list[str], rows: list[tuple], limit: int) -> None:
    shown = rows[:limit]
    cells = [[("" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v))
              for v in r] for r in shown]
    w = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(cols)).rstrip())
    for r in cells:
        print("  ".join(v.ljust(w[i]) for i, v in enumerate(r)).rstrip())
    if len(rows) > limit:
        print(f"... {len(rows) - limit} more rows (--limit)")


def cmd_results(args: argparse.Namespace) -> int:
    from . import pages
    if not 1 <= args.limit <= MAX_LIMIT:
        raise exprun.RunError(f"--limit {args.limit}: must be 1..{MAX_LIMIT}")
    with Store(_store_path(args), read_only=True) as store:
        if args.name and args.name not in experiments.names() and not store.query(
                "SELECT 1 FROM figures WHERE experiment = ? LIMIT 1", [args.name])[1]:
            raise exprun.RunError(f"no experiment '{args.name}' (pagelab run --list shows them)")
        if args.sql:
            if args.name or args.where or args.tables:
                raise exprun.RunError("--sql is a whole query: no NAME, --where or --tables")
            cols, rows = store.query(args.sql)
            _print_rows(cols, rows, args.limit)
            return 0
        if args.tables:
            if not args.name:
                raise exprun.RunError("--tables needs an experiment name")
            exp = experiments.load(args.name)
            print(pages.tables_text(exp, store))
            return 0
        where, params = ["1=1"], []
        if args.name:
            where.append("experiment = ?")
            params.append(args.name)
        for w in args.where or []:
            if "=" not in w:
                raise exprun.RunError(f"--where {w}: want KEY=VALUE")
            k, v = w.split("=", 1)
            if k in ("experiment", "cell", "design", "metric", "suite", "test", "mode",
                     "unit", "commit"):
                where.append(f"{k} = ?")
            elif k == "rep":
                where.append("rep = ?")
                v = int(v) if v.isdigit() else -1
            else:
                where.append("json_extract_string(dims, ?) = ?")
                params.append(f"$.{k}")
            params.append(v)
        cols, rows = store.query(
            "SELECT experiment, cell, design, metric, value, unit, rep, mode, commit, dirty, "
            "host_load, time FROM figures WHERE " + " AND ".join(where) +
            " ORDER BY experiment, cell, rep, design, metric", params)
        cols = [c if c != "cell" else "cell" for c in cols]
        rows = [tuple(v.split("#")[0] if i == 1 and isinstance(v, str) else v
                      for i, v in enumerate(r)) for r in rows]
        _print_rows(cols, rows, args.limit)
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    from . import pages
    names = args.names or experiments.names()
    exps = [experiments.load(n) for n in names]
    out = Path(args.out)
    with Store(_store_path(args), read_only=True) as store:
        written = pages.write_pages(exps, store, out, all_names=experiments.names())
    for p in written:
        print(f"wrote {p}")
    return 0


def add_parsers(sub, one_line_parser) -> None:
    """The run, worker, results and docs sub-commands on @sub."""
    r = sub.add_parser("run", help="run an experiment (experiments/NAME.toml) into the store")
    r.add_argument("name", nargs="?", metavar="NAME", type=validate.name, help="experiments/NAME.toml")
    r.add_argument("--list", action="store_true", help="the experiments and their last runs")
    r.add_argument("--cells", metavar="FILTER", type=validate.text, help="only the cells whose id contains FILTER "
                   "(or matches it as a glob)")
    r.add_argument("--resume", action="store_true", help="only the cells the store lacks")
    r.add_argument("--jobs", type=int, help="local pool size (default: the host's CPUs)")
    r.add_argument("--cluster", metavar="ADDRESS", type=address, help="a Dask scheduler (tcp://HOST:PORT)")
    r.add_argument("--store", metavar="FILE", type=validate.path, help="results store (default $PAGELAB_STORE or "
                   "out/results.duckdb)")
    r.set_defaults(func=cmd_run, argv=None)

    w = sub.add_parser("worker", help="a Dask worker for pagelab run --cluster (dask-worker, "
                       "one thread per process)")
    w.add_argument("address", metavar="ADDRESS", type=address, help="the Dask scheduler (tcp://HOST:PORT)")
    w.add_argument("--nworkers", type=int, default=1, help="worker processes, 1..1024 (default 1)")
    w.add_argument("--name", type=validate.name, help="the worker's name")
    w.set_defaults(func=cmd_worker)

    q = sub.add_parser("results", help="figures from the results store (rows, SQL, tables)")
    q.add_argument("name", nargs="?", metavar="NAME", type=validate.name, help="an experiment")
    q.add_argument("--sql", type=validate.text, help="a DuckDB query over runs, cells, figures")
    q.add_argument("--where", action="append", metavar="KEY=VALUE", type=validate.text,
                   help="design=, metric=, rep=, or any dimension (trace=, vcpus=, ...)")
    q.add_argument("--tables", action="store_true", help="the experiment's tables")
    q.add_argument("--limit", type=int, default=200, help="rows printed (default 200)")
    q.add_argument("--store", metavar="FILE", type=validate.path)
    q.set_defaults(func=cmd_results)

    d = sub.add_parser("docs", help="write docs/results/NAME.md pages from the results store")
    d.add_argument("names", nargs="*", metavar="NAME", type=validate.name, help="experiments (default: all)")
    d.add_argument("--out", default="docs/results", type=validate.path, help="directory (default docs/results)")
    d.add_argument("--store", metavar="FILE", type=validate.path)
    d.set_defaults(func=cmd_docs)


ERRORS = (ExperimentError, StoreError, exprun.RunError)


def error_lines(e: Exception) -> list[str]:
    return list(getattr(e, "lines", None) or [str(e)])


__all__ = ["add_parsers", "ERRORS", "error_lines", "json"]
