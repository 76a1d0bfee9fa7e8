"""The stale-temporary sweep (slaschema.fileio.temp_for) takes only names that are exactly
`.NAME.HOST-PID.RANDOM.tmp` for the target written: another target's temporary whose name
merely starts the same way, a symlink, a live process's temporary are never removed."""

from __future__ import annotations

import os
import subprocess
import time

from slaschema.fileio import STALE_AFTER_S, _host_tag, write_atomic


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def _aged(path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t), follow_symlinks=False)


def test_another_targets_live_temporary_with_a_like_prefix_is_kept(tmp_path):
    host, dead = _host_tag(), _dead_pid()
    live = subprocess.Popen(["sleep", "30"])
    try:
        # a process still writing `out.HOST-DEAD` (a legal file name), its temporary untouched
        # for a while: the prefix of `out`'s temporaries, then DEAD, but it is not out's
        other = tmp_path / f".out.{host}-{dead}.{host}-{live.pid}.k2j4h5g6.tmp"
        mine = tmp_path / f".out.{host}-{dead}.q1w2e3r4.tmp"          # out's own, killed: removed
        for p in (other, mine):
            p.write_text("partial")
            _aged(p, STALE_AFTER_S + 60)
        write_atomic(tmp_path / "out", "{}")
        assert other.exists()
        assert not mine.exists()
    finally:
        live.kill()
        live.wait()


def test_odd_target_names_get_their_own_stale_temporaries_removed(tmp_path):
    host, dead = _host_tag(), _dead_pid()
    names = ["a.b.c", " sp ace ", "new\nline", ".hidden", os.fsdecode(b"bad\xff\xfe.json"),
             "\u00e9" * 125 + ".txt"]      # 254 bytes: its temporary keeps 120, a cut character
    for name in names:
        stem = os.fsdecode(os.fsencode(name)[:120])
        stale = tmp_path / f".{stem}.{host}-{dead}.abcdefgh.tmp"
        stale.write_text("partial")
        _aged(stale, STALE_AFTER_S + 60)
        write_atomic(tmp_path / name, "x")
        assert not stale.exists(), name
        assert (tmp_path / name).read_text() == "x"
    assert sorted(os.listdir(tmp_path)) == sorted(names)


def test_a_symlink_named_like_a_stale_temporary_is_neither_followed_nor_removed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    link = tmp_path / f".out.{_host_tag()}-{_dead_pid()}.abcdefgh.tmp"
    os.symlink(victim, link)
    _aged(link, STALE_AFTER_S + 60)
    write_atomic(tmp_path / "out", "x")
    assert link.is_symlink() and victim.read_text() == "keep"
