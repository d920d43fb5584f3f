"""The `pagelab` command: the lab bench around libpagelab.

  pagelab bench SUITE [key=value ...] --design A --design B --reps N
  pagelab bench ... [--label NAME]
  pagelab compare RESULTS... [--baseline DESIGN]
  pagelab ab REV_A REV_B SUITE [key=value ...] [--design D] [--reps N] [--mode wall|instr]
  pagelab ab REV_A REV_B --budgets [TABLE]
  pagelab budgets [PATH ...] [--table FILE] [--jobs N]
  pagelab reproduce [000|001|002|003|004|all] [--quick|--full] [--mode wall|instr|vtime]
  pagelab agree RUN1_DIR RUN2_DIR
  pagelab report [RESULTS...] [-o out/report.html]
  pagelab show buddyinfo|pagetypeinfo|zoneinfo|vmallocinfo|vmstat|lock_stat|events
      [--workload fresh|churn] [key=value ...]
  pagelab trace record [-o FILE] [--seconds N] [-- CMD ...]
  pagelab replay TRACE --design A --design B ... [--state fresh|counts|positional]
                 [--emit-trace DIR] [--tick kernel|first|MS] [--no-pcp-busy] [--label L]
                 [--faithful DESIGN]
  pagelab replay-table RESULTS...
  pagelab list [suites|presets|switches|machines|metrics] [--metrics] [--json]
  pagelab run NAME [--cells FILTER] [--resume] [--jobs N] [--cluster ADDRESS] | run --list
  pagelab worker ADDRESS
  pagelab results [NAME] [--sql SQL] [--where KEY=VALUE] [--tables]
  pagelab docs [NAME ...]
  pagelab --version

A design is a preset plus switches: --design v6.18+pcp_owner+mt_counts.

Errors (unknown suite, design, parameter, seed, report) are one line on
stderr and exit status 2.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
from pathlib import Path

from . import (ab, agree, budgets, compare, expcli, files, listing, replay, report, reproduce,
               runs, show, trace_convert, trace_info, trace_record, validate)
from . import designs as designs_mod
from .runner import (MODES, BenchError, load_results, run_interleaved, save_results,
                     suite_keys)
from .store import load_any
from .trace_artifact import TraceError
from .validate import ValidationError

MAX_REPS = 1000

OUT = Path("out")


def _params(pairs: list[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        p = validate.text(p) if isinstance(p, str) else p     # words after the options too
        if "=" not in p or p.startswith("="):
            raise BenchError(f"expected key=value, got '{p}'")
        k, v = p.split("=", 1)
        out[k] = v
    return out


def _suite_params(suite: str, params: dict[str, str], keys: dict[str, list[str]]) -> None:
    """Refuse an unknown suite or key before anything is built or run."""
    if suite not in keys:
        raise BenchError(f"unknown suite '{suite}' (try pagelab-bench --help)")
    for k in params:
        if k not in keys[suite]:
            raise BenchError(f"{suite}: unknown key '{k}' (pagelab-bench --list shows its keys)")


def cmd_bench(args: argparse.Namespace) -> int:
    validate.count("--reps", args.reps, 1, MAX_REPS)
    params = _params(args.params)
    if "design" in params:
        raise BenchError("give designs with --design, not design=")
    keys = suite_keys()
    _suite_params(args.suite, params, keys)
    if "design" in keys[args.suite]:
        designs = args.design or ["v6.18"]
        designs_mod.check(designs)    # the C parser's word, before any run
    elif args.design or args.together:
        raise BenchError(f"{args.suite} takes no design (it compares its own backends)")
    else:
        designs = [None]          # the suite runs as it is, no design= added
    if args.output:
        path = Path(args.output)
    else:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        path = OUT / f"bench-{args.suite}-{stamp}.json"
    validate.writable(path)       # before the run, not after it
    results = run_interleaved(args.suite, params, designs, args.reps, together=args.together,
                              mode=args.mode)
    save_results(path, results, command=args.argv,
                 extra={"label": args.label} if args.label else None)
    print(compare.compare_text(results), end="")
    print(f"saved {path}", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    docs = [load_any(p) for p in args.results]
    ms, notes = runs.group_runs(docs)
    for n in notes:
        print(n)
    baseline = args.baseline
    if baseline and ms and baseline not in {m.design for m in ms}:
        # "--baseline v6.18" with runs apart: the baseline design of the first run
        first = next((m.design for m in ms if m.design.split("@")[0] == baseline), None)
        baseline = first or baseline
    try:
        print(compare.compare_text(ms, baseline), end="")
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
    bad = set(machine) - {"mem", "dma32", "machine"}
    if bad:
        raise BenchError(f"reproduce: unknown parameter '{sorted(bad)[0]}' (machine=, mem=, dma32=)")
    out_dir = files.check_output_dir(args.out)
    validate.writable(out_dir / "report.html")
    second = "auto" if args.second is None else (None if args.second == "none" else args.second)
    saved = reproduce.reproduce(seeds, mode, machine, out_dir, measure=args.mode, second=second)
    if saved and not args.no_report:
        path = report.write_report(report.default_inputs(out_dir), out_dir / "report.html")
        print(f"report: {path}")
    return 0


def cmd_agree(args: argparse.Namespace) -> int:
    if args.seed or args.second:
        if args.run2 is not None or args.cells or (args.seed and args.second):
            raise BenchError("agree --seed or --second takes one run directory (and no --cells)")
        if args.markdown and not args.seed:
            raise BenchError("agree --markdown goes with --seed")
        print(agree.seed_table_markdown(Path(args.run1)) if args.seed and args.markdown
              else agree.seed_match_text(Path(args.run1)) if args.seed
              else agree.second_text(Path(args.run1)))
    elif args.run2 is None:
        raise BenchError("agree needs two run directories (or --seed RUN)")
    elif args.cells:
        print(agree.cells_text(Path(args.run1), Path(args.run2)))
    else:
        print(agree.agreement_text(Path(args.run1), Path(args.run2)))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    inputs = [p if p.startswith("store:") else Path(p) for p in args.results] or \
        report.default_inputs(OUT)
    validate.writable(args.output)
    path = report.write_report(inputs, Path(args.output))
    print(f"report: {path}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    params = _params(args.params)
    if args.design:
        params["design"] = args.design
    sys.stdout.write(show.show_text(args.report, args.workload, params))
    return 0


def cmd_ab(args: argparse.Namespace) -> int:
    params = _params(args.params)
    if "design" in params:
        raise BenchError("give the design with --design, not design=")
    if args.jobs is not None and not 1 <= args.jobs <= 1024:
        raise BenchError(f"--jobs {args.jobs}: must be 1..1024")
    if args.suite:
        _suite_params(args.suite, {k: v for k, v in params.items() if k != "per"}, suite_keys())
    for rev in (args.rev_a, args.rev_b):
        ab.resolve(rev)
    if args.budgets or args.mode == "instr":
        if args.budgets and args.suite:
            raise BenchError("ab --budgets runs the budget table's paths: give no SUITE")
        if not args.budgets and not args.suite:
            raise BenchError("ab --mode instr needs a SUITE (or --budgets)")
        if args.budgets:
            budgets.load(Path(args.budgets))       # a bad table refused before two builds
        designs_mod.canonical([args.design])
        validate.writable_dir(Path(args.out))
        sys.stdout.write(ab.instr_ab(args.rev_a, args.rev_b, args.suite, params,
                                     args.design if args.suite else None, Path(args.out),
                                     Path(args.budgets) if args.budgets else None, args.jobs))
        return 0
    if args.mode != "wall":
        raise BenchError(f"ab --mode {args.mode}: want wall or instr")
    if not args.suite:
        raise BenchError("ab needs a SUITE")
    validate.count("--reps", args.reps, 1, MAX_REPS)
    designs_mod.canonical([args.design])   # refused here, before two builds
    validate.writable_dir(Path(args.out))
    docs = ab.run_ab(args.rev_a, args.rev_b, args.suite, params, args.design, args.reps,
                     Path(args.out))
    ms, notes = runs.group_runs(docs)
    for n in notes:
        print(n)
    print(compare.compare_text(ms), end="")
    return 0


def cmd_budgets(args: argparse.Namespace) -> int:
    if args.jobs is not None and not 1 <= args.jobs <= 1024:
        raise BenchError(f"--jobs {args.jobs}: must be 1..1024")
    if args.bench is not None:
        files.check_program(args.bench)
    return budgets.check(Path(args.table), args.bench, args.paths or None, args.jobs)


def cmd_list(args: argparse.Namespace) -> int:
    info = listing.bench_list()
    what = "metrics" if args.metrics else args.what
    if args.json:
        print(json.dumps(info if what == "all" else {what: info.get(what, [])}, indent=1))
    else:
        sys.stdout.write(listing.list_text(info, what))
    return 0


class VersionAction(argparse.Action):
    """--version: the package, its commit, and pagelab-bench's (found lazily)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(listing.version_text())
        parser.exit(0)


