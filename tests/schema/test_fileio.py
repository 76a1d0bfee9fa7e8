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
