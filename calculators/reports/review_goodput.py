"""The goodput section of the SLA review, from `slakit goodput`'s JSON document.

Only formats figures `calculators.goodput.compute` produced: paid (contracted), available
and useful GPU-hours per month as a chart and a table, the goodput and the effective price
per useful GPU-hour, and the incidents that cost the most work. Job data is the customer's:
the section shows counts and GPU-hours only, never job ids or node lists.
"""

from __future__ import annotations

from typing import Any

from calculators.reports import doc as d
from calculators.reports.fmt import count, dec

TOP_INCIDENTS = 10


def _gh(v: str | None) -> str:
    return "—" if v is None else f"{dec(v):,.2f}"


def _price(v: str | None) -> str:
    return "—" if v is None else f"{dec(v):,.4f}"


def goodput_section(gp: dict[str, Any], number: int = 8) -> list[d.Block]:
    cur = gp.get("currency") or ""
    periods = gp["periods"]
    tot = gp["total"]
    out: list[d.Block] = [d.Heading(f"{number}. Goodput: useful GPU-hours from Slurm accounting", 1)]
    jobs = tot["jobs"]
    ck = gp.get("checkpoint_interval_seconds")
    out.append(d.Para(
        f"Of {_gh(tot['paid_gpu_hours'])} GPU-hours paid for, {_gh(tot['useful_gpu_hours'])} held useful work: "
        f"goodput {tot['goodput_pct'] or '—'}%. Infrastructure ended or requeued {count(jobs['ended_by_infrastructure'])} "
        f"job runs, losing {_gh(tot['lost_gpu_hours'])} GPU-hours of work"
        + (f" since their last checkpoint (every {ck // 60} min)" if ck else " since they started (no checkpoints known)")
        + (f"; {count(jobs['infrastructure_unattributed'])} of them "
           f"{'matches' if jobs['infrastructure_unattributed'] == 1 else 'match'} no logged incident" if
           jobs["infrastructure_unattributed"] else "")
        + (f". After credits, each useful GPU-hour cost {cur} {_price(tot['effective_price_per_useful_gpu_hour'])}."
           if tot.get("effective_price_per_useful_gpu_hour") else "."), "strong"))
    out.append(d.Para("Paid: every contracted GPU for the whole month, service windows included. Available: paid "
                      "minus counted node downtime (the credits engine). Allocated: GPUs x time of every job run in "
                      "sacct. Useful: allocated minus the work lost to infrastructure (runs in NODE_FAIL or BOOT_FAIL, "
                      "and runs requeued while an incident was on their nodes). Job ids stay with the customer: "
                      "only counts and GPU-hours are shown."))
    months = tuple(p["period"] for p in periods)

    def f(v):
        return float(dec(v)) if v is not None else 0.0
    rows = tuple((p["period"], _gh(p["paid_gpu_hours"]), _gh(p["available_gpu_hours"]), _gh(p["allocated_gpu_hours"]),
                  _gh(p["completed_gpu_hours"]), _gh(p["lost_gpu_hours"]), _gh(p["useful_gpu_hours"]),
                  f"{p['goodput_pct']}%" if p["goodput_pct"] is not None else "—",
                  _price(p["effective_price_per_useful_gpu_hour"])) for p in periods)
    if len(periods) > 1:
        rows += (("Total", _gh(tot["paid_gpu_hours"]), _gh(tot["available_gpu_hours"]), _gh(tot["allocated_gpu_hours"]),
                  _gh(tot["completed_gpu_hours"]), _gh(tot["lost_gpu_hours"]), _gh(tot["useful_gpu_hours"]),
                  f"{tot['goodput_pct']}%" if tot["goodput_pct"] is not None else "—",
                  _price(tot.get("effective_price_per_useful_gpu_hour"))),)
    table = d.Table(("Month", "Paid", "Available", "Allocated", "Completed", "Lost", "Useful", "Goodput",
                     f"{cur}/useful GPU-h"), rows, align=("l",) + ("r",) * 8,
                    widths=(0.9, 1.1, 1.1, 1.1, 1.1, 0.9, 1.1, 0.9, 1.1), total_row=len(periods) > 1, font_size=7.5,
                    caption="GPU-hours per month.")
    out.append(d.BarChart(title="Paid, available and useful GPU-hours per month", categories=months,
                          series=(("paid", tuple(f(p["paid_gpu_hours"]) for p in periods)),
                                  ("available", tuple(f(p["available_gpu_hours"]) for p in periods)),
                                  ("useful", tuple(f(p["useful_gpu_hours"]) for p in periods))),
                          value_label="GPU-hours", value_min=0.0, fallback=table))
    out.append(table)
    incs = gp.get("incidents") or []
    if incs:
        out.append(d.Heading(f"{number}.1 Incidents that cost the most work", 2))
        shown = incs[:TOP_INCIDENTS]
        out.append(d.Table(("Incident", "Target", "Start", "Cause", "Job runs", "Lost GPU-h"),
                           tuple((i["id"], i["target"], i["start"], (i["cause"] or "—")[:48], count(i["jobs"]),
                                  _gh(i["lost_gpu_hours"])) for i in shown),
                           align=("l", "l", "l", "l", "r", "r"), widths=(1.8, 1, 1.3, 2.2, 0.7, 0.9), font_size=7.5,
                           caption=(f"The {len(shown)} of {count(len(incs))} incidents with lost work, most first. "
                                    "A run that matches several incidents is shared equally among them.")))
    elif jobs["ended_by_infrastructure"] == 0:
        out.append(d.Para("No job run was ended or requeued by infrastructure in the period."))
    if gp.get("runs_gpus_from_nodes"):
        out.append(d.Para(f"{count(gp['runs_gpus_from_nodes'])} job runs carried no gres/gpu in AllocTRES; they count "
                          "the contract's GPUs of their nodes (whole-node mapping).", "small"))
    return out
