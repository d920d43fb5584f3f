"""The two records of an experiment, below every module that handles them:
Experiment (a checked declaration from experiments/NAME.toml) and Cell (one
unit of work for a worker).  experiments.py loads, checks and expands them;
seed_cells.py builds a seed experiment's cells; neither imports the other's
caller, so the experiment modules form no import cycle.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


def _aslist(v) -> list[str]:
    return [v] if isinstance(v, str) else list(v or [])


@dataclass
class Experiment:
    name: str
    path: Path
    doc: dict

    @property
    def kind(self) -> str:
        return self.doc["kind"]

    @property
    def title(self) -> str:
        return self.doc["title"]

    @property
    def designs(self) -> list[str]:
        return _aslist(self.doc.get("designs"))

    @property
    def mode(self) -> str:
        if self.kind == "seed":
            return self.seed_measure()
        return self.doc.get("mode", "wall") if self.kind != "replay" else "counts"

    @property
    def reps(self) -> int:
        return int(self.doc.get("reps", 1))

    @property
    def retries(self) -> int:
        return int(self.doc.get("retries", 2))

    def seed_measure(self) -> str:
        from .reproduce import DEFAULT_MEASURE, QUICK_MEASURE
        s = self.doc.get("seed", {})
        return QUICK_MEASURE if s.get("mode", "quick") == "quick" else DEFAULT_MEASURE

    def tables(self) -> list[dict]:
        return list(self.doc.get("table", []))

    def plots(self) -> list[dict]:
        return list(self.doc.get("plot", []))


@dataclass
class Cell:
    """One unit of work: what execute_cell() on a worker runs.

    @spec: a JSON-able dict (kind "bench", "replay" or "seedgroup"); @dims:
    the dimensions its figures carry into the store (suite, trace, keys).
    """
    id: str
    spec: dict
    dims: dict = field(default_factory=dict)
    fanout: bool = True          # False: an interleaved timing group

    def to_dict(self) -> dict:
        return {"id": self.id, "spec": self.spec, "dims": self.dims, "fanout": self.fanout}
