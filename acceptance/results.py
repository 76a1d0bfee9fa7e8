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
    NOT_RUN = "not_run"      # no evidence for a criterion on a node or group in scope
    WAIVED = "waived"        # a skip, fail or not_run turned acceptable by a signed-off waiver


# Worst first: a criterion's status (and its decisive reason) is the first of these that any
# of its verdicts has. A fail is a definite answer and decides over an error (a part that
# could not be judged); not_run and skip block an acceptance like them; waived and warn do not.
PRECEDENCE = [Status.FAIL, Status.ERROR, Status.NOT_RUN, Status.SKIP, Status.WAIVED, Status.WARN, Status.PASS]

# The statuses an acceptance can be granted with; any other verdict blocks it.
ACCEPTING = frozenset({Status.PASS, Status.WARN, Status.WAIVED})

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
