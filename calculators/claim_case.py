"""The facts of a credit claim, month by month: what is owed, why, and by when it must be claimed.

`claim_months(lc, log, labels, as_of)` computes each month on its own with the credits
engine (per-incident figures included) and arranges, for every month:

- the amounts of the result document: credit before the cap, the cap, the minimum, the
  credit owed (`credit_total`, what is claimed) and, when the result carries them, hours not
  charged and the remedy (a billing adjustment, not part of the claim: sla-semantics 8.7);
- the claim deadline and status against `as_of` (`calculators.claims`);
- the units below target that carry a credit, and the incidents whose counted time makes
  their downtime: id, provider ticket, affected nodes, start/end, counted and down seconds,
  and the credited units they count in;
- the log rows of every incident touching the month (for the evidence package).

Nothing here applies an SLA rule: every figure comes from the engine's result of that month.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from calculators.result_records import MonthTotals
from slaschema.errors import SlakitError

if TYPE_CHECKING:
    from calculators.incidents import IncidentLog
    from slaschema.loader import LoadedContract


@dataclass(frozen=True)
class CreditedUnit:
    scope: str
    id: str
    availability_pct: str
    target_pct: str
    credit_pct: str
    credit: str
    incidents: tuple[str, ...]
    met: bool = False                 # pro-rata credits are paid for downtime even when the target is met


@dataclass(frozen=True)
class IncidentLine:
    id: str
    ticket: str | None
    scope: str
    target: str
    nodes: tuple[str, ...]            # affected nodes (a rack incident: the rack's nodes)
    start: int
    end: int | None                   # None while open (counted until as_of)
    counted_seconds: int
    downtime_seconds: int
    category: str
    credited_units: tuple[tuple[str, str, str], ...]     # (scope, id, unit credit) it counts in
    impact: str | None = None         # "degraded" for an incident that took part of its node


@dataclass(frozen=True)
class MonthClaim:
    period: str
    start: int
    end: int
    due: int | None
    status: str
    seconds_left: int | None
    totals: MonthTotals                # the month's amounts, as the credits result computed them
    units: tuple[CreditedUnit, ...]
    incidents: tuple[IncidentLine, ...]          # incidents counted in a credited unit
    other_incidents: tuple[str, ...]             # incidents touching the month that drive no credit
    row_numbers: tuple[int, ...]                 # log rows of every incident touching the month

    @property
    def credit(self) -> Decimal:
        return self.totals.credit_total

    @property
    def claimable(self) -> bool:
        return self.status != "expired"

    @property
    def to_claim(self) -> bool:
        """Claimed in a letter: not expired and a credit is owed."""
        return self.claimable and self.credit > 0


@dataclass(frozen=True)
class ClaimRun:
    contract_id: str
    contract_sha256: str
    incidents_file: str
    incidents_sha256: str
    currency: str
    timezone: str
    as_of: int
    window: str | None
    months: tuple[MonthClaim, ...]

    @property
    def claimed(self) -> tuple[MonthClaim, ...]:
        return tuple(m for m in self.months if m.to_claim)

    @property
    def claimed_total(self) -> Decimal:
        return sum((m.credit for m in self.claimed), Decimal(0))

    def to_json(self) -> dict[str, Any]:
        from calculators.result import iso

        def incident(i: IncidentLine) -> dict[str, Any]:
            return {"id": i.id, "ticket": i.ticket, "scope": i.scope, "target": i.target, "nodes": list(i.nodes),
                    "start": iso(i.start), "end": iso(i.end) if i.end is not None else None,
                    "counted_seconds": i.counted_seconds, "downtime_seconds": i.downtime_seconds,
                    "category": i.category,
                    "credited_units": [{"scope": s, "id": u, "credit": c} for s, u, c in i.credited_units]}

        return {
            "format": "slakit-claim/1",
            "contract": self.contract_id, "contract_sha256": self.contract_sha256,
            "incidents_file": self.incidents_file, "incidents_sha256": self.incidents_sha256,
            "currency": self.currency, "timezone": self.timezone, "as_of": iso(self.as_of),
            "claim_window": self.window, "claimed_total": f"{self.claimed_total:.2f}",
            "months": [{"period": m.period, "start": iso(m.start), "end": iso(m.end),
                        "claim": {"due": iso(m.due) if m.due is not None else None, "status": m.status},
                        "claimed": m.to_claim, **_amounts(m.totals),
                        "units": [{"scope": u.scope, "id": u.id, "availability_pct": u.availability_pct,
                                   "target_pct": u.target_pct, "met": u.met, "credit_pct": u.credit_pct,
                                   "credit": u.credit,
                                   "incidents": list(u.incidents)} for u in m.units],
                        "incidents": [incident(i) for i in m.incidents],
                        "other_incidents": list(m.other_incidents)}
                       for m in self.months],
        }


class ClaimError(SlakitError, ValueError):
    """A month that cannot be claimed yet (it has not ended as of the instant named)."""


def _amounts(m: MonthTotals) -> dict[str, Any]:
    """The month's amounts as the claim document writes them (decimal strings, two places)."""
    def text(v: Decimal | None) -> str | None:
        return format(v, "f") if v is not None else None

    out: dict[str, Any] = {"fee_total": text(m.fee_total), "credit_uncapped": text(m.credit_uncapped),
                           "cap_amount": text(m.cap_amount), "cap_applied": m.cap_applied,
                           "minimum": format(m.minimum.normalize(), "f"), "minimum_applied": m.minimum_applied,
                           "credit_total": text(m.credit_total)}
    out["not_charged"] = text(m.not_charged_total)
    out["remedy"] = text(m.remedy_total)
    return out


