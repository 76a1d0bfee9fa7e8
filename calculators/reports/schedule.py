"""The SLA schedule: every clause of a contract written out as plain sentences.

`schedule_document(lc, tool_version)` builds a `Document` from the loaded contract only:
every number in the text (counts, hostlists, thresholds, fees, allowances, worked
examples) is read or derived from the same model the calculators use, so the schedule
cannot drift from the terms the engine applies. The PDF and the Markdown are two renderings
of this one document.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from decimal import ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Any

from calculators.reports import rev11_terms
from calculators.reports import doc as d
from calculators.reports.fmt import CENT, count, money, pct, pct_terms, plural, spaced_hostlist, words
from slaschema import hostlist
from slaschema.loader import LoadedContract
from slaschema.models import SCOPES, Contract, Criterion, ServiceLevel
from slaschema.summary import monthly_fees
from slaschema.types import format_threshold, human_duration

MONTH_DAYS = (28, 30, 31)
RACK_TABLE_INLINE = 24          # more racks than this: the rack list moves to an appendix
SCOPE_WORD = {"node": "node", "rack": "rack", "cluster": "cluster", "site": "site"}
FORM_WORDS = {"future_invoice": "a credit against a future invoice",
              "same_invoice": "a deduction on the invoice for the month concerned",
              "refund": "a refund"}


def _hd(td: timedelta | None) -> str:
    return words(td)


def _hrs(days: int) -> int:
    return days * 24


class _Ctx:
    """Derived figures used across clauses (fees, unit sizes)."""

    def __init__(self, lc: LoadedContract) -> None:
        self.lc = lc
        self.m: Contract = lc.model
        self.t = lc.topology
        self.cur = self.m.contract.currency
        self.rack_sizes = self.t.nodes_per_rack()
        self.gpus = self.t.node_gpus

    def node_fee(self, node_idx: int, days: int = 30) -> Decimal:
        return self.m.pricing.fee(gpus=self.gpus[node_idx], nodes=1, hours=_hrs(days))

    def unit_fee(self, scope: str, unit: str, days: int = 30) -> Decimal:
        idx = self.t.node_index
        return sum((self.node_fee(idx[n], days) for n in self.t.nodes_of(scope, unit)), Decimal(0))

    def first(self, scope: str) -> str:
        return self.t.units(scope)[0]



@dataclass(frozen=True)
class _Clause:
    """A numbered clause: `key` names it for citation (`clause_numbers`)."""
    key: str
    text: str


def _size_words(sizes: list[int], noun: str) -> str:
    c = Counter(sizes)
    if len(c) == 1:
        return plural(sizes[0], noun)
    lo, hi = min(sizes), max(sizes)
    return f"{lo:,} to {hi:,} {noun}s"


def _allowance(month_seconds: int, below: Decimal) -> int:
    """Largest downtime (whole seconds) that keeps availability at or above `below`."""
    allowed = Decimal(month_seconds) * (Decimal(100) - below) / Decimal(100)
    return int(allowed.to_integral_value(ROUND_FLOOR))


def _avail(down_s: int, month_s: int) -> Decimal:
    return (Decimal(1) - Decimal(down_s) / Decimal(month_s)) * 100


# --- clauses -----------------------------------------------------------------------------

def _parties(c: _Ctx) -> list[d.Block]:
    info = c.m.contract
    out: list[d.Block] = [d.Heading("1. Parties, term and charges", 1, anchor="parties")]
    term = "no fixed term is stated"
    if info.effective:
        term = (f"these service levels apply from {info.effective.from_.isoformat()}"
                + (f" to {info.effective.to.isoformat()} inclusive" if info.effective.to else " with no end date"))
    ag = c.m.agreement
    master = ag.master if ag and ag.master else None
    out.append(_Clause("parties.scope", f"This schedule sets out the service levels that {info.provider} (the "
                       f"provider) commits to {info.customer} (the customer) under contract {info.id}"
                       + (f" ({info.title})" if info.title else "")
                       + (f", and forms part of {master}" if master else "") + f"; {term}."))
    if ag and ag.precedence:
        ranked = [("this schedule" if x.strip().lower() == "schedule" else x) for x in ag.precedence]
        out.append(_Clause("parties.precedence", "Order of precedence: where the documents of the agreement "
                           "conflict, the first of the following prevails: "
                           + "; ".join(f"({i}) {x}" for i, x in enumerate(ranked, start=1)) + "."))
    elif master:
        out.append(_Clause("parties.precedence", f"Order of precedence: this contract states none between this "
                           f"schedule and {master} (agreement.precedence)."))
    if _has_dst(info.timezone, info.effective.from_ if info.effective else None,
                info.effective.to if info.effective else None):
        months = (f"begin and end at local midnight in {info.timezone}, so a month with a daylight-saving change can "
                  "be an hour shorter or longer")
    else:
        months = (f"begin and end at midnight {info.timezone}" if info.timezone in ("UTC", "Etc/UTC") else
                  f"begin and end at local midnight in {info.timezone}, which has no daylight-saving change")
    out.append(d.Para(f"All amounts are in {c.cur}. All times are compared in UTC; calendar months, which are the "
                      f"measurement periods, {months}."))
    p = c.m.pricing
    fees = monthly_fees(c.lc)
    if p.per_gpu_hour is not None:
        out.append(d.Para(f"Charges are {money(p.per_gpu_hour, c.cur)} per GPU-hour. A node's monthly fee is its GPU "
                          f"count x {money(p.per_gpu_hour)} x the hours in the month; a rack's, cluster's or site's "
                          "fee is the sum of its nodes' fees."))
    else:
        out.append(d.Para(f"Charges are {money(p.per_node_month, c.cur)} per node and month; a rack's, cluster's or "
                          "site's fee is the sum of its nodes' fees."))
    out.append(d.Table(("Month length", "Hours", "Total monthly fee (" + c.cur + ")"), width_fraction=0.7,
                       rows=
                       tuple((f"{days} days", f"{_hrs(days):,}", money(fees[f'{days}d'])) for days in MONTH_DAYS),
                       align=("l", "r", "r"), widths=(2, 1, 2)))
    return out


def _has_dst(zone: str, start: date | None, end: date | None) -> bool:
    """Whether the zone's offset from UTC changes in the years of the term (this year and the
    next when the term is open): only then can a calendar month be an hour shorter or longer."""
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(zone)
    first = (start or date.today()).year
    last = end.year if end else first + 1
    for year in range(first, min(last, first + 50) + 1):
        offsets = {datetime(year, month, 1, tzinfo=tz).utcoffset() for month in range(1, 13)}
        if len(offsets) > 1:
            return True
    return False


def _definitions(c: _Ctx) -> tuple[list[d.Block], list[d.Block]]:
    t, m = c.t, c.m
    counts = t.counts()
    out: list[d.Block] = [d.Heading("2. Definitions", 1, anchor="definitions")]
    gpu_sizes = sorted(set(t.node_gpus))
    gpus_word = (plural(gpu_sizes[0], "GPU") if len(gpu_sizes) == 1
                 else f"{gpu_sizes[0]} to {gpu_sizes[-1]} GPUs")
    model = m.topology.gpu_model or "GPU"
    arch = m.topology.architecture
    tray = " (one compute tray of an NVL72 rack)" if arch in ("gb200-nvl72", "gb300-nvl72") else ""
    names = spaced_hostlist(hostlist.compress(t.nodes))
    listing = (f": {names}." if len(names) <= 400 else
               ("; Appendix A lists the nodes of every rack." if counts["racks"] > RACK_TABLE_INLINE
                else "; the rack table below lists the nodes of every rack."))
    out.append(d.Para(f"Node: one server{tray} with {gpus_word} ({model}). The service covers "
                      f"{count(counts['nodes'])} nodes with {count(counts['gpus'])} GPUs in total" + listing))
    out.append(d.Para(f"Rack: a named group of nodes; there are {plural(counts['racks'], 'rack')} of "
                      f"{_size_words(c.rack_sizes, 'node')} each"
                      + (f" ({', '.join(t.racks)})." if counts["racks"] <= RACK_TABLE_INLINE else
                         f" (listed in Appendix A).")))
    cl_parts = []
    for ci, cl in enumerate(t.clusters):
        racks = [r for ri, r in enumerate(t.racks) if t.rack_cluster[ri] == ci]
        n_nodes = len(t.nodes_of("cluster", cl))
        cl_parts.append(f"{cl} ({plural(len(racks), 'rack')}, {plural(n_nodes, 'node')}, site "
                        f"{t.sites[t.cluster_site[ci]]})")
    out.append(d.Para(f"Cluster: the racks that share a fabric; there {'is' if counts['clusters'] == 1 else 'are'} "
                      f"{plural(counts['clusters'], 'cluster')}: " + "; ".join(cl_parts) + "."))
    site_parts = [f"{s} ({plural(len(t.nodes_of('site', s)), 'node')})" for s in t.sites]
    out.append(d.Para(f"Site: a data-centre location; there {'is' if counts['sites'] == 1 else 'are'} "
                      f"{plural(counts['sites'], 'site')}: " + "; ".join(site_parts) + "."))
    out.append(d.Para("Unit: a node, rack, cluster or site. Incident: a record in the provider's incident log "
                      "naming a unit, a start and (once resolved) an end; times are half-open intervals "
                      "[start, end) at one-second resolution."))
    out.append(d.Para("Downtime: the time in a month during which a unit is down under clause 3, after the "
                      "exclusions of clause 4. Availability of a unit in a month = 1 - downtime / length of the "
                      "month, in percent; excluded time does not shorten the month. Availability exactly equal "
                      "to a threshold is not below it. Reports show availability truncated to four decimals, so a unit below a threshold never shows as the threshold."))
    appendix: list[d.Block] = []
    if t.racks:
        rows = []
        for ri, r in enumerate(t.racks):
            names = [t.nodes[i] for i in t.rack_nodes[ri]]
            ci = t.rack_cluster[ri]
            rows.append((r, t.clusters[ci], t.sites[t.cluster_site[ci]], hostlist.compress(names),
                         count(len(names)), count(sum(t.node_gpus[i] for i in t.rack_nodes[ri]))))
        table = d.Table(("Rack", "Cluster", "Site", "Nodes", "Node count", "GPUs"), tuple(rows),
                        align=("l", "l", "l", "l", "r", "r"), widths=(1.2, 1, 1, 3, 1, 0.8))
        if counts["racks"] <= RACK_TABLE_INLINE:
            out.append(table)
        else:
            appendix = [d.Heading("Appendix A. Racks and their nodes", 1, anchor="appendix.racks"), table]
    return out, appendix


def _downtime(c: _Ctx) -> list[d.Block]:
    dt = c.m.downtime
    out: list[d.Block] = [d.Heading("3. What counts as down", 1, anchor="downtime")]
    out.append(d.Para("An incident against a site makes every cluster, rack and node of that site down for the "
                      "incident's counted time; an incident against a cluster does the same for its racks and "
                      "nodes; an incident against a rack for its nodes. An incident that is still open runs "
                      "until the end of the period reviewed and is marked open in every report."))
    deg = {"ignore": "An incident marked degraded (capacity reduced but the node in service) is not downtime.",
           "down": "An incident marked degraded counts exactly like a full outage.",
           "proportional": ("An incident marked degraded costs the node the share of its capacity that is lost "
                            "(GPUs affected / GPUs of the node) for its duration; at any moment a node's loss is "
                            "the largest of its active incidents (a full outage = 1). A degraded node is not "
                            "counted as down by the rack and cluster rules.")}[dt.degraded]
    out.append(d.Heading("3.1 Degraded service", 2, anchor="downtime.degraded"))
    out.append(d.Para(deg))
    if dt.degraded == "proportional":
        gpus = c.gpus[0]
        lost = 1
        ex_h = 10
        out.append(d.Para(f"Example: a node with {gpus} GPUs that has {lost} GPU unavailable for {ex_h} hours "
                          f"accrues {ex_h} x {lost}/{gpus} = "
                          f"{(Decimal(ex_h * lost) / gpus).quantize(CENT, ROUND_HALF_UP)} hours of downtime."))
    out.append(d.Heading("3.2 Minimum outage", 2, anchor="downtime.min_outage"))
    if dt.min_outage > timedelta(0):
        mo = _hd(dt.min_outage)
        out.append(d.Para(f"Overlapping or touching outages of one unit are first merged into one. A merged outage "
                          f"shorter than {mo} does not count. The rule applies to the whole merged outage before "
                          "it is split at month boundaries, so an outage that spans midnight at the end of a month "
                          "counts in both months."))
    else:
        out.append(d.Para("Overlapping or touching outages of one unit are merged into one; every outage counts, "
                          "however short."))
    out.append(d.Heading("3.3 Racks", 2, anchor="downtime.rack"))
    rr = dt.rack
    if rr is None:
        out.append(d.Para("A rack is down only while an incident names the rack, its cluster or its site; node "
                          "outages never make a rack down."))
    else:
        k = rr.down_when_nodes_down
        sizes = c.rack_sizes
        n_text = (f"{k} of {sizes[0]}" if len(set(sizes)) == 1
                  else f"{k} of its nodes (racks have {min(sizes)} to {max(sizes)})")
        out.append(d.Para(f"A rack is down while an incident names the rack, its cluster or its site, or while at "
                          f"least {n_text} nodes are down at the same moment (after the minimum-outage rule). "
                          "The rack's down time is merged and the minimum-outage rule applied to it as well."))
        if rr.nodes_follow_rack:
            out.append(d.Para("While a rack is down, every node in it counts as down too, including nodes that "
                              "are running."))
        else:
            out.append(d.Para("A rack being down does not add downtime to its nodes; each node keeps its own "
                              "downtime."))
        out += _rack_example(c, k, rr.nodes_follow_rack)
    out.append(d.Heading("3.4 Clusters and sites", 2, anchor="downtime.cluster"))
    cr = dt.cluster
    if cr is None:
        out.append(d.Para("A cluster is down only while an incident names the cluster or its site."))
    else:
        thr = cr.down_when_available_below
        parts = []
        for cl in c.t.clusters:
            n = len(c.t.nodes_of("cluster", cl))
            need = int((Decimal(n) * (Decimal(100) - thr) / 100).to_integral_value(ROUND_FLOOR)) + 1
            parts.append(f"{cl}: {need} of {n} nodes down")
        extra = ""
        if dt.rack and dt.rack.nodes_follow_rack and len(set(c.rack_sizes)) == 1:
            extra = (f" A rack that is down counts all {c.rack_sizes[0]} of its nodes as down for this rule.")
        out.append(d.Para(f"A cluster is down while an incident names the cluster or its site, or while fewer than "
                          f"{pct_terms(thr)} of its nodes are up. That is the case from "
                          + "; ".join(parts) + "." + extra))
        if cr.nodes_follow_cluster:
            out.append(d.Para("While a cluster is down, every node in it counts as down too."))
    out.append(d.Para("A site is down while an incident names the site, or while all of its clusters are down."))
    extra = rev11_terms.downtime_clauses(c.lc)
    if extra:
        out.append(d.Heading("3.5 Service time and measurement", 2, anchor="downtime.service"))
        out += [d.Para(t) for t in extra]
    return out


def _rack_example(c: _Ctx, k: int, follow: bool) -> list[d.Block]:
    t = c.t
    rack = t.racks[0]
    names = [t.nodes[i] for i in t.rack_nodes[0]]
    n = len(names)
    mo = int(c.m.downtime.min_outage.total_seconds())
    # rack outage of 40 minutes, or longer when the minimum outage is longer
    rack_min = max(40, (2 * mo + 59) // 60)
    base = 10 * 60                                              # 10:00
    before = names[:k - 1]
    kth = names[k - 1]
    def hm(mins: int) -> str:
        return f"{mins // 60:02d}:{mins % 60:02d}"
    s1, e1 = base, base + 120 + rack_min
    s2, e2 = base + 60, base + 60 + rack_min
    lines: list[str] = []
    if before:
        lines.append(f"{hostlist.compress(before)} ({plural(len(before), 'node')}) down from {hm(s1)} to {hm(e1)};")
    lines.append(f"{kth} down from {hm(s2)} to {hm(e2)}.")
    month_s = 30 * 86400
    a = _avail(rack_min * 60, month_s).quantize(Decimal("0.0001"), ROUND_DOWN)
    text = (f"Worked example (rack {rack}, {n} nodes, rule {k} of {n}): on one day in a 30-day month, "
            + " ".join(lines)
            + f" The rack is down from {hm(s2)} to {hm(e2)}, {rack_min} minutes, because {k} of its nodes are "
              f"down together only then")
    if k == 1:
        text = (f"Worked example (rack {rack}, {n} nodes, rule 1 of {n}): on one day in a 30-day month, {kth} is "
                f"down from {hm(s2)} to {hm(e2)}. The rack is down for the same {rack_min} minutes, because a "
                "single node down takes the rack down")
    text += (f". Its availability for the month is 1 - {rack_min * 60:,} s / {month_s:,} s = {a}%.")
    if follow:
        text += (f" Because nodes follow the rack, each of the {n} nodes also counts those {rack_min} minutes as "
                 "down, in addition to any downtime of its own outside that window.")
    if k > 1:
        text += (f" Had only {k - 1} of its nodes been down at once, the rack would not have been down at all.")
    return [d.Para(text, "small")]


def _exclusions(c: _Ctx) -> list[d.Block]:
    ex = c.m.exclusions
    out: list[d.Block] = [d.Heading("4. Exclusions", 1, anchor="exclusions")]
    if not ex:
        out.append(d.Para("There are no exclusions: every incident counts in full."))
        return out
    out.append(d.Para("Each incident carries a category. Incidents of category unplanned, and of any category not "
                      "listed below, count in full (a category not listed is flagged in reports). Time of an "
                      "incident in a listed category is excluded from downtime, subject to the notice and the "
                      "monthly cap below. Excluded time is reported separately; it never makes a unit down, never "
                      "counts towards the rack or cluster rules and does not shorten the month."))
    rows = []
    for name, e in ex.items():
        rows.append((name.replace("_", " "), e.definition or "—",
                     f"{_hd(e.notice)} before the start" if e.notice else "none",
                     _hd(e.max_per_month) if e.max_per_month else "no cap"))
    out.append(d.Table(("Category", "Definition", "Notice required", "Excluded at most, per unit and month"),
                       tuple(rows), widths=(1.2, 3.4, 1.4, 1.6)))
    noticed = [(n, e) for n, e in ex.items() if e.notice]
    if noticed:
        out.append(d.Para("Notice: an exclusion with a notice period holds only if the provider gave notice at least "
                          "that long before the incident started ("
                          + "; ".join(f"{n.replace('_', ' ')}: {_hd(e.notice)}" for n, e in noticed)
                          + "). With notice missing or late the incident counts in full and is flagged."))
    capped = [(n, e) for n, e in ex.items() if e.max_per_month]
    if capped:
        n0, e0 = capped[0]
        cap_min = int(e0.max_per_month.total_seconds()) // 60
        over = cap_min + 120
        out.append(d.Para("Caps: excluded time of a category is capped per unit and month and used up in "
                          "chronological order; time beyond the cap counts as downtime and is flagged. Example: "
                          f"{n0.replace('_', ' ')} with due notice lasting {words(timedelta(minutes=over))} "
                          f"on a node that has used none of its {_hd(e0.max_per_month)} this month: "
                          f"{_hd(e0.max_per_month)} is excluded and {words(timedelta(minutes=over - cap_min))} "
                          "counts as downtime."))
    return out


def _tier_rows(level: ServiceLevel, c: _Ctx) -> list[tuple[str, ...]]:
    rows = []
    assert level.credits is not None
    for tier in level.credits:
        allow = [human_duration(timedelta(seconds=_allowance(days * 86400, tier.below))) for days in MONTH_DAYS]
        rows.append((f"below {pct_terms(tier.below)}", pct_terms(tier.credit), *allow))
    return rows


def _service_levels(c: _Ctx) -> list[d.Block]:
    out: list[d.Block] = [d.Heading("5. Service levels and credits", 1, anchor="service_levels")]
    items = c.m.service_levels.items()
    if not items:
        remedy = "; its remedy is the hours not charged (section 6)" if c.m.credits.not_charged is not None else ""
        out.append(d.Para(f"The contract sets no monthly availability target and no service credits{remedy}."))
        return out
    scopes = ", ".join(f"{s} ({pct_terms(l.effective_target)})" for s, l in items)
    out.append(d.Para(f"The provider commits to a monthly availability target for each of these scopes: {scopes}. "
                      "Each unit of a scope is measured on its own and earns the customer a service credit, a share of "
                      "that unit's fee for the month, as set out for its scope below."))
    for i, (scope, level) in enumerate(items, start=1):
        unit = c.first(scope)
        n_units = len(c.t.units(scope))
        fee = c.unit_fee(scope, unit)
        out.append(d.Heading(f"5.{i} {scope.capitalize()} availability", 2, anchor=scope))
        target = level.effective_target
        allow30 = words(timedelta(seconds=_allowance(30 * 86400, target)))
        who = f"each of the {plural(n_units, scope)} is" if n_units > 1 else f"{scope} {unit} is"
        out.append(d.Para(f"Target: {who} available at least {pct_terms(target)} "
                          f"of every month (at most {allow30} of downtime in a 30-day month). "
                          f"Monthly fee of {scope} {unit} in a 30-day month: {money(fee, c.cur)}."))
        if level.credits:
            out.append(d.Table(("Availability in the month", "Credit (% of unit fee)",
                                "Downtime allowed before the tier: 28 d", "30 d", "31 d"),
                               tuple(_tier_rows(level, c)), align=("l", "r", "r", "r", "r"),
                               widths=(1.6, 1.4, 1.9, 0.9, 0.9),
                               caption="A unit earns the largest credit among the tiers whose threshold is above its "
                                       "availability; downtime up to the figure shown keeps it at or above the "
                                       "threshold."))
            first = level.credits[0]
            down = _allowance(30 * 86400, first.below) + 60
            avail = _avail(down, 30 * 86400)
            credit_pct = max((t.credit for t in level.credits if t.below > avail), default=Decimal(0))
            amount = (fee * credit_pct / 100).quantize(CENT, ROUND_HALF_UP)
            out.append(d.Para(f"Example: {scope} {unit} down {words(timedelta(seconds=down))} in a 30-day "
                              f"month has availability {pct(avail)}, below {pct_terms(first.below)}, and earns "
                              f"{pct_terms(credit_pct)} of {money(fee, c.cur)} = {money(amount, c.cur)}.", "small"))
        else:
            assert level.pro_rata is not None
            mult = level.pro_rata.multiplier
            hrs = 40
            hourly = fee / _hrs(30)
            amount = min(fee, hourly * hrs * mult).quantize(CENT, ROUND_HALF_UP)
            out.append(d.Para(f"Credit (pro rata): for every hour of downtime in the month, "
                              f"{rev11_terms.pro_rata_basis(level.pro_rata.only_below_target)}: "
                              f"downtime hours x the {scope}'s monthly fee / hours in the month "
                              f"x {mult}, never more than the {scope}'s monthly fee."))
            out.append(d.Para(f"Example: {scope} {unit} down {hrs} hours in a 30-day month (720 hours): {hrs} x "
                              f"{money(fee)} / 720 x {mult} = {money(amount, c.cur)}.", "small"))
    return out


def _credit_terms(c: _Ctx) -> list[d.Block]:
    cp = c.m.credits
    fees = monthly_fees(c.lc)
    out: list[d.Block] = [d.Heading("6. How credits are settled", 1, anchor="credits")]
    out.append(_Clause("credits.spread", "Each scope's credit for a unit is spread over the nodes the unit covers in "
                       "proportion to their fees. " + ("Per node, the largest of the amounts from the different scopes "
                                                       "applies (credits do not stack)."
                                                       if cp.stacking == "max" else
                                                       "Per node, the amounts from the different scopes are added "
                                                       "(credits stack).")
                       + " A node's credit never exceeds its monthly fee."))
    out.append(_Clause("credits.rounding", "Each node's monthly credit is rounded half-up to the cent; the month's "
                       "total is the sum of the rounded node credits."))
    if cp.cap is not None:
        out.append(_Clause("credits.cap", f"Cap: the total credit for a month is at most {pct_terms(cp.cap)} of that "
                           f"month's total fee ({money(Decimal(fees['30d']) * cp.cap / 100, c.cur)} in a 30-day "
                           "month)."))
    else:
        out.append(_Clause("credits.cap", "There is no cap on the total credit for a month."))
    if cp.minimum_strict:
        out.append(_Clause("credits.minimum", f"Minimum: a month's credit is issued only if its total (after the cap) "
                           f"is more than {money(cp.minimum_amount, c.cur)}; a total of exactly that amount or less "
                           "gives no credit."))
    elif cp.minimum_amount > 0:
        out.append(_Clause("credits.minimum", f"Minimum: a month whose total credit (after the cap) is below "
                           f"{money(cp.minimum_amount, c.cur)} gives no credit."))
    out += _claims(c)
    out.append(_Clause("credits.form", f"Form: credits are given as {FORM_WORDS[cp.form]}."))
    for i, text in enumerate(rev11_terms.settlement_clauses(c.lc)):
        out.append(_Clause(f"credits.not_charged{'' if i == 0 else f'.{i}'}", text))
    return out


def _window_words(window: Any) -> str:
    """`within 30 days after the end of that month`, or for a calendar-month window
    `by the end of the 2nd calendar month after that month`."""
    if isinstance(window, timedelta):
        days, rest = divmod(int(window.total_seconds()), 86400)
        exact = ""
        if days and not rest:           # what is computed: exact hours from the month's end, not calendar days
            exact = f" (counted as {days} x 24 hours)" if days > 1 else " (counted as 24 hours)"
        return f"within {_hd(window)}{exact} after the end of that month"
    n = int(getattr(window, "months_after"))
    if n == 1:
        return "by the end of the calendar month after that month"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"by the end of the {n}{suffix} calendar month after that month"


def _claims(c: _Ctx) -> list[d.Block]:
    """The claims procedure as the contract states it: window, where to, evidence
    (`credits.claim_window`, `credits.claim`); what the contract leaves open is said to be open."""
    cp = c.m.credits
    if cp.claim_window is None:
        return [_Clause("credits.claims", "No claim is needed: credits are issued on the service review (clause "
                        "10) without the customer asking for them.")]
    claim = getattr(cp, "claim", None)
    send_to = getattr(claim, "send_to", None)
    evidence = list(getattr(claim, "evidence", None) or [])
    ag = c.m.agreement
    if send_to:
        where = f"to {send_to}"
    else:
        notices = f"under {ag.master}" if ag and ag.master else "under the agreement"
        where = f"to the provider as a notice {notices} (this contract names no address for claims)"
    out: list[d.Block] = [
        _Clause("credits.claims", f"Claims: the customer claims a month's credit {where}, "
                f"{_window_words(cp.claim_window)}; a credit not claimed by then lapses."),
        _Clause("credits.claim_evidence", ("Evidence: a claim comes with " + "; ".join(evidence) + ".") if evidence
                else "Evidence: this contract lists no evidence a claim must carry."),
        d.Para("A claim can cite the clauses of this schedule by their numbers and identify the terms by the "
               "SHA-256 in clause 11.", "note"),
    ]
    return out


def _support(c: _Ctx) -> list[d.Block]:
    s = c.m.support
    out: list[d.Block] = [d.Heading("7. Support", 1, anchor="support")]
    sentences = []
    if s.detection is not None:
        sentences.append(f"The provider detects a fault within {_hd(s.detection)} of its start (start to the "
                         "incident's detected time).")
    if not sentences and s.response is None and s.restore is None:
        out.append(d.Para("No support targets are set."))
    for x in sentences:
        out.append(d.Para(x))
    if s.response is not None:
        rows = [(sev.upper().replace("SEV", "Severity "), _hd(getattr(s.response, sev)))
                for sev in ("sev1", "sev2", "sev3", "sev4") if getattr(s.response, sev) is not None]
        out.append(d.Para("Response: from the customer's report (or the fault's start when the provider found it "
                          "first) to the provider's first response, by severity:"))
        out.append(d.Table(("Severity", "Response within"), tuple(rows), align=("l", "r"), widths=(1, 1),
                           width_fraction=0.5))
    if s.restore is not None:
        rows = [(sc, _hd(getattr(s.restore, sc))) for sc in SCOPES
                if getattr(s.restore, sc) is not None]
        out.append(d.Para("Restore: from the fault's start until the capacity is back (by a hot spare or a repair), "
                          "by the scope of the incident:"))
        out.append(d.Table(("Scope", "Restore within"), tuple(rows), align=("l", "r"), widths=(1, 1),
                           width_fraction=0.5))
    rights = []
    if s.hot_spares is not None:
        hs = s.hot_spares
        rights.append(f"The provider keeps {plural(hs.nodes, 'spare node')} ready"
                      + (f" and swaps a failed node within {_hd(hs.swap_within)}." if hs.swap_within else "."))
    rights.append("The customer may export logs and telemetry of its nodes." if s.log_export else
                  "Log and telemetry export is not part of this schedule.")
    rights.append("The customer may run its own availability monitoring against its nodes." if s.customer_monitoring
                  else "Customer-run availability monitoring is not part of this schedule.")
    out += [_Clause(f"support.right{i}", r) for i, r in enumerate(rights, start=1)]
    out.append(d.Para("Support figures are reported in every review; they earn credits only where this schedule "
                      "says so.", "note"))
    return out


def _threshold(cr: Criterion) -> str:
    """The bounds in the metric's unit (GB/s or Gb/s, never left to a metric name such as
    read_gbps); a metric without a known unit (custom.command) is named instead."""
    from slaschema.checks import METRIC_UNITS

    unit = "" if cr.metric is None else f" {METRIC_UNITS.get(cr.check, {}).get(cr.metric) or cr.metric}"

    def bound(v: Any) -> str:
        return str(format_threshold(v)) + ("" if isinstance(v, timedelta) else unit)

    parts = []
    if cr.min is not None:
        parts.append(f">= {bound(cr.min)}")
    if cr.max is not None:
        parts.append(f"<= {bound(cr.max)}")
    if cr.warn_below is not None:
        parts.append(f"warn below {format_threshold(cr.warn_below)}")
    if cr.warn_above is not None:
        parts.append(f"warn above {format_threshold(cr.warn_above)}")
    if cr.expect:
        parts.append("; ".join(f"{k} = {_plain(v)}" for k, v in cr.expect.items()))
    return "; ".join(parts) if parts else "passes"


def _plain(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _acceptance(c: _Ctx) -> list[d.Block]:
    a = c.m.acceptance
    out: list[d.Block] = [d.Heading("8. Acceptance", 1, anchor="acceptance")]
    if a.deadline:
        out.append(d.Para(f"The provider hands the cluster over ready for acceptance by {a.deadline.isoformat()}. "
                          "The customer accepts it when every criterion below passes on every node it applies to."))
    if a.burn_in is not None:
        b = a.burn_in
        text = (f"Burn-in: all GPUs run under load for {_hd(b.duration)} with at most "
                f"{plural(b.max_xid_events, 'Xid event')}")
        if b.max_throttle_pct is not None:
            text += f" and at most {pct_terms(b.max_throttle_pct)} of samples throttled"
        out.append(d.Para(text + "."))
    if a.criteria:
        rows = []
        for cr in a.criteria:
            params = ", ".join(f"{k}={_plain(v)}" for k, v in (cr.params or {}).items())
            rows.append((cr.id, cr.check + (f" ({params})" if params else ""), cr.metric or "—", _threshold(cr),
                         cr.severity, cr.source or "—"))
        out.append(d.Table(("Criterion", "Check", "Metric", "Threshold", "Severity", "Source of the threshold"),
                           tuple(rows), widths=(1.6, 2.1, 1.3, 1.6, 0.8, 2.1), font_size=7))
    else:
        out.append(d.Para("No acceptance criteria are set."))
    r = a.remedies
    if r is not None:
        fees = monthly_fees(c.lc)
        if r.credit_per_day_late is not None:
            per_day = Decimal(fees["30d"]) * r.credit_per_day_late / 100
            out.append(d.Para(f"Late acceptance: for each whole day between the deadline and the day the cluster is "
                              f"accepted, the customer earns {pct_terms(r.credit_per_day_late)} of the monthly fee "
                              f"({money(per_day, c.cur)} per day in a 30-day month)."))
        if r.termination_right_after is not None:
            out.append(d.Para(f"If the cluster is not accepted within {_hd(r.termination_right_after)} after the "
                              "deadline, the customer may terminate the contract."))
    return out


def _termination(c: _Ctx) -> list[d.Block]:
    tm = c.m.termination
    out: list[d.Block] = [d.Heading("9. Termination rights", 1, anchor="termination")]
    items = []
    if tm.chronic is not None:
        ch = tm.chronic
        items.append(f"Chronic failure: if any unit misses its availability target in {ch.months_below_target} of "
                     f"any {ch.within_months} consecutive months, the customer may terminate the contract. Each "
                     "review states how close every unit is to this.")
    a = c.m.acceptance
    if a.remedies and a.remedies.termination_right_after is not None:
        items.append(f"Acceptance delay: acceptance more than {_hd(a.remedies.termination_right_after)} after "
                     f"{a.deadline.isoformat() if a.deadline else 'the deadline'} gives the customer a right to "
                     "terminate.")
    if tm.notice is not None:
        items.append(f"Notice: termination takes effect {_hd(tm.notice)} after written notice.")
    if tm.exit_assistance is not None:
        items.append(f"Exit assistance: the provider assists with the customer's exit for {_hd(tm.exit_assistance)}.")
    if not items:
        items.append("This schedule adds no termination rights.")
    out += [_Clause(f"termination.{i}", x) for i, x in enumerate(items, start=1)]
    return out


def _review(c: _Ctx) -> list[d.Block]:
    cad = c.m.review.cadence
    text = ("Provider and customer review the service every month" if cad == "monthly" else
            "Provider and customer review the service every quarter; each month of the quarter is computed and "
            "shown on its own")
    return [d.Heading("10. Service review", 1, anchor="review"),
            d.Para(text + ", from the provider's incident log: availability per unit against target, credits "
                          "owed, support compliance and every incident with its counted and excluded time.")]


def _attachment_name(c: _Ctx) -> str:
    return f"{c.m.contract.id}.yaml"


def _identification(c: _Ctx, version: str) -> list[d.Block]:
    info = c.m.contract
    ag = c.m.agreement
    revs = c.m.revisions
    out: list[d.Block] = [d.Heading("11. Identification of these terms", 1, anchor="identification")]
    attached = (f"The machine-readable contract {_attachment_name(c)} is attached to this PDF as an embedded file. "
                if c.lc.raw else "")
    out.append(_Clause("identification.file", "This schedule is generated from the machine-readable contract and "
                       "states its terms in words. " + attached + "Both parties can check that they hold the same "
                       "terms by comparing the SHA-256 printed at the foot of every page with that of their own copy "
                       "of the file."))
    kv = [("Contract", info.id)]
    if revs:
        kv.append(("Revision", f"{revs[-1].revision} of {revs[-1].date.isoformat()}"))
    if c.lc.raw:
        kv.append(("Attached file", _attachment_name(c)))
    kv += [("SHA-256", c.lc.sha256), ("Generated by", f"slakit {version}")]
    out.append(d.KeyValues(tuple(kv)))
    if revs:
        out.append(_Clause("identification.revisions", f"These terms are revision {revs[-1].revision}; the "
                           "amendment history below lists every revision agreed, oldest first."))
        out.append(d.Table(("Revision", "Date", "What changed"),
                           tuple((r.revision, r.date.isoformat(), r.summary) for r in revs),
                           widths=(1, 1.2, 5), nowrap=(0, 1)))
    signed = ag.signed if ag else None
    if signed is not None:
        out.append(_Clause("identification.status", f"The parties signed these terms on {signed.isoformat()}."))
    else:
        out.append(_Clause("identification.status", "DRAFT: these terms are not signed. The schedule is marked "
                           "DRAFT on every page until the contract records the date both parties signed "
                           "(agreement.signed)."))
    sig = ag.signatories if ag else None

    def person(party: str) -> tuple[str, str]:
        who = getattr(sig, party, None) if sig else None
        return (who.name, who.title) if who else ("", "")

    rows = []
    for label, party, company in (("Provider", "provider", info.provider), ("Customer", "customer", info.customer)):
        name, title = person(party)
        rows.append((f"{label}: {company}", name, title, "", signed.isoformat() if signed else ""))
    out.append(d.Table(("Party", "Name", "Title", "Signature", "Date"), tuple(rows),
                       widths=(2, 1.6, 1.6, 2, 1), min_row_height=30))
    return out


def _number(blocks: list[Any]) -> tuple[list[d.Block], dict[str, str]]:
    """Number the clauses: sections and subsections keep the number in their heading; in a
    section without subsections every clause (and every plain paragraph) becomes N.1, N.2 ...;
    a clause inside a numbered subsection is cited by the subsection's number.

    Returns the blocks and the citation of every key (heading anchors and clause keys)."""
    numbers: dict[str, str] = {}
    out: list[d.Block] = []
    i = 0
    while i < len(blocks):
        b = blocks[i]
        if not (isinstance(b, d.Heading) and b.level == 1):
            out.append(d.Para(b.text) if isinstance(b, _Clause) else b)
            i += 1
            continue
        j = i + 1
        while j < len(blocks) and not (isinstance(blocks[j], d.Heading) and blocks[j].level == 1):
            j += 1
        section = b.text.split(" ", 1)[0].rstrip(".")
        if b.anchor:
            numbers[b.anchor] = section
        out.append(b)
        body = blocks[i + 1:j]
        has_sub = any(isinstance(x, d.Heading) and x.level == 2 for x in body)
        k = 0
        current = section
        for x in body:
            if isinstance(x, d.Heading):
                if x.level == 2:
                    current = x.text.split(" ", 1)[0]
                    if x.anchor:
                        numbers[x.anchor] = current
                out.append(x)
            elif isinstance(x, _Clause):
                if has_sub:
                    numbers[x.key] = current
                    out.append(d.Para(x.text))
                else:
                    k += 1
                    numbers[x.key] = f"{section}.{k}"
                    out.append(d.Para(f"{section}.{k} {x.text}"))
            elif isinstance(x, d.Para) and x.style == "body" and not has_sub and section.isdigit():
                k += 1
                out.append(d.Para(f"{section}.{k} {x.text}"))
            else:
                out.append(x)
        i = j
    return out, numbers


def _blocks(c: _Ctx, tool_version: str) -> tuple[list[d.Block], dict[str, str]]:
    definitions, appendix = _definitions(c)
    blocks: list[Any] = []
    blocks += _parties(c)
    blocks += definitions
    blocks += _downtime(c)
    blocks += _exclusions(c)
    blocks += _service_levels(c)
    blocks += _credit_terms(c)
    blocks += _support(c)
    blocks += _acceptance(c)
    blocks += _termination(c)
    blocks += _review(c)
    blocks += _identification(c, tool_version)
    blocks += appendix
    return _number(blocks)


def clause_numbers(lc: LoadedContract) -> dict[str, str]:
    """The number under which the schedule of `lc` states each clause, for citations (a claim
    letter cites the same numbers): section keys (`parties`, `definitions`, `downtime`,
    `exclusions`, `service_levels`, `credits`, `support`, `acceptance`, `termination`,
    `review`, `identification`), subsections (`downtime.degraded`, `downtime.min_outage`,
    `downtime.rack`, `downtime.cluster`, and each scope with a service level: `node`,
    `rack` ...) and clauses (`credits.spread`, `credits.rounding`, `credits.cap`,
    `credits.minimum`, `credits.claims`, `credits.claim_evidence`,
    `credits.form`, `parties.scope`, `parties.precedence`, `identification.status` ...):
    e.g. {"credits": "6", "credits.claims": "6.3", "node": "5.1"}."""
    return _blocks(_Ctx(lc), "")[1]


def created_date(lc: LoadedContract) -> date:
    """The schedule's date (the PDF creation date unless SOURCE_DATE_EPOCH is set): the date
    of the current revision, else the signature date, else the start of the term, else today
    (UTC)."""
    m = lc.model
    if m.revisions:
        return m.revisions[-1].date
    if m.agreement and m.agreement.signed:
        return m.agreement.signed
    if m.contract.effective:
        return m.contract.effective.from_
    return datetime.now(timezone.utc).date()


def schedule_document(lc: LoadedContract, tool_version: str) -> d.Document:
    c = _Ctx(lc)
    info = c.m.contract
    blocks, _numbers = _blocks(c, tool_version)
    counts = lc.topology.counts()
    ag = c.m.agreement
    signed = ag.signed if ag else None
    cover = [("Contract", info.id), ("Provider", info.provider), ("Customer", info.customer)]
    if ag and ag.master:
        cover.append(("Part of", ag.master))
    if c.m.revisions:
        r = c.m.revisions[-1]
        cover.append(("Revision", f"{r.revision} of {r.date.isoformat()}"))
    cover.append(("Status", f"signed on {signed.isoformat()}" if signed else "DRAFT (not signed)"))
    if info.effective:
        cover.append(("Term", f"{info.effective.from_.isoformat()} to "
                              f"{info.effective.to.isoformat() if info.effective.to else 'open'}"))
    cover += [("Scope of service", f"{count(counts['nodes'])} nodes, {count(counts['gpus'])} GPUs, "
                                   f"{plural(counts['racks'], 'rack')}, {plural(counts['clusters'], 'cluster')}, "
                                   f"{plural(counts['sites'], 'site')}"),
              ("SHA-256", lc.sha256), ("Generated by", f"slakit {tool_version}")]
    embedded = ()
    if lc.raw:
        embedded = (d.EmbeddedFile(_attachment_name(c), lc.raw, f"Machine-readable contract {info.id}, SHA-256 "
                                                                 f"{lc.sha256}", "application/yaml"),)
    return d.Document(title=info.title or f"Service level schedule — {info.id}",
                      subtitle=f"Service level schedule for contract {info.id}",
                      footer=f"{info.id} · contract SHA-256 {lc.sha256} · slakit {tool_version}",
                      blocks=tuple(blocks), cover=tuple(cover), keywords=(info.id, lc.sha256),
                      lang=info.language, watermark=None if signed else "DRAFT", created=created_date(lc),
                      embedded=embedded)
