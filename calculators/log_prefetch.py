"""Read an incident log in the background while the command starts.

`slakit credits` (and the other commands reading a log) spend their first half second
importing pandas and pydantic and loading the contract, on one core. The log's bytes, their
SHA-256 and the Arrow parse of a CSV need neither, and both release the GIL: `start(path)`
begins them in a thread at once, and `incidents.load_incidents` takes the result with
`take(path)` (joining the thread) instead of doing the same work after the imports.

Nothing here reports a problem: whatever goes wrong (no such file, not a regular file, a
file that changed, a CSV Arrow refuses) leaves no result, and the loader then does the work
itself and reports the problem its own way. Only a regular file is ever read: the file is
opened without blocking and checked on the open descriptor, so a FIFO or device named on the
command line cannot hang the thread.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Fetched:
    """The log's bytes, their SHA-256, and the Arrow reading of a CSV (`arrow`: what
    `read_csv_arrow` returned, None when Arrow refused it or the file is not a CSV)."""

    key: tuple[int, int, int, int]          # (device, inode, size, mtime_ns) when read
    data: bytes
    sha256: str
    arrow: Any
    converted: dict = field(default_factory=dict)     # `log_csv.convert_columns` of `arrow`


_lock = threading.Lock()
_jobs: dict[str, tuple[threading.Thread, list]] = {}
_stopping = threading.Event()


@atexit.register
def _finish() -> None:
    """A command that stops early (a bad contract) waits for a reading still under way
    rather than leaving Arrow's threads running into the interpreter's shutdown; a reading
    that has not reached the hash and the parse yet stops before them."""
    _stopping.set()
    with _lock:
        jobs = list(_jobs.values())
        _jobs.clear()
    for t, _ in jobs:
        t.join()
    _stopping.clear()


def _key(path: str | Path) -> str:
    """The name as `Path` spells it: the command line's `./log.csv` and the loader's
    `Path("./log.csv")` are one reading (the same file to the OS: no `..` is taken away)."""
    return str(Path(path))


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_regular(path: str) -> tuple[bytes, tuple[int, int, int, int]] | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read()
        return data, _identity(st)
    except OSError:
        return None
    finally:
        os.close(fd)


def _work(path: str, out: list) -> None:
    from calculators.log_csv import TEXT_CONVERTED, TIME_COLUMNS, convert_columns, looks_like_csv, read_csv_arrow
    from slaschema.errors import InputError
    from slaschema.safefiles import check_cli_file

    try:
        check_cli_file(Path(path), "incident log")     # no /proc, /sys or /dev: the loader says why
    except InputError:
        return
    got = _read_regular(path)
    if got is None or _stopping.is_set():
        return
    data, ident = got
    digest: list[str] = []
    # hashing releases the GIL: it runs beside the Arrow parse (which uses its own threads)
    hasher = threading.Thread(target=lambda: digest.append(hashlib.sha256(data).hexdigest()), daemon=True)
    hasher.start()
    arrow, converted = None, {}
    try:
        if looks_like_csv(path, data):
            arrow = read_csv_arrow(data)
        if arrow is not None:           # the columns' conversions need neither pandas nor the contract
            converted = convert_columns(arrow[0], arrow[1], TEXT_CONVERTED, TIME_COLUMNS)
    except Exception:  # noqa: BLE001 - the loader reads the file again and reports what is wrong
        arrow, converted = None, {}
    hasher.join()
    out.append(Fetched(key=ident, data=data, sha256=digest[0], arrow=arrow, converted=converted))


def start(path: str | Path) -> None:
    """Begin reading `path` in a daemon thread (once per path; no-op if already started)."""
    name = _key(path)
    # the thread's imports happen here, in the calling thread: two threads importing the same
    # packages (pyarrow, numpy) in different orders could deadlock on the module locks
    import calculators.log_csv  # noqa: F401
    import slaschema.errors  # noqa: F401
    import slaschema.safefiles  # noqa: F401

    with _lock:
        if name in _jobs:
            return
        out: list = []
        t = threading.Thread(target=_work, args=(name, out), name="slakit-log-prefetch", daemon=True)
        _jobs[name] = (t, out)
    t.start()


def take(path: str | Path) -> Fetched | None:
    """The prefetched reading of `path`, if one was started and the file is still the one
    read (same device, inode, size and modification time); None otherwise. Each reading is
    handed out once."""
    name = _key(path)
    with _lock:
        job = _jobs.pop(name, None)
    if job is None:
        return None
    t, out = job
    t.join()
    if not out:
        return None
    fetched: Fetched = out.pop()
    try:
        now = _identity(os.stat(name))
    except OSError:
        return None
    return fetched if now == fetched.key else None
