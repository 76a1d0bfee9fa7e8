"""`explain`: one unit, one month, from incident intervals to credit, step by step.

The document lists every incident part on the unit (own and inherited from the racks,
clusters and sites above it) with what was counted and what was excluded, the merged
outages and those `min_outage` dropped, the rack/cluster rule intervals that apply, the
final down intervals in the month, availability as an exact fraction, the tier or pro-rata
arithmetic, the fee, the node's share from each scope with stacking, rounding, and the
node's share of the capped total. It is computed by the same engine run as `credits`.
`explain` returns it as an `Explanation` (`calculators.explain_records`, frozen records built
by keyword); `Explanation.to_json()` is the JSON document.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from calculators import settle
from calculators.engine import (CLUSTER, DOWN, NODE, RACK, SCOPES, SITE, Pieces, Tree,
                                flag_names, run)
from calculators.explain_records import (FORMAT, ClockStart, ExplainedMoney, Explanation, IncidentPart, Interval,
                                         NodeMoney, NodeNotInService, NodeShare, ProRata, ServiceTime, ServiceWindow,
                                         Step, Tier, UnitAvailability, exact_text)
from calculators.intervals import Intervals, merge
from calculators.periods import parse_month
from calculators.result_records import money, utc
from calculators.service import bucket_counted, not_charged_buckets

__all__ = ["FORMAT", "Explanation", "explain", "find_unit"]

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


def _ivs(iv: Intervals, unit: int, base: int, lo: int, hi: int) -> tuple[Interval, ...]:
    """The unit's intervals touching `[lo, hi)`, each with its seconds inside it."""
    m = (iv.unit == unit) & (iv.end > lo) & (iv.start < hi)
    out = [Interval(start=utc(s + base), end=utc(e + base), seconds=e - s,
                    in_month_seconds=max(0, min(e, hi) - max(s, lo)))
           for s, e in zip(iv.start[m].tolist(), iv.end[m].tolist())]
    return tuple(sorted(out, key=lambda x: x.start))


def _pieces(p: Pieces, unit: int, frame, base: int, lo: int, hi: int, kind: str) -> list[IncidentPart]:
    m = (p.iv.unit == unit) & (p.iv.end > lo) & (p.iv.start < hi)
    at = np.flatnonzero(m)
    if not len(at):
        return []
    # the rows' cells gathered column by column (a row of the frame at a time took 0.1 ms a
    # part: 50,000 parts of one node, 5 s)
    rows = p.row[at]
    cell = {c: [str(v) for v in frame[c].iloc[rows].to_numpy(dtype=object)]
            for c in ("id", "scope", "target", "category", "impact")}
    numbers = frame["row"].iloc[rows].to_numpy(dtype=object)
    out = []
    for k, (s, e, ga, fl) in enumerate(zip(p.iv.start[at].tolist(), p.iv.end[at].tolist(), p.ga[at].tolist(),
                                           p.flags[at].tolist())):
        out.append(IncidentPart(id=cell["id"][k], row=int(numbers[k]), scope=cell["scope"][k],
                                target=cell["target"][k], category=cell["category"][k], impact=cell["impact"][k],
                                part=kind, start=utc(s + base), end=utc(e + base), seconds=e - s,
                                gpus_lost=None if ga == DOWN else ga, flags=tuple(flag_names(fl))))
    return sorted(out, key=lambda x: (x.start, x.id))


