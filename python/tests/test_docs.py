"""The documentation checks (make test-docs, and make test-py):

- README.md stays a README: at most 300 lines, and every link it makes into
  docs/ and every file it names under docs/ exists;
- its Python tour is docs/examples/tour.py, which the example tests run;
- the committed man pages (man/*.1) are what scripts/gen-docs.py makes from
  the parsers today, so a new option cannot be left out of `man pagelab`;
- no tracked file speaks of the project's working history or of one machine's
  paths (scripts/check-hygiene.py), and the check itself catches each kind.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_readme_is_short():
    lines = README.read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines"


def test_readme_links_into_docs_exist():
    text = README.read_text()
    targets = re.findall(r"\]\((docs/[^)#\s]+)", text) + re.findall(r"`(docs/[\w./-]+)`", text)
    assert targets, "README.md links nowhere into docs/"
    # scripts/gen-docs.py writes these at each docs build (they are not tracked)
    generated = {f"docs/reference/{n}.md" for n in ("cli", "suites", "designs", "c-api", "metrics")}
    generated.add("docs/results/index.md")
    for t in targets:
        assert (ROOT / t).exists() or t in generated, f"README.md names {t}, which does not exist"


def test_readme_python_tour_is_the_tested_example():
    # docs/examples/tour.py runs in test_examples.py; the README shows it verbatim.
    assert (ROOT / "docs" / "examples" / "tour.py").read_text() in README.read_text()


def _bench():
    bench = os.environ.get("PAGELAB_BENCH") or str(ROOT / "build" / "pagelab-bench")
    if not Path(bench).is_file():
        if os.environ.get("PAGELAB_REQUIRE_LIB"):
            pytest.fail(f"no pagelab-bench at {bench}")
        pytest.skip("pagelab-bench not built")
    return bench


def test_man_pages_are_current(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen-docs.py"), "--bench", _bench(),
                    "--docs", str(tmp_path / "docs"), "--man", str(tmp_path / "man")], check=True)
    for page in ("pagelab.1", "pagelab-bench.1"):
        fresh = (tmp_path / "man" / page).read_text()
        assert (ROOT / "man" / page).read_text() == fresh, \
            f"man/{page} is out of date: run make man"


def test_reference_pages_cover_everything(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen-docs.py"), "--bench", _bench(),
                    "--docs", str(tmp_path / "docs")], check=True)
    from pagelab.cli import build_parser
    cli = (tmp_path / "docs" / "reference" / "cli.md").read_text()
    for act in build_parser()._subparsers._group_actions[0].choices:
        assert f"`pagelab {act}`" in cli
    import json
    lst = json.loads(subprocess.run([_bench(), "--list", "--json"], check=True,
                                    capture_output=True, text=True).stdout)
    suites = (tmp_path / "docs" / "reference" / "suites.md").read_text()
    designs = (tmp_path / "docs" / "reference" / "designs.md").read_text()
    for s in lst["suites"]:
        assert f"## `{s['name']}`" in suites
        for k in s["keys"]:
            assert f"| `{k['key']}` |" in suites
    for sw in lst["switches"]:
        assert f"| `{sw['name']}` |" in designs
    capi = (tmp_path / "docs" / "reference" / "c-api.md").read_text()
    for fn in ("pl_machine_create()", "alloc_pages()", "vmalloc()", "pl_show_buddyinfo()"):
        assert fn in capi


def test_tracked_files_speak_of_the_project_only():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "check-hygiene.py")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:]


@pytest.mark.parametrize("line, bad", [
    ("as measured at stop 30", True), ("see Issue #13", True), ("(issue 16's table)", True),
    ("run at aeff532 on", True), ("ran in this session", True),
    ("from /work/traces/x", True), ("in /home/alice/src", True), ("cp /root/.bashrc", True),
    ("the pageblock stops at order 9", False), ("an issue with 3 CPUs", False),
    ("commit a06157804399 (v6.19-rc1)", False), ("/proc/buddyinfo", False),
    ("~/work/x and build/work/y", False),
])
def test_hygiene_patterns(line, bad):
    import importlib.util
    spec = importlib.util.spec_from_file_location("check_hygiene", ROOT / "scripts" / "check-hygiene.py")
    hy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hy)
    assert any(rx.search(line) for _, rx in hy.RULES) == bad
