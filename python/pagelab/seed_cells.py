"""A seed's table as an experiment: its measurement groups as cells, its table from them.

`pagelab reproduce SEED` runs a seed's run function (reproduce.SEEDS) with a
Ctx whose run() measures one group: a suite, its keys, the designs
interleaved, the repetitions.  Here the same run function is called twice
without measuring anything itself:

- planning: with a RecordingCtx, whose run() notes each group and returns no
  measurements; every group becomes one cell (an interleaved timing group,
  so it stays on one worker).  The few direct calls a run function makes
  beside its Ctx (seed 002's fragmentation sweep and buddyinfo timeline,
  seed 004's functional sweep) are routed the same way: planning swaps them,
  in the run function's own module, for recorders for the duration of the
  call (under a lock);
- rendering: with the cells' stored records handed back group by group, so
  the run function assembles the same document `pagelab reproduce` saves,
  and the seed's render function prints the seed's own table.

Invariant: a run function is deterministic in its calls (which groups, in
which order, with which keys): planning and rendering see the same sequence,
matched by each call's key (a hash of its arguments).
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import threading
from pathlib import Path

from . import stats
from .expmodel import Cell, Experiment
from .runner import REPO, Measurement, default_cells

_SWAP_LOCK = threading.Lock()


# Keys whose value is a file a group reads.  Inside the checkout they are kept
# relative to it, so that a group's key (and the store that holds its results) is
# the same from any checkout: a Dask worker's, or the one that renders the pages.
PATH_KEYS = ("snapshot", "trace")


def portable_params(params: dict) -> dict:
    """@params as strings, with files inside the checkout relative to it."""
    out = {}
    for k, v in params.items():
        v = str(v)
        if k in PATH_KEYS and os.path.isabs(v):
            try:
                v = str(Path(v).resolve().relative_to(REPO))
            except ValueError:
                pass
        out[k] = v
    return out


def local_params(params: dict) -> dict:
    """portable_params() undone: a relative file of the checkout made absolute here."""
    return {k: (str(REPO / v) if k in PATH_KEYS and v and not os.path.isabs(v) else v)
            for k, v in params.items()}


def _key(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:10]


def seed_machine_params(exp_or_spec) -> tuple[str, str, str, dict]:
    """(seed id, seed mode, judged measure, machine keys) of a seed experiment."""
    from . import reproduce
    s = exp_or_spec.doc["seed"] if isinstance(exp_or_spec, Experiment) else exp_or_spec
    sid, mode = s["id"], s.get("mode", "quick")
    measure = reproduce.QUICK_MEASURE if mode == "quick" else reproduce.DEFAULT_MEASURE
    machine = {k: str(v) for k, v in (s.get("machine") or {}).items()}
    if mode == "quick" and not set(machine) & {"machine", "mem", "dma32"}:
        machine["machine"] = "default"       # as `reproduce --quick` (make run) does
    return sid, mode, measure, reproduce.seed_machine(sid, machine, measure)


class RecordingCtx:
    """A reproduce.Ctx stand-in: notes every group, or hands back stored results."""

    def __init__(self, seed: dict, results: dict | None = None):
        self.seed = seed                      # {"id", "mode", "measure", "machine"}
        self.mode = seed["mode"]
        self.policy = stats.policy_for(seed["measure"], seed["mode"] == "quick")
        self.log: list = []
        self.groups: list[dict] = []
        self.cells_fns: dict = {}
        self.results = results

    def _handback(self, spec: dict) -> list:
        self.groups.append(spec)
        if self.results is None:
            return []
        return [Measurement.from_dict(copy.deepcopy(r)) for r in self.results.get(spec["key"], [])]

    def run(self, suite, params, designs, quick_reps, together=False, label=None,
            cells=default_cells):
        spec = {"kind": "seedgroup", "suite": suite, "params": portable_params(params),
                "designs": list(designs), "quick_reps": quick_reps, "together": together,
                "label": label or suite, "seed_mode": self.mode,
                "measure": self.policy.mode, "seed": self.seed}
        spec["key"] = _key({k: v for k, v in spec.items() if k != "seed"})
        self.cells_fns[spec["key"]] = cells
        got = self._handback(spec)
        n = len({m.rep for m in got}) if got else quick_reps
        self.log.append({"label": label or suite, "runs": n,
                         "stop": "smoke" if self.policy.quick else "stored"})
        return got

    def fixed(self, suite, params, designs, reps, together=False, label=None, mode="wall"):
        """run_interleaved()'s signature: a fixed-repetition group (no policy)."""
        spec = {"kind": "seedgroup", "suite": suite, "params": portable_params(params),
                "designs": list(designs), "quick_reps": reps, "together": together,
                "label": label or suite, "seed_mode": "quick", "measure": mode,
                "fixed": True, "seed": self.seed}
        spec["key"] = _key({k: v for k, v in spec.items() if k != "seed"})
        return self._handback(spec)

    def timeline(self, params, rounds):
        """show.buddyinfo_timeline()'s signature, as a "call" cell."""
        spec = {"kind": "call", "fn": "buddyinfo_timeline", "args": [dict(params), list(rounds)]}
        spec["key"] = _key(spec)
        self.groups.append(spec)
        if self.results is None:
            return []
        recs = self.results.get(spec["key"], [])
        return copy.deepcopy(recs[0]["result"]) if recs else []


