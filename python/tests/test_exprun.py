"""The experiment runner: a Dask LocalCluster (loopback, 2 workers) and the local
pool store the same counts; a worker killed mid-run loses and duplicates
nothing; a run interrupted in the middle is completed by --resume."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from pagelab import experiments as E
from pagelab import exprun
from pagelab.store import Store

REPLAY = """
title = "small replay"
kind = "replay"
designs = ["v6.18", "pcp-owner"]
reps = {reps}
[replay]
traces = "tests/fixtures/traces/ftrace-6.18.txt"
"""
INSTR = """
title = "one instr cell"
kind = "bench"
designs = ["v6.18"]
mode = "instr"
[bench]
suite = "page_alloc_high_order"
params = {{ order = "3", test_loop_count = "20", reps = "1", floor = "0", mem = "64M", dma32 = "16M" }}
"""


def _exp(tmp_path: Path, name: str, text: str) -> E.Experiment:
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return E.load(str(p))


def _figures(path: Path, exp: str) -> list[tuple]:
    with Store(path, read_only=True) as s:
        _, rows = s.query("SELECT cell, design, metric, value, rep FROM figures WHERE "
                          "experiment = ? ORDER BY ALL", [exp])
    return rows


def _quiet(*_a, **_k):
    pass


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                  silence_logs=50) as c:
        with distributed.Client(c) as client:
            yield c, client


def test_dask_cluster_stores_what_the_local_pool_stores(tmp_path, cluster):
    c, _client = cluster
    exps = [_exp(tmp_path, "small-replay", REPLAY.format(reps=1)),
            _exp(tmp_path, "small-instr", INSTR.format())]
    for exp in exps:
        with Store(tmp_path / "local.duckdb") as s:
            local = exprun.run(exp, s, jobs=2, echo=_quiet)
        with Store(tmp_path / "dask.duckdb") as s:
            dask = exprun.run(exp, s, cluster=c.scheduler_address, echo=_quiet)
        assert not local["failed"] and not dask["failed"]
        a, b = _figures(tmp_path / "local.duckdb", exp.name), _figures(tmp_path / "dask.duckdb",
                                                                       exp.name)
        assert a and a == b
        metrics = {r[2] for r in a}
        if exp.kind == "replay":
            assert {r[1] for r in a} == {"kernel", "v6.18", "pcp-owner"}
            assert "zone-lock-est" in metrics          # the registry's id
        else:
            assert any(r[2] == "instructions" and r[3] > 0 for r in a)   # callgrind counted


def test_worker_killed_mid_run_loses_and_duplicates_nothing(tmp_path, cluster):
    c, client = cluster
    exp = _exp(tmp_path, "killed", REPLAY.format(reps=2))
    ncells = len(E.cells(exp))
    killed = []

    def kill_a_busy_worker(line: str) -> None:
        # after the first cell arrives, kill (SIGKILL) a worker that is running one
        if killed or "[1/" not in line:
            return
        pids = client.run(os.getpid)
        busy = [w for w, keys in client.processing().items() if keys] or list(pids)
        os.kill(pids[busy[0]], signal.SIGKILL)
        killed.append(busy[0])

    with Store(tmp_path / "s.duckdb") as s:
        res = exprun.run(exp, s, cluster=c.scheduler_address, echo=kill_a_busy_worker)
    with Store(tmp_path / "s.duckdb", read_only=True) as s:
        why = [r["stderr"] for r in s.cell_rows("killed") if r["status"] != "ok"]
    assert killed and not res["failed"] and len(res["ok"]) == ncells, why
    with Store(tmp_path / "s.duckdb", read_only=True) as s:
        _, dup = s.query("SELECT cell, design, metric, rep, count(*) FROM figures GROUP BY ALL "
                         "HAVING count(*) > 1")
        _, cells = s.query("SELECT count(*), count(DISTINCT cell) FROM cells WHERE status = 'ok'")
    assert dup == [] and cells == [(ncells, ncells)]
    with Store(tmp_path / "ref.duckdb") as s:
        exprun.run(exp, s, jobs=2, echo=_quiet)
    assert _figures(tmp_path / "s.duckdb", "killed") == _figures(tmp_path / "ref.duckdb", "killed")
    client.wait_for_workers(2, timeout=60)      # the nanny restarted it


def test_interrupted_run_is_completed_by_resume(tmp_path):
    exp = _exp(tmp_path, "resumed", REPLAY.format(reps=2))
    ncells = len(E.cells(exp))
    seen = []

    def interrupt_after_two(line: str) -> None:
        if "/" in line and line.strip().startswith("["):
            seen.append(line)
            if len(seen) == 2:
                raise KeyboardInterrupt      # as ^C on `pagelab run` would

    store = tmp_path / "s.duckdb"
    with Store(store) as s, pytest.raises(KeyboardInterrupt):
        exprun.run(exp, s, jobs=1, echo=interrupt_after_two)
    with Store(store, read_only=True) as s:
        assert len(s.ok_cells("resumed")) == 2
        assert s.last_run("resumed")["status"] == "interrupted"
    ran = []
    with Store(store) as s:
        res = exprun.run(exp, s, resume=True, jobs=2, echo=ran.append)
    assert len(res["ok"]) == ncells - 2 and not res["failed"]
    assert "(2 already in the store)" in ran[0]
    with Store(tmp_path / "ref.duckdb") as s:
        exprun.run(exp, s, jobs=2, echo=_quiet)
    assert _figures(store, "resumed") == _figures(tmp_path / "ref.duckdb", "resumed")


def test_failing_cell_is_retried_then_recorded_with_its_stderr(tmp_path):
    exp = _exp(tmp_path, "fails", INSTR.format().replace('order = "3"', 'order = "99"')
               .replace('mode = "instr"', 'mode = "wall"\nretries = 1'))
    with Store(tmp_path / "s.duckdb") as s:
        res = exprun.run(exp, s, jobs=1, echo=_quiet)
        rows = s.cell_rows("fails")
        last = s.last_run("fails")
    assert res["failed"] and not res["ok"]
    assert rows[0]["status"] == "failed" and rows[0]["attempts"] == 2
    assert "order" in rows[0]["stderr"]
    assert last["status"] == "incomplete" and rows[0]["cell"] in last["missing"]