def cmd_trace_record(args: argparse.Namespace) -> int:
    path, manifest = trace_record.record(args.output, args.seconds, args.command or None,
                                         args.buffer_kb)
    print(trace_record.summary(path, manifest))
    if manifest.get("command_status"):
        print(f"pagelab: warning: the command exited with status {manifest['command_status']}",
              file=sys.stderr)
    return 0


def cmd_trace_snapshot(args: argparse.Namespace) -> int:
    dest = trace_record.snapshot_cmd(args.dir)
    print(f"{dest}: /proc/{{{','.join(trace_record.SNAPSHOT_FILES)}}} and the vm sysctls")
    return 0


def cmd_trace_convert(args: argparse.Namespace) -> int:
    return trace_convert.cli(args)


def cmd_trace_info(args: argparse.Namespace) -> int:
    return trace_info.cli(args)


def cmd_replay(args: argparse.Namespace) -> int:
    return replay.cli(args, args.argv, OUT)


def cmd_replay_table(args: argparse.Namespace) -> int:
    sys.stdout.write(replay.presets_text([load_results(p) for p in args.results]))
    return 0


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line: 'pagelab ...: error: ...'."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    ap = OneLineParser(prog="pagelab", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action=VersionAction, help="versions and git commits")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    b = sub.add_parser("bench", help="run a suite for one or more designs, interleaved A B A B")
    b.add_argument("suite", type=validate.name)
    b.add_argument("params", nargs="*", type=validate.text, help="key=value parameters of the suite")
    b.add_argument("--design", action="append", type=validate.text,
                   help="design: PRESET[+SWITCH...] (repeatable; first is the baseline; "
                        "pagelab list shows them, marking pagelab's own switches)")
    b.add_argument("--reps", type=int, default=1,
                   help=f"repetitions per design, 1..{MAX_REPS} (default 1)")
    b.add_argument("--together", action="store_true",
                   help="one process per rep with design=A,B (suites that interleave themselves)")
    b.add_argument("-o", "--output", type=validate.path,
                   help="results file (default out/bench-SUITE-TIME.json)")
    b.add_argument("--mode", choices=MODES, default="wall",
                   help="wall time, instr (callgrind instructions of the measured region), "
                        "vtime (the virtual-time model)")
    b.add_argument("--label", type=validate.name, help="name this run in its results (pagelab compare groups by label)")
    b.set_defaults(func=cmd_bench, argv=None)

    c = sub.add_parser("compare", help="mmtests and Fastpath comparison tables of saved results")
    c.add_argument("results", nargs="+", type=validate.path, help="results files (pagelab bench / reproduce), or "
                   "store:NAME[@FILE] (an experiment in the results store)")
    c.add_argument("--baseline", type=validate.text, help="baseline design (default: the first seen); runs that "
                   "differ in label, commit or machine are never pooled")
    c.set_defaults(func=cmd_compare)

    r = sub.add_parser("reproduce", help="a seed's experiment beside its published numbers")
    r.add_argument("targets", nargs="*", type=validate.text, metavar="SEED|key=value",
                   help="000 001 002 003 004 or all (default), and the machine: machine=PROFILE (pagelab-bench machines), or mem=SIZE dma32=SIZE")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="seconds per seed (make run)")
    g.add_argument("--full", action="store_true", help="the seed's own counts (long)")
    r.add_argument("--out", default=str(OUT), type=validate.path, help="results directory (default out)")
    r.add_argument("--no-report", action="store_true", help="do not write out/report.html")
    r.add_argument("--mode", choices=MODES, default=None,
                   help=f"the mode the marks judge by (default {reproduce.DEFAULT_MEASURE})")
    r.add_argument("--second", choices=MODES + ("none",), default=None,
                   help="a second opinion in another mode, e.g. wall beside instr (default none)")
    r.set_defaults(func=cmd_reproduce)

    a = sub.add_parser("agree", help="do two reproduce runs give the same verdict marks?")
    a.add_argument("run1", type=validate.path, help="a reproduce --out directory, or store:[PATTERN][@FILE] (the seed "
                   "experiments in the results store, default pattern seed-*)")
    a.add_argument("run2", nargs="?", type=validate.path, help="another (the same forms)")
    a.add_argument("--cells", action="store_true",
                   help="every cell of both runs side by side (markdown), e.g. instr against wall")
    a.add_argument("--seed", action="store_true",
                   help="one run against the seeds' own marks (target: the same mark on >= 95%% of cells)")
    a.add_argument("--second", action="store_true",
                   help="one run's judged cells beside its --second opinion (markdown)")
    a.add_argument("--markdown", action="store_true",
                   help="with --seed: one row per seed, the seed's marks beside ours (markdown)")
    a.set_defaults(func=cmd_agree)

    p = sub.add_parser("report", help="HTML report with plots (out/report.html)")
    p.add_argument("results", nargs="*", type=validate.path, help="results files (default out/*.json), or "
                   "store:NAME[@FILE] (an experiment in the results store)")
    p.add_argument("-o", "--output", default=str(OUT / "report.html"), type=validate.path)
    p.set_defaults(func=cmd_report)

    s = sub.add_parser("show", help="a /proc report after a workload")
    s.add_argument("report", type=validate.name, help="buddyinfo, pagetypeinfo, zoneinfo, vmallocinfo, vmstat, lock_stat "
                   "(the kernel's formats), events (all of pagelab's counters)")
    s.add_argument("params", nargs="*", type=validate.text, help="machine parameters: mem= dma32= seed= rounds= vcpus=")
    s.add_argument("--workload", default="fresh", type=validate.name, help="fresh (just after boot) or churn")
    s.add_argument("--design", type=validate.text, help="design: PRESET[+SWITCH...] (default v6.18)")
    s.set_defaults(func=cmd_show)

    a = sub.add_parser("ab", help="build two git revisions in worktrees and run a suite on both, "
                       "interleaved (does my patch help?)")
    a.add_argument("rev_a", type=validate.name, metavar="REV_A", help="the baseline revision (e.g. HEAD~1)")
    a.add_argument("rev_b", type=validate.name, metavar="REV_B", help="the revision to judge (e.g. HEAD)")
    a.add_argument("suite", nargs="?", type=validate.name)
    a.add_argument("params", nargs="*", type=validate.text, help="key=value parameters of the suite "
                   "(--mode instr: one may be the loop, key=N1:N2, and per=X its operations)")
    a.add_argument("--design", default="v6.18", type=validate.text, help="the design both revisions run (default v6.18)")
    a.add_argument("--mode", default="wall", choices=("wall", "instr"),
                   help="wall: timed runs, interleaved; instr: callgrind instructions per "
                        "operation, the difference of two loop lengths (the budget check's code)")
    a.add_argument("--budgets", nargs="?", const=str(budgets.TABLE), default=None, metavar="TABLE",
                   type=validate.path,
                   help="instructions of every path of the budget table on both revisions")
    a.add_argument("--jobs", type=int, default=None,
                   help="callgrind processes at once (--mode instr; default: the cores)")
    a.add_argument("--reps", type=int, default=3, help=f"runs per revision, 1..{MAX_REPS} (default 3)")
    a.add_argument("--out", default=str(OUT), type=validate.path,
                   help="results directory (default out)")
    a.set_defaults(func=cmd_ab)

    bg = sub.add_parser("budgets", help="check the hot paths' instruction budgets "
                        "(callgrind; fails over a budget by more than 3%%)")
    bg.add_argument("paths", nargs="*", metavar="PATH", type=validate.name, help="only these paths of the table")
    bg.add_argument("--table", default=str(budgets.TABLE), type=validate.path, help="the budget table")
    bg.add_argument("--bench", default=None, type=validate.path, help="the pagelab-bench to count (default: as bench)")
    bg.add_argument("--jobs", type=int, default=None, help="callgrind processes at once "
                    "(default: the cores)")
    bg.set_defaults(func=cmd_budgets)

    lp = sub.add_parser("list", help="suites and their keys, design presets, switches, machine "
                        "profiles, metrics")
    lp.add_argument("what", nargs="?", default="all",
                    choices=["all", "suites", "presets", "switches", "machines", "metrics"])
    lp.add_argument("--metrics", action="store_true",
                    help="the metric registry: every figure's id, name, unit, which way is "
                         "better, family, and whether a replay compares it with the kernel")
    lp.add_argument("--json", action="store_true", help="the whole listing as JSON")
    lp.set_defaults(func=cmd_list)

    t = sub.add_parser("trace", help="record a real kernel's page-allocator trace (root)")
    tsub = t.add_subparsers(dest="trace_cmd", required=True, metavar="ACTION")
    tr = tsub.add_parser("record", help="record ftrace kmem/vmalloc events and /proc snapshots",
                         usage="pagelab trace record [-o FILE] [--seconds N] [--buffer-kb KB] [-- CMD ...]")
    tr.add_argument("-o", "--output", type=validate.path, help="artifact: NAME.pltrace directory, or .tar.gz/.tar.zst "
                    "(default trace-TIME.pltrace)")
    tr.add_argument("--seconds", type=float,
                    help="record this long (with CMD: at most this long), at most 86400")
    tr.add_argument("--buffer-kb", type=int, help="ring buffer per CPU, 64 up to 1/8 of memory over "
                    "the CPUs (default: sized from a probe)")
    tr.set_defaults(func=cmd_trace_record, command=[])
    ts = tsub.add_parser("snapshot", help="copy /proc/{buddyinfo,pagetypeinfo,zoneinfo,vmstat,"
                         "meminfo} and the vm sysctls into DIR, for a trace made by hand "
                         "(perf record, trace-cmd): take it inside the recorded command",
                         usage="pagelab trace snapshot DIR")
    ts.add_argument("dir", metavar="DIR", type=validate.path, help="a new directory (e.g. before/ or after/)")
    ts.set_defaults(func=cmd_trace_snapshot)
    ti = tsub.add_parser("info", help="what a trace holds, and who allocated: page allocations "
                         "and frees by task, the recorded command's share",
                         usage="pagelab trace info TRACE [--tasks PID,COMM,...] [--command-pid PID] "
                         "[--top N] [--json]")
    ti.add_argument("trace", type=validate.path, help="artifact directory, .tar.gz/.tar.zst archive, or a bare trace "
                    "file (trace.dat or text)")
    ti.add_argument("--tasks", type=validate.text, help="pids, comms or 'command', comma-separated: their share apart")
    ti.add_argument("--command-pid", type=int, help="the recorded command's pid (an artifact's "
                    "manifest gives it)")
    ti.add_argument("--top", type=int, default=10, help="tasks listed by name")
    ti.add_argument("--json", action="store_true", help="the engine's record as JSON")
    ti.set_defaults(func=cmd_trace_info)
    tc = tsub.add_parser("convert", help="a trace (trace.dat or text) as pagelab's text; an "
                         "artifact as an artifact with that text",
                         usage="pagelab trace convert IN OUT")
    tc.add_argument("input", metavar="IN", type=validate.path, help="artifact or bare trace")
    tc.add_argument("output", metavar="OUT", type=validate.path, help="OUT.txt, OUT.txt.zst, or (an artifact IN) "
                    "OUT.pltrace")
    tc.set_defaults(func=cmd_trace_convert)

    rp = sub.add_parser("replay", help="replay a real trace under designs; fidelity vs the kernel")
    rp.add_argument("trace", type=validate.path, help="artifact directory, .tar.gz/.tar.zst archive, or a bare trace file")
    rp.add_argument("--design", action="append", type=validate.text, help="design preset or switches (repeatable; "
                    "default v6.18)")
    rp.add_argument("--state", choices=replay.STATES, help="starting machine state (default "
                    "positional when the trace has a snapshot, else fresh)")
    rp.add_argument("--snapshot", metavar="DIR", type=validate.path, help="/proc/{zoneinfo,buddyinfo,pagetypeinfo,"
                    "vmstat} copied right before the trace (for a bare trace file; an "
                    "artifact's before/ is the default)")
    rp.add_argument("--after", metavar="DIR", type=validate.path, help="the same /proc files copied right after the "
                    "trace: the kernel's end state for the table (an artifact's after/ is the "
                    "default)")
    rp.add_argument("--emit-trace", metavar="DIR", type=validate.path, help="write pagelab's own ftrace text per design")
    rp.add_argument("--tick", type=validate.name, help="when each vCPU's vmstat tick runs: kernel (the trace's own "
                    "phase and kworker drains, default: the typical of four runs around it, or across the "
                    "second without one), first (1 s after the first event) or 0..999 (ms into "
                    "each second)")
    rp.add_argument("--no-pcp-busy", action="store_true",
                    help="replay every free to its CPU's PCP (default: the frees the trace shows "
                    "found their PCP lock held go straight to the buddy, as the kernel ran them)")
    rp.add_argument("--no-cache", action="store_true",
                    help="parse the trace's text and leave the decoded-stream cache alone "
                    "(default: the events come from the cache when an earlier run of the same "
                    "file content stored them; PAGELAB_CACHE_DIR, PAGELAB_NO_CACHE=1, "
                    "PAGELAB_CACHE_MAX_MB; see docs/performance.md)")
    rp.add_argument("--faithful", metavar="DESIGN", type=validate.text, help="the design judged against the kernel "
                    "(default v6.18; run first if no --design builds it); every other design is "
                    "shown as its change against it")
    rp.add_argument("--label", type=validate.name, help="name of this trace in tables and file names")
    rp.add_argument("--tasks", type=validate.text, help="report these tasks' share too (pids, comms or 'command', "
                    "comma-separated); the replay stays system-wide")
    rp.add_argument("--reps", type=int, default=1,
                    help=f"replays per design, interleaved, 1..{MAX_REPS} (default 1)")
    rp.add_argument("--together", action="store_true", default=None,
                    help="one pagelab-bench process per rep for all designs (design=A,B,...; "
                         "the default with one rep: the trace is parsed once)")
    rp.add_argument("--jobs", type=int, default=None,
                    help="replays at once, 1..256: designs x tick probes in processes of their "
                         "own (default: the cores; with --reps > 1, one process at a time)")
    rp.add_argument("-o", "--output", type=validate.path, help="results file (default out/replay-LABEL-STATE-TIME.json)")
    rp.set_defaults(func=cmd_replay, argv=None)

    rt = sub.add_parser("replay-table", help="zone->lock and fragmentation per trace and design "
                        "from saved replay results")
    rt.add_argument("results", nargs="+", type=validate.path, help="results files of pagelab replay")
    rt.set_defaults(func=cmd_replay_table)
    expcli.add_parsers(sub, OneLineParser)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if argv[:2] == ["trace", "record"] and "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
        if not command:
            print("pagelab trace record: nothing after '--'", file=sys.stderr)
            return 2
    try:
        args, extra = ap.parse_known_args(argv)
        if command:
            args.command = command
        # key=value words may come after options: they are parameters too
        for word in extra:
            listed = getattr(args, "params", None) if args.cmd != "reproduce" else args.targets
            if "=" in word and not word.startswith("-") and listed is not None:
                listed.append(word)
            else:
                ap.error(f"unrecognized argument '{word}'")
    except SystemExit as e:          # argparse already printed its one-line error
        return int(e.code or 0)
    if args.cmd in ("bench", "replay", "run"):
        args.argv = ["pagelab"] + argv
    try:
        rc = args.func(args)
        sys.stdout.flush()        # a full or closed stdout is an error here, not at exit
        return rc
    except (BenchError, ValidationError, TraceError) as e:
        return _fail(str(e))
    except expcli.ERRORS as e:         # an experiment file: one line per bad field
        lines = expcli.error_lines(e)
        for line in lines[:-1]:
            print(f"pagelab: {line}", file=sys.stderr)
        return _fail(lines[-1])
    except KeyboardInterrupt:
        print("pagelab: interrupted", file=sys.stderr)
        return 130
    except OSError as e:          # an output that cannot be written, stdout on /dev/full
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        return _fail(f"cannot write{where}: {e.strerror or e}")
    except RecursionError:
        return _fail("input nested too deeply")
    except Exception as e:  # noqa: BLE001 - the contract: one line, never a traceback
        return _fail(f"internal error: {type(e).__name__}: {e}")


def _fail(msg: str) -> int:
    """One line on stderr; stdout is dropped so that exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    first = msg.strip().splitlines()[0] if msg.strip() else "error"
    print(f"pagelab: {first}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
