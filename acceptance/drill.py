"""Detection drill: inject a fault on one node and time the provider's health checking.

Timeline measured (all aware UTC datetimes):
  injected  -> detected   the scheduler takes the node out of service (DRAIN/DOWN/FAIL)
  cleared   -> returned   the node takes work again after the fault is removed

`run_drill` does the IO through small callables (read the node state, inject, clear,
resume, sleep, clock), so the timing logic is tested without a cluster; `judge_drill` is
pure and turns the measured timeline into verdicts against `support.detection`.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from acceptance.executors.slurm import node_usable
from acceptance.results import Status, Verdict
from slaschema.errors import SlakitError

OUT_OF_SERVICE = {"down", "drain", "drained", "draining", "fail", "failing"}


@dataclass(frozen=True)
class NodeState:
    state: str          # as sinfo %T prints it: idle, drained, down*, mixed+drain, ...
    reason: str         # sinfo %E; "none" when there is none

    @property
    def out_of_service(self) -> bool:
        parts = self.state.strip().lower().rstrip("*~#!%$@^-").split("+")
        return any(p in OUT_OF_SERVICE for p in parts)

    @property
    def in_service(self) -> bool:
        return node_usable(self.state)


def parse_sinfo_state(text: str, node: str | None = None) -> NodeState | None:
    """The line of `sinfo -N -h -o "%N|%T|%E"` for `node` -> NodeState (any node's first
    line when `node` is None); None when there is none: a line of another node is never taken
    for it (sinfo lists every node a hostlist or an empty name matches)."""
    for line in text.splitlines():
        parts = line.split("|", 2)
        if len(parts) == 3 and (node is None or parts[0].strip() == node):
            return NodeState(parts[1].strip(), parts[2].strip())
    return None


_NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_node_name(node: str) -> str | None:
    """Why `node` is not one Slurm node name (None when it is): a drill drains and resumes
    exactly one node, so a hostlist (`n[1-4]`, `n1,n2`), an empty name or one with spaces or
    a slash is refused before anything runs (`scontrol update nodename=n[1-4] state=resume`
    would resume every node it names)."""
    if _NODE_NAME.fullmatch(node):
        return None
    if not node:
        return "the node name is empty"
    if any(c in node for c in "[],"):
        return "a drill takes one node, not a hostlist"
    return "a node name has letters, digits, '.', '_' and '-' only, and starts with a letter or digit"


def read_node_state(node: str, env: Mapping[str, str] | None = None) -> NodeState | None:
    proc = subprocess.run(
        ["sinfo", "-N", "-h", "-n", node, "-o", "%N|%T|%E"],
        capture_output=True, text=True, timeout=30, env=dict(env) if env else None,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"sinfo failed (rc {proc.returncode}): {proc.stderr.strip()}")
    return parse_sinfo_state(proc.stdout, node)


def resume_node(node: str, env: Mapping[str, str] | None = None) -> None:
    proc = subprocess.run(
        ["scontrol", "update", f"nodename={node}", "state=resume"],
        capture_output=True, text=True, timeout=30, env=dict(env) if env else None,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"scontrol resume failed (rc {proc.returncode}): {proc.stderr.strip()}")


# --- faults --------------------------------------------------------------------------------

@dataclass(frozen=True)
class MarkerFault:
    """A file the provider's health check is configured to treat as a fault."""

    path: Path
    kind: str = "marker"

    def inject(self, note: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(note + "\n")
        os.replace(tmp, self.path)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

    @property
    def clearable(self) -> bool:
        return True

    def inject_argv(self, note: str) -> list[str]:
        return ["sh", "-c", 'mkdir -p "$(dirname "$1")" && printf "%s\\n" "$2" > "$1.tmp" && mv "$1.tmp" "$1"',
                "slakit-drill", str(self.path), note]

    def clear_argv(self) -> list[str] | None:
        return ["rm", "-f", str(self.path)]


def xid_line(node: str, xid: int = 79, cluster: str | None = None) -> str:
    """A synthetic NVRM Xid line in the kernel's format, naming the node (and the Slurm
    cluster, so health checks of other clusters sharing a kernel log can ignore it)."""
    where = f"node={node}, " + (f"cluster={cluster}, " if cluster else "")
    return (f"NVRM: Xid (PCI:0000:00:00): {xid}, pid=0, name=slakit-drill, {where}"
            "synthetic fault injected by slakit accept drill")


def cluster_name(env: Mapping[str, str] | None = None) -> str | None:
    """ClusterName from `scontrol show config`; None when it cannot be read."""
    try:
        proc = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, timeout=30,
                              env=dict(env) if env else None)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in proc.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "ClusterName":
            return value.strip() or None
    return None