def explain(lc: LoadedContract, log: IncidentLog, unit_id: str, period: str,
            as_of: datetime | int | None = None) -> Explanation:
    """How `unit_id`'s credit for the month `period` (YYYY-MM) comes about, computed by the
    engine run `slakit credits` makes; `as_of` is when open incidents end (default: the end
    of the month)."""
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

    steps: list[Step] = []
    incidents = (_pieces(tr.counted[c], u, frame, base, lo, hi, "counted")
                 + _pieces(tr.excluded[c], u, frame, base, lo, hi, "excluded"))
    clock, service, service_intervals = _rev11(lc, tr, c, u, frame, base, ps, pe)
    if tr.void:
        incidents += _pieces(tr.void[c], u, frame, base, lo, hi, "counts nowhere")
    if service is not None:
        steps.append(Step(text="service time in the month (incident time outside it counts nowhere)",
                          intervals=service_intervals))
    if c == NODE:
        own = tr.counted[NODE].down()
        steps.append(Step(text="merged outages (overlapping or touching parts joined)",
                          intervals=_ivs(merge(own.iv), u, base, lo, hi)))
        steps.append(Step(text=f"dropped by min_outage ({mo} s)", intervals=_ivs(tr.node_short, u, base, lo, hi)))
        rack = tree.owner(NODE, RACK)[u]
        if dt.rack is not None:
            steps.append(Step(text=f"rack {tree.names[RACK][rack]}: >= {dt.rack.down_when_nodes_down} nodes down",
                              intervals=_ivs(tr.rack_rule, rack, base, lo, hi)))
        steps.append(Step(text=f"rack {tree.names[RACK][rack]} down"
                               + (" (node follows the rack)" if dt.rack and dt.rack.nodes_follow_rack else
                                  " (node does not follow the rack)"),
                          intervals=_ivs(tr.rack_down, rack, base, lo, hi)))
        cl = tree.owner(NODE, CLUSTER)[u]
        if dt.cluster is not None:
            steps.append(Step(text=f"cluster {tree.names[CLUSTER][cl]} down (its incidents, or nodes up below "
                                   f"{dt.cluster.down_when_available_below}%)"
                                   + (" (node follows the cluster)" if dt.cluster.nodes_follow_cluster else
                                      " (node does not follow the cluster)"),
                              intervals=_ivs(tr.cluster_down, cl, base, lo, hi)))
        if len(tr.degraded):
            d = tr.degraded
            m = (d.iv.unit == u) & (d.iv.end > lo) & (d.iv.start < hi)
            steps.append(Step(text="degraded (proportional): GPUs lost while not down",
                              intervals=tuple(Interval(start=utc(int(s) + base), end=utc(int(e) + base),
                                                       seconds=int(e - s), gpus_lost=int(g))
                                              for s, e, g in zip(d.iv.start[m], d.iv.end[m], d.ga[m]))))
    else:
        own = merge(tr.counted[c].down().iv)
        steps.append(Step(text=f"own and inherited {scope} incidents, merged", intervals=_ivs(own, u, base, lo, hi)))
        rule, short = {RACK: (tr.rack_rule, tr.rack_short), CLUSTER: (tr.cluster_rule, tr.cluster_short),
                       SITE: (tr.site_rule, tr.site_short)}[c]
        label = {RACK: f"rack rule: >= {dt.rack.down_when_nodes_down} nodes down" if dt.rack else "no rack rule",
                 CLUSTER: (f"cluster rule: nodes up below {dt.cluster.down_when_available_below}%"
                           if dt.cluster else "no cluster rule"),
                 SITE: "all clusters of the site down"}[c]
        steps.append(Step(text=label, intervals=_ivs(rule, u, base, lo, hi)))
        steps.append(Step(text=f"dropped by min_outage ({mo} s)", intervals=_ivs(short, u, base, lo, hi)))
    steps.append(Step(text="down intervals (final)", intervals=_ivs(final, u, base, lo, hi)))
    ms = lc.model.downtime.measure
    if ms is not None:
        b = int(ms.bucket.total_seconds())
        counted = bucket_counted(final, ps, pe, b, ms.counts_when, tree.size[c],
                                 tr.service.sets[c] if tr.service is not None else None)
        steps.append(Step(text=f"{b // 60}-minute clock buckets from local midnight counted as downtime "
                               f"({'down for all of the bucket' if ms.counts_when == 'full' else 'down for any of it'})",
                          intervals=_ivs(merge(counted), u, base, ps, pe)))
    nc = lc.model.credits.not_charged
    if nc is not None and c == NODE:
        svc = tr.service
        got = not_charged_buckets(tr.node_final, ps, pe, int(nc.per.total_seconds()),
                                  int(nc.when_down_over.total_seconds()),
                                  svc.node_from if svc is not None else None, svc.node_to if svc is not None else None)
        steps.append(Step(text=f"hours not charged: {nc.per.total_seconds() / 60:g}-minute clock buckets with more "
                               f"than {nc.when_down_over.total_seconds():g} s down",
                          intervals=_ivs(merge(got), u, base, ps, pe)))

    pr = result.periods[0]
    sm = pr.scopes.get(scope)
    not_in_service = sm is not None and not sm.in_service(u)
    availability = None
    if sm is not None and not not_in_service:
        availability = _availability(lc, sm, pr, scope, u, per)
    return Explanation(
        contract=lc.id, unit=unit_id, scope=scope, parents=lc.topology.parent(scope, unit_id), period=per.label,
        zone=zone, start=utc(per.start), end=utc(per.end), month_seconds=per.seconds, hours=per.hours,
        as_of=utc(result.as_of), incidents=tuple(incidents), steps=tuple(steps), clock=clock, service=service,
        availability=availability, not_in_service=not_in_service,
        money=_money(lc, pr, tree, scope, u, result.month_totals()[0]))


