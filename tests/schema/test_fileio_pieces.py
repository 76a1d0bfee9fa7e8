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


@pytest.mark.parametrize(("call", "err"), [("write", errno.ENOSPC), ("fdatasync", errno.EIO)],
                         ids=["write", "early-sync"])
def test_a_file_error_reaches_the_caller_and_leaves_the_old_file(tmp_path, monkeypatch, call, err):
    """A failed write, or a failed early sync (raised by the end of the block), fails the file."""
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
