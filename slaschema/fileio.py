"""Atomic file writes: a reader never sees a half-written report, bundle or contract.

The data goes to a temporary file in the target's folder, then `os.replace` swaps it in.
The file gets the mode a plain `open()` would give (0666 minus the umask), not mkstemp's 0600.

A target that is a FIFO or a character device (`-o /dev/null`, a pipe made with mkfifo) is
written into, never replaced by the rename: a FIFO nobody reads and a device that refuses the
data (/dev/full) are an OSError at once, not a hang. Another kind of special file (a folder, a
block device, a socket) is refused.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path | str, data: str | bytes, *, durable: bool = True) -> None:
    """Write `data` to `path` atomically; `durable` also fsyncs before the rename."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        _write_into(path, data.encode("utf-8") if isinstance(data, str) else data)
        return
    if mode is not None and not stat.S_ISREG(mode):
        raise OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                      "is a folder" if stat.S_ISDIR(mode) else "not a regular file", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, _default_mode())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _write_into(path: Path, data: bytes) -> None:
    """Write `data` into an existing FIFO or character device (no create, no truncate). A FIFO
    without a reader fails to open (ENXIO) instead of blocking."""
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not (stat.S_ISFIFO(os.fstat(fd).st_mode) or stat.S_ISCHR(os.fstat(fd).st_mode)):
            raise OSError(errno.EINVAL, "not a FIFO or character device", str(path))
        os.set_blocking(fd, True)          # a reader is there: wait for it to take the data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