@dataclass(frozen=True)
class XidFault:
    """A synthetic NVIDIA Xid line written to the kernel log (health checks grep for these)."""

    node: str
    kmsg: Path = Path("/dev/kmsg")
    xid: int = 79
    cluster: str | None = None
    kind: str = "xid"

    def inject(self, note: str) -> None:
        with open(self.kmsg, "w") as f:
            f.write(f"<3>{xid_line(self.node, self.xid, self.cluster)}\n")

    def clear(self) -> None:
        """A kernel log line cannot be taken back; the node needs a resume after repair."""

    @property
    def clearable(self) -> bool:
        return False

    def inject_argv(self, note: str) -> list[str]:
        return ["sh", "-c", 'printf "<3>%s\\n" "$1" > "$2"', "slakit-drill",
                xid_line(self.node, self.xid, self.cluster), str(self.kmsg)]

    def clear_argv(self) -> list[str] | None:
        return None


class OnNode:
    """Injects and clears a fault on the node itself, through Slurm, from a login node.

    A small holder job (`sbatch -w NODE ... sleep`) is started first; injection and clearing
    run as steps inside it (`srun --jobid J --overlap`), which works even while the node is
    drained, because a drain lets running jobs finish. The holder job is cancelled at the end.
    With the holder running, a drained node shows as `draining` (mixed+drain) until then.
    """

    def __init__(self, fault: MarkerFault | XidFault, node: str, *, hold_s: int = 3600,
                 env: Mapping[str, str] | None = None, start_timeout_s: float = 60.0) -> None:
        self.fault = fault
        self.node = node
        self.hold_s = hold_s
        self.env = dict(env) if env is not None else None
        self.start_timeout_s = start_timeout_s
        self.job_id: str | None = None

    @property
    def kind(self) -> str:
        return self.fault.kind

    @property
    def clearable(self) -> bool:
        return self.fault.clearable

    def start(self) -> None:
        import time

        proc = subprocess.run(
            ["sbatch", "--parsable", "-w", self.node, "-N1", "-n1", "-J", "slakit-drill-holder",
             "--output=/dev/null", f"--time={max(1, self.hold_s // 60)}", "--wrap", f"sleep {self.hold_s}"],
            capture_output=True, text=True, timeout=60, env=self.env)
        if proc.returncode != 0:
            raise DrillError("holder_job_failed", f"cannot start a holder job on {self.node}: {proc.stderr.strip()}")
        self.job_id = proc.stdout.strip().split(";")[0]
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            st = subprocess.run(["squeue", "-h", "-j", self.job_id, "-o", "%T"], capture_output=True, text=True,
                                timeout=30, env=self.env).stdout.strip()
            if st == "RUNNING":
                return
            time.sleep(0.2)
        self.stop()
        raise DrillError("holder_job_failed", f"the holder job on {self.node} did not start within "
                                              f"{self.start_timeout_s:g} s")

    def _step(self, argv: list[str]) -> None:
        proc = subprocess.run(["srun", f"--jobid={self.job_id}", "--overlap", "-N1", "-n1", "-w", self.node,
                               "--input=none", *argv], capture_output=True, text=True, timeout=60, env=self.env)
        if proc.returncode != 0:
            raise RuntimeError(f"step on {self.node} failed (rc {proc.returncode}): {proc.stderr.strip()}")

    def inject(self, note: str) -> None:
        self._step(self.fault.inject_argv(note))

    def clear(self) -> None:
        argv = self.fault.clear_argv()
        if argv is not None:
            self._step(argv)

    def stop(self) -> None:
        if self.job_id is not None:
            subprocess.run(["scancel", self.job_id], capture_output=True, timeout=30, env=self.env)
            self.job_id = None


# --- the drill -----------------------------------------------------------------------------

@dataclass(frozen=True)
class DrillResult:
    node: str
    fault: str
    injected: datetime
    detected: datetime | None
    detected_state: NodeState | None
    cleared: datetime | None
    resumed: datetime | None            # when the drill resumed the node itself (--resume-after)
    returned: datetime | None
    polls: int
    poll_interval_s: float
    timeline: tuple[tuple[datetime, str, str], ...] = field(default_factory=tuple)

    @property
    def detection_s(self) -> float | None:
        return None if self.detected is None else (self.detected - self.injected).total_seconds()

    @property
    def return_s(self) -> float | None:
        if self.returned is None or self.cleared is None:
            return None
        return (self.returned - self.cleared).total_seconds()

    def to_json(self) -> dict:
        iso = lambda t: t.isoformat() if t else None  # noqa: E731
        return {
            "node": self.node,
            "fault": self.fault,
            "injected": iso(self.injected),
            "detected": iso(self.detected),
            "detection_s": self.detection_s,
            "detected_state": self.detected_state.state if self.detected_state else None,
            "detected_reason": self.detected_state.reason if self.detected_state else None,
            "cleared": iso(self.cleared),
            "resumed_by_drill": iso(self.resumed),
            "returned": iso(self.returned),
            "return_to_service_s": self.return_s,
            "polls": self.polls,
            "poll_interval_s": self.poll_interval_s,
            "timeline": [{"at": iso(t), "state": s, "reason": r} for t, s, r in self.timeline],
        }


