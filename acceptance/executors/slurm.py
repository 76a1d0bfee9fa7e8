"""Run checks on cluster nodes through Slurm's `srun`.

The cluster comes from the environment exactly as for `srun` itself (SLURM_CONF, or the
allocation named by SLURM_JOB_ID when called inside `salloc`/`sbatch`).

One `srun -N k -w NODES --ntasks-per-node=1 --label` per batch of nodes runs the argv
through a tiny POSIX-sh wrapper that prints a start marker (which task runs on which node)
and an end marker (the command's exit status) around it; the labelled output is split back
per node. Nodes that never start the command get `error=no_answer`, nodes still running at
the deadline get `timed_out`, and nodes that Slurm reports unavailable are answered with
`error=node_unavailable` without being tried. Outside an allocation `srun --immediate` gives
up on nodes the scheduler does not hand out within `allocation_wait_s` (`not_allocated`);
when a batch's allocation fails as a whole, its nodes are retried one by one. Batches of `fanout` nodes run at most
`max_parallel` at a time.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from acceptance.executors.base import (
    LAUNCH_FAILED,
    NO_ANSWER,
    NODE_UNAVAILABLE,
    NOT_ALLOCATED,
    Clock,
    RawOutput,
    failed_output,
    utc_now,
)
from acceptance.executors.local import run_argv, signal_group
from acceptance.results import Status, Verdict
from slaschema.hostlist import compress

_START = "@@slakit-start "
_END = "@@slakit-end "
# $1.. is the check's argv; the markers carry the node name Slurm ran the task on.
_WRAPPER = (
    'printf "' + _START + '%s\\n" "$SLURMD_NODENAME"; "$@"; rc=$?; '
    'printf "' + _END + '%s %s\\n" "$SLURMD_NODENAME" "$rc"; exit 0'
)
_LABEL = re.compile(r"^\s*(\d+): ?(.*)$", re.DOTALL)

# Node states (sinfo %T, lower case, flags such as * or ~ stripped) in which a node takes no work.
UNAVAILABLE_STATES = {
    "down", "drained", "draining", "drain", "fail", "failing", "maint", "reboot_issued",
    "reboot_requested", "powered_down", "powering_down", "power_down", "unknown", "future",
    "inval", "not_responding",
}


def base_state(state: str) -> str:
    """`idle*` -> `idle`, `drained~` -> `drained`, `mixed+drain` -> `mixed+drain`."""
    return state.strip().lower().rstrip("*~#!%$@^-")


def node_usable(state: str) -> bool:
    raw = state.strip().lower()
    if raw.endswith("*"):          # not responding
        return False
    parts = base_state(raw).split("+")
    return not any(p in UNAVAILABLE_STATES for p in parts)


def parse_sinfo_nodes(text: str) -> dict[str, str]:
    """`sinfo -N -h -o "%N %T"` output -> {node: state}; a node in several partitions once."""
    nodes: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            nodes.setdefault(parts[0], parts[1])
    return nodes


def sinfo_nodes_argv(partition: str | None = None) -> list[str]:
    argv = ["sinfo", "-N", "-h", "-o", "%N %T"]
    if partition:
        argv += ["-p", partition]
    return argv


def slurm_nodes(partition: str | None = None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Node states as the scheduler reports them now; raises RuntimeError when sinfo fails."""
    argv = sinfo_nodes_argv(partition)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=dict(env) if env else None)
    if proc.returncode != 0:
        raise RuntimeError(f"sinfo failed (rc {proc.returncode}): {proc.stderr.strip()}")
    return parse_sinfo_nodes(proc.stdout)


# Criterion id of the node-list finding in a run document (not a contract criterion).
NODE_LIST_ID = "topology.node-list"


def node_list_findings(expected: Sequence[str], reported: Mapping[str, str]) -> list[Verdict]:
    """Compare the contract's node list with the scheduler's: missing -> fail, extra -> warn."""
    exp = list(dict.fromkeys(expected))
    exp_set = set(exp)
    missing = [n for n in exp if n not in reported]
    extra = [n for n in reported if n not in exp_set]
    findings: list[Verdict] = []
    for n in missing:
        findings.append(
            Verdict(
                criterion=NODE_LIST_ID, node=n, status=Status.FAIL, measured="absent",
                expected="in the scheduler's node list", reason="node_missing_in_scheduler",
                remediation=f"add {n} to the Slurm configuration or correct the contract topology",
            )
        )
    for n in extra:
        findings.append(
            Verdict(
                criterion=NODE_LIST_ID, node=n, status=Status.WARN, measured=reported[n],
                expected="only contract nodes", reason="node_not_in_contract",
                remediation=f"add {n} to the contract topology or exclude it with --nodes",
            )
        )
    if not findings:
        findings.append(
            Verdict(
                criterion=NODE_LIST_ID, node=None, status=Status.PASS, measured=len(exp),
                expected=f"{len(exp)} nodes", reason="node_list_matches", remediation="",
            )
        )
    return findings


