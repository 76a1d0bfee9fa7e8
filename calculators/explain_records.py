"""Typed records of an explanation (`slakit explain`): frozen, built by keyword.

`calculators.explain.explain` returns an `Explanation`: one unit in one month, from the
incident parts on it through the steps of the timeline to availability, credit and money.
`Explanation.to_json()` is its one serializer (the `slakit-explain/1` document);
`calculators.cli.render_explanation` prints the same record as text.

Times are aware UTC `datetime`s, durations `int` seconds; rounded money is `Decimal` with two
places; percentages shown as in `slakit credits` are `Decimal`. Exact figures that may not
terminate (a node's exact fee, its share of the fee, availability as an exact fraction) are
`Fraction`s; `exact_text` writes them, with all digits when they terminate within the places
shown, else rounded with a trailing ellipsis. The unit-month and the month's totals are the
records `slakit credits` reports (`calculators.result_records.UnitMonth`, `MonthTotals`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any

from calculators import credits as cr
from calculators.result_records import MonthTotals, UnitMonth

FORMAT = "slakit-explain/1"

FEE_PLACES = 6          # exact fees, credits, shares of the fee (percent), hours not charged
AVAILABILITY_PLACES = 8  # availability as an exact fraction (percent)
HOURS_PLACES = 4        # a node's service hours; its exact share of a capped total (currency)


def exact_text(x: Fraction, places: int = FEE_PLACES) -> str:
    """A rational as decimal text: all digits when it terminates within `places`, else
    rounded to `places` with a trailing ellipsis."""
    q = Decimal(x.numerator) / Decimal(x.denominator)
    shown = q.quantize(Decimal(1).scaleb(-places))
    if Fraction(shown) == x:
        return format(shown.normalize(), "f") if shown != 0 else "0"
    return format(shown, "f") + "…"


def iso_text(t: datetime) -> str:
    """An aware UTC time as the documents write it: 2027-02-01T06:00:00Z."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def money_text(x: Decimal) -> str:
    return format(x, "f")


def percent_text(x: Decimal) -> str:
    """A percentage as written in the contract (a target, a tier's credit): normalised."""
    return format(x.normalize(), "f")


def seconds_value(x: int | Decimal) -> int | float:
    """A downtime in seconds as the JSON carries it: an int, or a number with three decimals."""
    return float(x) if isinstance(x, Decimal) else x


def _iso_or_none(t: datetime | None) -> str | None:
    return None if t is None else iso_text(t)


@dataclass(frozen=True, kw_only=True)
class Interval:
    """A half-open interval `[start, end)` of one step. `in_month_seconds` (the part inside
    the month) is set on the timeline's intervals, `gpus_lost` on the degraded (proportional)
    ones; the service-time step's intervals carry neither."""

    start: datetime
    end: datetime
    seconds: int
    in_month_seconds: int | None = None
    gpus_lost: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"start": iso_text(self.start), "end": iso_text(self.end), "seconds": self.seconds}
        if self.in_month_seconds is not None:
            out["in_month_seconds"] = self.in_month_seconds
        if self.gpus_lost is not None:
            out["gpus_lost"] = self.gpus_lost
        return out


@dataclass(frozen=True, kw_only=True)
class IncidentPart:
    """A part of an incident on the unit (its own or inherited from a rack, cluster or site
    above it): the log row, what it hit, whether it was `counted`, `excluded` or `counts
    nowhere` (revision 1.1: outside service time, or never reported), its interval in the
    window and `gpus_lost` (None: the unit was down)."""

    id: str
    row: int
    scope: str
    target: str
    category: str
    impact: str
    part: str
    start: datetime
    end: datetime
    seconds: int
    gpus_lost: int | None
    flags: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "row": self.row, "scope": self.scope, "target": self.target,
                "category": self.category, "impact": self.impact, "part": self.part, "start": iso_text(self.start),
                "end": iso_text(self.end), "seconds": self.seconds, "gpus_lost": self.gpus_lost,
                "flags": list(self.flags)}


@dataclass(frozen=True, kw_only=True)
class Step:
    """One step of the timeline: what it is, in words, and its intervals."""

    text: str
    intervals: tuple[Interval, ...]

    def to_json(self) -> dict[str, Any]:
        return {"step": self.text, "intervals": [iv.to_json() for iv in self.intervals]}


@dataclass(frozen=True, kw_only=True)
class ClockStart:
    """Revision 1.1 `counts_from: report`: when an incident's clock starts (the later of the
    fault and the customer's report; None: never reported, it counts nowhere)."""

    id: str
    fault_start: datetime
    reported_at: datetime | None
    clock_starts: datetime | None
    note: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "fault_start": iso_text(self.fault_start), "reported_at": _iso_or_none(self.reported_at),
                "clock_starts": _iso_or_none(self.clock_starts), "note": self.note}


