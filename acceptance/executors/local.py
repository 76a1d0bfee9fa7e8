"""Run checks on this machine: the executor for a single node or a laptop dry run.

Each requested node name is a label for one run of the command here (normally just the
local host name). Runs happen in parallel up to `max_parallel`.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from acceptance.executors.base import (
    LAUNCH_FAILED,
    Clock,
    RawOutput,
    failed_output,
    utc_now,
)


def run_argv(
    argv: Sequence[str],
    timeout_s: float,
    *,
    node: str | None = None,
    env: Mapping[str, str] | None = None,
    clock: Clock = utc_now,
) -> RawOutput:
    """Run one argv with a deadline; on timeout the whole process group is stopped."""
    started = clock()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except OSError as exc:
        return failed_output(node or "", LAUNCH_FAILED, f"cannot start {argv[0]!r}: {exc}", started)
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return RawOutput(out, err, proc.returncode, started, clock(), node=node)
    except subprocess.TimeoutExpired:
        _stop_group(proc)
        out, err = proc.communicate()
        return RawOutput(out, err, None, started, clock(), timed_out=True, node=node)


def signal_group(proc: subprocess.Popen, steps: Sequence[tuple[int, float]]) -> bool:
    """Send each (signal, seconds to wait) to the process group in turn; True once it exited."""
    for sig, wait in steps:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return True
        try:
            proc.wait(timeout=wait)
            return True
        except subprocess.TimeoutExpired:
            continue
    return False


def _stop_group(proc: subprocess.Popen) -> None:
    signal_group(proc, ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)))


class LocalExecutor:
    name = "local"

    def __init__(self, max_parallel: int = 8, env: Mapping[str, str] | None = None, clock: Clock = utc_now):
        self.max_parallel = max(1, max_parallel)
        self.env = env
        self.clock = clock

    def run(self, argv: Sequence[str], nodes: Sequence[str], timeout_s: float) -> dict[str, RawOutput]:
        names = list(dict.fromkeys(nodes))
        with ThreadPoolExecutor(max_workers=min(self.max_parallel, max(1, len(names)))) as pool:
            futures = {
                n: pool.submit(run_argv, argv, timeout_s, node=n, env=self.env, clock=self.clock) for n in names
            }
            return {n: f.result() for n, f in futures.items()}

    def run_multi(
        self, argv: Sequence[str], nodes: Sequence[str], tasks_per_node: int, timeout_s: float
    ) -> RawOutput:
        return run_argv(argv, timeout_s, node=",".join(nodes), env=self.env, clock=self.clock)
