"""The results store: one DuckDB file, one row per measured figure.

Tables:
  runs     one row per `pagelab run`: experiment, command, commit, dirty flag,
           machine, start and end time, cells ok/failed, status.
  cells    the latest outcome of every cell of every experiment: status
           (ok/failed), attempts, worker, seconds, stderr of a failure, the
           cell's spec and dimensions, and its raw JSON records (what
           pagelab-bench printed, the interchange format).
  figures  one row per figure of an ok cell: experiment, cell, design,
           metric id, value, unit, rep, mode, dimensions (JSON), commit,
           dirty flag, machine, host load, time.

Invariants:
- only the runner process writes (workers return results to it), and a cell
  is written in ONE transaction: its figures replace any earlier ones of the
  same cell and its cells row is updated with them, so a run killed at any
  point leaves every cell either wholly old or wholly new;
- a failed cell never erases an earlier good result of the same cell (its
  failure is kept in the run's row);
- (experiment, cell) is unique in cells, and figures hold rows only for
  cells whose status is ok.

Metric ids are the metric registry's (metrics.py, src/machine/metric.c): a
record's own figure is the id the record names ("metric"); a replay's
counters are the ids of the registry's replay metrics (zone_lock_acquisitions
-> "zone-lock-est"); other counters, which the registry does not list, are
"counters.NAME", and a virtual-time run's fields "vtime.NAME".  A record from
a pagelab-bench older than the registry falls back to its test name.  The
test column keeps the record's test; its suffixes are dimensions
("zone-lock-per-Mop-v32": vcpus=32; "bulk-o0-get-t8": threads=8;
test_vmalloc's ", worker 3": worker=3).
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from pathlib import Path

from . import files

DEFAULT_PATH = Path("out") / "results.duckdb"

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS runs (
        run_id BIGINT PRIMARY KEY, experiment VARCHAR, command VARCHAR, commit VARCHAR,
        dirty BOOLEAN, machine VARCHAR, started TIMESTAMP, finished TIMESTAMP,
        cells INTEGER, ok INTEGER, failed INTEGER, missing VARCHAR, status VARCHAR,
        workers VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS cells (
        experiment VARCHAR, cell VARCHAR, run_id BIGINT, status VARCHAR, attempts INTEGER,
        worker VARCHAR, seconds DOUBLE, stderr VARCHAR, spec VARCHAR, dims VARCHAR,
        records VARCHAR, time TIMESTAMP, PRIMARY KEY (experiment, cell))""",
    """CREATE TABLE IF NOT EXISTS figures (
        experiment VARCHAR, cell VARCHAR, run_id BIGINT, suite VARCHAR, test VARCHAR,
        design VARCHAR, metric VARCHAR, value DOUBLE, unit VARCHAR, rep INTEGER,
        mode VARCHAR, dims VARCHAR, commit VARCHAR, dirty BOOLEAN, machine VARCHAR,
        host_load DOUBLE, time TIMESTAMP)""",
]

_VCPU_SUFFIX = re.compile(r"^(.*)-([vt])(\d+)$")      # -v32: vCPUs, -t8: threads
_WORKER_SUFFIX = re.compile(r"^(.*), worker (\d+)$")


class StoreError(RuntimeError):
    """The store cannot be opened or read (one line)."""


def _duckdb():
    try:
        import duckdb
    except ImportError:
        raise StoreError("the results store needs duckdb (make deps installs it)") from None
    return duckdb


def metric_of(test: str) -> tuple[str, dict]:
    """A record's test name -> (metric id, dimensions it named)."""
    dims = {}
    m = _WORKER_SUFFIX.match(test)
    if m:
        test, dims["worker"] = m.group(1), m.group(2)
    m = _VCPU_SUFFIX.match(test)
    if m:
        test, dims["vcpus" if m.group(2) == "v" else "threads"] = m.group(1), m.group(3)
    return test, dims


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


_COUNTER_IDS: dict | None = None


def replay_counter_ids() -> dict[str, str]:
    """Replay counter name -> the registry's metric id (plain counts, not ratios)."""
    global _COUNTER_IDS
    if _COUNTER_IDS is None:
        from . import metrics
        try:
            reg = metrics.registry()
        except metrics.MetricError:
            return {}
        _COUNTER_IDS = {m.counter: m.id for m in reg.values()
                        if m.counter and not m.per and m.family != "fidelity"
                        and m.id != "free-high-order-share"}
    return _COUNTER_IDS