def judge_node_list(raw: RawOutput, expected: Sequence[str]) -> list[Verdict]:
    """The scheduler's node list as `SlurmExecutor.node_list` captured it, judged against the
    contract's nodes. Pure; an sinfo that gave no usable answer is an `error` verdict."""
    if not raw.ok:
        why = raw.error or ("timeout" if raw.timed_out else f"exit status {raw.rc}")
        return [
            Verdict(
                criterion=NODE_LIST_ID, node=None, status=Status.ERROR,
                measured=f"{why}: {raw.stderr.strip()}"[:300] if raw.stderr.strip() else why,
                expected="the scheduler's node list", reason="node_list_unavailable",
                remediation="check that sinfo answers on this host (SLURM_CONF, munge, slurmctld)",
            )
        ]
    return node_list_findings(expected, parse_sinfo_nodes(raw.stdout))


@dataclass
class _TaskLog:
    node: str | None = None
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    started: datetime | None = None
    finished: datetime | None = None
    rc: int | None = None


class SlurmExecutor:
    name = "slurm"

    def __init__(
        self,
        *,
        partition: str | None = None,
        fanout: int = 256,
        max_parallel: int = 4,
        extra_args: Sequence[str] = (),
        check_states: bool = True,
        allocation_wait_s: float | None = 30.0,
        env: Mapping[str, str] | None = None,
        clock: Clock = utc_now,
        srun: str = "srun",
    ) -> None:
        self.partition = partition
        self.fanout = max(1, fanout)
        self.max_parallel = max(1, max_parallel)
        self.extra_args = list(extra_args)
        self.check_states = check_states
        self.allocation_wait_s = allocation_wait_s
        self.env = env
        self.clock = clock
        self.srun = srun

    # -- argv builders (pure) -------------------------------------------------------------
    def _common(self) -> list[str]:
        args = [self.srun, "--input=none", "--kill-on-bad-exit=0"]
        if self.partition:
            args += ["-p", self.partition]
        env = self.env if self.env is not None else os.environ
        if self.allocation_wait_s is not None and "SLURM_JOB_ID" not in env:
            # Outside an allocation: give up on nodes the scheduler does not hand out in time
            # (drained, down, busy) instead of waiting in the queue until the check's timeout.
            args.append(f"--immediate={max(1, math.ceil(self.allocation_wait_s))}")
        return args + self.extra_args

    def per_node_argv(self, argv: Sequence[str], nodes: Sequence[str], job_name: str = "slakit") -> list[str]:
        return self._common() + [
            "-J", job_name, "-N", str(len(nodes)), "-w", compress(nodes), "--ntasks-per-node=1", "--label",
            "sh", "-c", _WRAPPER, "slakit-task", *argv,
        ]

    def multi_node_argv(self, argv: Sequence[str], nodes: Sequence[str], tasks_per_node: int) -> list[str]:
        """One job over `nodes` with `tasks_per_node` ranks each (one per GPU for NCCL)."""
        return [self.srun, "--input=none", "--kill-on-bad-exit=1"] + (
            ["-p", self.partition] if self.partition else []
        ) + self.extra_args + [
            "-N", str(len(nodes)), "-w", compress(nodes),
            f"--ntasks-per-node={tasks_per_node}", f"--ntasks={tasks_per_node * len(nodes)}",
            "--distribution=block", *argv,
        ]

    # -- running ----------------------------------------------------------------------------
    def run(self, argv: Sequence[str], nodes: Sequence[str], timeout_s: float) -> dict[str, RawOutput]:
        names = list(dict.fromkeys(nodes))
        results: dict[str, RawOutput] = {}
        runnable = names
        if self.check_states and names:
            try:
                states = slurm_nodes(self.partition, self.env)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                now = self.clock()
                return {n: failed_output(n, LAUNCH_FAILED, str(exc), now) for n in names}
            runnable = []
            now = self.clock()
            for n in names:
                state = states.get(n)
                if state is None:
                    results[n] = failed_output(n, NODE_UNAVAILABLE, "node not known to the scheduler", now)
                elif not node_usable(state):
                    results[n] = failed_output(n, NODE_UNAVAILABLE, f"scheduler reports node {state}", now)
                else:
                    runnable.append(n)
        batches = [runnable[i : i + self.fanout] for i in range(0, len(runnable), self.fanout)]
        if len(batches) == 1:
            results.update(self._run_batch(argv, batches[0], timeout_s))
        elif batches:
            with ThreadPoolExecutor(max_workers=min(self.max_parallel, len(batches))) as pool:
                for part in pool.map(lambda b: self._run_batch(argv, b, timeout_s), batches):
                    results.update(part)
        return {n: results[n] for n in names}

    def node_list(self, timeout_s: float = 60.0) -> RawOutput:
        """The scheduler's node list with states (`sinfo -N`, the partition if one is set), raw;
        `judge_node_list` compares it with the contract's topology."""
        return run_argv(sinfo_nodes_argv(self.partition), timeout_s, node="_cluster", env=self.env, clock=self.clock)

    def run_multi(
        self, argv: Sequence[str], nodes: Sequence[str], tasks_per_node: int, timeout_s: float
    ) -> RawOutput:
        cmd = self.multi_node_argv(argv, nodes, tasks_per_node)
        return run_argv(cmd, timeout_s, node=compress(nodes), env=self.env, clock=self.clock)

    def _run_batch(self, argv: Sequence[str], nodes: list[str], timeout_s: float) -> dict[str, RawOutput]:
        job_name = f"slakit-{uuid.uuid4().hex[:12]}"
        cmd = self.per_node_argv(argv, nodes, job_name)
        started = self.clock()
        try:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                env=dict(self.env) if self.env is not None else None,
                start_new_session=True,
            )
        except OSError as exc:
            return {n: failed_output(n, LAUNCH_FAILED, f"cannot start srun: {exc}", started) for n in nodes}

        tasks: dict[int, _TaskLog] = {}
        loose_err: list[str] = []
        lock = threading.Lock()
        cancelling = threading.Event()   # end markers after this are the cancel's doing

        def task(tid: int) -> _TaskLog:
            if tid not in tasks:
                tasks[tid] = _TaskLog()
            return tasks[tid]

        def read_out() -> None:
            for line in proc.stdout:  # type: ignore[union-attr]
                now = self.clock()
                m = _LABEL.match(line)
                if not m:
                    continue
                tid, text = int(m.group(1)), m.group(2)
                with lock:
                    t = task(tid)
                    if t.node is None and text.startswith(_START):
                        t.node = text[len(_START):].strip()
                        t.started = now
                        continue
                    pos = text.find(_END)
                    if pos >= 0 and t.finished is None and not cancelling.is_set():
                        head, tail = text[:pos], text[pos + len(_END):].split()
                        if head:
                            t.out.append(head)
                        t.finished = now
                        t.rc = int(tail[1]) if len(tail) >= 2 and tail[1].lstrip("-").isdigit() else None
                        continue
                    t.out.append(text)

        def read_err() -> None:
            for line in proc.stderr:  # type: ignore[union-attr]
                m = _LABEL.match(line)
                with lock:
                    if m:
                        task(int(m.group(1))).err.append(m.group(2))
                    else:
                        loose_err.append(line)

        readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
        for r in readers:
            r.start()
        # Wait on the readers (they end when srun closes its output), not on Popen.wait with a
        # timeout, which polls with sleeps of up to 50 ms and would dominate short checks.
        timed_out = False
        deadline = time.monotonic() + timeout_s
        for r in readers:
            r.join(timeout=max(0.0, deadline - time.monotonic()))
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()) if not any(r.is_alive() for r in readers) else 0)
        except subprocess.TimeoutExpired:
            timed_out = True
            with lock:
                cancelling.set()
            _cancel(proc, job_name, self.env)
        for r in readers:
            r.join(timeout=10)
        end = self.clock()

        launcher_msg = "".join(loose_err).strip()
        by_node = {t.node: t for t in tasks.values() if t.node}
        if not by_node and not timed_out and len(nodes) > 1:
            # The allocation failed as a whole (one node drained or down since the state
            # check, a node name unknown): run each node on its own so the others still run.
            with ThreadPoolExecutor(max_workers=min(len(nodes), max(self.max_parallel, 16))) as pool:
                singles = pool.map(lambda n: self._run_batch(argv, [n], timeout_s), nodes)
                return {n: r for part in singles for n, r in part.items()}
        out: dict[str, RawOutput] = {}
        for n in nodes:
            t = by_node.get(n)
            if t is None:
                if timed_out:
                    out[n] = RawOutput("", launcher_msg, None, started, end, timed_out=True, error=NO_ANSWER, node=n)
                else:
                    msg = launcher_msg or f"srun exited with {proc.returncode} before the task started"
                    code = NOT_ALLOCATED if "allocate resources" in msg else NO_ANSWER
                    out[n] = failed_output(n, code, msg, end)
                continue
            finished = t.finished is not None
            out[n] = RawOutput(
                stdout="".join(t.out),
                stderr="".join(t.err),
                rc=t.rc if finished else None,
                started=t.started,
                finished=t.finished if finished else end,
                timed_out=not finished and timed_out,
                error=None if finished or timed_out else NO_ANSWER,
                node=n,
            )
        return out


def _cancel(proc: subprocess.Popen, job_name: str, env: Mapping[str, str] | None) -> None:
    """Stop a running srun: SIGINT twice aborts the step; if srun hangs (a node that does
    not answer), cancel the job by its unique name and kill srun."""
    if signal_group(proc, ((signal.SIGINT, 0.2), (signal.SIGINT, 2.0))):
        return
    try:
        subprocess.run(
            ["scancel", "--name", job_name, "--full"], capture_output=True, timeout=15,
            env=dict(env) if env is not None else None,
        )
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        proc.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        proc.wait()
