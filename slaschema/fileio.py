"""Atomic file writes: a reader never sees a half-written report, bundle or contract.

The data goes to a temporary file in the target's folder, then `os.replace` swaps it in.
The file gets the mode a plain `open()` would give (0666 minus the umask), not mkstemp's 0600.

A target that is a FIFO or a character device (`-o /dev/null`, a pipe made with mkfifo) is
written into, never replaced by the rename: a FIFO nobody reads and a device that refuses the
data (/dev/full) are an OSError at once, not a hang. Another kind of special file (a folder, a
block device, a socket) is refused.

The data is text, bytes, or a list of bytes-like pieces written in order (a large document
made of pieces is written without joining a copy of it first); it goes to the file with
`os.writev` straight from the pieces, no buffered copy in between.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Union

Data = Union[str, bytes, Sequence[Union[bytes, bytearray, memoryview]]]


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _pieces(data: Data) -> list[memoryview]:
    """`data` as byte views, in order, empty pieces left out."""
    if isinstance(data, str):
        data = [data.encode("utf-8")]
    elif isinstance(data, (bytes, bytearray, memoryview)):
        data = [data]
    views = [memoryview(d) for d in data]
    return [v if v.format == "B" and v.ndim == 1 else v.cast("B") for v in views if v.nbytes]


_IOV_MAX = 1024          # pieces per writev call (Linux and the BSDs accept 1024)


def write_all(fd: int, data: Data) -> None:
    """Write every byte of `data` to the file descriptor `fd` (`os.writev` of up to 1024
    pieces at a time; a short write goes on from where it stopped)."""
    pieces = _pieces(data)
    writev = getattr(os, "writev", None)
    k = 0
    while k < len(pieces):
        if writev is None:
            done = os.write(fd, pieces[k])
        else:
            done = writev(fd, pieces[k:k + _IOV_MAX])
        if done <= 0:                      # nothing taken: no progress to wait for
            raise OSError(errno.EIO, "the write took no data")
        while k < len(pieces) and done >= pieces[k].nbytes:
            done -= pieces[k].nbytes
            k += 1
        if done:
            pieces[k] = pieces[k][done:]


def write_atomic(path: Path | str, data: Data, *, durable: bool = True) -> None:
    """Write `data` (text, bytes, or bytes-like pieces in order) to `path` atomically;
    `durable` also fsyncs before the rename."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        _write_into(path, data)
        return
    if mode is not None and not stat.S_ISREG(mode):
        raise OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                      "is a folder" if stat.S_ISDIR(mode) else "not a regular file", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, _default_mode())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _write_into(path: Path, data: Data) -> None:
    """Write `data` into an existing FIFO or character device (no create, no truncate). A FIFO
    without a reader fails to open (ENXIO) instead of blocking."""
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not (stat.S_ISFIFO(os.fstat(fd).st_mode) or stat.S_ISCHR(os.fstat(fd).st_mode)):
            raise OSError(errno.EINVAL, "not a FIFO or character device", str(path))
        os.set_blocking(fd, True)          # a reader is there: wait for it to take the data
        write_all(fd, data)
    finally:
        os.close(fd)