def figure_rows(records: list[dict], dims: dict) -> list[tuple]:
    """(suite, test, design, metric, value, unit, rep, mode, dims JSON) per figure."""
    out = []
    ids = replay_counter_ids() if any(r.get("suite") == "replay" for r in records) else {}
    for r in records:
        test = str(r.get("test", ""))
        stem, named = metric_of(test)
        metric = r.get("metric") or stem
        params = {k: str(v) for k, v in (r.get("params") or {}).items()}
        d = {**dims, **{k: v for k, v in params.items() if k not in ("design",)}, **named}
        dj = json.dumps(d, sort_keys=True)
        base = (r.get("suite"), test, r.get("design"))
        rep, mode = int(r.get("rep", 0)), r.get("mode", "wall")
        if _num(r.get("value")):
            out.append(base + (metric, float(r["value"]), r.get("unit"), rep, mode, dj))
        for k, v in (r.get("counters") or {}).items():
            cid = ids.get(k) if r.get("suite") == "replay" else None
            if _num(v) and cid != metric:
                out.append(base + (cid or f"counters.{k}", float(v), "count", rep, mode, dj))
        vt = r.get("vtime")
        if isinstance(vt, dict):
            for k, v in vt.items():
                if _num(v):
                    out.append(base + (f"vtime.{k}", float(v), None, rep, mode, dj))
    return out


