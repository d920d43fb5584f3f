"""`pagelab run NAME`: an experiment's cells on a local pool or a Dask cluster.

The cells (experiments.cells()) are independent: each is one or more
pagelab-bench processes that cellexec.execute_cell() runs on a worker.

- Local pool (the default): --jobs N threads (default: the host's CPUs),
  each waiting on its own pagelab-bench process.  A failed cell is tried
  again up to the experiment's `retries`.
- Dask (--cluster ADDRESS): dask.distributed places the cells on the
  cluster's workers, retries a failed one (submit(retries=)) and runs a
  dead worker's cells elsewhere (the scheduler's allowed-failures); results
  stream back through as_completed().  pagelab adds no scheduler, queue or
  protocol of its own.

Either way this process alone writes the store, one transaction per cell as
it arrives (store.Store.write_cell), so a run killed at any point leaves
the store consistent and `--resume` runs exactly the cells it lacks.  A
cell still failing after its retries is recorded failed with its stderr;
the run goes on, and says at the end which cells are missing.
"""
from __future__ import annotations

import fnmatch
import os
import sys
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from . import experiments
from .cellexec import execute_cell, worker_info
from .store import Store


class RunError(RuntimeError):
    """The run cannot start (bad filter, no cluster): one line."""


def select(cells: list, pattern: str | None) -> list:
    """Cells whose id contains @pattern, or matches it as a glob (*, ?, [])."""
    if not pattern:
        return cells
    glob = any(c in pattern for c in "*?[")
    out = [c for c in cells if (fnmatch.fnmatch(c.id, pattern) if glob else pattern in c.id)]
    if not out:
        raise RunError(f"--cells '{pattern}' matches none of the {len(cells)} cells")
    return out


def _failed(cell, exc: BaseException, attempts: int) -> dict:
    msg = str(exc).strip() or type(exc).__name__
    return {"status": "failed", "stderr": f"{type(exc).__name__}: {msg}"[:8000],
            "attempts": attempts, "records": []}


def _run_local(todo: list, jobs: int, retries: int, deliver) -> None:
    """Up to @jobs cells at once in threads; each tried up to 1 + @retries times."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        pending = {pool.submit(execute_cell, c.spec): (c, 1) for c in todo}
        try:
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    cell, attempt = pending.pop(fut)
                    exc = fut.exception()
                    if exc is None:
                        deliver(cell, dict(fut.result(), attempts=attempt))
                    elif attempt <= retries:
                        pending[pool.submit(execute_cell, cell.spec)] = (cell, attempt + 1)
                    else:
                        deliver(cell, _failed(cell, exc, attempt))
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise


def _run_dask(todo: list, address, retries: int, deliver) -> None:
    """The cells as Dask tasks on the cluster at @address (or a Client/LocalCluster)."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise RunError("--cluster needs dask.distributed (make deps installs it)") from None
    own = not hasattr(address, "submit")
    try:
        client = Client(address, timeout="15s") if own else address
    except (OSError, TimeoutError) as e:
        raise RunError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    def submit(c):
        # pure=False: a cell is a measurement, never deduplicated by Dask
        return client.submit(execute_cell, c.spec, key=f"pagelab-cell-{uuid.uuid4().hex}",
                             retries=retries, pure=False)

    try:
        futs = {submit(c): (c, 1) for c in todo}
        pending = as_completed(list(futs))
        try:
            for f in pending:
                c, tries = futs[f]
                try:
                    res = f.result()
                    deliver(c, dict(res, attempts=tries))
                except Exception as e:  # noqa: BLE001 - a failed cell is recorded, not raised
                    if f.status != "error" and tries <= retries:
                        # not the cell's own error: its result was lost with its worker
                        # between finishing and reaching us; Dask runs it again
                        g = submit(c)
                        futs[g] = (c, tries + 1)
                        pending.add(g)
                    else:
                        deliver(c, _failed(c, e, retries + 1))
                f.release()
        except BaseException:
            client.cancel(list(futs))
            raise
    finally:
        if own:
            client.close()


def run(exp: experiments.Experiment, store: Store, pattern: str | None = None,
        resume: bool = False, jobs: int | None = None, cluster=None, command=None,
        echo=print) -> dict:
    """Run @exp's cells (those @pattern selects; with @resume, only those the
    store lacks) and record them; returns {"run_id", "ok", "failed", "missing"}."""
    cells = select(experiments.cells(exp), pattern)
    skipped = 0
    if resume:
        have = store.ok_cells(exp.name)
        skipped = sum(1 for c in cells if c.id in have)
        cells = [c for c in cells if c.id not in have]
    jobs = jobs or os.cpu_count() or 1
    where = f"Dask cluster {cluster}" if cluster else f"local pool of {jobs}"
    info = worker_info()
    run_id = store.begin_run(exp.name, command or sys.argv, info, len(cells), where)
    echo(f"{exp.name}: {len(cells)} cells on a {where}"
         + (f" ({skipped} already in the store)" if resume else ""))
    ok, failed = [], []
    t0 = time.monotonic()

    def deliver(cell, result):
        store.write_cell(exp.name, run_id, cell.to_dict(), result)
        (ok if result["status"] == "ok" else failed).append(cell.id)
        n = len(ok) + len(failed)
        state = "ok" if result["status"] == "ok" else "FAILED: " + \
            result["stderr"].splitlines()[-1][:100]
        echo(f"  [{n}/{len(cells)}] {cell.id.split('#')[0]}: {state}")

    status = "interrupted"
    try:
        if cells:
            if cluster:
                _run_dask(cells, cluster, exp.retries, deliver)
            else:
                _run_local(cells, jobs, exp.retries, deliver)
        status = "done" if not failed else "incomplete"
    finally:
        done = set(ok) | set(failed)
        missing = [c.id for c in cells if c.id not in set(ok)]
        store.end_run(run_id, len(ok), len(failed), missing, status)
        if status == "interrupted":
            echo(f"{exp.name}: interrupted after {len(done)} of {len(cells)} cells; "
                 f"`pagelab run {exp.name} --resume` runs the other {len(cells) - len(ok)}")
    secs = time.monotonic() - t0
    echo(f"{exp.name}: {len(ok)} of {len(cells)} cells ok in {secs:.1f} s"
         + (f"; {len(failed)} failed, missing from the store:" if failed else ""))
    for cid in failed:
        echo(f"  missing: {cid.split('#')[0]}")
    return {"run_id": run_id, "ok": ok, "failed": failed, "missing": missing,
            "seconds": secs}
