"""gpu.xid: NVIDIA Xid events in the node's kernel log, judged with the Xid policy table.

Collects `dmesg` (or `journalctl -k --since ...` with `source: journal`). With a metric
(`xid_events` with `max: 0`) the count is judged; without one, each Xid is judged by its
policy action (table `acceptance/parsers/xid_policy.csv`, with sources): drain, reboot, reset
and investigate fail, monitor warns. A log the check may not read is an error
`kernel_log_unreadable` (run as root or give the user read access), never a clean pass.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from acceptance.checks.base import Check, CheckParams, CollectContext, register
from acceptance.executors.base import RawOutput
from acceptance.judge import verdict
from acceptance.parsers.xid import parse_xid
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

FIX = {
    "drain": "drain the node and open a hardware ticket (RMA) for the GPU named in the event",
    "reboot": "reboot the node before acceptance; reopen if the Xid returns",
    "reset": "reset the GPU (nvidia-smi -r) before it takes work; reopen if the Xid returns",
    "investigate": "unknown Xid: collect nvidia-bug-report.sh and ask the provider/NVIDIA",
    "monitor": "application-level Xid: watch for recurrence",
}


class XidParams(CheckParams):
    source: Literal["dmesg", "journal"] = "dmesg"
    since: str = Field(default="7d", pattern=r"^\d+[smhdw]$", description="journal only: how far back")


@register
class XidCheck(Check):
    id = "gpu.xid"
    Params = XidParams
    default_timeout_s = 60.0
    units = {"xid_events": "events"}
    launch_failure = (Status.ERROR, "tool_missing", "dmesg/journalctl is not available on the node")
    remediation = {"xid_events": "see each event's policy action in the details; drain nodes with fatal Xids"}

    def argv(self, params: XidParams, ctx: CollectContext) -> list[str]:
        if params.source == "journal":
            n, unit = int(params.since[:-1]), params.since[-1]
            hours = n * {"s": 1 / 3600, "m": 1 / 60, "h": 1, "d": 24, "w": 168}[unit]
            return ["journalctl", "-k", "--no-pager", "-o", "short-iso", "--since", f"-{max(1, round(hours))}h"]
        return ["dmesg"]

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        if raw.rc not in (0, None) and not re.search(r"NVRM|\]\s", raw.stdout):
            return {"error_reason": "kernel_log_unreadable", "error_detail": raw.stderr.strip()[:300],
                    "remediation": "run the check as root or allow reading the kernel log (kernel.dmesg_restrict=0)"}
        rec = parse_xid(raw.stdout)
        events = [{k: e[k] for k in ("xid", "kind", "pci", "action", "timestamp", "time_iso", "host", "message")}
                  for e in rec.to_json()["events"]]
        return {"xid_events": len(events), "events": events[:200], "counts": {str(k): v for k, v in rec.counts.items()},
                "worst_action": rec.worst_action, "lines_scanned": rec.lines_scanned}

    def evaluate(self, criterion: Criterion, params: XidParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        if self.judged_metric(criterion) is not None:
            return [self.judge_metric(criterion, metrics, node, {"worst_action": metrics.get("worst_action"),
                                                                 "counts": metrics.get("counts")})]
        return judge_events(criterion.id, node, metrics.get("events", []))


def judge_events(cid: str, node: str | None, events: list[dict[str, Any]]) -> list[Verdict]:
    """One verdict per (xid, pci) with the policy action; pass when there is none. Pure."""
    if not events:
        return [verdict(cid, node, Status.PASS, "no_xid", measured=0, expected="no Xid requiring action")]
    groups: dict[tuple[int, str | None], list[dict[str, Any]]] = {}
    for e in events:
        groups.setdefault((e["xid"], e.get("pci")), []).append(e)
    out = []
    for (xid, pci), evs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        action = evs[0].get("action") or "investigate"
        status = Status.WARN if action == "monitor" else Status.FAIL
        out.append(verdict(cid, node, status, f"xid_{action}", measured=f"Xid {xid} x{len(evs)}",
                           expected="no Xid requiring action", remediation=FIX.get(action, FIX["investigate"]),
                           details={"xid": xid, "pci": pci, "count": len(evs), "action": action,
                                    "first": evs[0].get("message", "")[:200]}))
    return out
