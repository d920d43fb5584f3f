#!/usr/bin/env python3
"""The project speaks of itself only: check every tracked text file.

  scripts/check-hygiene.py [--root DIR]     (CTest `hygiene`, make test-docs)

Fails (exit 1, one line per finding: path:line: what; line 0 is the file's
name) on
  - "stop N" or "issue N" as words, any case ("Stop 30", "issue #13", "issues 15");
  - an account of how the work was organised ("this session", "a helper",
    "the agents", "the lead");
  - a "measured at <commit>" diary ("measured at 1acebf2", "at commit 8b67847");
  - an absolute path of a particular machine (/work/..., /home/<user>, /root/...).
CHANGELOG.md (history is its subject) and files git does not track are not
checked; neither is this script's own pattern list. Results carry their commit
and date as data fields (e.g. "commit": "..."), which none of these patterns
matches.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

SKIP = {"CHANGELOG.md", "scripts/check-hygiene.py", "python/tests/test_docs.py"}

RULES = [
    ("stop/issue number", re.compile(r"\b(?:stop|issue)s?[\s_-]*#?\d+\b", re.I)),
    ("working history", re.compile(
        r"\b(?:this|the|a|one|each|another|previous|earlier) session\b|\bsession's\b"
        r"|\bhelpers?\b(?= (?:recorded|wrote|made|ran|measured))|\b(?:eight|other|several) agents\b"
        r"|\bthe lead\b", re.I)),
    ("measured-at diary", re.compile(
        r"\b(?:measured|re-measured|regenerated|rerun|run|made|taken) at (?:commit )?[0-9a-f]{7,40}\b"
        r"|\bat commit [0-9a-f]{7,40}\b", re.I)),
    ("machine path", re.compile(r"(?<![\w.~-])/(?:work|root)/|(?<![\w.~-])/home/[a-z_][a-z0-9_-]*")),
]


def tracked(root: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                         capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p]


def findings(root: Path):
    for rel in tracked(root):
        if rel in SKIP:
            continue
        for what, rx in RULES[:1]:          # a file's name too ("issue16-...", "...-stop30")
            m = rx.search(rel.replace("/", " "))
            if m:
                yield rel, 0, f"file name: {what}", m.group(0)
        path = root / rel
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue                      # binary (fuzz corpus, images)
        text = data.decode("utf-8", "replace")
        for n, line in enumerate(text.splitlines(), 1):
            for what, rx in RULES:
                m = rx.search(line)
                if m:
                    yield rel, n, what, m.group(0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    args = ap.parse_args()
    bad = 0
    for rel, n, what, text in findings(Path(args.root)):
        print(f"{rel}:{n}: {what}: {text!r}")
        bad += 1
    if bad:
        print(f"check-hygiene: {bad} findings", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
