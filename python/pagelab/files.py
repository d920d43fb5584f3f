"""The one way pagelab's Python side opens a file a user named.

Inputs (results files, manifests, snapshot files) must be regular files, or
directories where one is asked for: a FIFO would block the reader, /dev/zero
would never end. The open is O_NONBLOCK and the kind is fstat() of what was
opened, so the check and the read are of the same file; reads stop at a cap.

Outputs must be regular files or new paths: a device node, FIFO, socket or
directory is refused before any work is done, so that writing PATH.tmp and
renaming it over PATH can never replace /dev/full or a FIFO with a file.

Refusals are ValidationError (one line, exit 2 in the CLI).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


class ValidationError(RuntimeError):
    """A results document, file or argument that pagelab refuses (one line).

    Defined here, at the bottom of the imports, and re-exported by validate."""

# Results files and manifests: a results document of a long sweep is a few MiB.
MAX_INPUT_BYTES = 256 << 20


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def has_control(text: str) -> bool:
    """True if @text holds a control character (C0, DEL or C1): a name or label with
    one would split or garble the one-line messages and the tables it is printed in."""
    return any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in text)


def _name(path) -> Path:
    if path is None or str(path) == "":
        raise ValidationError("an empty path names no file")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"a path is a str or os.PathLike, not {type(path).__name__}")
    if has_control(os.fsdecode(path)):
        raise ValidationError(f"{ascii(os.fsdecode(path))}: a path with a control character")
    return Path(path)


def check_input(path, dir_ok: bool = False) -> Path:
    """@path if it is a regular file (or, with @dir_ok, a directory); else ValidationError."""
    p = _name(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        raise ValidationError(f"cannot read {p}: {e.strerror or e}") from None
    try:
        mode = os.fstat(fd).st_mode
    finally:
        os.close(fd)
    if stat.S_ISREG(mode) or (dir_ok and stat.S_ISDIR(mode)):
        return p
    raise ValidationError(f"cannot read {p}: it is {_kind(mode)}")


def read_bytes(path, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The whole of regular file @path, refused past @max_bytes (read, not stat'ed:
    /proc files say size 0)."""
    p = _name(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        raise ValidationError(f"cannot read {p}: {e.strerror or e}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ValidationError(f"cannot read {p}: it is {_kind(mode)}")
        os.set_blocking(fd, True)
        chunks, n = [], 0
        while True:
            b = os.read(fd, min(1 << 20, max_bytes + 1 - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
            if n > max_bytes:
                raise ValidationError(f"{p}: larger than {max_bytes >> 20 or max_bytes} "
                                      f"{'MiB' if max_bytes >> 20 else 'bytes'}")
        return b"".join(chunks)
    except OSError as e:
        raise ValidationError(f"cannot read {p}: {e.strerror or e}") from None
    finally:
        os.close(fd)


def read_text(path, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """read_bytes() as UTF-8; another encoding is a ValidationError."""
    try:
        return read_bytes(path, max_bytes).decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"{path}: not UTF-8 text") from None


def check_output(path) -> Path:
    """@path if pagelab may write it: a regular file or a new path; else ValidationError."""
    p = _name(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        return p
    except OSError as e:
        raise ValidationError(f"cannot write {p}: {e.strerror or e}") from None
    if not stat.S_ISREG(mode):
        raise ValidationError(f"cannot write {p}: it is {_kind(mode)}")
    return p


def check_output_dir(path) -> Path:
    """@path if pagelab may make files in it: a directory or a new path whose nearest
    existing ancestor is a directory; else ValidationError. Nothing is created."""
    p = _name(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise ValidationError(f"cannot write in {p}: {e.strerror or e}") from None
    if mode is not None:
        if not stat.S_ISDIR(mode):
            raise ValidationError(f"cannot write in {p}: it is {_kind(mode)}")
        return p
    up = p.absolute().parent
    while not up.exists():
        up = up.parent
    if not up.is_dir():
        raise ValidationError(f"cannot write in {p}: {up} is {_kind(os.stat(up).st_mode)}")
    if not os.access(up, os.W_OK | os.X_OK) or up.resolve() == Path("/proc") or \
            str(up.resolve()).startswith(("/proc/", "/sys/")):
        raise ValidationError(f"cannot write in {p}: {up} is not writable")
    return p


def check_program(path) -> Path:
    """@path if it is an executable regular file; else ValidationError."""
    p = check_input(path)
    if not os.access(p, os.X_OK):
        raise ValidationError(f"{p}: not executable")
    return p


def write_text(path, text: str) -> Path:
    """Write @text to @path whole or not at all (PATH.tmp, then a rename), only
    over a regular file or a new path."""
    p = check_output(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    check_output(tmp)
    try:
        tmp.write_text(text)
        check_output(p)          # still a regular file or absent
        tmp.replace(p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p
