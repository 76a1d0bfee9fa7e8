"""Atomic file writes: a reader never sees a half-written report, bundle or contract.

The data goes to a temporary file in the target's folder, then `os.replace` swaps it in.
The file gets the mode a plain `open()` would give (0666 minus the umask), not mkstemp's 0600.

A target that is a FIFO or a character device (`-o /dev/null`, a pipe made with mkfifo) is
written into, never replaced by the rename: a FIFO nobody reads and a device that refuses the
data (/dev/full) are an OSError at once, not a hang. Another kind of special file (a folder, a
block device, a socket) is refused.

The data is text, bytes, or a list of bytes-like pieces written in order (a large document
made of pieces is written without joining a copy of the whole first: `write_all`).

`atomic_writer` takes the data while it is being made: each `write(pieces)` passes them on to
the temporary file, so a large document's batches are freed as it goes; leaving the `with`
block normally syncs the file (when durable) and swaps it in, leaving it by an exception
removes the temporary file (nothing is written). A durable file of 4 MiB or more is written
past the page cache (O_DIRECT, gathered in a 4 MiB buffer by a thread that writes it each
time it is full, while the writer goes on): it has to reach the disk before the rename anyway, and copying it into the
page cache first was the costliest part of writing the credits JSON document (151 MB: 0.3-0.6 s
of CPU on the virtual machines we measure on, 0.05 s written directly; `AtomicWriter`). A
smaller file, and any file where the file system refuses O_DIRECT, goes through the page
cache (a large one synced early as it is written).

The temporary file is `.NAME.HOST-PID.RANDOM.tmp` beside the target (`temp_for`; NAME cut to
its first 120 bytes, so a target whose name is near the 255-byte limit can still be written).
A process killed while writing (SIGKILL, the kernel's out-of-memory killer) cannot remove its
temporary; the next write of the same target on the same host removes those whose process no
longer runs, that belong to the same user and that nobody has written to for ten minutes.
"""

from __future__ import annotations

import errno
import os
import random
import re
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Union

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
    # (a view with gaps between its items is copied: os.write and the buffers take contiguous bytes)
    views = [v if v.contiguous else memoryview(v.tobytes()) for v in views]
    return [v if v.format == "B" and v.ndim == 1 else v.cast("B") for v in views if v.nbytes]


_GROUP = 1 << 20
_NAME_ROOM = 120                 # bytes of the target's name kept in its temporary's name
STALE_AFTER_S = 600              # a dead process's temporary untouched this long is removed
_STALE_MIDDLE = re.compile(r"([0-9]{1,10})\.[a-z0-9_]+", re.ASCII)
_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"     # a temporary's random part, as mkstemp's


def _host_tag() -> str:
    host = re.sub(r"[^A-Za-z0-9-]", "", socket.gethostname())[:40]
    return host or "host"


def temp_for(path: Path, suffix: str = ".tmp", *,
             keep: Callable[[str | None], None] | None = None) -> tuple[int, str]:
    """A new temporary file beside `path` for writing it: `(fd, name)` as `tempfile.mkstemp`
    returns them, named `.NAME.HOST-PID.RANDOM{suffix}`. This host's temporaries of the same
    target left by processes that no longer run are removed first (see the module's text).
    `keep` is told each name before the file is created (None when the name was taken), so a
    caller can remove what was made whenever an interrupt lands (`AtomicWriter`)."""
    for name in temp_names(path, suffix):
        if keep is not None:
            keep(name)
        try:
            return _create(name), name
        except FileExistsError:
            if keep is not None:
                keep(None)
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(path))


def temp_names(path: Path, suffix: str = ".tmp") -> Iterator[str]:
    """Names for a temporary file beside `path` (`temp_for`), each new: the caller creates
    the file with `_create` (exclusive) and takes the next name if it exists. A caller that
    keeps the name before creating the file can always remove what it made, whenever an
    interrupt (Ctrl-C, SIGTERM) lands: `tempfile.mkstemp` tells the name only once the file
    is there, and an interrupt in between left the file behind unnamed."""
    folder = path.parent if str(path.parent) else Path(".")
    stem = os.fsdecode(os.fsencode(path.name)[:_NAME_ROOM])
    prefix = f".{stem}.{_host_tag()}-"
    _remove_stale(folder, prefix, suffix)
    pick = random.SystemRandom().choices
    for _ in range(tempfile.TMP_MAX):
        yield os.path.join(folder, f"{prefix}{os.getpid()}.{''.join(pick(_LETTERS, k=8))}{suffix}")


