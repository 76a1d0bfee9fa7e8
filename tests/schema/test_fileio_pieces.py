"""Writing a document made of pieces (`slaschema.fileio.write_all`, `atomic_writer`) and a
command's output written a batch at a time as it is made (`slaschema.cliconv.write_output` with a function):
every byte in order, the file swapped in only when all is written, nothing left behind on an
error, and an error of the file told apart from an error of making the data."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from slaschema import fileio
from slaschema.cliconv import write_output
from slaschema.errors import InputError
from slaschema.fileio import atomic_writer, write_all, write_atomic

BIG = 3 << 20          # more than one run of joined pieces


def pieces() -> list:
    data = bytes(range(256)) * (BIG // 256)
    return [b"head", b"", memoryview(data)[5:BIG // 2], bytearray(b"x" * 1000), data[:17],
            "é text".encode(), memoryview(data), b"tail\n"]


def joined(parts) -> bytes:
    return b"".join(bytes(p) for p in parts)


def test_write_all_writes_every_piece_in_order(tmp_path):
    out = tmp_path / "out.bin"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT)
    try:
        n = write_all(fd, pieces())
    finally:
        os.close(fd)
    assert out.read_bytes() == joined(pieces())
    assert n == len(joined(pieces()))


def test_write_all_goes_on_after_short_writes(tmp_path, monkeypatch):
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(memoryview(data)[:4097])))
    out = tmp_path / "out.bin"
    write_atomic(out, pieces())
    assert out.read_bytes() == joined(pieces())


def test_a_write_that_takes_nothing_is_an_error_not_a_hang(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    out = tmp_path / "out.bin"
    with pytest.raises(OSError) as e:
        write_atomic(out, [b"abc"])
    assert e.value.errno == errno.EIO
    assert list(tmp_path.iterdir()) == []


def test_atomic_writer_writes_batches_and_swaps_in_at_the_end(tmp_path):
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with atomic_writer(out) as w:
        for _ in range(5):
            w.write(pieces())
            assert out.read_bytes() == b"old"          # not swapped in before the end
        w.write("text")
    assert out.read_bytes() == joined(pieces()) * 5 + b"text"
    assert out.stat().st_mode & 0o777 == fileio._default_mode()
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_an_error_while_making_the_data_leaves_the_old_file(tmp_path):
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with pytest.raises(ValueError, match="made badly"):
        with atomic_writer(out) as w:
            w.write(pieces())
            raise ValueError("made badly")
    assert out.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


@pytest.fixture
def no_direct(monkeypatch):
    """A file system that refuses O_DIRECT (as tmpfs and some network file systems do)."""
    import fcntl

    real = fcntl.fcntl

    def refusing(fd, cmd, arg=0):
        if cmd == fcntl.F_SETFL and arg & getattr(os, "O_DIRECT", 0):
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        return real(fd, cmd, arg)

    monkeypatch.setattr(fcntl, "fcntl", refusing)


def direct_writes_work(folder) -> bool:
    if not hasattr(os, "O_DIRECT"):
        return False
    try:
        fd = os.open(folder / "probe", os.O_WRONLY | os.O_CREAT | os.O_DIRECT)
    except OSError:
        return False
    os.close(fd)
    os.unlink(folder / "probe")
    return True


def spy_writes(monkeypatch) -> list[tuple[bool, int]]:
    """(whether the descriptor had O_DIRECT, bytes asked) of each os.write, in any thread."""
    import fcntl

    calls: list[tuple[bool, int]] = []
    real = os.write

    def write(fd, data):
        calls.append((bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT), memoryview(data).nbytes))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    return calls


def test_a_durable_file_is_written_past_the_page_cache(tmp_path, monkeypatch):
    if not direct_writes_work(tmp_path):
        pytest.skip(f"the file system of {tmp_path} refuses O_DIRECT")
    synced = []
    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    monkeypatch.setattr(os, "fdatasync", lambda fd: synced.append(fd))
    calls = spy_writes(monkeypatch)
    out = tmp_path / "out.bin"
    with atomic_writer(out) as w:
        for _ in range(5):
            w.write(pieces())
    want = joined(pieces()) * 5
    assert out.read_bytes() == want
    # every full buffer directly, then the end's aligned part directly and its rest through the cache
    assert [d for d, _ in calls] == [True] * (len(calls) - 1) + [False]
    assert all(n == 1 << 16 for _, n in calls[:-2]) and calls[-2][1] % 4096 == 0
    assert calls[-1][1] == len(want) % 4096 and sum(n for _, n in calls) == len(want)
    assert synced == []                      # nothing in the page cache to sync early


@pytest.mark.parametrize("copy", ["memmove", "slices"])
@pytest.mark.parametrize("direct", [True, False], ids=["direct", "refused"])
@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, 1 << 16, (1 << 16) + 1, 3 * (1 << 16) + 5000, 1 << 18])
def test_every_size_around_the_buffer_and_the_alignment(tmp_path, monkeypatch, request, size, direct, copy):
    if direct and not direct_writes_work(tmp_path):
        pytest.skip(f"the file system of {tmp_path} refuses O_DIRECT")
    if not direct:
        request.getfixturevalue("no_direct")
    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    # the writing thread copies a run into its buffer with memmove from this size (the GIL let
    # go), else as a slice; runs are at most a buffer here
    monkeypatch.setattr(fileio, "_MEMMOVE_FROM", 1 << 12 if copy == "memmove" else 1 << 30)
    data = bytes((i * 7 + i // 251) % 256 for i in range(size))
    out = tmp_path / "out.bin"
    with atomic_writer(out) as w:
        at = 0
        for step in [1000, 70_000, 3, 65_536, 5] * 10:       # pieces across the buffers' edges
            w.write([data[at:at + step]])
            at += step
        w.write(data[at:])
    assert out.read_bytes() == data


@pytest.mark.parametrize("refusal", [errno.EINVAL, errno.EOPNOTSUPP], ids=["EINVAL", "EOPNOTSUPP"])
def test_a_direct_write_refused_midway_goes_on_through_the_page_cache(tmp_path, monkeypatch, refusal):
    if not direct_writes_work(tmp_path):
        pytest.skip(f"the file system of {tmp_path} refuses O_DIRECT")
    import fcntl

    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    real = os.write
    calls = []

    def write(fd, data):
        direct = bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT)
        calls.append(direct)
        if direct and calls.count(True) == 3:
            raise OSError(refusal, os.strerror(refusal))       # as a device with larger blocks
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    out = tmp_path / "out.bin"
    with atomic_writer(out) as w:
        for _ in range(3):
            w.write(pieces())
    assert out.read_bytes() == joined(pieces()) * 3
    assert calls[:3] == [True, True, True] and not any(calls[3:])


@pytest.mark.usefixtures("no_direct")
def test_a_durable_file_is_synced_early_while_it_is_written(tmp_path, monkeypatch):
    synced = []
    real = os.fdatasync
    monkeypatch.setattr(fileio, "_EARLY_SYNC", 1 << 20)
    monkeypatch.setattr(os, "fdatasync", lambda fd: synced.append(os.fstat(fd).st_size) or real(fd))
    out = tmp_path / "out.bin"
    with atomic_writer(out) as w:
        for _ in range(5):
            w.write(pieces())
            if w._sync is not None:
                w._sync.join()                 # (each write then finds no sync under way)
    assert out.read_bytes() == joined(pieces()) * 5
    # a sync began after each write that brought 1 MB or more since the last one began
    assert len(synced) == 5 and all(size >= len(joined(pieces())) for size in synced)
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_a_file_not_asked_to_be_durable_is_not_synced_early(tmp_path, monkeypatch):
    synced = []
    monkeypatch.setattr(fileio, "_EARLY_SYNC", 1 << 20)
    monkeypatch.setattr(os, "fdatasync", lambda fd: synced.append(fd))
    out = tmp_path / "out.bin"
    with atomic_writer(out, durable=False) as w:
        for _ in range(3):
            w.write(pieces())
    assert out.read_bytes() == joined(pieces()) * 3 and synced == []


@pytest.mark.parametrize(("call", "err", "direct"), [("write", errno.ENOSPC, True), ("write", errno.ENOSPC, False),
                                                    ("fdatasync", errno.EIO, False)],
                         ids=["direct-write", "write", "early-sync"])
def test_a_file_error_reaches_the_caller_and_leaves_the_old_file(tmp_path, monkeypatch, request, call, err, direct):
    """A failed write (also one in the thread writing a buffer directly), or a failed early
    sync of a file written through the page cache (raised by the end of the block), fails
    the file."""
    if not direct:
        request.getfixturevalue("no_direct")
    def broken(*args):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(fileio, "_EARLY_SYNC", 1 << 20)
    monkeypatch.setattr(os, call, broken)
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with pytest.raises(OSError) as e:
        with atomic_writer(out) as w:
            for _ in range(3):
                w.write(pieces())
    assert e.value.errno == err
    assert out.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_a_fifo_with_a_reader_receives_streamed_pieces(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with atomic_writer(fifo) as w:
            w.write([b"he", memoryview(b"llo")])
            w.write("\n")
        assert os.read(rfd, 100) == b"hello\n"
    finally:
        os.close(rfd)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_write_output_tells_a_file_error_from_an_error_of_making_the_data(tmp_path, monkeypatch):
    out = tmp_path / "out.json"

    def make(write):
        write([b"{"])
        raise OSError(errno.ENOENT, "a file the maker reads is gone")

    with pytest.raises(OSError) as e:                    # the maker's own error, as it is
        write_output(out, make)
    assert not isinstance(e.value, InputError) and e.value.errno == errno.ENOENT
    assert list(tmp_path.iterdir()) == []

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError) as e:                 # the folder cannot be made
        write_output(blocker / "out.json", lambda write: write([b"{}"]))
    assert [p.code for p in e.value.problems] == ["output_unwritable"]

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(InputError) as e:                 # the file refuses the data
        write_output(out, lambda write: [write([b"x" * 100]) for _ in range(20)])
    assert [p.code for p in e.value.problems] == ["output_unwritable"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def needs_direct(folder) -> None:
    if not direct_writes_work(folder):
        pytest.skip(f"the file system of {folder} refuses O_DIRECT")


def test_short_direct_writes_go_on_from_where_they_stopped(tmp_path, monkeypatch):
    needs_direct(tmp_path)
    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    real = os.write
    # a direct write that takes whole blocks only, a few at a time
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, memoryview(data)[:8192]))
    out = tmp_path / "out.bin"
    write_atomic(out, pieces())
    assert out.read_bytes() == joined(pieces())


def test_an_error_of_any_kind_in_the_writing_thread_reaches_the_caller(tmp_path, monkeypatch):
    needs_direct(tmp_path)
    import fcntl

    real = os.write
    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)

    def write(fd, data):
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT:
            raise MemoryError("no memory for the write")
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with pytest.raises(MemoryError):
        with atomic_writer(out) as w:
            for _ in range(3):
                w.write(pieces())
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["out.bin"]


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "through-the-cache"])
def test_a_writer_that_failed_cannot_be_finished(tmp_path, monkeypatch, request, direct):
    """A caller that catches a write's error and goes on would swap in a file with a gap."""
    if direct:
        needs_direct(tmp_path)
    else:
        request.getfixturevalue("no_direct")
    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    real = os.write
    calls = []

    def write(fd, data):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with pytest.raises(OSError) as e:
        with atomic_writer(out) as w:
            for _ in range(4):
                try:
                    w.write(pieces())
                except OSError:
                    pass                              # swallowed: the writer stays failed
    assert e.value.errno == errno.EIO
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def hold_the_thread(monkeypatch, seen: list | None = None):
    """Each write of the writing thread waits until the returned event is set (the first
    8 bytes of each written into `seen` first)."""
    import threading

    release = threading.Event()
    real = os.write

    def slow(fd, data):
        if threading.current_thread().name == "slakit-write":
            if seen is not None:
                seen.append(bytes(memoryview(data)[:8]))
            release.wait(10)
        return real(fd, data)

    monkeypatch.setattr(os, "write", slow)
    return release


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts the open descriptors in /proc/self/fd")
def test_an_interrupt_while_a_buffer_is_written_leaves_nothing_behind(tmp_path, monkeypatch):
    """Ctrl-C while the command waits for the thread writing a buffer: the temporary file is
    removed at once, the thread finishes on a descriptor of its own (nothing reaches another
    file that reuses the number) and lets its buffer go."""
    needs_direct(tmp_path)
    import threading

    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)

    def interrupted(self):
        if self._writes is not None:
            raise KeyboardInterrupt                            # Ctrl-C while waiting for the thread

    release = hold_the_thread(monkeypatch)
    monkeypatch.setattr(fileio.AtomicWriter, "_drain", interrupted)
    before = open_fds()
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_writer(out) as w:
            w.write(pieces())                                  # the first buffer to the thread, which waits
    monkeypatch.undo()
    # the writer was let go without waiting for its thread, which still writes
    assert [t for t in threading.enumerate() if t.name == "slakit-write" and t.is_alive()]
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["out.bin"]
    other = tmp_path / "other.bin"
    fd = os.open(other, os.O_WRONLY | os.O_CREAT)              # may take the writer's old number
    release.set()
    for t in threading.enumerate():
        if t.name == "slakit-write":
            t.join(10)
    os.close(fd)
    assert other.read_bytes() == b"" and open_fds() == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts the open descriptors in /proc/self/fd")
