"""The Python CLI's input-validation layer.

Everything `pagelab` reads from outside - results files, the pagelab-bench
binary it is pointed at, the numbers on its command line, the files it
writes - is checked here, so that bad input is one line on stderr and exit
status 2, never a traceback:

- results_doc(): the schema of a results document, checked once on load, so
  that compare/report can trust every field they read (types, finite
  numbers, nesting);
- read_text(): a results file as text: unreadable, not UTF-8 or too deeply
  nested JSON become BenchError;
- count(): an integer option within its range (--reps);
- writable(): a path `pagelab` is about to write, checked before any work;
- the argparse types text(), name(), path(): a string option that is empty, holds
  a control character or is longer than its bound is refused by the parser.

Invariant: a document that passed results_doc() has "measurements" as a
list of dicts whose fields have the types of runner.Measurement.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from . import files
from .files import ValidationError  # noqa: F401 (callers import it from here)

MAX_FILE_BYTES = 256 << 20
# Measurement fields and the types they must have (bool is not a number).
_FIELDS = {"suite": str, "test": str, "design": str, "unit": str}
# Counters report.py computes with.
_NUMERIC_COUNTERS = ("zone_lock_acquisitions", "zone_lock_contentions", "zone_lock_wait_ns",
                     "zone_lock_hold_ns")




def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _scalar(v) -> bool:
    return v is None or isinstance(v, (str, bool)) or _is_num(v)


def measurement(rec, where: str) -> None:
    """One measurement record: the fields compare/report read, with their types."""
    if not isinstance(rec, dict):
        raise ValidationError(f"{where}: a measurement is {type(rec).__name__}, not an object")
    for k, t in _FIELDS.items():
        if not isinstance(rec.get(k), t):
            raise ValidationError(f"{where}: measurement field '{k}' is missing or not a string")
    if not _is_num(rec.get("value")):
        raise ValidationError(f"{where}: measurement value {rec.get('value')!r} is not a finite number")
    if rec.get("metric") is not None and not isinstance(rec.get("metric"), str):
        raise ValidationError(f"{where}: measurement field 'metric' is not a string")
    rep = rec.get("rep", 0)
    if not isinstance(rep, int) or isinstance(rep, bool) or rep < 0:
        raise ValidationError(f"{where}: measurement rep {rep!r} is not a non-negative integer")
    for k in ("params", "counters"):
        d = rec.get(k, {})
        if not isinstance(d, dict):
            raise ValidationError(f"{where}: measurement field '{k}' is not an object")
        for kk, vv in d.items():
            # params are key=value text (numbers tolerated); counters any JSON value
            # (replay's are lists), but the ones the report plots must be numbers
            ok = _scalar(vv) if k == "params" else (kk not in _NUMERIC_COUNTERS or _is_num(vv))
            if not ok:
                raise ValidationError(f"{where}: measurement {k}[{kk!r}] has the wrong type")


def _timeline(tl, where: str) -> None:
    if not isinstance(tl, dict):
        raise ValidationError(f"{where}: 'timeline' is not an object")
    snaps = tl.get("snapshots", [])
    if not isinstance(snaps, list):
        raise ValidationError(f"{where}: 'timeline.snapshots' is not a list")
    width = None
    for s in snaps:
        if not isinstance(s, dict) or not isinstance(s.get("label"), str) or \
                not isinstance(s.get("zones"), dict) or not s["zones"]:
            raise ValidationError(f"{where}: a timeline snapshot is malformed")
        for row in s["zones"].values():
            if not isinstance(row, list) or not row or not all(_is_num(x) and x >= 0 for x in row):
                raise ValidationError(f"{where}: a timeline row is not a list of counts")
            if width is not None and len(row) != width:
                raise ValidationError(f"{where}: timeline rows differ in length")
            width = len(row)


def results_doc(doc, where: str) -> None:
    """Check a loaded results document (before its measurements become objects)."""
    if not isinstance(doc, dict):
        raise ValidationError(f"{where}: not a pagelab results file")
    ms = doc.get("measurements")
    if not isinstance(ms, list):
        raise ValidationError(f"{where}: 'measurements' is not a list")
    for rec in ms:
        measurement(rec, where)
    sweep = doc.get("sweep", [])
    if not isinstance(sweep, list):
        raise ValidationError(f"{where}: 'sweep' is not a list")
    for rec in sweep:
        measurement(rec, where)
    machine = doc.get("machine", {})
    if not isinstance(machine, dict) or not all(_scalar(v) for v in machine.values()):
        raise ValidationError(f"{where}: 'machine' is not an object of plain values")
    for k in ("created", "mode", "seed", "format", "measure"):
        if k in doc and not isinstance(doc[k], str):
            raise ValidationError(f"{where}: '{k}' is not a string")
    for k, kind, what in (("settings", dict, "an object"), ("cells", list, "a list")):
        if k in doc and not isinstance(doc[k], kind):      # a seed document's
            raise ValidationError(f"{where}: '{k}' is not {what}")
    cmd = doc.get("command", [])
    if not isinstance(cmd, (str, list)) or (isinstance(cmd, list) and
                                            not all(isinstance(c, str) for c in cmd)):
        raise ValidationError(f"{where}: 'command' is not a list of strings")
    if doc.get("timeline") is not None:
        _timeline(doc["timeline"], where)
    if doc.get("replay") is not None:
        replay_section(doc["replay"], where)
    reg = doc.get("metrics", {})
    if not isinstance(reg, dict) or not all(isinstance(v, dict) for v in reg.values()):
        raise ValidationError(f"{where}: 'metrics' is not an object of metric entries")


def replay_section(rep, where: str) -> None:
    """A saved `pagelab replay` result: the kernel's record and each design's,
    each with its counters, so that no table meets a missing key later."""
    if not isinstance(rep, dict):
        raise ValidationError(f"{where}: its 'replay' section is not an object")
    kernel = rep.get("kernel")
    if not isinstance(kernel, dict):
        raise ValidationError(f"{where}: its replay section has no kernel record ('kernel'): "
                              "not a whole pagelab replay result")
    designs = rep.get("designs")
    if not isinstance(designs, dict) or not designs:
        raise ValidationError(f"{where}: its replay section has no design records ('designs')")
    for name, rec in [("kernel", kernel)] + list(designs.items()):
        if not isinstance(rec, dict) or not isinstance(rec.get("counters"), dict):
            raise ValidationError(f"{where}: replay record '{name}' has no 'counters' object")
        for k, v in rec["counters"].items():
            if not (_is_num(v) or isinstance(v, list)):
                raise ValidationError(f"{where}: replay record '{name}' counter '{k}' is not "
                                      "a number")
    for k, typ in (("label", str), ("state", str), ("trace", str)):
        if k in rep and not isinstance(rep[k], typ):
            raise ValidationError(f"{where}: replay '{k}' is not a string")
    for k in ("events", "lost_events"):
        if k in rep and rep[k] is not None and not _is_num(rep[k]):
            raise ValidationError(f"{where}: replay '{k}' is not a number")
    if rep.get("faithful") is not None and rep["faithful"] not in designs:
        raise ValidationError(f"{where}: replay's faithful design '{rep['faithful']}' has no "
                              "record")


def read_text(path: Path) -> str:
    """A results file's text; OSError and bad encodings become ValidationError."""
    try:
        return files.read_bytes(path, MAX_FILE_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"{path}: not UTF-8 text, not a pagelab results file") from None