def _availability(lc: LoadedContract, sm, pr, scope: str, u: int, per) -> UnitAvailability:
    """The unit's availability as an exact fraction, the tiers or pro-rata arithmetic and its credit."""
    unit = sm.records(pr, [u])[0]
    lnum, dn = int(sm.lnum[u]), int(sm.dn[u])
    loss = Fraction(lnum, dn)
    service_s = int(sm.service[u]) if sm.service is not None else per.seconds
    service_h = format((Decimal(service_s) / 3600).normalize(), "f")
    avail = 1 - loss / service_s
    sl = getattr(lc.model.service_levels, scope)
    tiers = tuple(Tier(below=t.below, credit=t.credit, applies=bool(avail * 100 < Fraction(t.below)))
                  for t in sl.credits or [])
    pro_rata = None
    if sl.pro_rata is not None:
        pro_rata = ProRata(
            multiplier=sl.pro_rata.multiplier,
            formula=f"min(1, {exact_text(loss / 3600)} h x {sl.pro_rata.multiplier} / "
                    f"{service_h} h) of the " + ("charged fee" if sm.charged_num is not None else "fee")
                    + (" (only below target: target met, so 0)" if sl.pro_rata.only_below_target and unit.met else ""),
            only_below_target=sl.pro_rata.only_below_target if sm.service is not None else None)
    return UnitAvailability(unit=unit, lost_gpu_seconds=lnum if dn != 1 else None,
                            formula=f"1 - {exact_text(loss)} / {service_s}", exact_pct=avail * 100, tiers=tiers,
                            pro_rata=pro_rata)