@dataclass(frozen=True, kw_only=True)
class ServiceWindow:
    """A node's revision 1.1 service window as the contract writes it (`from` included, `to`
    not; a `date` is local midnight; None: open at that end)."""

    starts: date | None
    ends: date | None

    def to_json(self) -> dict[str, Any]:
        return {"from": None if self.starts is None else self.starts.isoformat(),
                "to": None if self.ends is None else self.ends.isoformat()}


@dataclass(frozen=True, kw_only=True)
class ServiceTime:
    """Revision 1.1: the unit's service time in the month; `window` is the node's own window
    (None for a rack, cluster or site: the union of its nodes' windows). The intervals are
    the first step of the timeline."""

    service_seconds: int
    month_seconds: int
    window: ServiceWindow | None

    def to_json(self) -> dict[str, Any]:
        return {"service_seconds": self.service_seconds, "month_seconds": self.month_seconds,
                "window": None if self.window is None else self.window.to_json()}


@dataclass(frozen=True, kw_only=True)
class Tier:
    """A credit tier of the scope: below `below` % availability, `credit` % of the fee;
    `applies` when the exact availability is below it."""

    below: Decimal
    credit: Decimal
    applies: bool

    def to_json(self) -> dict[str, Any]:
        return {"below": str(self.below), "credit": str(self.credit), "applies": self.applies}


@dataclass(frozen=True, kw_only=True)
class ProRata:
    """The scope's pro-rata credit: its multiplier and the arithmetic in words;
    `only_below_target` is set for revision 1.1 results."""

    multiplier: Decimal
    formula: str
    only_below_target: bool | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"multiplier": str(self.multiplier), "formula": self.formula}
        if self.only_below_target is not None:
            out["only_below_target"] = self.only_below_target
        return out


@dataclass(frozen=True, kw_only=True)
class UnitAvailability:
    """The unit's availability and credit in the month. `unit` is the unit-month as `slakit
    credits` reports it; `exact_pct` the exact availability in percent (`unit.availability`
    is it truncated to four decimals); `lost_gpu_seconds` (the loss in GPU-seconds, the
    downtime being it over the node's GPUs) is set where degraded time counts proportionally;
    `formula` is the fraction in words."""

    unit: UnitMonth
    lost_gpu_seconds: int | None
    formula: str
    exact_pct: Fraction
    tiers: tuple[Tier, ...]
    pro_rata: ProRata | None

    def to_json(self) -> dict[str, Any]:
        u = self.unit
        out: dict[str, Any] = {
            "downtime_seconds": seconds_value(u.downtime_seconds), "lost_gpu_seconds": self.lost_gpu_seconds,
            "excluded_seconds": u.excluded_seconds, "formula": self.formula,
            "exact": exact_text(self.exact_pct, AVAILABILITY_PLACES) + "%",
            "availability_pct": format(u.availability, "f"), "target_pct": percent_text(u.target), "met": u.met,
            "tiers": [t.to_json() for t in self.tiers],
            "pro_rata": None if self.pro_rata is None else self.pro_rata.to_json(),
            "credit_pct": format(u.credit_pct, "f"), "unit_fee": money_text(u.fee), "unit_credit": money_text(u.credit),
            "incidents": list(u.incidents), "flags": list(u.flags),
        }
        if u.service_seconds is not None:       # revision 1.1
            out.update({"service_seconds": u.service_seconds, "unit_charged_fee": money_text(u.charged_fee)})
        return out


@dataclass(frozen=True, kw_only=True)
class NodeShare:
    """A node's share of its fee owed by one scope (the node itself, its rack, ...)."""

    scope: str
    unit: str
    share: Fraction

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "unit": self.unit, "share_of_fee": exact_text(self.share * 100) + "%"}