def _create(name: str) -> int:
    """Create `name` (it must not exist) for reading and writing, as mkstemp does (mode 0600)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    return os.open(name, flags, 0o600)


def _remove_stale(folder: Path, prefix: str, suffix: str) -> None:
    """Remove `prefix PID.RANDOM suffix` files in `folder` whose process PID is gone, that
    this user owns and that were last written STALE_AFTER_S or more ago. Nothing here fails a
    write: a folder that cannot be listed, or a file that cannot be removed, is left as it is."""
    try:
        entries = [e.name for e in os.scandir(folder) if e.name.startswith(prefix) and e.name.endswith(suffix)]
    except OSError:
        return
    now = time.time()
    for name in entries:
        # exactly `PID.RANDOM` between them (RANDOM: mkstemp's letters, digits and _): the
        # temporary of another target whose name goes on like this one's prefix
        # (`out.HOST-5` beside `out`: `.out.HOST-5.HOST-PID.RANDOM.tmp`) is not taken for one
        middle = _STALE_MIDDLE.fullmatch(name[len(prefix):len(name) - len(suffix)])
        if middle is None:
            continue
        pid = int(middle.group(1))
        if pid == os.getpid() or pid <= 0 or _running(pid):
            continue
        target = folder / name
        try:
            st = os.lstat(target)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and now - st.st_mtime >= STALE_AFTER_S:
                os.unlink(target)
        except OSError:
            pass


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True             # another user's process, or a number that is no process id here: kept
    return True


_EARLY_SYNC = 32 << 20        # a durable file's early sync begins after this many bytes (`AtomicWriter.write`)
_STAGE = 4 << 20              # a durable file's bytes gathered per direct write (`AtomicWriter.write`)
_ALIGN = 4096                 # what a direct write's offset, length and buffer are multiples of
_AHEAD = 64 << 20             # bytes handed to a durable file's writing thread before the writer waits
_MEMMOVE_FROM = 1 << 16       # runs copied into its buffer with the GIL let go from this size
# a direct write refused (an alignment the device does not take, a file system without it)
_REFUSED = frozenset({errno.EINVAL, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)})


def write_all(fd: int, data: Data) -> int:
    """Write every byte of `data` to the file descriptor `fd`; returns the count. Small
    pieces are joined into runs of about 1 MB first and a run is written with one `os.write`
    loop (a piece of 1 MB or more is written as it is, not copied): measured on the
    credits document (80,000 pieces, 235 MB), that takes 0.08 s of CPU where `os.writev` of
    the pieces takes 0.17-0.24 s and one join of the whole 0.13 s (the run is still in the
    CPU cache when the kernel copies it)."""
    group: list[memoryview] = []
    size = total = 0
    for piece in _pieces(data):
        total += piece.nbytes
        if piece.nbytes >= _GROUP:
            _write_run(fd, group)
            group, size = [], 0
            _write_view(fd, piece)
            continue
        group.append(piece)
        size += piece.nbytes
        if size >= _GROUP:
            _write_run(fd, group)
            group, size = [], 0
    _write_run(fd, group)
    return total


def _write_run(fd: int, pieces: list[memoryview]) -> None:
    if pieces:
        _write_view(fd, memoryview(b"".join(pieces)) if len(pieces) > 1 else pieces[0])


def _write_view(fd: int, view: memoryview, refused: frozenset[int] = frozenset()) -> memoryview:
    """Write all of `view`; returns what is left of it (empty: all written), which is not
    empty only where a write failed with an errno in `refused` (any other error is raised)."""
    while view:
        try:
            done = os.write(fd, view)
        except OSError as e:
            if e.errno in refused:
                return view
            raise
        if done <= 0:                      # nothing taken: no progress to wait for
            raise OSError(errno.EIO, "the write took no data")
        view = view[done:]
    return view


def write_atomic(path: Path | str, data: Data, *, durable: bool = True) -> None:
    """Write `data` (text, bytes, or bytes-like pieces in order) to `path` atomically;
    `durable` also fsyncs before the rename."""
    with atomic_writer(path, durable=durable) as w:
        w.write(data)


def _set_direct(fd: int, on: bool) -> None:
    """O_DIRECT set on (or cleared from) the open file `fd`; OSError where it is refused."""
    import fcntl

    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_DIRECT if on else flags & ~os.O_DIRECT)


def _py_buffer() -> Any:
    """CPython's `Py_buffer` as a ctypes structure (part of the stable ABI): where a bytes-like
    object's bytes are. Made on first use (ctypes is imported only for a large durable file)."""
    global _PyBuffer
    if _PyBuffer is None:
        import ctypes

        class PyBuffer(ctypes.Structure):
            _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                        ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                        ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                        ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]

        _PyBuffer = PyBuffer
    return _PyBuffer()


