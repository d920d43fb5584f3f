#!/usr/bin/env bash
# update-verdicts.sh [RUN] - regenerate the seeds' verdict table: docs/verdicts.md
# (included by docs/seeds.md) and the README's copy between its verdicts markers,
# both the output of `pagelab agree --seed RUN --markdown`.  RUN is "store:" (the
# default: the seed experiments in the results store, after `pagelab run seed-000`
# ... `seed-004`; $PAGELAB_STORE names another store file) or a directory of
# `pagelab reproduce all --out DIR`.  python/tests/test_docs.py checks that the
# two copies are the same.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-store:}
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
