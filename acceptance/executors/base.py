"""What every executor offers: run one argv on some nodes and hand back raw output per node.

Executors are the IO edge of acceptance testing. Checks build argv lists and parse
`RawOutput`; they never know whether the command ran locally, through `srun` or elsewhere.

Contract of `run`: every requested node gets exactly one `RawOutput` back, also when the
node did not answer (then `error` names why and `rc` is None) or ran out of time
(`timed_out`); a run never raises because one node failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol, runtime_checkable

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


# Stable reason codes for RawOutput.error.
NODE_UNAVAILABLE = "node_unavailable"      # scheduler reports the node down/drained/not responding
NO_ANSWER = "no_answer"                    # the command was launched but the node never started it
LAUNCH_FAILED = "launch_failed"            # the launcher (srun, the local exec) could not start it
NOT_ALLOCATED = "not_allocated"            # the scheduler did not hand out the node in time
TIMEOUT = "timeout"                        # ran past timeout_s and was stopped


@dataclass(frozen=True)
class RawOutput:
    """What one node's run of one command produced, unparsed."""

    stdout: str
    stderr: str
    rc: int | None                 # exit status; None when the command did not finish
    started: datetime | None       # aware; None when it never started
    finished: datetime | None      # aware; None when it never started
    timed_out: bool = False
    error: str | None = None       # stable reason code when the node gave no usable answer
    node: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and self.rc == 0

    @property
    def duration_s(self) -> float | None:
        if self.started is None or self.finished is None:
            return None
        return (self.finished - self.started).total_seconds()

    def to_json(self) -> dict:
        return {
            "node": self.node,
            "rc": self.rc,
            "started": self.started.isoformat() if self.started else None,
            "finished": self.finished.isoformat() if self.finished else None,
            "timed_out": self.timed_out,
            "error": self.error,
            "stdout": self.stdout,
            "stderr": self.stderr,
        }


def failed_output(node: str, error: str, message: str, at: datetime | None = None) -> RawOutput:
    """The record for a node that gave no answer."""
    return RawOutput(stdout="", stderr=message, rc=None, started=at, finished=at, error=error, node=node)


@runtime_checkable
class Executor(Protocol):
    name: str

    def run(self, argv: Sequence[str], nodes: Sequence[str], timeout_s: float) -> dict[str, RawOutput]:
        """Run argv once on each node; one RawOutput per requested node."""
        ...

    def run_multi(
        self, argv: Sequence[str], nodes: Sequence[str], tasks_per_node: int, timeout_s: float
    ) -> RawOutput:
        """Run one multi-node job (NCCL across nodes): `tasks_per_node` ranks on each node."""
        ...