def _call_seed(seed: dict, ctx: RecordingCtx) -> dict:
    """The seed's run function against @ctx, its direct calls routed to @ctx."""
    from . import reproduce
    spec = reproduce.SEEDS[seed["id"]]
    fn = spec.run
    g = fn.__globals__
    swaps = {"run_interleaved": lambda suite, params, designs, reps, together=False,
             label=None, mode="wall": ctx.fixed(suite, params, designs, reps, together,
                                                label, mode),
             "buddyinfo_timeline": ctx.timeline}
    with _SWAP_LOCK:
        saved = {k: g[k] for k in swaps if k in g}
        g.update({k: v for k, v in swaps.items() if k in saved})
        try:
            return fn(seed["mode"], dict(seed["machine"]), ctx)
        finally:
            g.update(saved)


def _seed_dict(exp_or_spec) -> dict:
    sid, mode, measure, machine = seed_machine_params(exp_or_spec)
    return {"id": sid, "mode": mode, "measure": measure, "machine": machine}


def seed_cells(exp: Experiment) -> list[Cell]:
    """One cell per measurement group of the seed's run function."""
    seed = _seed_dict(exp)
    ctx = RecordingCtx(seed)
    _call_seed(seed, ctx)
    out = []
    for g in ctx.groups:
        name = g.get("label") or g.get("fn")
        dims = {"suite": g.get("suite", "call"), "group": name}
        out.append(Cell(f"{name}#{g['key']}", g, dims, fanout=False))
    return out


def cells_fn(spec: dict):
    """The seed's own judged-cells function for one group (run_adaptive's cells=)."""
    ctx = RecordingCtx(spec["seed"])
    _call_seed(spec["seed"], ctx)
    return ctx.cells_fns.get(spec["key"], default_cells)


def render(exp: Experiment, cell_rows: list[dict], info: dict) -> tuple[str, dict] | None:
    """The seed's table from stored cells, and the document behind it; None if incomplete."""
    return render_seed(_seed_dict(exp), cell_rows, info)


def stored_seed(cell_rows: list[dict]) -> dict | None:
    """The seed a stored experiment measured ({"id", "mode", "measure", "machine"}), read
    from its cells' own specs (a seed group carries it), or None if it is not a seed's."""
    from . import reproduce, stats
    for row in cell_rows:
        spec = row.get("spec")
        if not (isinstance(spec, dict) and spec.get("kind") == "seedgroup"):
            continue
        seed = spec.get("seed")
        # A store is a file someone may hand over: take only a seed this build knows.
        if not (isinstance(seed, dict) and seed.get("id") in reproduce.SEEDS
                and seed.get("mode") in reproduce.MODES and seed.get("measure") in stats.MEASURE_MODES
                and isinstance(seed.get("machine"), dict)
                and all(isinstance(k, str) and isinstance(v, str)
                        for k, v in seed["machine"].items())):
            return None
        return seed
    return None


def render_seed(seed: dict, cell_rows: list[dict], info: dict) -> tuple[str, dict] | None:
    """render() for the seed dict @seed (as stored in its cells' specs)."""
    from . import reproduce
    results = {row["spec"].get("key"): row["records"] for row in cell_rows
               if row["status"] == "ok"}
    ctx = RecordingCtx(seed, results)
    res = _call_seed(seed, ctx)
    missing = [g for g in ctx.groups if g["key"] not in results]
    spec = reproduce.SEEDS[seed["id"]]
    extra = {k: v for k, v in res.items() if k != "measurements"}
    extra.update(seed=seed["id"], mode=seed["mode"], measure=seed["measure"],
                 runs_log=ctx.log)
    doc = {"measurements": res["measurements"], "machine": info, **extra}
    if not doc["measurements"]:
        return None
    doc["table"] = spec.render(doc)
    doc["missing_groups"] = [g.get("label") or g.get("fn") for g in missing]
    return doc["table"], doc


def _timeline(params, rounds):
    from .show import buddyinfo_timeline
    return buddyinfo_timeline(params, rounds)


CALLS = {"buddyinfo_timeline": _timeline}
