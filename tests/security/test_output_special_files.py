"""`-o` naming a FIFO or a character device: the output is written into it (a device such as
/dev/null takes it; one that refuses it, such as /dev/full, is output_unwritable), never swapped
for a regular file by the atomic rename (as root, `-o /dev/null` replaced the device node). A
FIFO nobody reads is output_unwritable at once, not a hang."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from slaschema.fileio import write_atomic
from tests.hostile.conftest import assert_coded_failure, cli

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"


def test_fifo_without_reader_is_unwritable_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    r = cli("credits", CONTRACT, LOG, "--month", "2027-01", "--format", "json", "-o", fifo)
    assert_coded_failure(r, "output_unwritable")
    assert time.monotonic() - t0 < 30
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]        # no temporary file left


def test_fifo_with_reader_receives_the_output(tmp_path):
    fifo = tmp_path / "out.txt"
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_atomic(fifo, "hello\n")
        assert os.read(rfd, 100) == b"hello\n"
    finally:
        os.close(rfd)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="making device nodes needs root")
@pytest.mark.parametrize(("minor", "code"), [(3, None), (7, "output_unwritable")])     # null, full
def test_character_device_is_written_into_not_replaced(tmp_path, minor, code):
    dev = tmp_path / "dev.json"
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    r = cli("credits", CONTRACT, LOG, "--month", "2027-01", "--format", "json", "-o", dev)
    if code is None:
        assert r.exit_code == 0, r.output
    else:
        assert_coded_failure(r, code)
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["dev.json"]