def _money(lc: LoadedContract, pr, tree: Tree, scope: str, u: int, month) -> ExplainedMoney:
    """The money of the unit's nodes (the first 50) and the month's totals (`month`)."""
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
    listed: list[NodeMoney | NodeNotInService] = []
    settled = settle.settled_node_cents(pr)
    for i in nodes.tolist()[:50]:
        shares = []
        values = []
        for name, sm in pr.scopes.items():
            owner = int(tree.owner(NODE, SCOPES.index(name))[i])
            share = Fraction(int(sm.share_num[owner]), int(sm.share_den[owner]))
            values.append(share)
            shares.append(NodeShare(scope=name, unit=sm.ids[owner], share=share))
        stacked = (max(values, default=Fraction(0)) if lc.model.credits.stacking == "max"
                   else min(Fraction(1), sum(values, Fraction(0))))
        fee = Fraction(int(nm.fee_num[i]), nm.fee_den)
        service_s = nc = not_charged = None           # revision 1.1 figures
        fee_for_credit = fee
        if nm.service is not None:
            if int(nm.service[i]) == 0:
                listed.append(NodeNotInService(node=nm.ids[i]))
                continue
            service_s, nc = int(nm.service[i]), Fraction(int(nm.not_charged_num[i]), nm.fee_den)
            not_charged = money(int(nm.not_charged_cents[i]))
            fee_for_credit = fee - nc
        credit = int(nm.credit_cents[i])
        share_of_total = (Fraction(credit * pr.credit_total_cents, uncapped) if uncapped else Fraction(0))
        listed.append(NodeMoney(
            node=nm.ids[i], fee_exact=fee, fee=money(int(nm.fee_cents[i])), shares=tuple(shares),
            basis=str(nm.basis[i]) or "none", stacked_share=stacked, credit_exact=stacked * fee_for_credit,
            credit_rounded=money(credit),
            # what the node is owed: its share of the month's credit total in whole cents, the cents
            # left over going to the largest remainders (calculators.settle), next to the exact share
            after_cap_and_minimum=money(int(settled[i])), after_cap_exact=share_of_total / 100,
            service_seconds=service_s, not_charged_exact=nc, not_charged=not_charged,
            charged_fee_exact=None if nc is None else fee_for_credit))
    return ExplainedMoney(currency=lc.model.contract.currency, stacking=lc.model.credits.stacking,
                          node_fee_formula=fee_formula, nodes=tuple(listed), nodes_not_listed=max(0, len(nodes) - 50),
                          month=month)


def _rev11(lc: LoadedContract, tr, c: int, u: int, frame, base: int, ps: int, pe: int
           ) -> tuple[tuple[ClockStart, ...] | None, ServiceTime | None, tuple[Interval, ...]]:
    """Revision 1.1 parts of an explanation: when each incident's clock starts (None unless
    `counts_from: report`), the unit's service time in the month and its intervals (None
    and none without service windows)."""
    clock = None
    if lc.model.downtime.counts_from == "report":
        seen: dict[int, ClockStart] = {}
        for p in (tr.counted[c], tr.excluded[c], *((tr.void[c],) if tr.void else ())):
            m = (p.iv.unit == u)
            for r in np.unique(p.row[m]).tolist():
                if r in seen:
                    continue
                row = frame.iloc[r]
                rep = row.get("reported_at")
                start = int(row["start"])
                has = rep is not None and not pd.isna(rep)
                seen[r] = ClockStart(id=str(row["id"]), fault_start=utc(start),
                                     reported_at=utc(int(rep)) if has else None,
                                     clock_starts=utc(max(start, int(rep))) if has else None,
                                     note=("counts from the report" if has and int(rep) > start else
                                           "reported at or before the fault start: counts from the fault" if has else
                                           "not reported: counts nowhere"))
        clock = tuple(sorted(seen.values(), key=lambda x: (x.fault_start, x.id)))
    svc = tr.service
    if svc is None:
        return clock, None, ()
    sset = svc.sets[c]
    win = None
    if c == NODE:       # as the contract writes it (a date is local midnight)
        a, b = lc.topology.node_service[u]
        win = ServiceWindow(starts=a, ends=b)
    secs = int(svc.seconds(c, ps, pe, tr.tree.size[c])[u])
    m = (sset.unit == u) & (sset.end > ps) & (sset.start < pe)
    inside = tuple(Interval(start=utc(max(int(a), ps) + base), end=utc(min(int(b), pe) + base),
                            seconds=min(int(b), pe) - max(int(a), ps))
                   for a, b in zip(sset.start[m].tolist(), sset.end[m].tolist()))
    return clock, ServiceTime(service_seconds=secs, month_seconds=pe - ps, window=win), inside