@dataclass(frozen=True, kw_only=True)
class NodeMoney:
    """A node's money in the month: its exact and rounded fee, the share of the fee each
    scope owes, the stacked share (`stacking`), its exact and rounded (half-up) credit, what
    it is owed after the month's cap and minimum (`after_cap_and_minimum`, whole cents, the
    cents left over going to the largest remainders) and the exact share behind it
    (`after_cap_exact`). The revision 1.1 fields (service time, hours not charged, the
    charged fee the credit is taken from) are None for revision 1 results."""

    node: str
    fee_exact: Fraction
    fee: Decimal
    shares: tuple[NodeShare, ...]
    basis: str
    stacked_share: Fraction
    credit_exact: Fraction
    credit_rounded: Decimal
    after_cap_and_minimum: Decimal
    after_cap_exact: Fraction
    service_seconds: int | None = None
    not_charged_exact: Fraction | None = None
    not_charged: Decimal | None = None
    charged_fee_exact: Fraction | None = None

    @property
    def after_cap_text(self) -> str:
        """The exact share of the capped total: in cents when whole, else four decimals."""
        cents = self.after_cap_exact * 100
        if cents.denominator == 1:
            return cr.money(int(cents))
        return exact_text(self.after_cap_exact, HOURS_PLACES)

    @property
    def service_hours(self) -> Fraction | None:
        return None if self.service_seconds is None else Fraction(self.service_seconds, 3600)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "node": self.node, "fee_exact": exact_text(self.fee_exact), "fee": money_text(self.fee),
            "shares": [s.to_json() for s in self.shares], "basis": self.basis,
            "stacked_share": exact_text(self.stacked_share * 100) + "%", "credit_exact": exact_text(self.credit_exact),
            "credit_rounded": money_text(self.credit_rounded),
            "after_cap_and_minimum": money_text(self.after_cap_and_minimum), "after_cap_share_exact": self.after_cap_text,
        }
        if self.service_seconds is not None:        # revision 1.1
            out.update({"service_seconds": self.service_seconds,
                        "service_hours": exact_text(self.service_hours, HOURS_PLACES),
                        "not_charged_exact": exact_text(self.not_charged_exact),
                        "not_charged": money_text(self.not_charged),
                        "charged_fee_exact": exact_text(self.charged_fee_exact)})
        return out


@dataclass(frozen=True, kw_only=True)
class NodeNotInService:
    """A node of the unit with no service time in the month (revision 1.1): no fee, no credit."""

    node: str

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "not_in_service": True}


@dataclass(frozen=True, kw_only=True)
class ExplainedMoney:
    """The money of the unit's nodes (the first 50; `nodes_not_listed` more) and the month's
    totals. `node_fee_formula` says how a node's fee is made."""

    currency: str
    stacking: str
    node_fee_formula: str
    nodes: tuple[NodeMoney | NodeNotInService, ...]
    nodes_not_listed: int = 0
    month: MonthTotals

    def month_json(self) -> dict[str, Any]:
        m = self.month
        out: dict[str, Any] = {
            "fee_total": money_text(m.fee_total), "credit_uncapped": money_text(m.credit_uncapped),
            "cap_amount": None if m.cap_amount is None else money_text(m.cap_amount), "cap_applied": m.cap_applied,
            "minimum": str(m.minimum), "minimum_applied": m.minimum_applied, "credit_total": money_text(m.credit_total),
        }
        if m.not_charged_total is not None:       # revision 1.1
            out.update({"minimum_rule": m.minimum_rule, "not_charged_total": money_text(m.not_charged_total),
                        "remedy_total": money_text(m.remedy_total)})
        if m.claim_status is not None:
            out["claim"] = {"due": _iso_or_none(m.claim_due), "status": m.claim_status}
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"currency": self.currency, "stacking": self.stacking,
                               "node_fee_formula": self.node_fee_formula, "nodes": [n.to_json() for n in self.nodes]}
        if self.nodes_not_listed:
            out["nodes_not_listed"] = self.nodes_not_listed
        out["period"] = self.month_json()
        return out


@dataclass(frozen=True, kw_only=True)
class Explanation:
    """One unit (`scope`, with its `parents`) in one month: the month `[start, end)` in
    `zone`, the time open incidents end (`as_of`), the incident parts on the unit, the steps
    of the timeline, the revision 1.1 clock starts (`counts_from: report`; else None) and
    service time (else None), the availability and credit (None for a scope without a
    service level, or with `not_in_service` for a unit with no service time in the month)
    and the money."""

    contract: str
    unit: str
    scope: str
    parents: dict[str, str]             # scope -> id of the units above
    period: str
    zone: str
    start: datetime
    end: datetime
    month_seconds: int
    hours: Decimal
    as_of: datetime
    incidents: tuple[IncidentPart, ...]
    steps: tuple[Step, ...]
    clock: tuple[ClockStart, ...] | None
    service: ServiceTime | None
    availability: UnitAvailability | None
    not_in_service: bool
    money: ExplainedMoney

    def to_json(self) -> dict[str, Any]:
        """The `slakit-explain/1` document (`slakit explain --format json`)."""
        out: dict[str, Any] = {
            "format": FORMAT, "contract": self.contract, "unit": self.unit, "scope": self.scope,
            "parents": dict(self.parents), "period": self.period, "zone": self.zone, "start": iso_text(self.start),
            "end": iso_text(self.end), "month_seconds": self.month_seconds,
            "hours": format(self.hours.normalize(), "f"), "as_of": iso_text(self.as_of),
            "incidents": [p.to_json() for p in self.incidents], "steps": [s.to_json() for s in self.steps],
        }
        if self.clock is not None:
            out["clock"] = [c.to_json() for c in self.clock]
        if self.service is not None:
            out["service"] = self.service.to_json()
        out["availability"] = None if self.availability is None else self.availability.to_json()
        if self.not_in_service:
            out["not_in_service"] = True
        out["money"] = self.money.to_json()
        return out
