"""Revision 1.1 clauses in words, for the schedule and the review (sla-semantics.md section 8).

Each function returns plain sentences (empty when the contract does not use the clause), so
the documents only add them where they already describe downtime, pro-rata credits and
settlement.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from calculators.reports.fmt import money, words
from calculators.result_records import MonthTotals
from slaschema.hostlist import compress
from slaschema.loader import LoadedContract

MAX_WINDOWS = 8          # service windows spelled out in the schedule; more are summed up


def _when(v) -> str:
    if v is None:
        return ""
    if isinstance(v, datetime):
        return v.isoformat()
    assert isinstance(v, date)
    return v.isoformat()


def downtime_clauses(lc: LoadedContract) -> list[str]:
    """Service windows, when the clock starts and measurement buckets."""
    m = lc.model
    zone = m.contract.timezone
    out: list[str] = []
    windows = lc.topology.node_service
    if windows is not None:
        groups: dict[tuple, list[str]] = {}
        for name, w in zip(lc.topology.nodes, windows):
            if w != (None, None):
                groups.setdefault(w, []).append(name)
        parts = []
        shown = list(groups.items())[:MAX_WINDOWS]
        for (a, b), names in shown:
            span = (f"from {_when(a)}" if a is not None else "") + (" " if a is not None and b is not None else "") \
                + (f"until {_when(b)} (not included)" if b is not None else "")
            parts.append(f"{compress(names)} {span}")
        if len(groups) > MAX_WINDOWS:
            rest = sum(len(v) for _, v in list(groups.items())[MAX_WINDOWS:])
            parts.append(f"{rest} more nodes with {len(groups) - MAX_WINDOWS} other windows, as the contract lists them")
        out.append("Phased delivery: a node counts only while it is in service — " + "; ".join(parts)
                   + f" (a date means midnight in {zone}). Outside that time it has no fee, no downtime and no "
                   "credit; an incident entirely outside it counts nowhere. A unit's availability is measured over "
                   "its service time, its fee is charged for its service hours, and the rack and cluster rules "
                   "count only the nodes in service at each moment.")
    if m.downtime.counts_from == "report":
        out.append("Downtime is counted from the moment the customer reports the incident (its reported time), not "
                   "from when the fault began; an incident the customer never reports counts as no downtime.")
    ms = m.downtime.measure
    if ms is not None:
        b = words(ms.bucket)
        rule = ("a bucket counts as downtime only when the unit is down for the whole of it" if ms.counts_when == "full"
                else "a bucket counts as downtime in full when the unit is down for any part of it")
        out.append(f"Downtime is measured in clock intervals of {b} from local midnight: {rule}. The rack and "
                   "cluster rules and the hours not charged still use exact seconds.")
    return out


def pro_rata_basis(only_below_target: bool) -> str:
    """The words that say when a pro-rata credit is paid."""
    return ("only in a month in which the unit's availability is below its target"
            if only_below_target else "whether or not the target is met")


def settlement_clauses(lc: LoadedContract) -> list[str]:
    """Hours not charged (a billing adjustment next to the credit)."""
    nc = lc.model.credits.not_charged
    if nc is None:
        return []
    return [f"Hours not charged: each clock interval of {words(nc.per)} (from local midnight) in which a node is down "
            f"for more than {words(nc.when_down_over)} is not billed for that node. This is a billing adjustment, "
            "not subject to the cap or the minimum; credits, the cap and the spread over nodes are worked out on "
            "the fees actually charged."]


def minimum_words(strict: bool, amount) -> str:
    return (f"not more than the minimum of {money(amount)}: not issued" if strict
            else f"below the minimum of {money(amount)}: not issued")


def remedy_rows(m: MonthTotals, cur: str) -> list[tuple[str, str, str]]:
    """Credit statement rows for a month with hours not charged (revision 1.1 results)."""
    if m.not_charged_total is None:
        return []
    return [("Hours not charged (billing adjustment, not capped)", "nodes down over the threshold",
             money(m.not_charged_total, cur)),
            ("Remedy (credit owed + hours not charged)", "", money(m.remedy_total, cur))]


def remedy_total(months: tuple[MonthTotals, ...] | list[MonthTotals]) -> Decimal | None:
    if not months or months[0].remedy_total is None:
        return None
    return sum((m.remedy_total for m in months), Decimal(0))
