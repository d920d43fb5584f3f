"""The `pagelab` command. This first version has `bench`; compare, reproduce,
report and show arrive with the lab-bench issue."""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict

from .runner import BenchError, run_interleaved


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
    results = run_interleaved(args.suite, _params(args.params), designs, args.reps)
    if args.output:
        with open(args.output, "w") as f:
            for m in results:
                f.write(json.dumps(m.__dict__) + "\n")
    table = defaultdict(list)
    for m in results:
        table[(m.test, m.design, m.unit)].append(m.value)
    print(f"{'test':<28} {'design':<12} {'mean':>12} {'min':>12} {'n':>3}")
    for (test, design, unit), vals in table.items():
        print(f"{test:<28} {design:<12} {statistics.fmean(vals):>9.2f} {unit:<2} "
              f"{min(vals):>9.2f} {unit:<2} {len(vals):>3}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="pagelab", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench", help="run a suite for one or more designs, interleaved")
    b.add_argument("suite")
    b.add_argument("params", nargs="*", help="key=value parameters of the suite")
    b.add_argument("--design", action="append", help="design preset (repeatable)")
    b.add_argument("--reps", type=int, default=1)
    b.add_argument("-o", "--output", help="save the measurements as JSON lines")
    b.set_defaults(func=cmd_bench)
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except BenchError as e:
        print(f"pagelab: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