class DrillError(SlakitError, RuntimeError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def run_drill(
    node: str,
    fault: MarkerFault | XidFault | OnNode,
    *,
    read_state: Callable[[str], NodeState | None],
    resume: Callable[[str], None],
    clock: Callable[[], datetime],
    sleep: Callable[[float], None],
    poll_s: float = 1.0,
    detect_timeout: timedelta = timedelta(minutes=10),
    return_timeout: timedelta = timedelta(minutes=10),
    resume_after: timedelta | None = None,
) -> DrillResult:
    """Inject, wait for DRAIN/DOWN, clear, wait for the node to take work again.

    The fault is always cleared, also when detection times out or polling fails.
    """
    first = read_state(node)
    if first is None:
        raise DrillError("node_unknown", f"the scheduler does not know node {node}")
    if not first.in_service:
        raise DrillError("node_not_in_service",
                         f"{node} is {first.state} ({first.reason}) before the drill")
    timeline: list[tuple[datetime, str, str]] = []
    polls = 0
    injected = clock()
    fault.inject(f"slakit drill {injected.isoformat()}")
    detected: datetime | None = None
    detected_state: NodeState | None = None
    cleared: datetime | None = None
    resumed: datetime | None = None
    returned: datetime | None = None
    last = (first.state, first.reason)

    def observe() -> tuple[NodeState | None, datetime]:
        """One poll: the node's state now, with every change of state kept in the timeline."""
        nonlocal polls, last
        st = read_state(node)
        now = clock()
        polls += 1
        if st is not None and (st.state, st.reason) != last:
            timeline.append((now, st.state, st.reason))
            last = (st.state, st.reason)
        return st, now

    try:
        deadline = injected + detect_timeout
        while True:
            st, now = observe()
            if st is not None and st.out_of_service:
                detected, detected_state = now, st
                break
            if now >= deadline:
                break
            sleep(poll_s)
    finally:
        fault.clear()
        cleared = clock()
    if detected is None:
        return DrillResult(node, fault.kind, injected, None, None, cleared, None, None, polls, poll_s,
                           tuple(timeline))
    deadline = cleared + return_timeout
    while True:
        st, now = observe()
        if st is not None and st.in_service and (detected is not None or resumed is not None):
            returned = now
            break
        if resumed is None and resume_after is not None and now - cleared >= resume_after and st is not None \
                and st.out_of_service:
            resume(node)
            resumed = clock()
            timeline.append((resumed, "resume", "resumed by slakit accept drill"))
            continue
        if now >= deadline:
            break
        sleep(poll_s)
    return DrillResult(node, fault.kind, injected, detected, detected_state, cleared, resumed, returned,
                       polls, poll_s, tuple(timeline))


def judge_drill(result: DrillResult, detection_target: timedelta | None) -> list[Verdict]:
    """Verdicts for detection (against the contract's support.detection) and return to service."""
    expected = f"<= {_fmt(detection_target)}" if detection_target is not None else "no target in the contract"
    verdicts: list[Verdict] = []
    details = {"poll_interval_s": result.poll_interval_s, "fault": result.fault}
    if result.detection_s is None:
        verdicts.append(Verdict(
            "health.detection", result.node, Status.FAIL, None, expected, "not_detected",
            "the node stayed in service with the fault present: configure the health check "
            "(HealthCheckProgram/NHC/DCGM policy) to drain nodes on this fault", details))
    elif detection_target is None:
        verdicts.append(Verdict(
            "health.detection", result.node, Status.SKIP, round(result.detection_s, 3), expected,
            "no_detection_target", "add support.detection to the contract to judge this figure", details))
    elif result.detection_s <= detection_target.total_seconds():
        verdicts.append(Verdict(
            "health.detection", result.node, Status.PASS, round(result.detection_s, 3), expected,
            "within_target", "", details))
    else:
        verdicts.append(Verdict(
            "health.detection", result.node, Status.FAIL, round(result.detection_s, 3), expected,
            "detection_too_slow",
            "shorten the health-check interval or make the check cover this fault", details))
    if result.detection_s is not None or result.resumed is not None:
        if result.returned is None:
            verdicts.append(Verdict(
                "health.return_to_service", result.node, Status.WARN, None, "node back in service",
                "not_returned", f"the node is still out of service; resume it after checking it: "
                f"scontrol update nodename={result.node} state=resume", details))
        else:
            verdicts.append(Verdict(
                "health.return_to_service", result.node, Status.PASS, round(result.return_s or 0.0, 3),
                "node back in service", "returned_by_drill" if result.resumed else "returned", "", details))
    return verdicts


def _fmt(td: timedelta) -> str:
    s = int(td.total_seconds())
    if s % 3600 == 0 and s:
        return f"{s // 3600}h"
    if s % 60 == 0 and s:
        return f"{s // 60}m"
    return f"{td.total_seconds():g}s"
