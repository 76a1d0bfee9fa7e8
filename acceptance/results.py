"""Results of acceptance checks: a status with a written precedence and a frozen verdict.

Every check returns `Verdict` records; every renderer (terminal table, JSON, JUnit, PDF)
reads the same records and computes nothing of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"


# Worst first: a run's status is the first of these that any of its verdicts has.
PRECEDENCE = [Status.ERROR, Status.FAIL, Status.WARN, Status.SKIP, Status.PASS]

# Rack of the per-rack roll-up that holds the nodes the contract's topology does not list.
NOT_IN_CONTRACT = "(not in contract)"


def worst(statuses: Iterable[Status | str]) -> Status:
    """The worst status by PRECEDENCE; `pass` when there is none."""
    seen = {Status(s) for s in statuses}
    for status in PRECEDENCE:
        if status in seen:
            return status
    return Status.PASS


@dataclass(frozen=True)
class Verdict:
    criterion: str                         # criterion id from the contract (or the check name)
    node: str | None                       # node the verdict is about; None for cluster-wide
    status: Status
    measured: float | str | None           # what was observed
    expected: str                          # what the contract or table requires
    reason: str                            # stable snake_case code, e.g. "below_min", "no_gpu"
    remediation: str                       # what to do about it; "" when nothing is needed
    details: dict[str, Any] = field(default_factory=dict)