_PyBuffer: Any = None


def _owned(piece: memoryview) -> memoryview:
    """`piece`, or a copy of it where its bytes could change after `write` returns (only
    bytes objects cannot): the thread reads it later."""
    return piece if isinstance(piece.obj, bytes) else memoryview(piece.tobytes())


class _DirectWrites:
    """The thread that writes a durable file with O_DIRECT once the writer's first buffer is
    full (`AtomicWriter._hand_over`): it takes that buffer and then the pieces the writer hands
    over as they come (`put`), gathers them in the buffer and writes each time it is full; at
    the end (`close`) the part of what is left that is a whole number of `_ALIGN` blocks, then
    O_DIRECT is cleared and the rest goes through the page cache.

    The writer goes on making the rest meanwhile, waiting only while more than `_AHEAD` bytes
    handed over are not written yet. The pieces are read where they are (a bytes object
    cannot change; other pieces are copied by `_owned`), and large runs are copied into the
    buffer with the GIL released (`ctypes.memmove`). Measured on the credits JSON document
    (151 MB), the writer's own gathering into buffers written by a thread each took 81-105 ms
    of the document's 360-540 ms, 41-67 of them waiting for a buffer back while a 30-44 MB
    batch of records went to the device.

    The thread writes through a duplicate of the file's descriptor, which it closes when it
    ends, and holds the pieces and the buffer: a writer given up while the thread still
    writes (Ctrl-C) closes its own descriptor and removes the file without waiting (`stop`:
    nothing more is written), and neither can then reach another file.

    `error`: what a write raised (nothing more is written after it); `refused`: a direct write
    was refused (EINVAL, EOPNOTSUPP): O_DIRECT is then cleared (a flag of the open file, which
    the writer's descriptor shares) and the rest is written through the page cache, `cached`
    bytes of it. `done` is set when the thread ends (an interrupted `Thread.join` cannot say
    so reliably before Python 3.12)."""

    def __init__(self, fd: int, buffer: memoryview) -> None:
        import queue
        import threading

        self._fd = [os.dup(fd)]              # taken by the thread, or by `disown` if it never ran
        self._buffer = buffer                # page-aligned, full
        self._size = self._filled = buffer.nbytes
        self._queue: Any = queue.SimpleQueue()       # lists of pieces; None: no more
        self._room = threading.Condition()
        self.pending = buffer.nbytes         # bytes handed over and not written yet
        self.done = threading.Event()
        self.stop = False
        self.error: BaseException | None = None
        self.refused = False
        self.cached = 0

    def start(self) -> None:
        import threading

        try:
            threading.Thread(target=self.run, name="slakit-write", daemon=True).start()
        except BaseException:                # (Ctrl-C while it starts: the thread may run)
            self.disown()
            raise

    def put(self, pieces: list[memoryview]) -> None:
        """Hand `pieces` over (each `_owned`); waits first while more than `_AHEAD` bytes are
        not written yet (not after the thread ended)."""
        n = sum(p.nbytes for p in pieces)
        with self._room:
            while self.pending > _AHEAD and not self.done.is_set():
                self._room.wait()
            self.pending += n
        self._queue.put(pieces)

    def close(self) -> None:
        """No more pieces: the thread ends once the last are written."""
        self._queue.put(None)

    def run(self) -> None:
        try:
            fd = self._fd.pop()              # (list.pop is atomic: one of run and disown gets it)
        except IndexError:
            return                           # (disowned: `done` is set)
        target = None
        try:
            address = None                   # where the buffer is, for memmove (CPython's C API)
            try:
                import ctypes

                if hasattr(ctypes, "pythonapi"):
                    target = ctypes.c_char.from_buffer(self._buffer.obj)
                    address = ctypes.addressof(target)
            except (ImportError, TypeError, ValueError, BufferError):
                pass                         # copied as slices (or the writer gave up: stopped)
            self._guarded(self._flush, fd)
            self._done_with(self._size)
            while (pieces := self._queue.get()) is not None:
                for piece in pieces:
                    self._guarded(self._gather, fd, piece, address)
                    self._done_with(piece.nbytes)
            self._guarded(self._end, fd)
        finally:
            target = None                    # (the buffer can be closed once the thread ends)
            os.close(fd)
            self.done.set()
            with self._room:
                self._room.notify_all()

    def _guarded(self, step: Callable[..., None], *args: Any) -> None:
        if self.error is None and not self.stop:
            try:
                step(*args)
            except BaseException as e:  # noqa: BLE001 - raised again by the writer's thread (`_drain`)
                self.error = e

    def _done_with(self, n: int) -> None:
        with self._room:
            self.pending -= n
            self._room.notify_all()

    def _gather(self, fd: int, piece: memoryview, address: int | None) -> None:
        """Copy `piece` into the buffer, writing it each time it is full (runs of
        `_MEMMOVE_FROM` bytes or more by memmove where the buffer's `address` is known)."""
        buffer, at, n = self._buffer, 0, piece.nbytes
        source = None
        try:
            while at < n:
                k = min(n - at, self._size - self._filled)
                if k >= _MEMMOVE_FROM and address is not None:
                    import ctypes                # (imported by `run` already)

                    if source is None:
                        source = _py_buffer()
                        if ctypes.pythonapi.PyObject_GetBuffer(ctypes.py_object(piece), ctypes.byref(source), 0):
                            source = None
                            raise BufferError("the piece gives no buffer")
                    ctypes.memmove(address + self._filled, source.buf + at, k)      # (the GIL let go)
                else:
                    buffer[self._filled:self._filled + k] = piece[at:at + k]
                self._filled += k
                at += k
                if self._filled == self._size:
                    self._flush(fd)
        finally:
            if source is not None:
                import ctypes

                ctypes.pythonapi.PyBuffer_Release(ctypes.byref(source))

    def _flush(self, fd: int) -> None:
        """Write the full buffer (directly, or through the page cache once refused)."""
        view = self._buffer[:self._filled]
        self._filled = 0
        left = view if self.refused else _write_view(fd, view, _REFUSED)
        if left:                             # refused, now or before: through the page cache
            if not self.refused:
                self.refused = True
                _set_direct(fd, False)
            _write_view(fd, left)
            self.cached += left.nbytes

    def _end(self, fd: int) -> None:
        """The last, partly filled buffer: its whole blocks directly, the rest through the page
        cache (O_DIRECT cleared)."""
        n, start = self._filled, 0
        self._filled = 0
        if not self.refused:
            whole = n // _ALIGN * _ALIGN
            if whole:                        # (refused: from there on through the page cache)
                start = whole - _write_view(fd, self._buffer[:whole], _REFUSED).nbytes
            _set_direct(fd, False)
        _write_view(fd, self._buffer[start:n])
        self.cached += n - start

    def disown(self) -> None:
        """Give the thread up (a failed or interrupted start, an abandoned writer): nothing more
        is written and it ends once it runs; its descriptor is closed here if it never took
        it (`done` then, as it will not run), else by the thread as it ends."""
        self.stop = True
        self.close()
        try:
            fd = self._fd.pop()
        except IndexError:
            return
        os.close(fd)
        self.done.set()


