"""Burn-in: stress every node at once for hours, sampled, resumable, judged against the contract.

The time is cut into segments. Each segment runs the `gpu.burn` check's stress-and-sample
script (`acceptance/checks/burn.py`) on all nodes at once through the executor, keeps each
node's raw output in the evidence bundle (`burn-in/seg-NNN/<node>.json`) and records the
finished segment in `burn-in/state.json`. An interrupted burn-in resumes at the first
unfinished segment (`--resume`), so at most one segment is repeated and none is lost.

Judging aggregates the segments per node (samples, Xid events, share of throttled GPU
samples, hottest temperature, stress errors) and hands the totals to the `gpu.burn` check's
own `evaluate`, with the limits of `acceptance.burn_in` (`max_xid_events`,
`max_throttle_pct`). A node that did not answer or ran out of time in any segment is an
`error` for that node.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from acceptance.executors.base import Executor, RawOutput
from acceptance.results import Status, Verdict

STATE = "burn-in/state.json"
RESULTS = "burn-in/results.json"
STATE_VERSION = 1


@dataclass(frozen=True)
class Plan:
    duration_s: float
    segment_s: float
    interval_s: float
    stress: str                      # gpu | cpu
    nodes: tuple[str, ...]

    def segments(self) -> list[float]:
        """Lengths of the segments, the last one shorter when the duration does not divide."""
        n = max(1, math.ceil(self.duration_s / self.segment_s - 1e-9))
        out = [self.segment_s] * (n - 1)
        out.append(self.duration_s - self.segment_s * (n - 1))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"duration_s": self.duration_s, "segment_s": self.segment_s, "interval_s": self.interval_s,
                "stress": self.stress, "nodes": list(self.nodes)}


def new_state(plan: Plan) -> dict[str, Any]:
    return {"version": STATE_VERSION, "plan": plan.to_json(), "segments": []}


def same_plan(state: Mapping[str, Any], plan: Plan) -> bool:
    return state.get("version") == STATE_VERSION and state.get("plan") == plan.to_json()


def done_s(state: Mapping[str, Any]) -> float:
    return sum(float(s["duration_s"]) for s in state.get("segments", []))


def segment_record(index: int, length: float, started: datetime, finished: datetime,
                   raws: Mapping[str, RawOutput], parse: Callable[[RawOutput], dict[str, Any]]) -> dict[str, Any]:
    """One finished segment: per node either the check's metrics or why there are none."""
    nodes: dict[str, Any] = {}
    for node, raw in raws.items():
        if raw.error or raw.timed_out:
            nodes[node] = {"error": raw.error or "timeout", "message": raw.stderr[-500:]}
            continue
        try:
            nodes[node] = {"metrics": parse(raw), "rc": raw.rc}
        except Exception as exc:  # noqa: BLE001 - parse errors become a per-node error verdict
            nodes[node] = {"error": "unparseable_output", "message": str(exc)[:500], "rc": raw.rc}
    return {"index": index, "duration_s": length, "started": started.isoformat(),
            "finished": finished.isoformat(), "nodes": nodes}


def aggregate(segments: Sequence[Mapping[str, Any]], node: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Totals over the segments for one node: metrics in the `gpu.burn` shape, and errors."""
    problems: list[str] = []
    samples = 0
    xids = 0
    xid_known = False
    temps: list[float] = []
    throttle_weighted = 0.0
    throttle_samples = 0
    errors: list[str] = []
    elapsed = 0.0
    stress = None
    skip = None
    for seg in segments:
        entry = seg.get("nodes", {}).get(node)
        if entry is None:
            problems.append(f"segment {seg['index']}: node not run")
            continue
        if "error" in entry:
            problems.append(f"segment {seg['index']}: {entry['error']} {entry.get('message', '')}".strip())
            continue
        m = entry["metrics"]
        if m.get("skip_reason"):
            skip = m
            continue
        stress = m.get("stress", stress)
        n = int(m.get("samples") or 0)
        samples += n
        elapsed += float(m.get("elapsed_s") or 0.0)
        if m.get("xid_events") is not None:
            xid_known = True
            xids += int(m["xid_events"])
        if m.get("max_temp_c") is not None:
            temps.append(float(m["max_temp_c"]))
        if m.get("throttle_pct") is not None and n:
            throttle_weighted += float(m["throttle_pct"]) * n
            throttle_samples += n
        errors.extend(m.get("errors") or [])
    if skip is not None:
        return skip, problems
    if samples == 0 and problems:
        return None, problems
    return {
        "stress": stress,
        "samples": samples,
        "elapsed_s": round(elapsed, 3),
        "max_temp_c": max(temps) if temps else None,
        "throttle_pct": (throttle_weighted / throttle_samples) if throttle_samples else None,
        "xid_events": xids if xid_known else None,
        "errors": errors,
        "segments": len(segments),
    }, problems


def judge(state: Mapping[str, Any], limits: Mapping[str, Any], criterion_id: str = "burn-in") -> list[Verdict]:
    """Verdicts per node for a finished (or partly finished) burn-in. Pure."""
    from acceptance.checks.gpu_burn import BurnCheck, BurnParams
    from slaschema.models import Criterion

    plan = state["plan"]
    segments = state.get("segments", [])
    check = BurnCheck()
    params = BurnParams(duration_s=done_s(state) or plan["duration_s"], interval_s=plan["interval_s"],
                        stress=plan["stress"])
    expect = {k: v for k, v in limits.items() if v is not None}
    criterion = Criterion(id=criterion_id, check="gpu.burn", expect=expect or {"max_xid_events": 0})
    out: list[Verdict] = []
    remaining = plan["duration_s"] - done_s(state)
    for node in plan["nodes"]:
        metrics, problems = aggregate(segments, node)
        if problems:
            out.append(Verdict(criterion_id, node, Status.ERROR, "; ".join(problems)[:300], "every segment answered",
                               "node_error", "see the node's raw output under burn-in/seg-*/", {}))
        if metrics is None:
            continue
        if metrics.get("skip_reason"):
            out.append(Verdict(criterion_id, node, Status.SKIP, None, f"{plan['stress']} stress",
                               metrics["skip_reason"], metrics.get("remediation", ""), {}))
            continue
        out.extend(check.evaluate(criterion, params, metrics, node))
    if remaining > 1e-6:
        out.append(Verdict(criterion_id, None, Status.ERROR, round(done_s(state), 3),
                           f"{plan['duration_s']:g} s of burn-in", "incomplete",
                           "resume the burn-in with --resume", {"remaining_s": remaining}))
    return out


def limits_from_contract(burn_in: Any | None, max_xid: int | None, max_throttle_pct: float | None) -> dict[str, Any]:
    """Limits: command-line values over the contract's `acceptance.burn_in`, zero Xid by default."""
    xid = max_xid if max_xid is not None else (burn_in.max_xid_events if burn_in is not None else 0)
    thr = max_throttle_pct
    if thr is None and burn_in is not None and burn_in.max_throttle_pct is not None:
        thr = float(Decimal(burn_in.max_throttle_pct))
    return {"max_xid_events": xid, "max_throttle_pct": thr}


def run_segment(executor: Executor, argv: Sequence[str], nodes: Sequence[str], timeout_s: float) -> dict[str, RawOutput]:
    return executor.run(list(argv), list(nodes), timeout_s)
