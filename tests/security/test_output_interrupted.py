"""A command stopped by SIGTERM (a scheduler's kill, `timeout`, systemd stop) while it writes
`-o FILE` leaves nothing behind: no half-written temporary file beside the target, no target."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _fleet(tmp_path: Path) -> tuple[Path, Path]:
    from benchmarks.synthetic import make_fleet_contract, node_names

    contract = make_fleet_contract(tmp_path)          # 12,600 nodes: a credits document of ~9 MB
    log = tmp_path / "log.csv"
    with log.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "scope", "target", "start", "end", "impact"])
        for i, node in enumerate(node_names()[:50]):
            w.writerow([f"I{i}", "node", node, "2027-02-03T00:00:00Z", "2027-02-03T05:00:00Z", "down"])
    return contract, log


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_while_writing_leaves_no_temporary_file(tmp_path, sig):
    contract, log = _fleet(tmp_path)
    out = tmp_path / "out" / "credits.json"
    out.parent.mkdir()
    caught = 0
    for _ in range(5):                     # until the signal lands while the file is being written
        proc = subprocess.Popen([sys.executable, "-m", "slakit", "credits", str(contract), str(log), "--month",
                                 "2027-02", "-o", str(out)], cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        while proc.poll() is None and not list(out.parent.glob(".credits.json.*.tmp")):
            time.sleep(0.001)
        if proc.poll() is None:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        left = list(out.parent.iterdir())
        if proc.returncode == 0:           # finished before the signal: the whole file, nothing else
            assert left == [out]
            out.unlink()
            continue
        caught += 1
        assert left == [], (left, err.decode())
        assert proc.returncode == 1, err.decode()
        assert b"Traceback" not in err
    assert caught >= 1


def test_a_full_disk_is_told_as_such():
    """/dev/full answers every write with ENOSPC: the fix speaks of space, not of folders."""
    from tests.hostile.conftest import cli

    r = cli("credits", REPO / "examples" / "gb200-contract.yaml", REPO / "examples" / "gb200-incidents-2027Q1.csv",
            "--month", "2027-01", "--format", "json", "-o", "/dev/full")
    assert r.exit_code == 1
    assert "[output_unwritable]" in r.output or '"output_unwritable"' in r.output
    assert "No space left on device" in r.output
    assert "free space" in r.output and "Traceback" not in r.output