class Store:
    """A DuckDB results file; open with Store(path), close with .close()."""

    def __init__(self, path: str | Path = DEFAULT_PATH, read_only: bool = False):
        duckdb = _duckdb()
        self.path = Path(path)
        if read_only and not self.path.exists():
            raise StoreError(f"{self.path}: no results store (pagelab run NAME makes one)")
        if self.path.exists() or self.path.is_symlink():
            try:        # a FIFO would block the open, a device never end
                files.check_input(self.path)
            except files.ValidationError as e:
                raise StoreError(f"{e} (a results store is a regular file)") from None
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.Error as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise StoreError(f"{self.path}: cannot open the results store: {first}") from None
        if not read_only:
            for stmt in SCHEMA:
                self.db.execute(stmt)

    def close(self) -> None:
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---------------------------------------------------------- writing

    def begin_run(self, experiment: str, command: list[str], info: dict, cells: int,
                  workers: str) -> int:
        now = _dt.datetime.now()
        self.db.execute("BEGIN TRANSACTION")
        # The store is open by one writer at a time (DuckDB's file lock): a run
        # still marked running was killed before it could say so.
        self.db.execute("UPDATE runs SET status = 'killed' WHERE status = 'running'")
        rid = self.db.execute("SELECT coalesce(max(run_id), 0) + 1 FROM runs").fetchone()[0]
        commit = info.get("commit") or ""
        self.db.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, 0, 0, '', "
                        "'running', ?)",
                        [rid, experiment, " ".join(command), commit.removesuffix("-dirty"),
                         commit.endswith("-dirty"), json.dumps(info, sort_keys=True), now,
                         cells, workers])
        self.db.execute("COMMIT")
        return rid

    def end_run(self, run_id: int, ok: int, failed: int, missing: list[str], status: str) -> None:
        self.db.execute("BEGIN TRANSACTION")
        self.db.execute("UPDATE runs SET finished = ?, ok = ?, failed = ?, missing = ?, "
                        "status = ? WHERE run_id = ?",
                        [_dt.datetime.now(), ok, failed, json.dumps(missing), status, run_id])
        self.db.execute("COMMIT")

    def write_cell(self, experiment: str, run_id: int, cell: dict, result: dict) -> None:
        """One cell's outcome, in one transaction (see the invariants above)."""
        now = _dt.datetime.now()
        ok = result.get("status") == "ok"
        info = result.get("machine") or {}
        commit = info.get("commit") or ""
        args = [experiment, cell["id"], run_id, result.get("status"), result.get("attempts", 1),
                result.get("worker"), result.get("seconds"), result.get("stderr", ""),
                json.dumps(cell["spec"], sort_keys=True), json.dumps(cell["dims"], sort_keys=True),
                json.dumps(result.get("records", [])), now]
        self.db.execute("BEGIN TRANSACTION")
        try:
            if ok:
                self.db.execute("DELETE FROM figures WHERE experiment = ? AND cell = ?",
                                [experiment, cell["id"]])
                self.db.execute("DELETE FROM cells WHERE experiment = ? AND cell = ?",
                                [experiment, cell["id"]])
                self.db.execute("INSERT INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                args)
                rows = figure_rows(result.get("records", []), cell["dims"])
                machine = info.get("host") or info.get("cpu") or ""
                extra = (commit.removesuffix("-dirty"), commit.endswith("-dirty"), machine,
                         result.get("host_load"), now)
                self._insert_figures([(experiment, cell["id"], run_id) + r + extra
                                      for r in rows])
            else:
                had = self.db.execute("SELECT status FROM cells WHERE experiment = ? AND cell = ?",
                                      [experiment, cell["id"]]).fetchone()
                if not had or had[0] != "ok":
                    self.db.execute("DELETE FROM cells WHERE experiment = ? AND cell = ?",
                                    [experiment, cell["id"]])
                    self.db.execute("INSERT INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                    "?)", args)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    # DuckDB runs executemany() as one statement per row (about 1 ms each);
    # a multi-row VALUES list in chunks is one statement per chunk.
    _FIGURE_COLS = 17
    _ROWS_PER_INSERT = 256

    def _insert_figures(self, rows: list[tuple]) -> None:
        for i in range(0, len(rows), self._ROWS_PER_INSERT):
            chunk = rows[i:i + self._ROWS_PER_INSERT]
            one = "(" + ", ".join("?" * self._FIGURE_COLS) + ")"
            self.db.execute("INSERT INTO figures VALUES " + ", ".join([one] * len(chunk)),
                            [v for r in chunk for v in r])

    # ---------------------------------------------------------- reading

    def ok_cells(self, experiment: str) -> set[str]:
        return {r[0] for r in self.db.execute(
            "SELECT cell FROM cells WHERE experiment = ? AND status = 'ok'",
            [experiment]).fetchall()}

    def cell_rows(self, experiment: str) -> list[dict]:
        cur = self.db.execute("SELECT cell, status, attempts, worker, seconds, stderr, spec, dims, "
                              "records, run_id, time FROM cells WHERE experiment = ? "
                              "ORDER BY cell", [experiment])
        cols = [c[0] for c in cur.description]
        out = []
        for row in cur.fetchall():
            d = dict(zip(cols, row))
            for k in ("spec", "dims", "records"):
                d[k] = json.loads(d[k]) if d[k] else ({} if k != "records" else [])
            out.append(d)
        return out

    def last_run(self, experiment: str) -> dict | None:
        cur = self.db.execute("SELECT * FROM runs WHERE experiment = ? ORDER BY run_id DESC "
                              "LIMIT 1", [experiment])
        row = cur.fetchone()
        return dict(zip([c[0] for c in cur.description], row)) if row else None

    def runs(self, experiment: str) -> list[dict]:
        cur = self.db.execute("SELECT * FROM runs WHERE experiment = ? ORDER BY run_id",
                              [experiment])
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    def figures(self, experiment: str) -> list[dict]:
        cur = self.db.execute("SELECT * FROM figures WHERE experiment = ? ORDER BY cell, rep, "
                              "design, metric", [experiment])
        cols = [c[0] for c in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(cols, r))
            d["dims"] = json.loads(d["dims"]) if d["dims"] else {}
            out.append(d)
        return out

    def query(self, sql: str, params: list | None = None) -> tuple[list[str], list[tuple]]:
        duckdb = _duckdb()
        try:
            cur = self.db.execute(sql, params or [])
            rows = cur.fetchall() if cur.description else []
        except duckdb.Error as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise StoreError(f"query refused: {first}") from None
        return ([c[0] for c in cur.description] if cur.description else []), rows


    def results_doc(self, experiment: str) -> dict:
        """An experiment's stored records as a results document (runner.load_results()'s
        form), for compare and report: its ok cells' measurements, the last run's
        machine, command and date."""
        from .runner import Measurement
        last = self.last_run(experiment)
        if last is None:
            raise StoreError(f"{self.path}: no experiment '{experiment}' in the store")
        ms = []
        for row in self.cell_rows(experiment):
            if row["status"] != "ok":
                continue
            for rec in row["records"]:
                if rec.get("suite") != "call" and _num(rec.get("value")):
                    ms.append(Measurement.from_dict(rec))
        try:
            machine = json.loads(last["machine"])
        except (TypeError, ValueError):
            machine = {}
        return {"format": "pagelab-store", "created": f"{last['started']:%Y-%m-%dT%H:%M:%S}",
                "command": last["command"].split(), "machine": machine, "measurements": ms,
                "path": f"store:{experiment}", "label": experiment}


def load_any(ref) -> dict:
    """A results file, or "store:NAME[@FILE]": experiment NAME from the results store."""
    text = str(ref)
    if text.startswith("store:"):
        name, _, path = text[len("store:"):].partition("@")
        with Store(path or default_path(), read_only=True) as st:
            return st.results_doc(name)
    from .runner import load_results
    return load_results(ref)


def default_path() -> Path:
    """$PAGELAB_STORE, else out/results.duckdb."""
    return Path(os.environ.get("PAGELAB_STORE") or DEFAULT_PATH)
