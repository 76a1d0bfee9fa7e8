"""Read an incident log in the background while the command starts.

`slakit credits` (and the other commands reading a log) spend their first half second
importing numpy, pyarrow and pydantic and loading the contract, on one core. The log's bytes, their
SHA-256 and the Arrow parse of a CSV need neither, and both release the GIL: `start(path)`
begins them in a thread at once, and `incidents.load_incidents` takes the result with
`take(path)` (joining the thread) instead of doing the same work after the imports.

Nothing here reports a problem: whatever goes wrong (no such file, not a regular file, a
file that changed, a CSV Arrow refuses) leaves no result, and the loader then does the work
itself and reports the problem its own way. Only a regular file is ever read: the file is
opened without blocking and checked on the open descriptor, so a FIFO or device named on the
command line cannot hang the thread.

A command that stops before it needs the log (a bad contract or option, an output it may not
write) does not wait for the reading: `cancel()` (called when a command ends, whatever the
outcome: `slakit.cli`) and the interpreter's exit stop it. The file is read in chunks of
`CHUNK` bytes and the Arrow parse goes piece by piece (`log_csv_parse.read_csv_arrow(stop=...)`),
each step asking whether the reading was cancelled, so a cancelled reading ends within one
chunk or piece and lets its memory go; the exit then waits only for that step (Arrow's threads
must not run into the interpreter's shutdown; the `slakit` program ends with `os._exit`, which has no
shutdown, and does not wait). Only the first `EAGER` bytes (256 MiB, a log of
about two million incidents) are read before the loader asks for the log (`take`); the rest
of a larger one is read then, so a command that stops early has read, and taken the cores
from its own start-up for, at most that much. A CSV with quote characters is parsed in one go
(Arrow cannot split it at newlines), so an exit during that parse waits for it.

When the loader has to wait for the reading of a log of 16 MiB or more, `take` spends the wait
faulting in the memory the loader and the engine allocate next (`memory.prefault_while`).
"""

from __future__ import annotations

import atexit
import os
import stat
import threading
from pathlib import Path
from typing import Any


class Digest:
    """The SHA-256 of a buffer, worked out in a thread of its own once `start`ed (hashlib
    releases the GIL) and waited for by `hexdigest()` (worked out there if never started).

    The loader starts it when it takes the reading (`incidents.load_incidents`), after the
    Arrow parse and the column conversions, not beside them: those keep both cores busy while
    the command imports its modules, and the hash (0.1 s of CPU for 137 MB) then runs while
    the loader checks the rows and the engine computes, which leave a core mostly idle. A
    command whose output does not show the hash (the credits table and CSV) never starts it.
    The buffer is let go once hashed."""

    def __init__(self, data: bytes | bytearray) -> None:
        self._data: bytes | bytearray | None = data
        self._hex: str | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Digest:
        if self._thread is None and self._hex is None:
            self._thread = threading.Thread(target=self._work, name="slakit-log-sha256", daemon=True)
            self._thread.start()
        return self

    def _work(self) -> None:
        data = self._data
        if data is not None:
            import hashlib

            self._hex = hashlib.sha256(data).hexdigest()
            self._data = None

    def hexdigest(self) -> str:
        if self._thread is not None:
            self._thread.join()
        if self._hex is None:                # never started (or its thread died): hashed here
            self._work()
        assert self._hex is not None
        return self._hex


class Fetched:
    """The log's bytes, their SHA-256 (`digest`: worked out in a thread once started; `sha256`
    waits for it), and the Arrow reading of a CSV (`arrow`: what `read_csv_arrow` returned, None when
    Arrow refused it or the file is not a CSV). (A plain class: this module is imported before
    the reading begins, and `dataclasses` would add 15 ms to that.)"""

    __slots__ = ("key", "data", "digest", "arrow", "converted", "rows")

    def __init__(self, *, key: tuple[int, int, int, int], data: bytes | bytearray, digest: Digest, arrow: Any,
                 converted: dict | None = None, rows: int | None = None) -> None:
        self.key = key                      # (device, inode, size, mtime_ns) when read
        self.data = data                    # read in chunks into one bytearray (no second copy)
        self.digest = digest
        self.arrow = arrow
        self.converted = {} if converted is None else converted     # `log_csv.convert_columns` of `arrow`
        self.rows = rows                    # the rows read, where `arrow`'s table holds only some columns

    @property
    def sha256(self) -> str:
        return self.digest.hexdigest()


