"""The processes an acceptance run starts for its checks: found with psutil, stopped through
their process groups.

The executors start every check command in a session and process group of its own
(`start_new_session=True`), so one `os.killpg` reaches the command and whatever it started
in its group. A command's descendant that left the group (its own `setsid`) is found as a
descendant through psutil and signalled on its own. Processes that were already children
before the run (`keep`: a server the caller started) and their descendants are left alone.
A descendant that was handed to init (a double-forking daemon) is no longer this process's
descendant and cannot be found this way.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable

import psutil


def child_pids() -> frozenset[int]:
    """This process's children now (the `keep` set of a run that starts after them)."""
    return frozenset(p.pid for p in psutil.Process().children())


def _descendants(keep: frozenset[int]) -> list[psutil.Process]:
    """The children not in `keep`, then all of their descendants (a snapshot)."""
    kids = [p for p in psutil.Process().children() if p.pid not in keep]
    found = {p.pid: p for p in kids}
    for p in kids:
        try:
            found.update((d.pid, d) for d in p.children(recursive=True))
        except psutil.NoSuchProcess:
            pass
    return list(found.values())


def _alive(p: psutil.Process) -> bool:
    """Still running (a zombie has finished: its parent reaps it)."""
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _signal(procs: Iterable[psutil.Process], sig: signal.Signals) -> None:
    """`sig` to each process: to its whole group when it leads one, else to it alone."""
    groups: set[int] = set()
    for p in procs:
        try:
            if not p.is_running():              # gone, or its pid taken by another process
                continue
            pgid = os.getpgid(p.pid)
            if pgid == p.pid:
                if pgid not in groups:
                    groups.add(pgid)
                    os.killpg(pgid, sig)
            else:
                p.send_signal(sig)
        except (ProcessLookupError, PermissionError, psutil.NoSuchProcess, psutil.AccessDenied):
            pass


def stop_children(grace_s: float = 3.0, keep: Iterable[int] = frozenset()) -> None:
    """Stop the processes this process started for the checks (children not in `keep`, their
    process groups and their descendants): SIGTERM, up to `grace_s` to exit, then SIGKILL."""
    procs = _descendants(frozenset(keep))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = [p for p in procs if _alive(p)]
        if not alive:
            return
        _signal(alive, sig)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(_alive(p) for p in alive):
            time.sleep(0.05)
        procs = alive
