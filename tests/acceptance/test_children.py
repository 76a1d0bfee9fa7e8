"""A stopped run leaves no check process behind (acceptance/children.py): the check's process
group, a descendant that left the group with its own session, and nothing the caller started
before the run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from acceptance.children import child_pids, stop_children
from tests.acceptance.conftest import REPO, contract_with

# A check command: one child in its process group, one that escapes into a session of its
# own, the three pids written to argv[1], then a long sleep.
SPAWN = """
import os, subprocess, sys, time
sleep = [sys.executable, "-c", "import time; time.sleep(300)"]
same = subprocess.Popen(sleep)
away = subprocess.Popen(sleep, start_new_session=True)
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as fh:
    fh.write(f"{os.getpid()} {same.pid} {away.pid}")
os.replace(tmp, sys.argv[1])
time.sleep(300)
"""


def _pids(path: Path, timeout_s: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while not path.is_file():
        assert time.monotonic() < deadline, "the check did not start its children"
        time.sleep(0.05)
    return [int(x) for x in path.read_text().split()]


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _gone(pids: list[int], timeout_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_running(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _running(p)]


@pytest.fixture
def reap():
    """Kill whatever a failed test left running."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            psutil.Process(pid).kill()
        except psutil.NoSuchProcess:
            pass


def test_stop_children_stops_the_group_and_an_escaped_descendant_but_keeps_earlier_children(tmp_path, reap):
    earlier = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    reap.append(earlier.pid)
    keep = child_pids()
    assert earlier.pid in keep
    pidfile = tmp_path / "pids"
    check = subprocess.Popen([sys.executable, "-c", SPAWN, str(pidfile)], start_new_session=True)
    pids = _pids(pidfile)
    reap.extend(pids)
    assert pids[0] == check.pid and all(_running(p) for p in pids)
    t0 = time.monotonic()
    stop_children(grace_s=2.0, keep=keep)
    assert check.wait(timeout=5) == -signal.SIGTERM
    assert _gone(pids) == []
    assert time.monotonic() - t0 < 5                # SIGTERM was enough: no wait for the SIGKILL round
    assert earlier.poll() is None                    # started before the run: not touched
    earlier.kill()
    earlier.wait()


def test_stop_children_kills_what_ignores_sigterm(tmp_path, reap):
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time\n"
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                                 "time.sleep(300)"], stdout=subprocess.PIPE, text=True, start_new_session=True)
    reap.append(stubborn.pid)
    assert stubborn.stdout.readline() == "ready\n"
    stop_children(grace_s=0.5)
    assert stubborn.wait(timeout=5) == -signal.SIGKILL


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_cancelled_run_leaves_no_orphans(tmp_path, reap, sig):
    pidfile = tmp_path / "pids"
    contract = contract_with(tmp_path, f"""
- id: spawner
  check: custom.command
  params: {{argv: {json.dumps([sys.executable, "-c", SPAWN, str(pidfile)])}}}
""")
    out = tmp_path / "b"
    proc = subprocess.Popen([sys.executable, "-m", "slakit", "accept", "run", str(contract), "--out", str(out),
                             "--no-progress", "--format", "json"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    reap.append(proc.pid)
    pids = _pids(pidfile, timeout_s=60)
    reap.extend(pids)
    assert all(_running(p) for p in pids)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "--resume" in stderr
    assert _gone(pids) == [], "a check process outlived the cancelled run"
    run_doc = json.loads((out / "run.json").read_text())
    assert run_doc["state"] == "interrupted" and run_doc["criteria"]["spawner"]["state"] == "interrupted"
