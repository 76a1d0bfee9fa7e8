"""`slakit show`: what a contract commits to, on one screen."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from slaschema.loader import LoadedContract
from slaschema.types import format_percent, human_duration

CENT = Decimal("0.01")


def monthly_fees(lc: LoadedContract) -> dict[str, str]:
    """Total fee for 28-, 30- and 31-day months (DST months differ by one hour)."""
    out = {}
    for days in (28, 30, 31):
        fee = lc.model.pricing.fee(gpus=lc.topology.gpu_count, nodes=len(lc.topology.nodes), hours=24 * days)
        out[f"{days}d"] = str(fee.quantize(CENT, ROUND_HALF_UP))
    return out


def summary(lc: LoadedContract) -> dict[str, Any]:
    m = lc.model
    c = m.contract
    sl = []
    for scope, level in m.service_levels.items():
        entry: dict[str, Any] = {"scope": scope, "target": format_percent(level.effective_target)}
        if level.credits:
            entry["credits"] = [{"below": format_percent(t.below), "credit": format_percent(t.credit)}
                                for t in level.credits]
        if level.pro_rata:
            entry["pro_rata_multiplier"] = str(level.pro_rata.multiplier)
        sl.append(entry)
    rules = []
    if m.downtime.rack:
        r = m.downtime.rack
        rules.append(f"rack down while >= {r.down_when_nodes_down} of its nodes are down"
                     + ("; nodes follow the rack" if r.nodes_follow_rack else ""))
    if m.downtime.cluster:
        r2 = m.downtime.cluster
        rules.append(f"cluster down while < {format_percent(r2.down_when_available_below)} of its nodes are up"
                     + ("; nodes follow the cluster" if r2.nodes_follow_cluster else ""))
    pricing = ({"per_gpu_hour": str(m.pricing.per_gpu_hour)} if m.pricing.per_gpu_hour is not None
               else {"per_node_month": str(m.pricing.per_node_month)})
    return {
        "file": lc.file,
        "sha256": lc.sha256,
        "id": c.id,
        "title": c.title,
        "provider": c.provider,
        "customer": c.customer,
        "term": {"from": str(c.effective.from_) if c.effective else None,
                 "to": str(c.effective.to) if c.effective and c.effective.to else None},
        "timezone": c.timezone,
        "currency": c.currency,
        "architecture": m.topology.architecture,
        "gpu_model": m.topology.gpu_model,
        "topology": lc.topology.counts(),
        "pricing": pricing,
        "fees_per_month": monthly_fees(lc),
        "downtime": {"min_outage": human_duration(m.downtime.min_outage), "degraded": m.downtime.degraded,
                     "rules": rules},
        "service_levels": sl,
        "credits": {"stacking": m.credits.stacking,
                    "cap": format_percent(m.credits.cap) if m.credits.cap is not None else None,
                    "minimum": str(m.credits.minimum), "claim_window": human_duration(m.credits.claim_window)
                    if m.credits.claim_window else None, "form": m.credits.form},
        "exclusions": {name: {"notice": human_duration(e.notice) if e.notice else None,
                              "max_per_month": human_duration(e.max_per_month) if e.max_per_month else None}
                       for name, e in m.exclusions.items()},
        "acceptance": {"deadline": str(m.acceptance.deadline) if m.acceptance.deadline else None,
                       "criteria": len(m.acceptance.criteria),
                       "burn_in": human_duration(m.acceptance.burn_in.duration) if m.acceptance.burn_in else None},
        "review": m.review.cadence,
    }


def render_summary(d: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    con.print(f"[bold]{d['title'] or d['id']}[/bold]  ({d['id']})")
    con.print(f"provider [bold]{d['provider']}[/bold] → customer [bold]{d['customer']}[/bold]; "
              f"term {d['term']['from'] or '—'} to {d['term']['to'] or 'open'}; "
              f"zone {d['timezone']}; currency {d['currency']}; review {d['review']}")
    t = d["topology"]
    con.print(f"topology {d['architecture']} ({d['gpu_model'] or 'GPU model not named'}): "
              f"{t['sites']} site(s), {t['clusters']} cluster(s), {t['racks']} rack(s), "
              f"{t['nodes']} nodes, {t['gpus']} GPUs")
    price = ", ".join(f"{k} {v}" for k, v in d["pricing"].items())
    fees = d["fees_per_month"]
    con.print(f"pricing {price}; fees per month: {fees['28d']} (28 d) · {fees['30d']} (30 d) · "
              f"{fees['31d']} (31 d) {d['currency']}")
    dt = d["downtime"]
    con.print(f"downtime: min outage {dt['min_outage']}, degraded = {dt['degraded']}"
              + ("; " + "; ".join(dt["rules"]) if dt["rules"] else ""))
    tab = Table(title="Service levels", show_lines=False)
    tab.add_column("scope")
    tab.add_column("target", justify="right")
    tab.add_column("credits")
    for s in d["service_levels"]:
        if "credits" in s:
            cr = ", ".join(f"<{x['below']} → {x['credit']}" for x in s["credits"])
        else:
            cr = f"pro rata × {s['pro_rata_multiplier']}"
        tab.add_row(s["scope"], s["target"], cr)
    con.print(tab)
    c = d["credits"]
    con.print(f"credits: stacking {c['stacking']}, cap {c['cap'] or 'none'}, minimum {c['minimum']}, "
              f"claim window {c['claim_window'] or '—'}, form {c['form']}")
    if d["exclusions"]:
        ex = Table(title="Exclusions")
        ex.add_column("category")
        ex.add_column("notice")
        ex.add_column("max per month")
        for name, e in d["exclusions"].items():
            ex.add_row(name, e["notice"] or "—", e["max_per_month"] or "—")
        con.print(ex)
    else:
        con.print("exclusions: none")
    a = d["acceptance"]
    con.print(f"acceptance: deadline {a['deadline'] or '—'}, {a['criteria']} criteria, burn-in {a['burn_in'] or '—'}")