CHUNK = 1 << 24                    # bytes read between two looks at the cancel flag
EAGER = 1 << 28                    # bytes read before the loader asks for the log (the rest after)
PREFAULT_FROM = 1 << 24            # a log this large has memory faulted in while `take` waits for it
PREFAULT_PER_BYTE = 3              # what loading and computing fault in per byte of log (1M rows: 400 MB)


class _Job:
    """One reading: its thread, its result (`out`), and the flags the thread looks at between
    chunks and pieces: `stop` (cancelled: give up), `go` (the loader wants the log: read on
    past EAGER); `wake` is set with either."""

    def __init__(self) -> None:
        self.out: list[Fetched] = []
        self.stop = threading.Event()
        self.go = threading.Event()
        self.wake = threading.Event()
        self.parser = threading.Event()        # the parse's module is imported (`start`)
        self.imported = threading.Event()      # and the conversions' (`start`)
        self.thread: threading.Thread | None = None
        self.size = 0                          # the file's size when opened

    def cancel(self) -> None:
        self.stop.set()
        self.wake.set()

    def release(self) -> None:
        self.go.set()
        self.wake.set()


_lock = threading.Lock()
_jobs: dict[str, _Job] = {}
_cancelled: list[threading.Thread] = []      # stopped readings not yet finished: joined at exit


def cancel() -> None:
    """Stop every reading not taken yet, without waiting: a command that ends (or gives up)
    before its loader took the reading has no use for it."""
    with _lock:
        jobs = list(_jobs.values())
        _jobs.clear()
        _cancelled[:] = [t for t in _cancelled if t.is_alive()]      # (a long-lived process cancels often)
        for job in jobs:
            job.cancel()
            if job.thread is not None:
                _cancelled.append(job.thread)


_join_at_exit = True


def exit_without_teardown() -> None:
    """The process is about to end with `os._exit` (`slakit.cli.quick_exit`): no interpreter
    shutdown follows, so the exit cancels the readings without waiting for them."""
    global _join_at_exit
    _join_at_exit = False


@atexit.register
def _finish() -> None:
    """At the interpreter's exit: cancel what is still under way and wait for the step each
    reading is in (one chunk read, one piece parsed), so no Arrow thread runs into shutdown
    (not when the process ends without the shutdown: `exit_without_teardown`)."""
    cancel()
    if not _join_at_exit:
        return
    with _lock:
        threads = list(_cancelled)
        _cancelled.clear()
    for t in threads:
        t.join()


def _key(path: str | Path) -> str:
    """The name as `Path` spells it: the command line's `./log.csv` and the loader's
    `Path("./log.csv")` are one reading (the same file to the OS: no `..` is taken away)."""
    return str(Path(path))


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


try:      # (the C module alone: `calculators.kernels` imports numpy, which this module must not)
    from calculators._kernels import empty_bytearray as _empty_bytearray
except ImportError:  # pragma: no cover - built without a C compiler
    _empty_bytearray = bytearray


def _buffer(size: int) -> bytearray:
    """A bytearray of `size` bytes to read a file into: not zeroed first where the kernels were
    built (`bytearray(size)` writes a 137 MB log's every page while holding the GIL, 0.06 s in
    which the command's start-up waits, before the read writes them again)."""
    return _empty_bytearray(size)


