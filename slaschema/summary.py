"""`slakit show`: what a contract commits to, on one screen."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from slaschema.loader import LoadedContract
from slaschema.types import format_percent, human_duration


def _claim_window_text(cw: Any) -> str | None:
    """`30d` for a duration, `end of 2nd month after` for `{months_after: 2}`, None without one."""
    from slaschema.models import ClaimMonthsAfter, describe_claim_window

    if cw is None:
        return None
    if isinstance(cw, ClaimMonthsAfter):
        return describe_claim_window(cw)
    return human_duration(cw)

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
            if level.pro_rata.only_below_target:
                entry["pro_rata_only_below_target"] = True
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
                     "rules": rules, **_downtime_rev11(m)},
        **_service_windows(lc),
        "service_levels": sl,
        "credits": {"stacking": m.credits.stacking,
                    "cap": format_percent(m.credits.cap) if m.credits.cap is not None else None,
                    "minimum": str(m.credits.minimum_amount), "claim_window": _claim_window_text(m.credits.claim_window),
                    "form": m.credits.form,
                    "claim": ({"send_to": m.credits.claim.send_to, "evidence": list(m.credits.claim.evidence)}
                              if m.credits.claim else None), **_credits_rev11(m)},
        "exclusions": {name: {"notice": human_duration(e.notice) if e.notice else None,
                              "max_per_month": human_duration(e.max_per_month) if e.max_per_month else None}
                       for name, e in m.exclusions.items()},
        "acceptance": {"deadline": str(m.acceptance.deadline) if m.acceptance.deadline else None,
                       "criteria": len(m.acceptance.criteria),
                       "burn_in": human_duration(m.acceptance.burn_in.duration) if m.acceptance.burn_in else None},
        "review": m.review.cadence,
    }


def _downtime_rev11(m) -> dict[str, Any]:
    """Revision 1.1 downtime fields, only where the contract sets them."""
    out: dict[str, Any] = {}
    if m.downtime.counts_from != "fault":
        out["counts_from"] = m.downtime.counts_from
    if m.downtime.measure is not None:
        out["measure"] = {"bucket": human_duration(m.downtime.measure.bucket),
                          "counts_when": m.downtime.measure.counts_when}
    return out


def _credits_rev11(m) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if m.credits.minimum_strict:
        out["minimum_more_than"] = True
    nc = m.credits.not_charged
    if nc is not None:
        out["not_charged"] = {"per": human_duration(nc.per), "when_down_over": human_duration(nc.when_down_over)}
    return out


def _service_windows(lc: LoadedContract) -> dict[str, Any]:
    """Revision 1.1: the nodes with a service window, grouped by window."""
    windows = lc.topology.node_service
    if windows is None:
        return {}
    groups: dict[tuple[str | None, str | None], int] = {}
    for w in windows:
        key = (w[0].isoformat() if w[0] is not None else None, w[1].isoformat() if w[1] is not None else None)
        groups[key] = groups.get(key, 0) + 1
    return {"service_windows": [{"from": f, "to": t, "nodes": n} for (f, t), n in groups.items()]}


def render_summary(d: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from slaschema.textsafe import deep, rich_text

    d = deep(d, rich_text)       # contract text is shown, never run: no escapes, no Rich markup
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
    if dt.get("counts_from") == "report":
        con.print("downtime clock: starts when the customer reports the incident (reported_at), not at the fault")
    if dt.get("measure"):
        ms = dt["measure"]
        con.print(f"downtime measured in {ms['bucket']} clock buckets from local midnight: a bucket counts when "
                  + ("the unit is down for all of it" if ms["counts_when"] == "full" else
                     "the unit is down for any of it"))
    for w in d.get("service_windows", []):
        con.print(f"in service: {w['nodes']} node(s) from {w['from'] or 'the start'} until "
                  f"{(w['to'] + ' (not included)') if w['to'] else 'the end'}; fee and availability over service time")
    tab = Table(title="Service levels", show_lines=False)
    tab.add_column("scope")
    tab.add_column("target", justify="right")
    tab.add_column("credits")
    for s in d["service_levels"]:
        if "credits" in s:
            cr = ", ".join(f"<{x['below']} → {x['credit']}" for x in s["credits"])
        else:
            cr = f"pro rata × {s['pro_rata_multiplier']}" + (
                " (only below target)" if s.get("pro_rata_only_below_target") else "")
        tab.add_row(s["scope"], s["target"], cr)
    con.print(tab)
    c = d["credits"]
    minimum = (f"issued only above {c['minimum']}" if c.get("minimum_more_than") else f"minimum {c['minimum']}")
    con.print(f"credits: stacking {c['stacking']}, cap {c['cap'] or 'none'}, {minimum}, "
              f"claim window {c['claim_window'] or '—'}, form {c['form']}")
    if c.get("not_charged"):
        nc = c["not_charged"]
        con.print(f"hours not charged: each {nc['per']} clock bucket in which a node is down more than "
                  f"{nc['when_down_over']} is not billed (on top of the credit)")
    if c.get("claim"):
        con.print(f"claims go to {c['claim']['send_to']}; evidence: "
                  f"{', '.join(c['claim']['evidence']) or 'none named'}")
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
