#!/usr/bin/env bash
# update-verdicts.sh RUN_DIR - regenerate the seeds' verdict table from a run of
# `pagelab reproduce all --out RUN_DIR`: docs/verdicts.md (included by
# docs/seeds.md) and the README's copy between its verdicts markers, both the
# output of `pagelab agree --seed RUN_DIR --markdown`. python/tests/test_docs.py
# checks that the two are the same.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:?usage: scripts/update-verdicts.sh RUN_DIR (from pagelab reproduce all --out RUN_DIR)}
.venv/bin/python -m pagelab agree --seed "$run" --markdown > docs/verdicts.md.new
mv docs/verdicts.md.new docs/verdicts.md
.venv/bin/python - <<'PY'
import re
from pathlib import Path
readme = Path("README.md")
table = Path("docs/verdicts.md").read_text().strip()
text, n = re.subn(r"(<!-- verdicts: begin[^>]*-->\n).*?(<!-- verdicts: end -->)",
                  lambda m: m.group(1) + table + "\n" + m.group(2), readme.read_text(), flags=re.S)
if n != 1:
    raise SystemExit("update-verdicts: README.md has no verdicts block")
readme.write_text(text)
PY
echo "update-verdicts: docs/verdicts.md and README.md"