def _read_regular(path: str, job: _Job | None = None
                  ) -> tuple[bytearray, tuple[int, int, int, int]] | None:
    """The bytes of the regular file `path` and its identity when opened; None when it is not
    a regular file, cannot be read, or `job` is cancelled. With a `job`, the first EAGER bytes
    are read at once and the rest once the loader asks for the log (`job.go`)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if job is not None:
            job.size = st.st_size
        # the file's bytes are read straight into one buffer of its size (no chunk copied
        # again: 137 MB in 0.12 s instead of 0.17 s); a file that grew while read goes on
        # growing the bytearray in place, one that shrank is cut to what was read (either way
        # the loader's identity check then finds it changed and reads it itself)
        data = _buffer(st.st_size)
        view = memoryview(data)
        got = 0
        with os.fdopen(fd, "rb", closefd=False) as f:
            while True:
                if job is not None:
                    while got >= EAGER and not job.go.is_set() and not job.stop.is_set():
                        job.wake.wait()
                    if job.stop.is_set():
                        return None
                if got < len(data):
                    n = f.readinto(view[got:got + CHUNK])
                    if not n:
                        break
                    got += n
                    continue
                chunk = f.read(CHUNK)
                if not chunk:
                    break
                view.release()
                data += chunk
                got += len(chunk)
                view = memoryview(data)
        view.release()
        if got < len(data):
            del data[got:]
        return data, _identity(st)
    except OSError:
        return None
    finally:
        os.close(fd)


def _wait(ready: threading.Event, stop: threading.Event) -> bool:
    """Wait until `ready` is set; False (at once) when the reading is cancelled first."""
    while not ready.wait(0.05):
        if stop.is_set():
            return False
    return not stop.is_set()


def _work(path: str, job: _Job) -> None:
    from slaschema.safefiles import check_cli_file

    try:
        check_cli_file(Path(path), "incident log")     # no /proc, /sys or /dev: the loader says why
        got = _read_regular(path, job)
    except Exception:  # noqa: BLE001 - refused, or a file too large for memory: the loader reads it
        return         # itself (a command that gets that far) and says what is wrong
    stop = job.stop
    if got is None or stop.is_set():
        return
    data, ident = got
    del got
    # the parse needs pyarrow's CSV reader and the conversions the rest of `log_csv`: both are
    # imported by the thread that started this one (`start`), which says when each is done
    if not _wait(job.parser, stop):
        return
    arrow, converted, rows = None, {}, None
    try:
        from calculators.log_csv_parse import looks_like_csv, read_csv_arrow     # (failed in `start`: said there)

        if looks_like_csv(path, data):
            # a log without a quote character is split into its columns in one pass where its
            # cells are plain (`log_csv_plain`, which needs numpy and the conversions: it waits
            # for `imported`); any other is parsed by Arrow (as soon as `parser` is imported)
            if b'"' not in data and _wait(job.imported, stop):
                from calculators.log_csv_plain import read_plain

                plain = read_plain(data)
                if plain is not None:
                    arrow, converted, rows = (plain.table, plain.raw_names, plain.names, False), plain.converted, plain.n
            if arrow is None and not stop.is_set():
                arrow = read_csv_arrow(data, stop=stop.is_set)
                if arrow is not None and _wait(job.imported, stop):   # the conversions need neither pandas nor the contract
                    from calculators.log_csv import TEXT_CONVERTED, TIME_COLUMNS, convert_columns

                    converted = convert_columns(arrow[0], arrow[1], TEXT_CONVERTED, TIME_COLUMNS, stop=stop.is_set)
    except Exception:  # noqa: BLE001 - the loader reads the file again and reports what is wrong
        arrow, converted, rows = None, {}, None
    if stop.is_set():
        return
    # the loader starts the hash when it takes this, if its command shows it (see `Digest`)
    job.out.append(Fetched(key=ident, data=data, digest=Digest(data), arrow=arrow, converted=converted, rows=rows))


def start(path: str | Path) -> None:
    """Begin reading `path` in a daemon thread (once per path; no-op if already started)."""
    name = _key(path)
    # the thread's imports happen here, in the calling thread: two threads importing the same
    # packages (pyarrow, numpy) in different orders could deadlock on the module locks. The
    # reading of the file needs none of pyarrow, so it begins first; the thread waits for
    # `parser` (pyarrow's CSV reader) before its parse and for `imported` (the rest of
    # `log_csv`) before the conversions: the file is read while pyarrow is imported, and
    # parsed while the rest of `log_csv` is (sooner than after them all)
    import slaschema.safefiles  # noqa: F401

    with _lock:
        if name in _jobs:
            return
        job = _Job()
        job.thread = threading.Thread(target=_work, args=(name, job), name="slakit-log-prefetch", daemon=True)
        _jobs[name] = job
    job.thread.start()
    try:
        try:
            import calculators.log_csv_parse  # noqa: F401
        finally:
            job.parser.set()        # (also when an import fails: the thread then fails its own and stops)
        import calculators.log_csv  # noqa: F401
        import calculators.log_csv_plain  # noqa: F401
    finally:
        job.parser.set()
        job.imported.set()


def take(path: str | Path) -> Fetched | None:
    """The prefetched reading of `path`, if one was started and the file is still the one
    read (same device, inode, size and modification time); None otherwise. Each reading is
    handed out once."""
    name = _key(path)
    with _lock:
        job = _jobs.pop(name, None)
    if job is None:
        return None
    job.release()                          # read on past EAGER: the log is wanted now
    if job.thread is not None:
        if job.size >= PREFAULT_FROM:
            # the wait is spent faulting in the memory the loader and the engine take next
            from calculators.memory import prefault_while

            prefault_while(job.thread.is_alive, PREFAULT_PER_BYTE * job.size)
        job.thread.join()
    if not job.out:
        return None
    fetched: Fetched = job.out.pop()
    try:
        now = _identity(os.stat(name))
    except OSError:
        return None
    return fetched if now == fetched.key else None