class AtomicWriter:
    """The file being written by `atomic_writer`: `write(data)` adds text, bytes or pieces.

    A durable regular file's bytes are gathered in a page-aligned buffer of `_STAGE` bytes.
    A file that fills it is written with O_DIRECT by a thread that takes the buffer and the
    rest of the data as it comes (`_hand_over`, `_DirectWrites`): each full buffer, and at the
    end the part of what is left that is a whole number of `_ALIGN` blocks, then the rest
    through the page cache. A smaller file is written through the page cache when the block
    ends. Where the file system refuses
    O_DIRECT, the file is written through the page cache from then on, and synced early as it
    is written (`_written`). After an error the file cannot be finished (`finish` raises it
    again): a caller that went on writing would otherwise swap in a file with a gap."""

    def __init__(self, path: Path, durable: bool) -> None:
        self.path = path
        self.durable = durable
        self.tmp: str | None = None
        self._fd: int | None = None
        self._special = False
        self._unsynced = 0                   # bytes written since the last early sync began
        self._sync: Any = None               # the thread of an early sync (`write`)
        self._sync_error: OSError | None = None
        self._buffer: memoryview | None = None      # the page-aligned buffer (an anonymous mmap)
        self._staged: memoryview | None = None      # it, while the first `_STAGE` bytes are gathered
        self._filled = 0                     # bytes gathered in it
        self._writes: _DirectWrites | None = None   # the thread writing the file from then on
        self._failed: BaseException | None = None   # an error `write` raised
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            self._fd = _open_special(path)
            self._special = True
            return
        if mode is not None and not stat.S_ISREG(mode):
            raise OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                          "is a folder" if stat.S_ISDIR(mode) else "not a regular file", str(path))
        path.parent.mkdir(parents=True, exist_ok=True)

    def open(self) -> None:
        """Create the temporary file (a FIFO or device was opened already). Its name is kept
        before it is created, so `abandon` removes it whenever an interrupt lands."""
        if not self._special:
            self._fd = temp_for(self.path, keep=self._keep)[0]
            if self.durable and hasattr(os, "O_DIRECT"):
                import mmap

                self._buffer = self._staged = memoryview(mmap.mmap(-1, _STAGE))   # (its pages are touched as they fill)

    def _keep(self, name: str | None) -> None:
        self.tmp = name

    def write(self, data: Data) -> None:
        if self._failed is not None:
            raise self._failed
        try:
            writes = self._writes
            if writes is not None:
                if writes.error is not None:
                    self._drain()            # (raises it)
                writes.put([_owned(p) for p in _pieces(data)])
            elif self._staged is not None:
                self._stage(data)
            else:
                self._written(write_all(self._fd, data))
        except BaseException as e:
            self._failed = e
            raise

    def _written(self, n: int) -> None:
        """`n` more bytes written through the page cache: once enough are, what is written so
        far goes to disk in a thread while the rest is made (fdatasync releases the GIL);
        `finish` waits for it and syncs the rest."""
        self._unsynced += n
        if self._unsynced >= _EARLY_SYNC and self.durable and not self._special and not self._syncing():
            import threading

            self._unsynced = 0
            self._sync = threading.Thread(target=self._sync_now, args=(self._fd,), name="slakit-sync", daemon=True)
            self._sync.start()

    def _stage(self, data: Data) -> None:
        """Gather `data` in the buffer; once it is full, the file is the writing thread's
        (`_hand_over`), which takes the rest."""
        pieces = _pieces(data)
        for i, piece in enumerate(pieces):
            staged = self._staged
            assert staged is not None
            k = min(piece.nbytes, _STAGE - self._filled)
            staged[self._filled:self._filled + k] = piece[:k]
            self._filled += k
            if self._filled == _STAGE:
                self._filled = 0
                rest = [piece[k:], *pieces[i + 1:]]
                if self._hand_over(staged):
                    self._writes.put([_owned(p) for p in rest if p.nbytes])      # type: ignore[union-attr]
                else:                        # refused: it and the rest through the page cache
                    self._written(write_all(self._fd, [staged, *rest]))
                return

    def _hand_over(self, view: memoryview) -> bool:
        """The first `_STAGE` bytes are gathered in `view`: O_DIRECT is set and the thread that
        writes the file from here on (`_DirectWrites`) starts with them; False (nothing of
        `view` written, the caller writes it) where the file system refuses O_DIRECT.

        The file has to reach the disk before it is swapped in anyway; written this way it is
        not copied into the page cache first. On the virtual machines we measure on, that copy
        of the credits document's 151 MB took 0.3-0.6 s of CPU (pages the host hands over
        afresh); written directly, 0.05 s, the waits for the device beside the making of the
        rest, and the final sync has little left to do. Where the file system refuses O_DIRECT
        (EINVAL: tmpfs before Linux 6.6, some network file systems) or a direct write, `view`
        and what follows are written through the page cache (the thread's `refused`)."""
        fd = self._fd
        assert fd is not None
        self._staged = None                  # (nothing more is gathered here either way)
        try:
            _set_direct(fd, True)
        except OSError:
            return False
        self._writes = _DirectWrites(fd, view)          # (known before it starts: `_release_stage`)
        self._writes.start()
        return True

    def _drain(self) -> None:
        """Everything handed over is written and the thread has ended, having cleared O_DIRECT
        (its error raised)."""
        writes = self._writes
        if writes is None:
            return
        writes.close()
        writes.done.wait()                   # (interrupted: `_release_stage` gives the thread up)
        self._writes = None
        if writes.error is not None:
            raise writes.error
        self._written(writes.cached)

    def _write_staged(self) -> None:
        """When the block ends: the thread's last bytes written (`_drain`), or, for a file that
        never filled the buffer, what it gathered, through the page cache."""
        staged, n = self._staged, self._filled
        self._drain()
        self._staged, self._filled = None, 0
        if staged is not None and n:
            _write_view(self._fd, staged[:n])

    def _release_stage(self) -> None:
        """Let the buffer go: closed at once unless the thread still writes (an interrupted
        writer: the thread then writes nothing more, and holds the buffer until it ends)."""
        writes, self._writes = self._writes, None
        view, self._buffer, self._staged = self._buffer, None, None
        if writes is not None:
            writes.disown()
            if not writes.done.is_set():
                return
        if view is not None:
            buffer = view.obj
            try:
                view.release()
                buffer.close()
            except BufferError:             # a part of it still held (a traceback's): freed with it
                pass

    def _syncing(self) -> bool:
        return self._sync is not None and self._sync.is_alive()

    def _sync_now(self, fd: int) -> None:
        try:
            getattr(os, "fdatasync", os.fsync)(fd)          # (macOS has no fdatasync)
        except OSError as e:           # raised by `finish`, whose own fsync would fail the same way
            self._sync_error = e

    def _join_sync(self) -> None:
        if self._sync is not None:
            self._sync.join()
            self._sync = None

    def finish(self) -> None:
        """All written: sync, close and swap the file in."""
        if self._failed is not None:
            raise self._failed
        try:
            self._write_staged()
        finally:
            self._release_stage()
        self._join_sync()
        fd, self._fd = self._fd, None
        try:
            if self._sync_error is not None:
                raise self._sync_error
            if self.durable and not self._special:
                os.fsync(fd)
        finally:
            os.close(fd)
        if self._special:
            return
        os.chmod(self.tmp, _default_mode())
        os.replace(self.tmp, self.path)
        self.tmp = None

    def abandon(self) -> None:
        """Stop without swapping the file in: the temporary file is removed (without waiting
        for a buffer still being written, whose thread has a descriptor of its own)."""
        try:
            self._release_stage()
            self._join_sync()
        finally:
            try:
                if self._fd is not None:
                    os.close(self._fd)
                    self._fd = None
            finally:
                if self.tmp is not None:
                    try:
                        os.unlink(self.tmp)
                    except FileNotFoundError:
                        pass
                    self.tmp = None


@contextmanager
def atomic_writer(path: Path | str, *, durable: bool = True) -> Iterator[AtomicWriter]:
    """`with atomic_writer(path) as w: w.write(pieces) ...`: the file appears at `path` when
    the block ends normally, with everything written; `durable` syncs it to disk first."""
    w = AtomicWriter(Path(path), durable)
    try:
        w.open()
        yield w
        w.finish()
    except BaseException:
        w.abandon()
        raise


def _open_special(path: Path) -> int:
    """Open an existing FIFO or character device for writing (no create, no truncate). A
    FIFO without a reader fails to open (ENXIO) instead of blocking."""
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise OSError(errno.EINVAL, "not a FIFO or character device", str(path))
        os.set_blocking(fd, True)          # a reader is there: wait for it to take the data
    except BaseException:
        os.close(fd)
        raise
    return fd
