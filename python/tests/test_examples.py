"""docs/examples/*.py run top to bottom (the notebook-style examples of the
Python API), so the docs cannot rot: any exception or failed assert fails.
`make test-py` sets PAGELAB_REQUIRE_LIB=1: there a missing libpagelab.so is a
failure, not a skip, so the examples cannot silently stop running."""
import os
import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "docs" / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tmp_path, monkeypatch, capsys):
    pagelab = pytest.importorskip("pagelab")
    try:
        pagelab.version()
    except ImportError as e:
        if os.environ.get("PAGELAB_REQUIRE_LIB"):
            raise
        pytest.skip(str(e))
    monkeypatch.chdir(tmp_path)         # out/ goes to a scratch directory
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_there_are_examples():
    assert {p.name for p in EXAMPLES} >= {"quickstart.py", "fragmentation.py", "targeted_drain.py", "tour.py"}
