"""docs/results/index.md lists every experiment: one run in this store gets its row
from the store, a page written from another store keeps its own row (and link)
until this store runs that experiment, and one never run says so."""
from __future__ import annotations

from pagelab import pages
from pagelab.store import Store

KEPT = ("| [seed-001](seed-001.md) | Seed 001: t | 2026-01-01 00:00 (done) | 3 | "
        "0123456789 |")


def test_index_keeps_pages_from_another_store(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    (out / "seed-001.md").write_text("# seed 001\n")
    (out / "index.md").write_text("# Results\n\n" + KEPT + "\n| [gone](gone.md) | x |\n")
    with Store(tmp_path / "s.duckdb") as st:
        pages.write_index(st, out, ["seed-001", "seed-002"])
    text = (out / "index.md").read_text()
    assert KEPT in text
    assert "| seed-002 |" in text and "| never | 0 |" in text
    assert "gone" not in text


def test_index_drops_a_kept_row_whose_page_is_gone(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    (out / "index.md").write_text("# Results\n\n" + KEPT + "\n")
    with Store(tmp_path / "s.duckdb") as st:
        pages.write_index(st, out, ["seed-001"])
    text = (out / "index.md").read_text()
    assert KEPT not in text and "| seed-001 |" in text
