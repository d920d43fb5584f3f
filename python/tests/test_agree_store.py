"""`pagelab agree` reads seed experiments from the results store: a seed run by
`pagelab run` and the same seed run by `pagelab reproduce` give the same judged
cells (the same rows, columns and the seed's own marks), and a store without a
seed experiment, or with a damaged one, is refused in one line."""
from __future__ import annotations

import json

import pytest

from pagelab import agree, exprun
from pagelab import experiments as E
from pagelab.cli import main
from pagelab.store import Store

SEED001 = """
title = "seed 001, quick"
kind = "seed"
[seed]
id = "001"
mode = "quick"
"""


def _quiet(*_a, **_k):
    pass


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("agree-store")
    (tmp / "seed-001.toml").write_text(SEED001)
    store = tmp / "s.duckdb"
    with Store(store) as st:
        got = exprun.run(E.load(str(tmp / "seed-001.toml")), st, jobs=1, echo=_quiet)
    assert not got["failed"]
    assert main(["reproduce", "001", "--quick", "--no-report", "--out", str(tmp / "rep")]) == 0
    return store, tmp / "rep"


def test_store_and_reproduce_judge_the_same_cells(runs):
    store, rep = runs
    a, b = agree._cells(f"store:seed-*@{store}"), agree._cells(rep)
    assert a and set(a) == set(b)
    assert {k: c["seed_mark"] for k, c in a.items()} == {k: c["seed_mark"] for k, c in b.items()}


def test_agree_cli_takes_the_store(runs, capsys):
    store, rep = runs
    assert main(["agree", "--seed", f"store:@{store}", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| 001 |" in out and f"agree --seed store:@{store}" in out
    assert main(["agree", f"store:seed-001@{store}", str(rep)]) == 0
    assert "same verdict mark" in capsys.readouterr().out


def test_store_without_a_seed_experiment_is_one_line(runs, capfd):
    store, _ = runs
    assert main(["agree", "--seed", f"store:replay-*@{store}"]) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no seed experiment" in err[0]


def test_damaged_seed_spec_is_not_trusted(runs, tmp_path, capfd):
    store, _ = runs
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(store.read_bytes())
    with Store(bad) as st:
        rows = st.cell_rows("seed-001")
        spec = rows[0]["spec"]
        spec["seed"]["id"] = "../../etc"
        st.db.execute("UPDATE cells SET spec = ? WHERE experiment = 'seed-001'",
                      [json.dumps(spec)])
    assert main(["agree", "--seed", f"store:@{bad}"]) == 2
    assert len(capfd.readouterr().err.strip().splitlines()) == 1
