"""The `pagelab` command: the lab bench around libpagelab.

  pagelab bench SUITE [key=value ...] --design A --design B --reps N
  pagelab compare RESULTS... [--baseline DESIGN]
  pagelab reproduce [000|001|002|003|004|all] [--quick|--full] [--mode wall|instr|vtime]
  pagelab agree RUN1_DIR RUN2_DIR
  pagelab report [RESULTS...] [-o out/report.html]
  pagelab show buddyinfo|pagetypeinfo|zoneinfo [--workload fresh|churn] [key=value ...]

Errors (unknown suite, design, parameter, seed, report) are one line on
stderr and exit status 2.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path

from . import agree, compare, report, reproduce, show
from .runner import MODES, BenchError, load_results, run_interleaved, save_results

OUT = Path("out")


def _params(pairs: list[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        if "=" not in p:
            raise BenchError(f"expected key=value, got '{p}'")
        k, v = p.split("=", 1)
        out[k] = v
    return out


def cmd_bench(args: argparse.Namespace) -> int:
    designs = args.design or ["v6.18"]
    params = _params(args.params)
    if "design" in params:
        raise BenchError("give designs with --design, not design=")
    results = run_interleaved(args.suite, params, designs, args.reps, together=args.together,
                              mode=args.mode)
    if args.output:
        path = Path(args.output)
    else:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        path = OUT / f"bench-{args.suite}-{stamp}.json"
    save_results(path, results, command=args.argv)
    print(compare.compare_text(results), end="")
    print(f"saved {path}", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    ms = []
    for p in args.results:
        ms += load_results(p)["measurements"]
    try:
        print(compare.compare_text(ms, args.baseline), end="")
    except ValueError as e:
        raise BenchError(str(e)) from None
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    mode = "quick" if args.quick else "full" if args.full else "default"
    names = [t for t in args.targets if "=" not in t] or ["all"]
    machine = _params([t for t in args.targets if "=" in t])
    seeds = []
    for n in names:
        if n == "all":
            seeds += [s for s in reproduce.SEEDS if s not in seeds]
        elif n in reproduce.SEEDS:
            seeds += [n] if n not in seeds else []
        else:
            raise BenchError(f"reproduce: unknown seed '{n}' ({', '.join(reproduce.SEEDS)}, all)")
    bad = set(machine) - {"mem", "dma32"}
    if bad:
        raise BenchError(f"reproduce: unknown parameter '{sorted(bad)[0]}' (mem=, dma32=)")
    out_dir = Path(args.out)
    second = "auto" if args.second is None else (None if args.second == "none" else args.second)
    saved = reproduce.reproduce(seeds, mode, machine, out_dir, measure=args.mode, second=second)
    if saved and not args.no_report:
        path = report.write_report(report.default_inputs(out_dir), out_dir / "report.html")
        print(f"report: {path}")
    return 0


def cmd_agree(args: argparse.Namespace) -> int:
    if args.cells:
        print(agree.cells_text(Path(args.run1), Path(args.run2)))
    else:
        print(agree.agreement_text(Path(args.run1), Path(args.run2)))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    inputs = [Path(p) for p in args.results] or report.default_inputs(OUT)
    path = report.write_report(inputs, Path(args.output))
    print(f"report: {path}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    params = _params(args.params)
    if args.design:
        params["design"] = args.design
    sys.stdout.write(show.show_text(args.report, args.workload, params))
    return 0


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line: 'pagelab ...: error: ...'."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    ap = OneLineParser(prog="pagelab", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    b = sub.add_parser("bench", help="run a suite for one or more designs, interleaved A B A B")
    b.add_argument("suite")
    b.add_argument("params", nargs="*", help="key=value parameters of the suite")
    b.add_argument("--design", action="append", help="design preset (repeatable; first is the baseline)")
    b.add_argument("--reps", type=int, default=1, help="repetitions per design (default 1)")
    b.add_argument("--together", action="store_true",
                   help="one process per rep with design=A,B (suites that interleave themselves)")
    b.add_argument("-o", "--output", help="results file (default out/bench-SUITE-TIME.json)")
    b.add_argument("--mode", choices=MODES, default="wall",
                   help="wall time, instr (callgrind instructions of the measured region), "
                        "vtime (the virtual-time model)")
    b.set_defaults(func=cmd_bench, argv=None)

    c = sub.add_parser("compare", help="mmtests and Fastpath comparison tables of saved results")
    c.add_argument("results", nargs="+", help="results files (pagelab bench / reproduce)")
    c.add_argument("--baseline", help="baseline design (default: the first seen)")
    c.set_defaults(func=cmd_compare)

    r = sub.add_parser("reproduce", help="a seed's experiment beside its published numbers")
    r.add_argument("targets", nargs="*", metavar="SEED|key=value",
                   help="000 001 002 003 004 or all (default), and machine overrides mem=SIZE dma32=SIZE")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="seconds per seed (make run)")
    g.add_argument("--full", action="store_true", help="the seed's own counts (long)")
    r.add_argument("--out", default=str(OUT), help="results directory (default out)")
    r.add_argument("--no-report", action="store_true", help="do not write out/report.html")
    r.add_argument("--mode", choices=MODES, default=None,
                   help=f"the mode the marks judge by (default {reproduce.DEFAULT_MEASURE})")
    r.add_argument("--second", choices=MODES + ("none",), default=None,
                   help="a second opinion in another mode, e.g. wall beside instr (default none)")
    r.set_defaults(func=cmd_reproduce)

    a = sub.add_parser("agree", help="do two reproduce runs give the same verdict marks?")
    a.add_argument("run1", help="a reproduce --out directory")
    a.add_argument("run2", help="another")
    a.add_argument("--cells", action="store_true",
                   help="every cell of both runs side by side (markdown), e.g. instr against wall")
    a.set_defaults(func=cmd_agree)

    p = sub.add_parser("report", help="HTML report with plots (out/report.html)")
    p.add_argument("results", nargs="*", help="results files (default out/*.json)")
    p.add_argument("-o", "--output", default=str(OUT / "report.html"))
    p.set_defaults(func=cmd_report)

    s = sub.add_parser("show", help="a /proc report after a workload")
    s.add_argument("report", help="buddyinfo, pagetypeinfo, zoneinfo (vmallocinfo, lockstat: later)")
    s.add_argument("params", nargs="*", help="machine parameters: mem= dma32= seed= rounds= vcpus=")
    s.add_argument("--workload", default="fresh", help="fresh (just after boot) or churn")
    s.add_argument("--design", help="design preset (default v6.18)")
    s.set_defaults(func=cmd_show)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    try:
        args, extra = ap.parse_known_args(argv)
        # key=value words may come after options: they are parameters too
        for word in extra:
            listed = getattr(args, "params", None) if args.cmd != "reproduce" else args.targets
            if "=" in word and not word.startswith("-") and listed is not None:
                listed.append(word)
            else:
                ap.error(f"unrecognized argument '{word}'")
    except SystemExit as e:          # argparse already printed its one-line error
        return int(e.code or 0)
    if args.cmd == "bench":
        args.argv = ["pagelab"] + (list(argv) if argv is not None else sys.argv[1:])
    try:
        return args.func(args)
    except BenchError as e:
        print(f"pagelab: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pagelab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
