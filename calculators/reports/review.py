"""The SLA review: a credits `Result` (plus `review_extras`) as a `Document`.

`review_document(...)` only selects, sorts, counts and formats figures that the engine
computed (`calculators.engine.compute(..., incidents=True)`: the typed records of its
`Result`, `calculators.result_records`, and the per-incident figures of the same run,
arranged by `review_extras`); it never applies an SLA rule itself. Summaries come first; long lists
(every node's credit, the incident register) go to appendices, and the register is cut at
`register_limit` rows in the document with the full register written as a CSV attachment.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from calculators.reports import rev11_terms
from calculators.reports import doc as d
from calculators.reports.claims_text import cover_claim_item, local_instant, month_claim_blocks, review_claim_blocks
from calculators.reports.review_model import Register, RegisterRow, ReviewExtras
from calculators.reports.fmt import count, dec, duration, hours, minutes, money, pct, plural, spaced_hostlist
from calculators.result_records import MonthTotals, NodeCredit, UnitMonth
from calculators.support_records import AcceptanceDelay, ChronicUnit, SupportFigure
from slaschema.loader import LoadedContract
from slaschema.models import SCOPES

if TYPE_CHECKING:
    from calculators.result import Result

UNIT_TABLE_MAX = 30         # scopes with more units show a summary and the worst units
WORST = 12
REGISTER_LIMIT = 1000
FORM_WORDS = {"future_invoice": "a credit on a future invoice", "same_invoice": "a deduction on this period's invoice",
              "refund": "a refund"}
FLAG_WORDS = {"notice_not_met": "notice missing or late", "exclusion_cap_exceeded": "past the exclusion cap",
              "unknown_category": "category not in the contract", "open_incident": "still open"}


@dataclass(frozen=True)
class ReviewInputs:
    """What the cover names: the files the figures come from and the tool that built them."""
    contract_file: str
    contract_sha256: str
    incidents_file: str
    incidents_sha256: str
    tool_version: str
    period_label: str                      # "2027-Q1" or "2027-02"


@dataclass(frozen=True)
class Attachment:
    name: str                               # suffix for the file written next to the report
    data: bytes
    description: str


@dataclass(frozen=True)
class _Month:
    """One reviewed month: its totals and its unit and node records (built once per review)."""
    totals: MonthTotals
    units: list[UnitMonth]
    nodes: list[NodeCredit]

    @property
    def label(self) -> str:
        return self.totals.period


def _months(result: Result) -> list[_Month]:
    return [_Month(t, p.unit_months(), p.node_credits()) for t, p in zip(result.month_totals(), result.periods)]


def _units_by_scope(month: _Month) -> dict[str, list[UnitMonth]]:
    out: dict[str, list[UnitMonth]] = {}
    for u in month.units:
        out.setdefault(u.scope, []).append(u)
    return out


def _avail_num(u: UnitMonth) -> float:
    return float(u.availability)


def _target_text(t: Decimal) -> str:
    return f"{dec(t).normalize():f}%"


def _more(first: list[str], total: int) -> str:
    """`a, b, c and N more` from the first few ids and the total count."""
    return ", ".join(first) + (f" and {total - len(first):,} more" if total > len(first) else "")


def _ids(ids: list[str], limit: int = 8) -> str:
    if not ids:
        return "—"
    if len(ids) <= limit:
        return ", ".join(ids)
    return ", ".join(ids[:limit]) + f" and {len(ids) - limit:,} more"


# --- sections ---------------------------------------------------------------------------

def _summary(lc: LoadedContract, result: Result, periods: list[_Month], extras: ReviewExtras, months: list[str],
             app: dict[str, str]) -> list[d.Block]:
    cur = result.currency
    cp = lc.model.credits
    totals = [p.totals for p in periods]
    total = sum((t.credit_total for t in totals), Decimal(0))
    out: list[d.Block] = [d.Heading("1. Executive summary", 1)]
    out.append(d.Para(f"Credits owed for {', '.join(months)}: {money(total, cur)} after the cap and the minimum, "
                      f"given as {FORM_WORDS.get(cp.form, cp.form)}.", "strong"))
    running = [t for t in totals if t.end.timestamp() > result.as_of]
    if running:
        from calculators.reports.claims_text import local_instant

        zone = result.timezone
        names = ", ".join(t.period for t in running)
        many = len(running) > 1
        out.append(d.Para(f"{names} had not ended as of {local_instant(result.as_of, zone)}: "
                          f"{'their' if many else 'its'} figures are the month so far, not final. A claim covers a "
                          f"whole month, so {'they' if many else 'it'} can be claimed only once {'they have' if many else 'it has'} "
                          "ended ("
                          + "; ".join(f"{t.period} ends {local_instant(int(t.end.timestamp()), zone)}"
                                      for t in running) + ").", "warning"))
    remedy = rev11_terms.remedy_total(totals)
    if remedy is not None:
        nc = sum((t.not_charged_total for t in totals), Decimal(0))
        out.append(d.Para(f"Hours not charged: {money(nc, cur)}, a billing adjustment next to the credit; remedy in "
                          f"all (credit owed + hours not charged): {money(remedy, cur)}."))
    claim_blocks = review_claim_blocks(result)
    rows = []
    for t in totals:
        notes = []
        if t.cap_applied:
            notes.append(f"cap of {money(t.cap_amount)} applied")
        if t.minimum_applied:
            notes.append(rev11_terms.minimum_words(t.minimum_rule == "more_than", t.minimum))
        rows.append((t.period, money(t.fee_total), money(t.credit_uncapped), money(t.credit_total),
                     "; ".join(notes) or "—"))
    if len(periods) > 1:
        rows.append(("Total", money(sum((t.fee_total for t in totals), Decimal(0))),
                     money(sum((t.credit_uncapped for t in totals), Decimal(0))), money(total), ""))
    out.append(d.Table(("Month", f"Fee ({cur})", f"Credit before cap ({cur})", f"Credit owed ({cur})", "Notes"),
                       tuple(rows), align=("l", "r", "r", "r", "l"), widths=(1, 1.5, 1.6, 1.5, 2.4),
                       total_row=len(periods) > 1))
    out.extend(claim_blocks)
    # targets met per scope and month
    header = ("Scope", "Target") + tuple(p.label for p in periods)
    rows2, hl = [], []
    for scope in SCOPES:
        cells = []
        missed_any = False
        target = None
        for p in periods:
            us = [u for u in p.units if u.scope == scope]
            if not us:
                cells.append("—")
                continue
            target = us[0].target
            missed = [u for u in us if not u.met]
            missed_any |= bool(missed)
            if len(us) == 1:
                cells.append("met" if not missed else f"missed ({pct(us[0].availability)})")
            else:
                cells.append("all met" if not missed else f"missed by {len(missed):,} of {len(us):,}")
        if target is None:
            continue
        if missed_any:
            hl.append(len(rows2))
        rows2.append((scope, _target_text(target), *cells))
    out.append(d.Table(header, tuple(rows2), align=("l", "r") + ("l",) * len(periods), highlight=tuple(hl),
                       caption="Highlighted: a scope with at least one unit below target in the period."))
    # termination
    term = result.termination
    ch = term.chronic if term is not None else None
    items = []
    if ch is not None:
        trig = ch.triggered
        if len(trig) <= 5:
            for t in trig:
                items.append(f"Termination right reached: {t.scope} {t.id} below target in "
                             f"{', '.join(t.months_below_target)} ({ch.months_below_target} of "
                             f"{ch.within_months} months).")
        else:
            by = {}
            for t in trig:
                by[t.scope] = by.get(t.scope, 0) + 1
            items.append(f"Termination right reached for {len(trig):,} units ("
                         + ", ".join(f"{k}: {v:,}" for k, v in by.items())
                         + f"), each below target in {ch.months_below_target} of {ch.within_months} months: "
                         + _ids([f"{t.scope} {t.id}" for t in trig], 10) + f"; all are listed in Appendix {app['chronic']}.")
        near_n = ch.months_below_target - 1
        if ch.near is not None:            # judged on the contract's window, earlier months included
            near = [(u.scope, u.id) for u in ch.near]
            where = "one more month below target would reach it"
        else:
            near = [(u.scope, u.id) for u in extras.chronic
                    if near_n >= 1 and len(u.months_below_target) == near_n]
            where = f"{near_n} of {ch.months_below_target} months below target within the months reviewed"
        if near:
            names = [f"{scope} {uid}" for scope, uid in near]
            items.append(f"Near the chronic-failure right ({where}): {_ids(names, 10)}.")
        if ch.months_missing is not None:
            hist = ch.history_months or ()
            window = ch.months_considered + ch.months_missing
            text = (f"Chronic-failure window: {len(window)} months to {max(window)} "
                    f"({ch.months_below_target} below target give the right); "
                    + (f"earlier months included: {', '.join(hist)}" if hist else "no earlier months given"))
            if ch.months_missing:
                text += f"; not known: {', '.join(sorted(ch.months_missing))}"
            items.append(text + ".")
        if not items:
            items.append(f"No unit is near the chronic-failure right ({ch.months_below_target} months below target "
                         f"within {ch.within_months}); months considered: {', '.join(ch.months_considered)}"
                         + ("" if ch.window_complete else " (the window is not yet complete)") + ".")
    ad = term.acceptance_delay if term is not None else None
    if ad is not None:
        items.append("Acceptance delay: " + ", ".join(f"{k} {v}" for k, v in _acceptance_items(ad)) + ".")
    if items:
        out.append(d.Heading("Termination rights", 3))
        out.append(d.Bullets(tuple(items)))
    # incidents needing attention
    reg = extras.incidents
    n_open = reg.count("open_incident")
    att = [f"{plural(len(reg), 'incident')} touch the period; {plural(n_open, 'is', 'are')} still open"
           + (f": {_more(reg.ids('open_incident', 8), n_open)}." if n_open else ".")]
    flagged = {f: reg.count(f) for f in ("notice_not_met", "exclusion_cap_exceeded", "unknown_category")}
    for f, n in flagged.items():
        if n:
            att.append(f"{FLAG_WORDS[f].capitalize()} ({f}): {plural(n, 'incident')}, "
                       f"{_more(reg.ids(f, 8), n)}; counted as downtime.")
    if not any(flagged.values()):
        att.append("No incident has a notice, cap or category problem.")
    skipped = list(result.skipped_rows)
    if skipped:
        n_rows = len({s.get("row") for s in skipped})
        att.append(f"{plural(n_rows, 'row')} of the incident log could not be read and "
                   f"{'was' if n_rows == 1 else 'were'} skipped (Appendix {app['skipped']}); the figures leave "
                   f"{'it' if n_rows == 1 else 'them'} out.")
    out.append(d.Heading("Incidents needing attention", 3))
    out.append(d.Bullets(tuple(att)))
    return out


def _availability(periods: list[_Month], months: list[str]) -> list[d.Block]:
    out: list[d.Block] = [d.Heading("2. Availability against target", 1)]
    out.append(d.Para("Availability per unit and month = 1 - downtime / length of the month, after exclusions, "
                      "truncated to four decimals for display (never rounded up to a target it misses). A unit exactly at "
                      "its target meets it."))
    by_scope = [_units_by_scope(p) for p in periods]
    n = 0
    for scope in SCOPES:
        if not any(scope in b for b in by_scope):
            continue
        n += 1
        ids = [u.id for u in next(b[scope] for b in by_scope if scope in b)]
        target = next(b[scope] for b in by_scope if scope in b)[0].target
        table: dict[str, list[UnitMonth | None]] = {i: [None] * len(periods) for i in ids}
        for k, b in enumerate(by_scope):
            for u in b.get(scope, []):
                table.setdefault(u.id, [None] * len(periods))[k] = u
        out.append(d.Heading(f"2.{n} {scope.capitalize()} availability (target {_target_text(target)})", 2))
        if len(ids) > UNIT_TABLE_MAX:
            rows = []
            for k, p in enumerate(periods):
                us = by_scope[k].get(scope, [])
                missed = [u for u in us if not u.met]
                low = min(us, key=_avail_num)
                rows.append((p.label, count(len(us)), count(len(us) - len(missed)), count(len(missed)),
                             f"{pct(low.availability)} ({low.id})"))
            out.append(d.Table(("Month", "Units", "Met", "Missed", "Lowest availability"), tuple(rows),
                               align=("l", "r", "r", "r", "l"), widths=(1, 1, 1, 1, 2.5)))
            worst = sorted(ids, key=lambda i: (min(_avail_num(u) for u in table[i] if u), i))[:WORST]
            shown = worst
            caption = f"The {len(shown)} {scope}s with the lowest availability in any month of the period."
        else:
            shown = ids
            caption = None
        rows, hl = [], []
        for i in shown:
            cells = [pct(u.availability) if u else "—" for u in table[i]]
            if any(u and not u.met for u in table[i]):
                hl.append(len(rows))
            rows.append((i, *cells))
        out.append(d.Table((scope.capitalize(), *months), tuple(rows), align=("l",) + ("r",) * len(months),
                           highlight=tuple(hl), caption=caption or "Highlighted: below target in at least one month."))
        vals = [float(u.availability) for i in shown for u in table[i] if u]
        lo = min(vals + [float(target)])
        floor = max(0.0, float(int(lo) - (1 if lo - int(lo) < 0.5 else 0)))
        series = tuple((m, tuple(float(table[i][k].availability) if table[i][k] else 0.0 for i in shown))
                       for k, m in enumerate(months))
        out.append(d.BarChart(title=f"{scope.capitalize()} availability per month (%)", categories=tuple(shown),
                              series=series, value_label="availability %",
                              reference=(("target " + _target_text(target), float(target)),),
                              value_min=floor, value_max=100.0,
                              fallback=d.Table((scope.capitalize(), *months), tuple(rows),
                                               align=("l",) + ("r",) * len(months))))
    return out


def _degraded_note(lc: LoadedContract, extras: ReviewExtras) -> str:
    """Said beside incident minutes when the contract counts only the lost share of a degraded
    node: those minutes are the whole degraded stretch, more than the downtime it adds."""
    frame = extras.incidents.frame
    if lc.model.downtime.degraded != "proportional" or not len(frame):
        return ""
    n = int((frame["impact"] == "degraded").sum())
    if not n:
        return ""
    return (f" {plural(n, 'incident')} marked (degraded) count{'s' if n == 1 else ''} here with "
            f"{'its' if n == 1 else 'their'} whole degraded stretch; in availability the node accrues only the share "
            "of its GPUs lost (downtime.degraded: proportional).")


def _downtime(extras: ReviewExtras, degraded_note: str = "") -> list[d.Block]:
    out: list[d.Block] = [d.Heading("3. Downtime by category and cause", 1)]
    cats = extras.by_category
    tot_c = sum(x.counted_node_seconds for x in cats)
    tot_d = sum(x.downtime_node_seconds for x in cats)
    tot_e = sum(x.excluded_node_seconds for x in cats)
    out.append(d.Para(f"Incident time inside the period, in node-hours (an hour of a rack incident costs as many "
                      f"node-hours as the rack has nodes): {hours(tot_c)} node-hours counted after the contract's "
                      f"exclusions, of which {hours(tot_d)} node-hours are downtime after the minimum-outage rule "
                      f"(the rest were outages too short to count), and {hours(tot_e)} node-hours excluded. Time the "
                      "rack and cluster rules add to nodes is not in these figures (see the fleet view)."
                      + degraded_note))
    if cats:
        rows = tuple((x.key, hours(x.counted_node_seconds), hours(x.downtime_node_seconds),
                      hours(x.excluded_node_seconds)) for x in cats)
        header = ("Category", "Counted node-hours", "Downtime node-hours", "Excluded node-hours")
        out.append(d.BarChart(title="Node-hours by category: counted vs excluded",
                              categories=tuple(x.key.replace("_", " ") for x in cats),
                              series=(("counted", tuple(x.counted_node_seconds / 3600 for x in cats)),
                                      ("excluded", tuple(x.excluded_node_seconds / 3600 for x in cats))),
                              value_label="node-hours", stacked=True, horizontal=True,
                              fallback=d.Table(header, rows, align=("l", "r", "r", "r"))))
        out.append(d.Table(header, rows, align=("l", "r", "r", "r"), widths=(2, 1, 1, 1), width_fraction=0.9,
                           caption="Counted: after exclusions, before the minimum-outage rule. Downtime: the "
                                   "counted time that is downtime after the minimum-outage rule."))
    causes = extras.by_cause
    if causes:
        rows = tuple((x.key, hours(x.counted_node_seconds), hours(x.downtime_node_seconds),
                      hours(x.excluded_node_seconds)) for x in causes)
        out.append(d.BarChart(title="Node-hours by cause (largest first)",
                              categories=tuple(_short(x.key, 48) for x in causes),
                              series=(("counted", tuple(x.counted_node_seconds / 3600 for x in causes)),
                                      ("excluded", tuple(x.excluded_node_seconds / 3600 for x in causes))),
                              value_label="node-hours", stacked=True, horizontal=True,
                              fallback=d.Table(("Cause", "Counted node-hours", "Downtime node-hours",
                                                "Excluded node-hours"), rows, align=("l", "r", "r", "r"))))
    return out


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


def _fleet(periods: list[_Month], extras: ReviewExtras, months: list[str]) -> list[d.Block]:
    hm = extras.heatmap
    out: list[d.Block] = [d.Heading("4. Fleet view", 1)]
    out.append(d.Para("Where and when capacity was lost: node-hours down per rack and local calendar day, after "
                      "the rack and cluster rules (a rack that is down counts all its nodes when nodes follow the "
                      "rack). Darker is more."))
    days = hm.days
    col_labels = tuple(x[5:] for x in days)
    fb_rows = tuple((r, hours(Decimal(str(sum(v))) * 3600), ", ".join(f"{days[j]}: {v[j]}" for j in range(len(v))
                                                                    if v[j] > 0) or "—")
                    for r, v in zip(hm.racks, hm.node_hours))
    out.append(d.Heatmap(title="Node-hours down per rack and day", row_labels=tuple(hm.racks),
                         col_labels=col_labels, values=tuple(tuple(v) for v in hm.node_hours),
                         value_label="node-hours per day", row_note=hm.note,
                         fallback=d.Table(("Rack", "Node-hours", "Days with downtime (node-hours)"), fb_rows,
                                          align=("l", "r", "l"))))
    if hm.note:
        out.append(d.Para(hm.note, "note"))
    # worst nodes with their incidents
    per_node: dict[str, dict[str, Any]] = {}
    for k, p in enumerate(periods):
        for u in p.units:
            if u.scope != "node":
                continue
            e = per_node.setdefault(u.id, {"down": 0.0, "excl": 0, "avail": [None] * len(months), "inc": {}})
            e["down"] += float(u.downtime_seconds)
            e["excl"] += u.excluded_seconds
            e["avail"][k] = u.availability
            e["inc"].update(dict.fromkeys(u.incidents))
    worst = sorted((i for i, e in per_node.items() if e["down"] > 0), key=lambda i: (-per_node[i]["down"], i))[:WORST]
    if worst:
        rows = tuple((i, hours(per_node[i]["down"]), *(pct(a) if a is not None else "—" for a in per_node[i]["avail"]),
                      _ids(list(per_node[i]["inc"]), 6)) for i in worst)
        out.append(d.Heading("Nodes with the most downtime", 2))
        out.append(d.Table(("Node", "Down (h)", *months, "Incidents"), rows,
                           align=("l", "r") + ("r",) * len(months) + ("l",),
                           widths=(1.1, 0.8) + (1,) * len(months) + (3,), font_size=7.5))
    totals = hm.rack_totals
    top_racks = sorted(totals, key=lambda r: (-totals[r], r))[:WORST]
    if top_racks and totals[top_racks[0]] > 0:
        rack_units: dict[str, dict[str, None]] = {}
        for p in periods:
            for u in p.units:
                if u.scope == "rack":
                    rack_units.setdefault(u.id, {}).update(dict.fromkeys(u.incidents))
        rows = tuple((r, f"{totals[r]:,.2f}", _ids(list(rack_units.get(r, {})), 8)) for r in top_racks
                     if totals[r] > 0)
        out.append(d.Heading("Racks with the most node-hours down", 2))
        out.append(d.Table(("Rack", "Node-hours down", "Rack-level incidents"), rows, align=("l", "r", "l"),
                           widths=(1, 1, 4)))
    return out


def _credits(lc: LoadedContract, result: Result, periods: list[_Month], app: dict[str, str]) -> list[d.Block]:
    cur = result.currency
    cp = lc.model.credits
    out: list[d.Block] = [d.Heading("5. Credit statement", 1)]
    stacking = ("the largest of its scope amounts (stacking: max)" if cp.stacking == "max"
                else "the sum of its scope amounts (stacking: sum)")
    out.append(d.Para(f"Each scope's credit for a unit is spread over the unit's nodes in proportion to their fees; "
                      f"each node then receives {stacking}, never more than its fee, rounded half-up to the cent. "
                      "The month's credit is the sum of the rounded node credits; then the cap and then the minimum "
                      "apply."))
    out += [d.Para(t, "small") for t in rev11_terms.downtime_clauses(lc) + rev11_terms.settlement_clauses(lc)]
    for p in periods:
        t = p.totals
        out.append(d.Heading(f"Credits for {t.period}", 2))
        rows = []
        for scope in SCOPES:
            us = [u for u in p.units if u.scope == scope]
            if not us:
                continue
            with_credit = [u for u in us if u.credit > 0]
            rows.append((f"{scope} credits (before stacking)", f"{len(with_credit):,} of {len(us):,} units",
                         money(sum((u.credit for u in with_credit), Decimal(0)))))
        nodes_with = [x for x in p.nodes if x.credit > 0]
        rows.append((f"Node credits after stacking ({cp.stacking}) and rounding", f"{len(nodes_with):,} nodes",
                     money(t.credit_uncapped)))
        cap = t.cap_amount
        rows.append(("Cap" + (f" ({cp.cap.normalize():f}% of the fee of {money(t.fee_total)})" if cp.cap is not None
                              else ""), "applied" if t.cap_applied else "not reached",
                     money(cap) if cap is not None else "none"))
        rows.append((f"Minimum ({'more than ' if t.minimum_rule == 'more_than' else ''}"
                     f"{money(t.minimum)})", "applied: nothing issued" if t.minimum_applied
                     else "met", ""))
        rows.append(("Credit owed", "", money(t.credit_total, cur)))
        rows += rev11_terms.remedy_rows(t, cur)
        out.append(d.Table(("Line", "Basis", f"Amount ({cur})"), tuple(rows), align=("l", "l", "r"),
                           widths=(3, 2, 1.4), total_row=True))
        out.extend(month_claim_blocks(result, t))
        scope_units = [u for u in p.units if u.scope != "node" and u.credit > 0]
        if scope_units:
            out.append(d.Table(("Unit", "Availability", "Target", "Credit %", f"Unit fee ({cur})", f"Credit ({cur})"),
                               tuple((f"{u.scope} {u.id}", pct(u.availability), _target_text(u.target),
                                      f"{u.credit_pct.normalize():f}%", money(u.fee), money(u.credit))
                                     for u in scope_units[:WORST * 2]),
                               align=("l", "r", "r", "r", "r", "r"), widths=(1.4, 1, 0.8, 0.8, 1.2, 1.2),
                               caption="Rack, cluster and site units with a credit, before it is spread over nodes."))
        top = sorted(nodes_with, key=lambda x: (-x.credit, x.id))[:WORST]
        if top:
            out.append(d.Table(("Node", f"Fee ({cur})", f"Credit ({cur})", "From scope"),
                               tuple((x.id, money(x.fee), money(x.credit), x.basis) for x in top),
                               align=("l", "r", "r", "l"), widths=(1.2, 1, 1, 1), width_fraction=0.8,
                               caption=f"Largest node credits; all {len(nodes_with):,} nodes with a credit are "
                                       f"listed in Appendix {app['nodes']}."))
    return out


def _secs(v: int | None) -> str:
    return duration(v) if v is not None else "—"


def _acceptance_items(a: AcceptanceDelay) -> list[tuple[str, str]]:
    """The acceptance-delay figures as (label, text) pairs, in the order of the JSON document."""
    def day(v: date | None) -> str:
        return v.isoformat() if v is not None else "None"

    return [("deadline", day(a.deadline)), ("accepted on", day(a.accepted_on)), ("days late", str(a.days_late)),
            ("credit per day pct", str(a.credit_per_day_pct)), ("monthly fee", str(a.monthly_fee)),
            ("credit", str(a.credit)), ("currency", a.currency), ("termination right", str(a.termination_right)),
            ("termination right from", day(a.termination_right_from)),
            ("monthly fee month", str(a.monthly_fee_month))]


def _support(result: Result) -> list[d.Block]:
    s = result.support
    out: list[d.Block] = [d.Heading("6. Support compliance", 1)]
    if s is None:
        out.append(d.Para("The result carries no support figures."))
        return out
    out.append(d.Para(f"Basis: {s.basis}. {plural(s.incidents, 'incident')} started in "
                      f"the period; {plural(s.planned_excluded, 'planned incident')} with notice "
                      f"left out. Percentiles: {s.percentile_method}. A time exactly on "
                      "target is met."))
    rows, hl, breach_lines = [], [], []

    def add(label: str, f: SupportFigure) -> None:
        if f.breaches:
            hl.append(len(rows))
            breach_lines.append(f"{label}: {_ids(list(f.breach_ids), 12)}")
        rows.append((label, _secs(f.target_seconds), count(f.count), count(f.measured),
                     "—" if f.breaches is None else count(f.breaches), _secs(f.p50_seconds),
                     _secs(f.p95_seconds), _secs(f.max_seconds)))

    add("Detection", s.detection)
    for f in s.response:
        add(f"Response {f.group}", f)
    for f in s.restore:
        add(f"Restore {f.group}" + (f" ({f.open} open)" if f.open else ""), f)
    out.append(d.Table(("Measure", "Target", "Incidents", "Measured", "Breaches", "P50", "P95", "Max"), tuple(rows),
                       align=("l", "r", "r", "r", "r", "r", "r", "r"), highlight=tuple(hl),
                       widths=(1.8, 1, 0.9, 0.9, 0.9, 1, 1, 1)))
    if breach_lines:
        out.append(d.Heading("Breaches", 3))
        out.append(d.Bullets(tuple(breach_lines)))
    return out


REGISTER_HEADER = ("ID", "Ticket", "Scope: target", "Category", "Start", "End", "Counted (min)", "Down (min)",
                   "Excl. (min)", "Flags", "Cause")


def _register_row(r: RegisterRow) -> tuple[str, ...]:
    target = r.target + (f" ({r.units} units)" if r.units > 1 else "")
    cat = r.category.replace("_", " ") + (" (degraded)" if r.impact == "degraded" else "")
    return (r.id, r.ticket or "—", f"{r.scope}: {target}", cat, r.start, r.end or "open", minutes(r.counted_seconds),
            minutes(r.downtime_seconds), minutes(r.excluded_seconds),
            "; ".join(FLAG_WORDS.get(f, f) for f in r.flags) or "—", r.cause)


def register_csv(extras: ReviewExtras) -> bytes:
    return extras.incidents.to_csv()


def csv_rows_one(row):
    from slaschema.textsafe import csv_cell

    return [csv_cell(v) for v in row]


def node_credits_csv(periods: list[_Month]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(("period", "node", "fee", "credit", "basis"))
    for p in periods:
        for x in p.nodes:
            w.writerow(csv_rows_one((p.label, x.id, format(x.fee, "f"), format(x.credit, "f"), x.basis)))
    return buf.getvalue().encode("utf-8")


INLINE_REGISTER = 100       # registers up to this size are printed in section 7 itself


def _register_table(rows: list[RegisterRow], caption: str) -> d.Table:
    hl = tuple(i for i, r in enumerate(rows) if set(r.flags) - {"open_incident"})
    return d.Table(REGISTER_HEADER, tuple(_register_row(r) for r in rows),
                   align=("l", "l", "l", "l", "l", "l", "r", "r", "r", "l", "l"),
                   widths=(1.0, 0.9, 1.4, 1.1, 1.15, 1.15, 0.75, 0.7, 0.7, 1.35, 1.4), font_size=6.5, highlight=hl,
                   caption=caption, nowrap=(0, 1, 6, 7, 8))


def _register(extras: ReviewExtras, limit: int, attachment_name: str | None, app: dict[str, str],
              degraded_note: str = "") -> tuple[list[d.Block], list[d.Block]]:
    """Section 7 and, for long registers, the appendix that lists them."""
    reg = extras.incidents
    where = f"the attached file {attachment_name}" if attachment_name else "the CSV form of the register"
    out: list[d.Block] = [d.Heading("7. Incident register", 1)]
    out.append(d.Para(f"Every incident that touches the period, in order of start (times in {extras.zone}). "
                      "Minutes are summed over the units an incident names and limited to the period. Counted: "
                      "after the contract's exclusions, before the minimum-outage rule; Down: the part of the "
                      "counted time that is downtime after merging and the minimum-outage rule (0 for an outage too "
                      "short to count); Excl.: time under an exclusion." + degraded_note))
    if not len(reg):
        out.append(d.Para("No incidents touch the period."))
        return out, []
    if len(reg) <= INLINE_REGISTER:
        if len(reg) > limit:
            out.append(d.Para(f"The register has {len(reg):,} incidents; the first {limit:,} are printed here and "
                              f"all {len(reg):,} are in {where}.", "warning"))
        if limit:
            out.append(_register_table(reg.rows(limit), "Highlighted: notice, cap or category problems."))
        return out, []
    f = reg.frame
    top_rows = Register(f.nlargest(25, "counted_seconds", keep="first"), reg.zone).rows()
    out.append(d.Para(f"{len(reg):,} incidents touch the period. The 25 with the most counted time are below; "
                      + ((f"the first {limit:,} in order of start are in Appendix {app['register']}"
                          if len(reg) > limit else f"all {len(reg):,}, in order of start, are in Appendix "
                                                   f"{app['register']}") if limit else "no more are printed")
                      + (f", and all {len(reg):,} are in {where}."
                         if len(reg) > limit else "."), "strong"))
    out.append(_register_table(top_rows, "Incidents with the most counted time. Highlighted: notice, cap or "
                                          "category problems."))
    appendix: list[d.Block] = []
    if limit:
        appendix = [d.Heading(f"Appendix {app['register']}. Incident register", 1)]
        if len(reg) > limit:
            appendix.append(d.Para(f"The register has {len(reg):,} incidents; the first {limit:,} are printed here "
                                   f"and all {len(reg):,} are in {where}.",
                                   "warning"))
        appendix.append(_register_table(reg.rows(limit), "Highlighted: notice, cap or category problems."))
    return out, appendix


BASIS_CODE = {"node": "N", "rack": "R", "cluster": "C", "site": "S"}


def _basis_code(basis: str) -> str:
    return "+".join(BASIS_CODE.get(b, b) for b in basis.split("+")) if basis and basis != "none" else ""


def _appendix_nodes(result: Result, periods: list[_Month], letter: str) -> list[d.Block]:
    """One line per node with a credit in any month: its credit per month and the scope it came from."""
    out: list[d.Block] = [d.Heading(f"Appendix {letter}. Node credits", 1)]
    months = [p.label for p in periods]
    per_node: dict[str, list[NodeCredit | None]] = {}
    order: list[str] = []
    fees: dict[str, set[Decimal]] = {m: set() for m in months}
    for k, p in enumerate(periods):
        for x in p.nodes:
            fees[p.label].add(x.fee)
            if x.credit > 0:
                if x.id not in per_node:
                    per_node[x.id] = [None] * len(months)
                    order.append(x.id)
                per_node[x.id][k] = x
    n_all = max((len(p.nodes) for p in periods), default=0)
    counts = ", ".join(f"{m}: {sum(1 for v in per_node.values() if v[k]):,}" for k, m in enumerate(months))
    fee_text = "; ".join(f"{m}: {money(next(iter(f)))}" if len(f) == 1 else f"{m}: varies by node"
                         for m, f in fees.items())
    out.append(d.Para(f"Nodes with a credit, per month ({counts}; of {n_all:,} nodes). Amounts in "
                      f"{result.currency}, before the cap and the minimum, which apply to the month's total. "
                      f"Letter after an amount: the scope the credit came from (N node, R rack, C cluster, S site). "
                      f"Node fee per month: {fee_text}.", "note"))
    if not per_node:
        return out
    pos = {x.id: i for i, x in enumerate(periods[-1].nodes)}
    ids = sorted(order, key=lambda i: (pos.get(i, len(pos)), i))
    groups = 2 if len(months) <= 3 else 1
    per_group = (len(ids) + groups - 1) // groups
    rows = []

    def cells(i: str | None) -> tuple[str, ...]:
        if i is None:
            return ("",) * (1 + len(months))
        return (i, *(f"{money(x.credit)} {_basis_code(x.basis)}".strip() if x else "—" for x in per_node[i]))

    for r in range(per_group):
        row: tuple[str, ...] = ()
        for g in range(groups):
            j = g * per_group + r
            row += cells(ids[j] if j < len(ids) else None)
        rows.append(row)
    header = ("Node", *months) * groups
    out.append(d.Table(header, tuple(rows), align=(("l",) + ("r",) * len(months)) * groups,
                       widths=((1.25,) + (1,) * len(months)) * groups, font_size=7,
                       group_size=1 + len(months)))
    return out



def _grouped_units(trig: tuple[ChronicUnit, ...], per_row: int = 120) -> list[tuple[str, ...]]:
    """Units with a termination right, grouped by scope and months, as hostlists."""
    from slaschema import hostlist

    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for t in trig:
        groups.setdefault((t.scope, t.months_below_target), []).append(t.id)
    rows = []
    for (scope, months), ids in groups.items():
        for k in range(0, len(ids), per_row):
            chunk = ids[k:k + per_row]
            rows.append((scope, ", ".join(months), f"{len(chunk):,}", spaced_hostlist(hostlist.compress(chunk))))
    return rows


def review_document(lc: LoadedContract, result: Result, extras: ReviewExtras, inputs: ReviewInputs,
                    register_limit: int = REGISTER_LIMIT, attachment_stem: str | None = None,
                    goodput: dict[str, Any] | None = None) -> tuple[d.Document, list[Attachment]]:
    """The review of a credits `Result` and its attachments (the full register when it is
    cut). `goodput`: the `slakit goodput` JSON document for the same period, shown as section 8."""
    from calculators.result import iso

    info = lc.model.contract
    periods = _months(result)
    months = [p.label for p in periods]
    reg_name = f"{attachment_stem}.incidents.csv" if attachment_stem else None
    attachments: list[Attachment] = []
    if len(extras.incidents) > register_limit:
        attachments.append(Attachment(".incidents.csv", register_csv(extras), "full incident register"))
    if sum(len(p.nodes) for p in periods) > register_limit:
        attachments.append(Attachment(".node-credits.csv", node_credits_csv(periods), "every node's fee and credit"))
    chronic = result.termination.chronic if result.termination is not None else None
    trig = chronic.triggered if chronic is not None else ()
    skipped = list(result.skipped_rows)
    present = [k for k, on in (("chronic", len(trig) > 5), ("skipped", bool(skipped)),
                               ("register", len(extras.incidents) > INLINE_REGISTER and register_limit > 0),
                               ("nodes", True)) if on]
    app = {k: "ABCDEFGH"[i] for i, k in enumerate(present)}
    degraded_note = _degraded_note(lc, extras)
    section7, register_appendix = _register(extras, register_limit, reg_name, app, degraded_note)
    blocks: list[d.Block] = []
    blocks += _summary(lc, result, periods, extras, months, app)
    blocks += _availability(periods, months)
    blocks += _downtime(extras, degraded_note)
    blocks += _fleet(periods, extras, months)
    blocks += _credits(lc, result, periods, app)
    blocks += _support(result)
    blocks += section7
    if goodput is not None:
        from calculators.reports.review_goodput import goodput_section

        blocks += goodput_section(goodput, 8)
    if "chronic" in app:
        blocks.append(d.Heading(f"Appendix {app['chronic']}. Units with a chronic-failure termination right", 1))
        blocks.append(d.Table(("Scope", "Months below target", "Units", "Which (hostlist)"),
                              tuple(_grouped_units(trig)), align=("l", "l", "r", "l"),
                              widths=(0.7, 1.6, 0.6, 4.6), font_size=7))
    if "skipped" in app:
        blocks.append(d.Heading(f"Appendix {app['skipped']}. Skipped rows of the incident log", 1))
        blocks.append(d.Table(("Row", "Column", "Code", "Message"),
                              tuple((str(x.get("row") or ""), str(x.get("column") or ""), str(x.get("code") or ""),
                                     str(x.get("message") or "")) for x in skipped[:max(register_limit, 100)]),
                              widths=(0.6, 1, 1.4, 4)))
    blocks += register_appendix
    blocks += _appendix_nodes(result, periods, app["nodes"])      # last: its long table is laid out once
    cover = [("Contract", f"{info.id}" + (f" — {info.title}" if info.title else "")),
             ("Provider", info.provider), ("Customer", info.customer),
             ("Period", (f"{inputs.period_label} ({', '.join(months)})" if [inputs.period_label] != months
                         else inputs.period_label) + f"; calendar months in {result.timezone}"),
             # in the contract's zone, as every other time of the review, and in UTC as the JSON writes it
             ("Figures as of", f"{local_instant(result.as_of, result.timezone)} ({iso(result.as_of)})"),
             *cover_claim_item(result),
             ("Contract file", f"{inputs.contract_file}"), ("Contract SHA-256", inputs.contract_sha256),
             ("Incident log", inputs.incidents_file), ("Incident log SHA-256", inputs.incidents_sha256),
             ("Generated by", f"slakit {inputs.tool_version}")]
    doc = d.Document(title=f"SLA review {inputs.period_label} — {info.id}",
                     subtitle=f"{info.provider} for {info.customer}" + (f" · {info.title}" if info.title else ""),
                     footer=(f"{info.id} · {inputs.period_label} · contract SHA-256 {inputs.contract_sha256[:16]} · "
                             f"log SHA-256 {inputs.incidents_sha256[:16]} · slakit {inputs.tool_version}"),
                     blocks=tuple(blocks), cover=tuple(cover), keywords=(info.id, inputs.period_label),
                     lang=info.language)
    return doc, attachments
