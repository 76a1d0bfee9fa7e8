import os

import pytest

from slaschema.fileio import write_atomic


def test_write_atomic_mode_and_content(tmp_path):
    p = tmp_path / "a" / "out.txt"
    old = os.umask(0o022)
    try:
        write_atomic(p, "hello")
    finally:
        os.umask(old)
    assert p.read_text() == "hello"
    assert p.stat().st_mode & 0o777 == 0o644
    assert [x.name for x in p.parent.iterdir()] == ["out.txt"]


def test_write_atomic_leaves_old_file_when_interrupted(tmp_path, monkeypatch):
    p = tmp_path / "out.txt"
    p.write_text("old")

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(p, "new")
    assert p.read_text() == "old"
    assert [x.name for x in tmp_path.iterdir()] == ["out.txt"]


def _dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _aged(path, seconds: float) -> None:
    import time

    t = time.time() - seconds
    os.utime(path, (t, t))


def test_a_name_near_the_length_limit_can_be_written(tmp_path):
    name = "r" * 246 + ".pdf"            # 250 bytes: the temporary's name must not be longer than 255
    write_atomic(tmp_path / name, b"%PDF")
    assert [x.name for x in tmp_path.iterdir()] == [name]
    ml = "€" * 80 + ".txt"               # 244 bytes of UTF-8: cut on a byte, the name still works
    write_atomic(tmp_path / ml, "x")
    assert (tmp_path / ml).read_text() == "x"


def test_temporary_names_carry_host_and_pid(tmp_path):
    from slaschema.fileio import _host_tag, temp_for

    fd, name = temp_for(tmp_path / "out.json")
    os.close(fd)
    base = os.path.basename(name)
    assert base.startswith(f".out.json.{_host_tag()}-{os.getpid()}.") and base.endswith(".tmp")


def test_a_killed_writers_temporary_is_removed_by_the_next_write(tmp_path):
    from slaschema.fileio import STALE_AFTER_S, _host_tag

    host = _host_tag()
    dead = _dead_pid()
    stale = tmp_path / f".out.json.{host}-{dead}.abc123.tmp"          # killed long ago: removed
    fresh = tmp_path / f".out.json.{host}-{dead}.def456.tmp"          # killed just now: kept a while
    alive = tmp_path / f".out.json.{host}-{os.getppid()}.ghi789.tmp"  # its process runs: kept
    other_host = tmp_path / f".out.json.elsewhere{host}x-{dead}.jkl012.tmp"   # another host's: kept
    other_target = tmp_path / f".other.json.{host}-{dead}.mno345.tmp"         # another file's: kept
    for p in (stale, fresh, alive, other_host, other_target):
        p.write_text("partial")
    for p in (stale, alive, other_host, other_target):
        _aged(p, STALE_AFTER_S + 60)
    write_atomic(tmp_path / "out.json", "{}")
    left = sorted(x.name for x in tmp_path.iterdir())
    assert left == sorted(["out.json", fresh.name, alive.name, other_host.name, other_target.name])


def test_a_folder_that_cannot_be_listed_does_not_fail_the_write(tmp_path, monkeypatch):
    import slaschema.fileio as fileio

    def refuse(*a, **k):
        raise PermissionError(13, "listing refused")

    monkeypatch.setattr(fileio.os, "scandir", refuse)
    write_atomic(tmp_path / "out.txt", "ok")
    assert (tmp_path / "out.txt").read_text() == "ok"


@pytest.mark.parametrize("after", [True, False])
def test_an_interrupt_as_the_temporary_is_created_leaves_nothing(tmp_path, monkeypatch, after):
    """Ctrl-C or SIGTERM landing just as the temporary file is made (the file there, its
    descriptor not yet handed back; or before the file is made) leaves no temporary behind:
    its name is kept before it is created. With `tempfile.mkstemp` the name came back only with
    the file, and an interrupt in between left `.out.txt.HOST-PID.RANDOM.tmp` (seen under
    tests/security/test_output_interrupted.py about once in four runs)."""
    from slaschema import fileio

    made = fileio._create

    def interrupted(name):
        if after:
            os.close(made(name))          # the file is there, its descriptor lost
        raise KeyboardInterrupt

    monkeypatch.setattr(fileio, "_create", interrupted)
    p = tmp_path / "out.txt"
    with pytest.raises(KeyboardInterrupt):
        write_atomic(p, "new")
    assert list(tmp_path.iterdir()) == []
