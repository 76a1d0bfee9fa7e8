"""`explain`: one unit, one month, from incident intervals to credit, step by step.

The document lists every incident part on the unit (own and inherited from the racks,
clusters and sites above it) with what was counted and what was excluded, the merged
outages and those `min_outage` dropped, the rack/cluster rule intervals that apply, the
final down intervals in the month, availability as an exact fraction, the tier or pro-rata
arithmetic, the fee, the node's share from each scope with stacking, rounding, and the
node's share of the capped total. It is computed by the same engine run as `credits`.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from calculators import credits as cr
from calculators import settle
from calculators.engine import (CLUSTER, DOWN, NODE, RACK, SCOPES, SITE, Pieces, Tree,
                                flag_names, run)
from calculators.intervals import Intervals, merge
from calculators.periods import parse_month
from calculators.result import iso
from calculators.service import bucket_counted, not_charged_buckets

FORMAT = "slakit-explain/1"

if TYPE_CHECKING:
    from calculators.incidents import IncidentLog
    from slaschema.loader import LoadedContract


def find_unit(topology, unit_id: str, file: str | None = None) -> str:
    """The scope of `unit_id`; one it is not in is an `unknown_unit` input problem (of the
    contract `file`) naming the nearest units."""
    import difflib

    from slaschema.errors import InputError, Problem

    for scope in SCOPES:
        if unit_id in topology.index_of(scope):
            return scope
    names = [n for scope in SCOPES for n in topology.units(scope)]
    near = difflib.get_close_matches(unit_id, names, n=3, cutoff=0.6) if len(names) <= 20_000 else []
    fix = (f"did you mean {', '.join(near)}? " if near else "") + "name a unit of the contract (`slakit show CONTRACT` lists them)"
    raise InputError([Problem("unknown_unit", "--unit is not a node, rack, cluster or site of the contract",
                              file=file, value=unit_id, fix=fix)])


def _ivs(iv: Intervals, unit: int, base: int, lo: int, hi: int) -> list[dict[str, Any]]:
    m = (iv.unit == unit) & (iv.end > lo) & (iv.start < hi)
    out = []
    for s, e in zip(iv.start[m].tolist(), iv.end[m].tolist()):
        out.append({"start": iso(s + base), "end": iso(e + base), "seconds": e - s,
                    "in_month_seconds": max(0, min(e, hi) - max(s, lo))})
    return sorted(out, key=lambda d: d["start"])


def _exact(x: Fraction, places: int = 6) -> str:
    """A rational as decimal text: all digits when it terminates within `places`, else
    rounded to `places` with a trailing ellipsis."""
    q = Decimal(x.numerator) / Decimal(x.denominator)
    shown = q.quantize(Decimal(1).scaleb(-places))
    if Fraction(shown) == x:
        return format(shown.normalize(), "f") if shown != 0 else "0"
    return format(shown, "f") + "…"


def _pieces(p: Pieces, unit: int, frame, base: int, lo: int, hi: int, kind: str) -> list[dict[str, Any]]:
    m = (p.iv.unit == unit) & (p.iv.end > lo) & (p.iv.start < hi)
    out = []
    for i in np.flatnonzero(m).tolist():
        r = int(p.row[i])
        s, e = int(p.iv.start[i]), int(p.iv.end[i])
        row = frame.iloc[r]
        out.append({"id": str(row["id"]), "row": int(row["row"]), "scope": str(row["scope"]),
                    "target": str(row["target"]), "category": str(row["category"]), "impact": str(row["impact"]),
                    "part": kind, "start": iso(s + base), "end": iso(e + base), "seconds": e - s,
                    "gpus_lost": None if int(p.ga[i]) == DOWN else int(p.ga[i]),
                    "flags": flag_names(int(p.flags[i]))})
    return sorted(out, key=lambda d: (d["start"], d["id"]))


def explain(lc: LoadedContract, log: IncidentLog, unit_id: str, period: str, as_of: datetime | int | None = None) -> dict[str, Any]:
    zone = lc.model.contract.timezone
    per = parse_month(period, zone)
    scope = find_unit(lc.topology, unit_id, lc.file)
    result, tr, tree = run(lc, log, [per], as_of, support=False)
    c = SCOPES.index(scope)
    u = lc.topology.index_of(scope)[unit_id]
    base = tr.base
    ps, pe = per.start - base, per.end - base
    frame = log.frame
    dt = lc.model.downtime
    mo = int(dt.min_outage.total_seconds())

    # the window: the month, widened to whole merged outages that cross its bounds
    final = tr.final(c)
    touching = (final.unit == u) & (final.end > ps) & (final.start < pe)
    lo = min([ps] + final.start[touching].tolist())
    hi = max([pe] + final.end[touching].tolist())

    steps: list[dict[str, Any]] = []
    incidents = (_pieces(tr.counted[c], u, frame, base, lo, hi, "counted")
                 + _pieces(tr.excluded[c], u, frame, base, lo, hi, "excluded"))
    rev11 = _rev11(lc, tr, c, u, frame, base, ps, pe, lo, hi)
    if tr.void:
        incidents += _pieces(tr.void[c], u, frame, base, lo, hi, "counts nowhere")
    if tr.service is not None:
        steps.append({"step": "service time in the month (incident time outside it counts nowhere)",
                      "intervals": rev11["service"]["intervals"]})
    if c == NODE:
        own = tr.counted[NODE].down()
        steps.append({"step": "merged outages (overlapping or touching parts joined)",
                      "intervals": _ivs(merge(own.iv), u, base, lo, hi)})
        steps.append({"step": f"dropped by min_outage ({mo} s)", "intervals": _ivs(tr.node_short, u, base, lo, hi)})
        rack = tree.owner(NODE, RACK)[u]
        if dt.rack is not None:
            steps.append({"step": f"rack {tree.names[RACK][rack]}: >= {dt.rack.down_when_nodes_down} nodes down",
                          "intervals": _ivs(tr.rack_rule, rack, base, lo, hi)})
        steps.append({"step": f"rack {tree.names[RACK][rack]} down"
                              + (" (node follows the rack)" if dt.rack and dt.rack.nodes_follow_rack else
                                 " (node does not follow the rack)"),
                      "intervals": _ivs(tr.rack_down, rack, base, lo, hi)})
        cl = tree.owner(NODE, CLUSTER)[u]
        if dt.cluster is not None:
            steps.append({"step": f"cluster {tree.names[CLUSTER][cl]} down (its incidents, or nodes up below "
                                  f"{dt.cluster.down_when_available_below}%)"
                                  + (" (node follows the cluster)" if dt.cluster.nodes_follow_cluster else
                                     " (node does not follow the cluster)"),
                          "intervals": _ivs(tr.cluster_down, cl, base, lo, hi)})
        if len(tr.degraded):
            d = tr.degraded
            m = (d.iv.unit == u) & (d.iv.end > lo) & (d.iv.start < hi)
            steps.append({"step": "degraded (proportional): GPUs lost while not down",
                          "intervals": [{"start": iso(int(s) + base), "end": iso(int(e) + base),
                                         "seconds": int(e - s), "gpus_lost": int(g)}
                                        for s, e, g in zip(d.iv.start[m], d.iv.end[m], d.ga[m])]})
    else:
        own = merge(tr.counted[c].down().iv)
        steps.append({"step": f"own and inherited {scope} incidents, merged", "intervals": _ivs(own, u, base, lo, hi)})
        rule, short = {RACK: (tr.rack_rule, tr.rack_short), CLUSTER: (tr.cluster_rule, tr.cluster_short),
                       SITE: (tr.site_rule, tr.site_short)}[c]
        label = {RACK: f"rack rule: >= {dt.rack.down_when_nodes_down} nodes down" if dt.rack else "no rack rule",
                 CLUSTER: (f"cluster rule: nodes up below {dt.cluster.down_when_available_below}%"
                           if dt.cluster else "no cluster rule"),
                 SITE: "all clusters of the site down"}[c]
        steps.append({"step": label, "intervals": _ivs(rule, u, base, lo, hi)})
        steps.append({"step": f"dropped by min_outage ({mo} s)", "intervals": _ivs(short, u, base, lo, hi)})
    steps.append({"step": "down intervals (final)", "intervals": _ivs(final, u, base, lo, hi)})
    ms = lc.model.downtime.measure
    if ms is not None:
        b = int(ms.bucket.total_seconds())
        counted = bucket_counted(final, ps, pe, b, ms.counts_when, tree.size[c],
                                 tr.service.sets[c] if tr.service is not None else None)
        steps.append({"step": f"{b // 60}-minute clock buckets from local midnight counted as downtime "
                              f"({'down for all of the bucket' if ms.counts_when == 'full' else 'down for any of it'})",
                      "intervals": _ivs(merge(counted), u, base, ps, pe)})
    nc = lc.model.credits.not_charged
    if nc is not None and c == NODE:
        svc = tr.service
        got = not_charged_buckets(tr.node_final, ps, pe, int(nc.per.total_seconds()),
                                  int(nc.when_down_over.total_seconds()),
                                  svc.node_from if svc is not None else None, svc.node_to if svc is not None else None)
        steps.append({"step": f"hours not charged: {nc.per.total_seconds() / 60:g}-minute clock buckets with more than "
                              f"{nc.when_down_over.total_seconds():g} s down",
                      "intervals": _ivs(merge(got), u, base, ps, pe)})

    pr = result.periods[0]
    out: dict[str, Any] = {
        "format": FORMAT, "contract": lc.id, "unit": unit_id, "scope": scope, "parents": lc.topology.parent(scope, unit_id),
        "period": per.label, "zone": zone, "start": iso(per.start), "end": iso(per.end),
        "month_seconds": per.seconds, "hours": format(per.hours.normalize(), "f"),
        "as_of": iso(result.as_of), "incidents": incidents, "steps": steps,
    }
    if rev11["clock"] is not None:
        out["clock"] = rev11["clock"]
    if tr.service is not None:
        out["service"] = {k: v for k, v in rev11["service"].items() if k != "intervals"}
    sm = pr.scopes.get(scope)
    if sm is not None and not sm.in_service(u):
        out["availability"] = None
        out["not_in_service"] = True
    elif sm is not None:
        row = sm.row(u)
        lnum, dn = int(sm.lnum[u]), int(sm.dn[u])
        loss = Fraction(lnum, dn)
        service_s = int(sm.service[u]) if sm.service is not None else per.seconds
        service_h = format((Decimal(service_s) / 3600).normalize(), "f")
        avail = 1 - loss / service_s
        sl = getattr(lc.model.service_levels, scope)
        tiers = []
        for t in sl.credits or []:
            tiers.append({"below": str(t.below), "credit": str(t.credit),
                          "applies": bool(avail * 100 < Fraction(t.below))})
        out["availability"] = {
            "downtime_seconds": row["downtime_seconds"],
            "lost_gpu_seconds": lnum if dn != 1 else None,
            "excluded_seconds": row["excluded_seconds"],
            "formula": f"1 - {_exact(loss)} / {service_s}",
            "exact": _exact(avail * 100, 8) + "%",
            "availability_pct": row["availability_pct"],
            "target_pct": row["target_pct"], "met": row["met"],
            "tiers": tiers,
            "pro_rata": (None if sl.pro_rata is None else
                         {"multiplier": str(sl.pro_rata.multiplier),
                          "formula": f"min(1, {_exact(loss / 3600)} h x {sl.pro_rata.multiplier} / "
                                     f"{service_h} h) of the " + ("charged fee" if sm.charged_num is not None
                                                                  else "fee")
                                     + (" (only below target: target met, so 0)" if
                                        sl.pro_rata.only_below_target and row["met"] else "")}),
            "credit_pct": row["credit_pct"], "unit_fee": row["fee"], "unit_credit": row["credit"],
            "incidents": row["incidents"], "flags": row["flags"],
        }
        if sm.service is not None:      # revision 1.1
            out["availability"].update({"service_seconds": service_s, "unit_charged_fee": row["charged_fee"]})
            if sl.pro_rata is not None:
                out["availability"]["pro_rata"]["only_below_target"] = sl.pro_rata.only_below_target
    else:
        out["availability"] = None
    out["money"] = _money(lc, pr, tree, scope, u)
    if result.claims is not None:
        m = result.claims.months[0]
        out["money"]["period"]["claim"] = {"due": iso(m.due) if m.due is not None else None, "status": m.status}
    return out


def _money(lc: LoadedContract, pr, tree: Tree, scope: str, u: int) -> dict[str, Any]:
    pricing = lc.model.pricing
    c = SCOPES.index(scope)
    nodes = np.flatnonzero(tree.owner(NODE, c) == u) if c != NODE else np.array([u])
    first = int(nodes[0])
    gpus = int(tree.gpus[first])
    service = pr.nodes.service is not None and lc.topology.node_service is not None
    hours = "service hours" if service else f"{format(pr.period.hours.normalize(), 'f')} h"
    if pricing.per_gpu_hour is not None:
        fee_formula = f"{gpus} GPUs x {pricing.per_gpu_hour} per GPU-hour x {hours}"
    else:
        fee_formula = f"{pricing.per_node_month} per node-month" + (" x service time / month" if service else "")
    nm = pr.nodes
    uncapped = pr.credit_uncapped_cents
    money: dict[str, Any] = {"currency": lc.model.contract.currency, "stacking": lc.model.credits.stacking,
                             "node_fee_formula": fee_formula, "nodes": []}
    settled = settle.settled_node_cents(pr)
    for i in nodes.tolist()[:50]:
        shares = []
        values = []
        for name, sm in pr.scopes.items():
            owner = int(tree.owner(NODE, SCOPES.index(name))[i])
            share = Fraction(int(sm.share_num[owner]), int(sm.share_den[owner]))
            values.append(share)
            shares.append({"scope": name, "unit": sm.ids[owner], "share_of_fee": _exact(share * 100, 6) + "%"})
        stacked = (max(values, default=Fraction(0)) if lc.model.credits.stacking == "max"
                   else min(Fraction(1), sum(values, Fraction(0))))
        fee = Fraction(int(nm.fee_num[i]), nm.fee_den)
        extra: dict[str, Any] = {}
        if nm.service is not None:
            if int(nm.service[i]) == 0:
                money["nodes"].append({"node": nm.ids[i], "not_in_service": True})
                continue
            nc = Fraction(int(nm.not_charged_num[i]), nm.fee_den)
            fee_for_credit = fee - nc
            extra = {"service_seconds": int(nm.service[i]),
                     "service_hours": _exact(Fraction(int(nm.service[i]), 3600), 4),
                     "not_charged_exact": _exact(nc, 6), "not_charged": cr.money(int(nm.not_charged_cents[i])),
                     "charged_fee_exact": _exact(fee_for_credit, 6)}
        else:
            fee_for_credit = fee
        credit = int(nm.credit_cents[i])
        share_of_total = (Fraction(credit * pr.credit_total_cents, uncapped) if uncapped else Fraction(0))
        money["nodes"].append({
            "node": nm.ids[i], "fee_exact": _exact(fee, 6), "fee": cr.money(int(nm.fee_cents[i])),
            "shares": shares, "basis": str(nm.basis[i]) or "none",
            "stacked_share": _exact(stacked * 100, 6) + "%", "credit_exact": _exact(stacked * fee_for_credit, 6),
            "credit_rounded": cr.money(credit),
            # what the node is owed: its share of the month's credit total in whole cents, the cents
            # left over going to the largest remainders (calculators.settle), next to the exact share
            "after_cap_and_minimum": cr.money(int(settled[i])),
            "after_cap_share_exact": cr.money(int(share_of_total)) if share_of_total.denominator == 1
            else _exact(share_of_total / 100, 4), **extra,
        })
    if len(nodes) > 50:
        money["nodes_not_listed"] = len(nodes) - 50
    money["period"] = {
        "fee_total": cr.money(pr.fee_total_cents), "credit_uncapped": cr.money(uncapped),
        "cap_amount": cr.money(pr.cap_cents) if pr.cap_cents is not None else None,
        "cap_applied": pr.cap_applied, "minimum": str(pr.minimum_cents), "minimum_applied": pr.minimum_applied,
        "credit_total": cr.money(pr.credit_total_cents),
    }
    if pr.not_charged_cents is not None:
        money["period"].update({"minimum_rule": "more_than" if pr.minimum_strict else "at_least",
                                "not_charged_total": cr.money(pr.not_charged_cents),
                                "remedy_total": cr.money(pr.remedy_cents)})
    return money


def _rev11(lc: LoadedContract, tr, c: int, u: int, frame, base: int, ps: int, pe: int, lo: int, hi: int) -> dict[str, Any]:
    """Revision 1.1 parts of an explanation: when the clock starts, the service window."""
    out: dict[str, Any] = {"clock": None, "service": None}
    if lc.model.downtime.counts_from == "report":
        seen: dict[int, dict[str, Any]] = {}
        for p in (tr.counted[c], tr.excluded[c], *((tr.void[c],) if tr.void else ())):
            m = (p.iv.unit == u)
            for r in np.unique(p.row[m]).tolist():
                if r in seen:
                    continue
                row = frame.iloc[r]
                rep = row.get("reported_at")
                start = int(row["start"])
                has = rep is not None and not pd.isna(rep)
                seen[r] = {"id": str(row["id"]), "fault_start": iso(start),
                           "reported_at": iso(int(rep)) if has else None,
                           "clock_starts": iso(max(start, int(rep))) if has else None,
                           "note": ("counts from the report" if has and int(rep) > start else
                                    "reported at or before the fault start: counts from the fault" if has else
                                    "not reported: counts nowhere")}
        out["clock"] = sorted(seen.values(), key=lambda d: (d["fault_start"], d["id"]))
    svc = tr.service
    if svc is not None:
        sset = svc.sets[c]
        win = None
        if c == NODE:       # as the contract writes it (a date is local midnight)
            a, b = lc.topology.node_service[u]
            win = {"from": a.isoformat() if a is not None else None, "to": b.isoformat() if b is not None else None}
        secs = int(svc.seconds(c, ps, pe, tr.tree.size[c])[u])
        m = (sset.unit == u) & (sset.end > ps) & (sset.start < pe)
        inside = [{"start": iso(max(int(a), ps) + base), "end": iso(min(int(b), pe) + base),
                   "seconds": min(int(b), pe) - max(int(a), ps)}
                  for a, b in zip(sset.start[m].tolist(), sset.end[m].tolist())]
        out["service"] = {"service_seconds": secs, "month_seconds": pe - ps, "window": win, "intervals": inside}
    return out