@pytest.mark.parametrize("running", [False, True], ids=["before-it-runs", "once-it-runs"])
def test_an_interrupt_while_the_writing_thread_starts_leaves_nothing_behind(tmp_path, monkeypatch, running):
    """Ctrl-C in `Thread.start` (which waits for the new thread to begin): before the thread
    runs, or once it runs; either way it is given up, and ends."""
    needs_direct(tmp_path)
    import threading

    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    start = threading.Thread.start

    def interrupted(self):
        if running:
            start(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", interrupted)
    before = open_fds()
    out = tmp_path / "out.bin"
    with pytest.raises(KeyboardInterrupt):
        write_atomic(out, pieces())
    monkeypatch.undo()
    for t in threading.enumerate():
        if t.name == "slakit-write":
            t.join(10)
            assert not t.is_alive()
    assert list(tmp_path.iterdir()) == [] and open_fds() == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts the open descriptors in /proc/self/fd")
def test_an_interrupt_while_the_end_waits_for_the_thread_gives_it_up(tmp_path, monkeypatch):
    """Ctrl-C while the block's end waits for the thread to write the rest: the thread writes
    nothing more once its current write returns, ends without an error of its own, and
    closes its descriptor."""
    needs_direct(tmp_path)
    import threading

    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    release = hold_the_thread(monkeypatch)
    before = open_fds()
    out = tmp_path / "out.bin"
    with pytest.raises(KeyboardInterrupt):
        with atomic_writer(out) as w:
            w.write(pieces())
            writes = w._writes
            assert writes is not None

            def interrupted(timeout=None):
                raise KeyboardInterrupt

            writes.done.wait = interrupted                  # Ctrl-C in `_drain`'s wait
    assert [p.name for p in tmp_path.iterdir()] == []
    release.set()
    for t in threading.enumerate():
        if t.name == "slakit-write":
            t.join(10)
            assert not t.is_alive()
    assert writes.stop and writes.error is None and open_fds() == before


def test_without_ctypes_the_thread_copies_slices(tmp_path, monkeypatch):
    """Where ctypes cannot be imported (an interpreter without it), the thread copies every run
    as a slice: the file is written, not a hang."""
    needs_direct(tmp_path)
    import sys

    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    monkeypatch.setitem(sys.modules, "ctypes", None)          # `import ctypes` raises ImportError
    out = tmp_path / "out.bin"
    write_atomic(out, pieces())
    assert out.read_bytes() == joined(pieces())


def test_the_command_goes_on_while_the_thread_writes_and_the_order_is_kept(tmp_path, monkeypatch):
    """Once the first buffer is full, the thread takes what follows as it comes: the command
    goes on making the document while the device takes the bytes (up to `_AHEAD` of them not
    written yet), and the file holds them in the order they came."""
    needs_direct(tmp_path)
    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    seen: list[bytes] = []
    release = hold_the_thread(monkeypatch, seen)
    data = bytes((i * 7 + i // 251) % 256 for i in range(20 * (1 << 16) + 5000))
    out = tmp_path / "out.bin"
    with atomic_writer(out) as w:
        w.write([data[:(1 << 16) + 3], bytearray(data[(1 << 16) + 3:5 << 16])])
        w.write(memoryview(data)[5 << 16:])
        # the first buffer's write has not returned, yet all of it was handed over
        assert not release.is_set() and w._writes is not None and w._writes.pending == len(data)
        release.set()
    assert out.read_bytes() == data
    assert seen[:20] == [data[k << 16:(k << 16) + 8] for k in range(20)]


def test_the_command_waits_while_too_much_is_not_written_yet(tmp_path, monkeypatch):
    needs_direct(tmp_path)
    import threading

    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    monkeypatch.setattr(fileio, "_AHEAD", 1 << 18)
    release = hold_the_thread(monkeypatch)
    data = bytes(range(256)) * (40 << 8)                # 40 buffers
    out = tmp_path / "out.bin"
    with atomic_writer(out) as w:
        w.write(data[:1 << 16])
        w.write(data[1 << 16:6 << 16])                  # more than _AHEAD not written: the next waits
        making = threading.Thread(target=w.write, args=(data[6 << 16:],))
        making.start()
        making.join(0.5)
        assert making.is_alive()                        # waiting for the device, not holding it all
        release.set()
        making.join(10)
        assert not making.is_alive()
    assert out.read_bytes() == data


def test_an_error_in_the_thread_is_raised_and_nothing_is_left_behind(tmp_path, monkeypatch):
    needs_direct(tmp_path)
    import threading

    monkeypatch.setattr(fileio, "_STAGE", 1 << 16)
    real = os.write
    failed = threading.Event()

    def write(fd, data):
        if threading.current_thread().name == "slakit-write":
            failed.set()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    out = tmp_path / "out.bin"
    with pytest.raises(OSError) as e:
        with atomic_writer(out) as w:
            for _ in range(12):
                w.write([b"x" * (1 << 16)])
    assert e.value.errno == errno.ENOSPC and failed.is_set()
    assert list(tmp_path.iterdir()) == []
    for t in threading.enumerate():         # (the thread ended: it was waited for before the raise)
        if t.name == "slakit-write":
            t.join(10)
            assert not t.is_alive()


@pytest.mark.parametrize("durable", [True, False])
def test_a_view_with_gaps_is_written_as_its_items(tmp_path, durable):
    out = tmp_path / "out.bin"
    write_atomic(out, [memoryview(b"abcdef")[::2], b"!"], durable=durable)
    assert out.read_bytes() == b"ace!"
