"""The performance service level (contract `performance:`), next to availability.

Periodic re-checks (`slakit accept run ... --as-incidents LOG`) record, per node, when it
measured below a level's floor as `category: performance` incidents (`impact: degraded`).
Those incidents never count toward availability: `availability_log` removes them before the
availability engine runs, whatever `downtime.degraded` says (a slow node is still up).

For each level the engine itself computes the performance figures, on a contract derived from
the real one: the same topology, pricing and time zone; the level's own target and tiers (or
pro-rata) as the node service level; every performance incident of that level as `down` time;
no `min_outage`, no rack or cluster rule, no exclusions, no cap and no minimum. So the
performance level of a node in a month is `1 - time below the floor / month` (exact seconds,
compared with the target as availability is), and its credit is the level's tier of the
node's fee, rounded half-up to cents per node. Performance credits are reported beside the
availability credits, never added into them (a contract that wants them to stack says so in
its text; the figures are all there).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from slaschema.loader import LoadedContract

CATEGORY = "performance"
FORMAT = "slakit-performance/1"


def _is_perf(log: Any) -> np.ndarray:
    return (log.frame["category"].to_numpy(dtype=object) == CATEGORY)


def availability_log(lc: LoadedContract, log: Any) -> Any:
    """The log without performance incidents when the contract has performance levels."""
    if not getattr(lc.model, "performance", None) or not len(log.columns):
        return log
    mask = _is_perf(log)
    if not mask.any():
        return log
    return log.with_frame(log.frame[~mask].reset_index(drop=True))


def _level_contract(lc: LoadedContract, level: Any) -> Any:
    from slaschema.models import CreditPolicy, Downtime, ServiceLevel, ServiceLevels

    m = lc.model
    node_sl = ServiceLevel(target=level.target, credits=level.credits, pro_rata=level.pro_rata)
    model = m.model_copy(update={
        "downtime": Downtime(),
        "exclusions": {},
        "service_levels": ServiceLevels(node=node_sl),
        "credits": CreditPolicy(stacking="max"),
    })
    return replace(lc, model=model)


def _level_log(lc: LoadedContract, log: Any, level_id: str) -> Any:
    from calculators.incidents import IncidentLog

    frame = log.frame
    ids = frame["id"].to_numpy(dtype=object)
    mask = _is_perf(log) & np.array([str(i).startswith(f"perf-{level_id}-") for i in ids], dtype=bool)
    sub = frame[mask]
    records = {
        "id": sub["id"].tolist(),
        "scope": ["node"] * len(sub),
        "target": sub["target"].tolist(),
        "start": sub["start"].astype("int64").tolist(),
        "end": [None if v is None or (isinstance(v, float) and v != v) or str(v) == "<NA>" else int(v)
                for v in sub["end"].tolist()],
        "impact": ["down"] * len(sub),
        "category": ["unplanned"] * len(sub),
    }
    return IncidentLog.from_records(records, lc.topology)


def _seconds(value: int | Decimal) -> int | float:
    """A downtime figure as the JSON documents write it (a proportional one as a float)."""
    return value if isinstance(value, int) else float(value)


def performance_figures(lc: LoadedContract, log: Any, periods: list[Any], as_of: Any = None) -> list[dict[str, Any]]:
    """Per level and month: each node's performance level and credit. Pure over its inputs."""
    from calculators.engine import compute

    out = []
    for level in lc.model.performance:
        sub = _level_log(lc, log, level.id)
        result = compute(_level_contract(lc, level), sub, periods, as_of=as_of, support=False)
        months = []
        for m in result.month_totals():
            units = result.unit_months(m.period, "node")
            months.append({
                "period": m.period,
                "fee_total": format(m.fee_total, "f"),
                "credit_total": format(m.credit_total, "f"),
                "nodes": len(units),
                "nodes_below_target": sum(1 for u in units if not u.met),
                "units": [{"node": u.id, "seconds_below_floor": _seconds(u.downtime_seconds),
                           "level_pct": format(u.availability, "f"), "target_pct": format(u.target.normalize(), "f"),
                           "met": u.met, "credit": format(u.credit, "f"), "incidents": list(u.incidents)}
                          for u in units if u.downtime_seconds or u.incidents],
            })
        out.append({
            "id": level.id,
            "criterion": level.criterion,
            "metric": level.metric,
            "published": str(level.published),
            "floor_pct": str(level.floor),
            "floor_value": format(level.floor_value.normalize(), "f"),
            "target_pct": str(level.effective_target),
            "source": level.source,
            "months": months,
        })
    return out


def performance_json(lc: LoadedContract, log: Any, periods: list[Any], as_of: Any = None) -> dict[str, Any]:
    return {"format": FORMAT, "contract": lc.model.contract.id,
            "levels": performance_figures(lc, log, periods, as_of)}


def render_performance(levels: list[dict[str, Any]], currency: str) -> str:
    """Plain text lines for the credits table."""
    lines = []
    for lv in levels:
        lines.append(f"Performance level {lv['id']}: {lv['criterion']} at >= {lv['floor_pct']}% of "
                     f"{lv['published']} (floor {lv['floor_value']}), target {lv['target_pct']}% of the time")
        for m in lv["months"]:
            lines.append(f"  {m['period']}: {m['nodes_below_target']} of {m['nodes']} node(s) below target; "
                         f"performance credit {m['credit_total']} {currency} (not part of the availability credit)")
            for u in m["units"][:25]:
                lines.append(f"    {u['node']:<20} {u['level_pct']:>9}%  below floor {u['seconds_below_floor']} s"
                             f"  credit {u['credit']}")
    return "\n".join(lines)


def total_credit(levels: list[dict[str, Any]]) -> Decimal:
    return sum((Decimal(m["credit_total"]) for lv in levels for m in lv["months"]), Decimal(0))