def loads(text: str, where: str):
    """json.loads, with deep nesting and NaN refused as malformed."""
    def no_const(c):
        raise ValueError(c)
    try:
        return json.loads(text, parse_constant=no_const)
    except RecursionError:
        raise ValidationError(f"{where}: nested too deeply, not a pagelab results file") from None


def count(name: str, v: int, lo: int, hi: int) -> int:
    """An integer option in [lo, hi]."""
    if not lo <= v <= hi:
        raise ValidationError(f"{name} {v} is not in {lo}..{hi}")
    return v


def writable(path: Path) -> Path:
    """Refuse a path pagelab could not write, before any work is done.

    The check is a real one: the parent directories are made (as saving
    would make them) and a probe file beside @path is created and removed.
    """
    path = files.check_output(path)
    probe = path.with_name(path.name + ".probe")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(probe, "w"):
            pass
        probe.unlink()
    except OSError as e:
        raise ValidationError(f"cannot write {path}: {e.strerror or e}") from None
    return path


# Bounds of string options: a label or name goes into file names (NAME_MAX 255 with
# room for the rest of the name); a path at most PATH_MAX; other text a page.
NAME_MAX_LEN = 128
PATH_MAX_LEN = 4096
TEXT_MAX_LEN = 4096


def _string_type(what: str, max_len: int):
    def conv(s: str) -> str:
        if s == "":
            raise argparse.ArgumentTypeError(f"an empty {what}")
        if files.has_control(s):
            raise argparse.ArgumentTypeError(f"{ascii(s)[:60]}: a {what} with a control "
                                             "character")
        if len(s) > max_len:
            raise argparse.ArgumentTypeError(f"a {what} longer than {max_len} characters")
        return s
    conv.__name__ = what
    return conv


# argparse types: the parser refuses the value in one line, before any command runs
text = _string_type("value", TEXT_MAX_LEN)
name = _string_type("name", NAME_MAX_LEN)
path = _string_type("path", PATH_MAX_LEN)


def writable_dir(path_: Path) -> Path:
    """A directory `pagelab` is about to write into, made now (with its parents) and
    probed, as writable() does for a file; call it last, right before the work."""
    p = files.check_output_dir(path_)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / ".pagelab-probe"
        with open(probe, "w"):
            pass
        probe.unlink()
    except OSError as e:
        raise ValidationError(f"cannot write in {p}: {e.strerror or e}") from None
    return p