def _tickets_rows_nodes(lc: LoadedContract, log: IncidentLog, ids) -> tuple[dict[str, str], dict[str, list[int]],
                                               dict[str, tuple[str, tuple[str, ...]]]]:
    """Per incident id of `ids`: its ticket, its log rows, and (scope, affected nodes in topology order)."""
    f = log.frame
    f = f[f["id"].isin(list(ids))]
    tickets: dict[str, str] = {}
    rows: dict[str, list[int]] = {}
    targets: dict[str, tuple[str, list[str]]] = {}
    ticket_col = f["ticket"].tolist() if "ticket" in f else [None] * len(f)
    for i, row, scope, target, ticket in zip(f["id"].tolist(), f["row"].tolist(), f["scope"].tolist(),
                                             f["target"].tolist(), ticket_col):
        if isinstance(ticket, str) and ticket.strip() and i not in tickets:
            tickets[i] = ticket.strip()
        rows.setdefault(i, [])
        if int(row) not in rows[i]:
            rows[i].append(int(row))
        targets.setdefault(i, (scope, []))[1].append(target)
    order = lc.topology.node_index
    nodes: dict[str, tuple[str, tuple[str, ...]]] = {}
    for i, (scope, units) in targets.items():
        got: set[str] = set()
        for u in units:
            got.update([u] if scope == "node" else lc.topology.nodes_of(scope, u))
        nodes[i] = (scope, tuple(sorted(got, key=lambda n: order.get(n, len(order)))))
    return tickets, rows, nodes


def claim_months(lc: LoadedContract, log: IncidentLog, labels: list[str], as_of: datetime) -> ClaimRun:
    """Each month of `labels` (YYYY-MM / YYYY-Qn) computed on its own, arranged for a claim."""
    from calculators.engine import compute
    from calculators.periods import parse_periods

    zone = lc.model.contract.timezone
    periods = parse_periods(labels, zone)
    as_of_s = int(as_of.timestamp())
    early = [p.label for p in periods if p.end > as_of_s]
    if early:
        raise ClaimError(f"{', '.join(early)} has not ended as of {as_of.isoformat()}; a claim covers a whole "
                         "month: name an earlier month or a later --as-of")
    months = []
    window = None
    for p in periods:
        res = compute(lc, log, [p], as_of=as_of_s, incidents=True)
        window = res.claims.window
        deadline = res.claims.months[0]
        credited = [u for u in res.unit_months(p.label) if u.credit > 0]
        units = tuple(CreditedUnit(u.scope, u.id, format(u.availability, "f"), format(u.target.normalize(), "f"),
                                   format(u.credit_pct, "f"), format(u.credit, "f"), u.incidents, u.met)
                      for u in credited)
        counts_in: dict[str, list[tuple[str, str, str]]] = {}
        for u in credited:
            for i in u.incidents:
                counts_in.setdefault(i, []).append((u.scope, u.id, format(u.credit, "f")))
        table = res.figures.table
        tickets, rows, nodes = _tickets_rows_nodes(lc, log, table["id"].tolist())
        lines, others = [], []
        for r in table.itertuples(index=False):
            if r.id not in counts_in:
                others.append(str(r.id))
                continue
            scope, affected = nodes.get(r.id, (r.scope, ()))
            lines.append(IncidentLine(id=str(r.id), ticket=tickets.get(r.id), scope=str(r.scope),
                                      target=str(r.target), nodes=affected, start=int(r.start),
                                      end=int(r.end) if int(r.end) >= 0 else None,
                                      counted_seconds=int(r.counted_seconds),
                                      downtime_seconds=int(r.downtime_seconds), category=str(r.category),
                                      credited_units=tuple(counts_in[r.id]),
                                      impact=str(r.impact) if isinstance(r.impact, str) else None))
        touching = [str(i) for i in table["id"].tolist()]
        row_numbers = sorted({n for i in touching for n in rows.get(i, [])})
        months.append(MonthClaim(period=p.label, start=p.start, end=p.end, due=deadline.due,
                                 status=deadline.status, seconds_left=deadline.seconds_left,
                                 totals=res.month_totals()[0],
                                 units=units, incidents=tuple(lines), other_incidents=tuple(others),
                                 row_numbers=tuple(row_numbers)))
    from pathlib import Path

    return ClaimRun(contract_id=lc.id, contract_sha256=lc.sha256,
                    incidents_file=Path(str(log.file)).name if log.file else "",
                    incidents_sha256=log.sha256 or "", currency=lc.model.contract.currency, timezone=zone,
                    as_of=as_of_s, window=window, months=tuple(months))
