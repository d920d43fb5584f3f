"""Text table layouts, each the one a seed or a community tool prints.

* box():       the boxed table of seed 002 (``+----+`` rules around every row,
               cells centred, an odd leftover space going to the left).
* fastpath():  Arm Fastpath's results table of seed 000 (``+====+`` under the
               header, cells left-aligned, multi-line headers).
* mmtests():   mmtests' compare report (``Min  test  value (  pct%)``, two
               header lines from the column names split at the first '-',
               asterisks instead of parentheses on significant cells).

They take strings (or numbers for mmtests) and do no statistics.
"""
from __future__ import annotations

import math
from typing import Sequence


def _centre(text: str, width: int) -> str:
    pad = width - len(text)
    left = (pad + 1) // 2
    return " " * left + text + " " * (pad - left)


def box(header: Sequence[Sequence[str]], rows: Sequence[Sequence[str]]) -> str:
    """Seed 002's layout: every row boxed, every cell centred.

    @header: one or more header lines, each a list of cells (the first cell
    is the empty corner); @rows: the body.
    """
    ncol = len(header[0])
    widths = [max(len(r[c]) for r in list(header) + list(rows)) for c in range(ncol)]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: Sequence[str]) -> str:
        return "|" + "|".join(" " + _centre(c, w) + " " for c, w in zip(cells, widths)) + "|"

    out = [rule] + [line(h) for h in header] + [rule]
    for r in rows:
        out += [line(r), rule]
    return "\n".join(out)


def fastpath(header: Sequence[Sequence[str]], rows: Sequence[Sequence[str]]) -> str:
    """Fastpath's layout (seed 000): ``+==+`` under the header, left-aligned."""
    ncol = len(header[0])
    widths = [max(len(r[c]) for r in list(header) + list(rows)) for c in range(ncol)]

    def rule(ch: str) -> str:
        return "+" + "+".join(ch * (w + 2) for w in widths) + "+"

    def line(cells: Sequence[str]) -> str:
        return "|" + "|".join(" " + c.ljust(w) + " " for c, w in zip(cells, widths)) + "|"

    return "\n".join([rule("-")] + [line(h) for h in header] + [rule("=")]
                     + [line(r) for r in rows] + [rule("-")])


# mmtests' field widths: 12-character values with 2 decimals, 7-character
# percentages; the stat and test columns are as wide as their longest entry.
MM_FIELD = 12
MM_COMPARE = 7


def mm_header_split(name: str) -> tuple[str, str]:
    """Split a column name into mmtests' two header lines at the first '-'."""
    i = name.find("-")
    return (name, "") if i < 0 else (name[:i], name[i + 1:])


def _mm_pct(p: float, significant: bool) -> str:
    # mmtests prints nan%; an undefined change (a zero baseline) reads "n/a"
    body = f"{p:{MM_COMPARE}.2f}%" if math.isfinite(p) else f"{'n/a':>{MM_COMPARE + 1}}"
    return f" *{body}*" if significant else f" ({body})"


def mmtests(columns: Sequence[str],
            rows: Sequence[tuple[str, str, Sequence[float], Sequence[float], Sequence[bool]]],
            stat_width: int | None = None, test_width: int | None = None) -> str:
    """mmtests' compare layout.

    @columns: the column (kernel/design) names, baseline first.  @rows:
    (stat, test, values per column, percentage per column, significant per
    column).  @stat_width: the stat column's width when it must fit stats
    not printed here (mmtests sizes it from every summary statistic);
    @test_width likewise for the test column.
    """
    sw = max([len(r[0]) for r in rows] + [stat_width or 0])
    tw = max([len(r[1]) for r in rows] + [test_width or 0])
    lead = sw + 1 + tw
    colw = MM_FIELD + MM_COMPARE + 4
    heads = [mm_header_split(c) for c in columns]
    out = [" " * lead + "".join(f"{h[0]:>{colw}}" for h in heads),
           " " * lead + "".join(f"{h[1]:>{colw}}" for h in heads)]
    for stat, test, values, pcts, sig in rows:
        cells = "".join(f"{v:{MM_FIELD}.2f}{_mm_pct(p, s)}" for v, p, s in zip(values, pcts, sig))
        out.append(f"{stat:<{sw}} {test:<{tw}}{cells}")
    return "\n".join(line.rstrip() for line in out)
