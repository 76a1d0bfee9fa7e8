"""The frozen result of a credits computation.

Figures are held column-wise (one numpy array per field, one entry per unit), so computing
a 12,600-node fleet stays fast. Renderers read typed records built from the columns on
demand (`calculators.result_records`: `Result.month_totals()`, `quarter_totals()`,
`unit_months(label)`, `node_credits(label)`); `Result.support` and `Result.termination`
are records already (`calculators.support_records`); the JSON document is written by one
serializer straight from the columns (`calculators.result_json`, `Result.dumps_utf8()`);
`unit_rows()` and `ScopeMonth.rows()` give the flat per-unit rows of the CSV form (the
fields of the JSON unit records, as text).

JSON shape (stable; money and percentages as decimal strings):

    {"format": "slakit-credits/2", "contract", "contract_sha256", "incidents_file", "incidents_sha256", "currency",
     "timezone", "as_of", "skipped_rows", "open_incidents",
     "periods": [{"period", "start", "end", "hours", "fee_total", "credit_uncapped",
                  "credit_total", "cap_amount", "cap_applied", "minimum", "minimum_applied", "claim": {"due", "status"},
                  "units": [{"scope", "id", "downtime_seconds", "excluded_seconds",
                             "availability_pct", "target_pct", "met", "credit_pct", "fee",
                             "credit", "credit_before_cap", "credit_after_cap_and_minimum",
                             "incidents", "flags"}],
                  "nodes": [{"id", "fee", "credit", "basis", "credit_before_cap",
                             "credit_after_cap_and_minimum"}]}],
     "quarters": [...], "support": {...}, "termination": {...},
     "claims_as_of", "claim_window", "claimable_total"}

`units` lists every unit of every scope that has a service level (all nodes included, in
topology order); `nodes` lists every node. Per unit:
  - `downtime_seconds`: counted down time inside the month (after exclusions, merging,
    `min_outage` and the rack/cluster/site rules). An integer, except for nodes whose
    degraded time counts proportionally: lost GPU-seconds / GPUs, rounded to 3 decimals,
    with `lost_gpu_seconds` giving the exact integer;
  - `excluded_seconds`: excluded time of the unit and the units above it that is not
    downtime (reported only; it never shortens the month);
  - `availability_pct`: 1 - downtime / month, in percent truncated to 4 decimals for
    display; `met` and the tiers use the exact value (equal to a threshold is not below);
  - `credit_pct`: the tier's credit, or for pro rata the share of the fee (4 decimals);
  - `fee`, `credit`: the unit's fee (sum of its nodes' fees) and its credit before it is
    spread over the nodes, each rounded half-up to cents;
  - `incidents`: ids whose counted parts make the unit's downtime in the month (for a
    node following its rack or cluster, also the ids that made those down), log order;
  - `flags`: `notice_not_met`, `exclusion_cap_exceeded`, `unknown_category`,
    `open_incident` from those incidents and from incidents on the unit or above it.
Per node: `fee`, `credit` (after stacking, at most the fee, rounded half-up to cents,
before the month's cap) and `basis`: the scope whose share was used (`max`; the first
of node, rack, cluster, site on ties), the scopes added (`sum`, e.g. `node+rack`) or
`none`. Per month: `credit_uncapped` is the sum of node credits, `cap_amount` the cap
share of the exact fee total rounded down to the cent, `credit_total` the issued credit
after the cap and then the minimum. `credit_before_cap` repeats `credit`;
`credit_after_cap_and_minimum` is, per node, its share of the month's credit total (the
shares add up to it to the cent) and, per unit, its credit scaled by credit total /
uncapped (see `calculators.settle`). `quarters` sums only quarters whose three months were
all computed.

`support` and `termination` are `Result.support` (`SupportFigures`) and `Result.termination`
(`Termination`) of `calculators.support_records`, written by `result_json.support_json` and
`termination_json`: `support` is `{}` for a run without support figures; `termination` holds
`chronic` (null without `termination.chronic`; with `--history` also `months_missing`,
`history_months` and `near`) and, with `accepted_on`, `acceptance_delay`.

Claims (sla-semantics 8.7, `calculators.claims`): per month `claim.due` is the instant the
claim is due (null without `credits.claim_window`) and `claim.status` is `open`, `due_soon`
(7 days or less left) or `expired` against `claims_as_of` (the run's as_of);
`claimable_total` is the sum of `credit_total` over the months not expired and
`claim_window` the contract's window (`30d`, `months_after: 2` or null).
after the cap and then the minimum.

Revision 1.1 (a contract using any of its fields; `Result.revision_1_1`): per unit
`service_seconds` (its service time in the month; availability is over it) and
`charged_fee` (fee less the hours not charged of its nodes); per node `service_seconds` and
`not_charged`; per month `not_charged_total` and `remedy_total` (credit owed + not charged)
right after `credit_total`, and `minimum_rule` (`at_least` or `more_than`); per quarter
`not_charged_total` and `remedy_total`. A unit or node without service time in a month has
no record that month. Revision 1 results carry none of these fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from calculators import credits as cr
from calculators import settle
from calculators.periods import Period
from calculators.result_records import (  # noqa: F401  (iso and gc_paused: used from here by other modules)
    MonthTotals,
    NodeCredit,
    QuarterTotals,
    UnitMonth,
    gc_paused,
    iso,
    money,
    percent_e4,
    utc,
)
from calculators.support_records import SupportFigures, Termination
from calculators.vocabulary import FLAG_LISTS, FLAG_MASK, FLAG_NAMES

if TYPE_CHECKING:
    import pandas as pd

    from calculators.claims import ClaimDeadline, ClaimSummary
    from calculators.incident_figures import IncidentFigures

FLAG_BITS = FLAG_NAMES          # (bit, name), calculators/vocabulary.py
_FLAG_LISTS = FLAG_LISTS


def _flags(bits: int) -> list[str]:
    return list(_FLAG_LISTS[bits & FLAG_MASK])


def _money_list(cents: np.ndarray) -> list[str]:
    """`cr.money` of each amount, each distinct one formatted once."""
    return cr.each_once(np.asarray(cents).tolist(), cr.money)


def _pct(value: Decimal | None) -> str:
    return format(value.normalize(), "f") if value is not None else "0"


class UnitIncidents(Protocol):
    """A scope-month's incident ids per unit index: the engine's `calculators.engine.IdIndex`
    (which also offers `id_lists`, `take_lists`, `pairs` and `names`, used where present) or a
    plain `dict[int, tuple[str, ...]]`."""

    def get(self, i: int, default: Sequence[str] = ..., /) -> Sequence[str]: ...


def incident_ids(incidents: UnitIncidents, indices: list[int]) -> dict[int, tuple[str, ...]]:
    """Incident ids (log order) of a few units of a `ScopeMonth`, as tuples: from the engine's
    index worked out for these units only, without building the lists of all units."""
    if not indices:
        return {}
    id_lists = getattr(incidents, "id_lists", None)
    if id_lists is not None:
        return {i: tuple(ids) for i, ids in id_lists(indices).items()}
    return {i: tuple(incidents.get(i, ())) for i in indices}


def incident_preview(incidents: UnitIncidents, indices: list[int], head: int) -> dict[int, tuple[tuple[str, ...], int]]:
    """`(first head ids, number of ids)` of a few units (a table's shown rows): from the
    engine's index only those `head` ids are made strings (a cluster's hundred thousand others
    are counted, not read)."""
    if not indices:
        return {}
    id_lists = getattr(incidents, "id_lists", None)
    if id_lists is not None:
        return {i: (tuple(ids[:head]), len(ids)) for i, ids in id_lists(indices).items()}
    out = {}
    for i in indices:
        ids = tuple(incidents.get(i, ()))
        out[i] = (ids[:head], len(ids))
    return out


@dataclass(frozen=True, kw_only=True)
class ScopeMonth:
    """One scope's figures for one month, one array entry per unit of the scope."""

    scope: str
    ids: tuple[str, ...]
    lnum: np.ndarray            # lost seconds (or GPU-seconds when dn = GPUs), Python ints
    dn: np.ndarray              # 1, or the node's GPUs (proportional degraded time)
    excluded: np.ndarray        # excluded seconds (int64)
    avail_e4: np.ndarray        # availability % x 10**4, rounded half-up
    target: Decimal
    met: np.ndarray             # not below the target
    credit_pct: np.ndarray      # Decimal per unit (tiers) or None (pro rata: from share)
    share_num: np.ndarray       # credit as a share of the unit's fee: num / den
    share_den: np.ndarray
    fee_num: np.ndarray         # unit fee = fee_num / fee_den
    fee_den: int
    credit_cents: np.ndarray    # share x fee, rounded half-up to cents (display)
    flags: np.ndarray           # bits, see FLAG_BITS
    incidents: UnitIncidents    # unit index -> incident ids (units with any)
    proportional: bool = False
    month_seconds: int = 0
    service: np.ndarray | None = None       # revision 1.1: service seconds per unit (None: revision 1)
    charged_num: np.ndarray | None = None   # revision 1.1: fee less hours not charged (over fee_den)

    def downtime_seconds(self, i: int) -> int | float:
        lnum, dn = int(self.lnum[i]), int(self.dn[i])
        if dn == 1:
            return lnum
        if lnum % dn == 0:
            return lnum // dn
        return float(round(Decimal(lnum) / Decimal(dn), 3))

    def credit_pct_text(self, i: int) -> str:
        v = self.credit_pct[i]
        if v is not None:
            return _pct(v)
        num, den = int(self.share_num[i]), int(self.share_den[i])
        return cr.pct_text((2 * 10**6 * num + den) // (2 * den))

    def rows(self) -> list[dict[str, Any]]:
        """All units' records (column-wise conversions, then one dict per unit)."""
        n = len(self.ids)
        lnum = [int(x) for x in self.lnum]
        dn = [int(x) for x in self.dn]
        if all(d == 1 for d in dn):
            down: list = lnum
        else:
            down = [self.downtime_seconds(i) for i in range(n)]
        avail = [cr.pct_text(int(x)) for x in self.avail_e4]
        target = _pct(self.target)
        credit_pct = cr.each_once(self.credit_pct, _pct)
        for i, v in enumerate(self.credit_pct):
            if v is None:                       # pro rata: the unit's own share
                credit_pct[i] = self.credit_pct_text(i)
        fees = _money_list(cr.cents_half_up(self.fee_num, self.fee_den))
        credits = _money_list(self.credit_cents)
        incidents = self.incidents.take_lists() if hasattr(self.incidents, "take_lists") else \
            [list(self.incidents.get(i, ())) for i in range(n)]
        flags = [_FLAG_LISTS[int(b) & FLAG_MASK] for b in self.flags]
        excluded = self.excluded.tolist()
        met = self.met.tolist()
        out = []
        service = self.service.tolist() if self.service is not None else None
        charged = _money_list(cr.cents_half_up(self.charged_num, self.fee_den)) if self.charged_num is not None \
            else None
        for i in range(n):
            if service is not None and service[i] == 0:
                continue            # not in service this month: no unit-month (revision 1.1, 8.1)
            r = {"scope": self.scope, "id": self.ids[i], "downtime_seconds": down[i],
                 "excluded_seconds": excluded[i], "availability_pct": avail[i], "target_pct": target,
                 "met": met[i], "credit_pct": credit_pct[i], "fee": fees[i], "credit": credits[i],
                 "incidents": incidents[i], "flags": list(flags[i])}
            if self.proportional:
                r["lost_gpu_seconds"] = lnum[i]
            if service is not None:
                r["service_seconds"] = service[i]
                r["charged_fee"] = charged[i] if charged is not None else fees[i]
            out.append(r)
        return out

    def downtime_value(self, i: int) -> int | Decimal:
        """`downtime_seconds` of unit i as a number: an int, or (proportional degraded time
        not a whole number of seconds) lost GPU-seconds / GPUs rounded to 3 decimals."""
        return cr.downtime_value(int(self.lnum[i]), int(self.dn[i]))

    def credit_pct_value(self, i: int) -> Decimal:
        """The unit's credit in percent: the tier's (as written, normalised) or, pro rata, the
        share of the fee with four decimals; `format(value, "f")` is the document's text."""
        v = self.credit_pct[i]
        if v is not None:
            return v.normalize()
        num, den = int(self.share_num[i]), int(self.share_den[i])
        return percent_e4((2 * 10**6 * num + den) // (2 * den))

    def records(self, pr: PeriodResult, indices: list[int] | None = None, *,
                incidents: bool = True) -> list[UnitMonth]:
        """`UnitMonth` records of the units in service this month (all of them, in topology
        order, or those at `indices`); `pr` is the month they belong to (for the label and
        the cap's scaling). An index counts from the end when negative, as a list's does; one
        out of range is an IndexError. `incidents=False` leaves each record's `incidents`
        None instead of the tuple of its ids (a table that shows a few of them asks
        `incident_preview`)."""
        label = pr.period.label
        every = indices is None
        n = len(self.ids)
        if every:
            idx: range | list[int] = range(n)
        else:
            idx = [int(i) + n if int(i) < 0 else int(i) for i in indices]
            if any(not 0 <= i < n for i in idx):
                raise IndexError(f"unit index out of range for the {n} units of scope {self.scope}")
        ids_of: Callable[[int], tuple[str, ...] | None]
        if not incidents:
            ids_of = lambda i: None                         # noqa: E731
        elif every and hasattr(self.incidents, "take_lists"):
            lists = self.incidents.take_lists()
            ids_of = lambda i: tuple(lists[i])              # noqa: E731
        else:
            some = incident_ids(self.incidents, [i for i in idx if self.in_service(i)])
            empty: tuple[str, ...] = ()
            ids_of = lambda i: some.get(i) or empty         # noqa: E731
        fees = cr.cents_half_up(self.fee_num, self.fee_den)
        charged = cr.cents_half_up(self.charged_num, self.fee_den) if self.charged_num is not None else None
        scaled: dict[int, Decimal] = {}
        out = []
        for i in idx:
            if not self.in_service(i):
                continue            # not in service this month: no unit-month (revision 1.1, 8.1)
            credit = int(self.credit_cents[i])
            after = scaled.get(credit)
            if after is None:
                after = scaled[credit] = money(settle.scaled_cents(credit, pr))
            service = int(self.service[i]) if self.service is not None else None
            out.append(UnitMonth(
                period=label, scope=self.scope, id=self.ids[i], downtime_seconds=self.downtime_value(i),
                excluded_seconds=int(self.excluded[i]), availability=percent_e4(int(self.avail_e4[i])),
                target=self.target, met=bool(self.met[i]), credit_pct=self.credit_pct_value(i),
                fee=money(int(fees[i])), credit=money(credit), credit_after_cap_and_minimum=after,
                incidents=ids_of(i), flags=tuple(_FLAG_LISTS[int(self.flags[i]) & FLAG_MASK]),
                lost_gpu_seconds=int(self.lnum[i]) if self.proportional else None,
                service_seconds=service,
                charged_fee=None if service is None else money(int(charged[i] if charged is not None else fees[i]))))
        return out

    def incident_preview(self, indices: list[int], head: int = 4) -> dict[int, tuple[tuple[str, ...], int]]:
        """`{index: (first head incident ids, number of ids)}` of the units at `indices` (see
        the module function `incident_preview`)."""
        return incident_preview(self.incidents, [int(i) for i in indices], head)

    def row(self, i: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "scope": self.scope,
            "id": self.ids[i],
            "downtime_seconds": self.downtime_seconds(i),
            "excluded_seconds": int(self.excluded[i]),
            "availability_pct": cr.pct_text(int(self.avail_e4[i])),
            "target_pct": _pct(self.target),
            "met": bool(self.met[i]),
            "credit_pct": self.credit_pct_text(i),
            "fee": cr.money(cr.cents_half_up(int(self.fee_num[i]), self.fee_den)),
            "credit": cr.money(int(self.credit_cents[i])),
            "incidents": list(self.incidents.get(i, ())),
            "flags": _flags(int(self.flags[i])),
        }
        if self.proportional:
            out["lost_gpu_seconds"] = int(self.lnum[i])
        if self.service is not None:
            out["service_seconds"] = int(self.service[i])
            out["charged_fee"] = cr.money(cr.cents_half_up(int(self.charged_num[i]), self.fee_den)) \
                if self.charged_num is not None else out["fee"]
        return out

    def in_service(self, i: int) -> bool:
        """Whether the unit has service time this month (always, in revision 1)."""
        return self.service is None or int(self.service[i]) > 0


@dataclass(frozen=True, kw_only=True)
class NodeMonth:
    ids: tuple[str, ...]
    fee_num: np.ndarray
    fee_den: int
    fee_cents: np.ndarray
    credit_cents: np.ndarray
    basis: np.ndarray           # "node", "rack", "node+rack" ... or "" when no credit
    service: np.ndarray | None = None             # revision 1.1: service seconds per node
    not_charged_cents: np.ndarray | None = None   # revision 1.1: fee of the hours not charged
    not_charged_num: np.ndarray | None = None     # the same, exact (over fee_den)

    def rows(self) -> list[dict[str, Any]]:
        fees = _money_list(self.fee_cents)
        credits = _money_list(self.credit_cents)
        basis = [str(b) or "none" for b in self.basis]
        if self.service is None:
            return [{"id": i, "fee": f, "credit": c, "basis": b}
                    for i, f, c, b in zip(self.ids, fees, credits, basis)]
        nc = _money_list(self.not_charged_cents)
        return [{"id": i, "fee": f, "credit": c, "basis": b, "service_seconds": s, "not_charged": x}
                for i, f, c, b, s, x in zip(self.ids, fees, credits, basis, self.service.tolist(), nc) if s > 0]

    def records(self, pr: PeriodResult) -> list[NodeCredit]:
        """`NodeCredit` records of the nodes in service this month, in topology order."""
        label = pr.period.label
        settled = settle.settled_node_cents(pr).tolist()
        out = []
        for i, node in enumerate(self.ids):
            service = int(self.service[i]) if self.service is not None else None
            if service == 0:
                continue
            out.append(NodeCredit(
                period=label, id=node, fee=money(int(self.fee_cents[i])), credit=money(int(self.credit_cents[i])),
                basis=str(self.basis[i]) or "none", credit_after_cap_and_minimum=money(int(settled[i])),
                service_seconds=service,
                not_charged=money(int(self.not_charged_cents[i])) if service is not None else None))
        return out

    def row(self, i: int) -> dict[str, Any]:
        out = {"id": self.ids[i], "fee": cr.money(int(self.fee_cents[i])),
               "credit": cr.money(int(self.credit_cents[i])), "basis": str(self.basis[i]) or "none"}
        if self.service is not None:
            out["service_seconds"] = int(self.service[i])
            out["not_charged"] = cr.money(int(self.not_charged_cents[i]))
        return out


@dataclass(frozen=True, kw_only=True)
class PeriodResult:
    period: Period
    fee_total_cents: int         # sum of exact node fees, rounded half-up
    credit_uncapped_cents: int   # sum of rounded node credits
    cap_cents: int | None        # cap share x exact fee total, rounded down to the cent
    cap_applied: bool
    minimum: Decimal              # the contract's minimum credit (an amount, as written)
    minimum_applied: bool
    credit_total_cents: int
    scopes: dict[str, ScopeMonth]
    nodes: NodeMonth
    not_charged_cents: int | None = None   # revision 1.1: sum of the nodes' hours not charged (None: revision 1)
    minimum_strict: bool = False           # revision 1.1: `minimum: {more_than: X}`

    @property
    def remedy_cents(self) -> int:
        """Credit owed plus hours not charged (revision 1.1, 8.5)."""
        return self.credit_total_cents + (self.not_charged_cents or 0)

    def totals(self, claim: ClaimDeadline | None = None) -> MonthTotals:
        """The month's `MonthTotals`; `claim` is its `calculators.claims.ClaimDeadline` (if judged)."""
        p = self.period
        rev11 = self.not_charged_cents is not None
        return MonthTotals(
            period=p.label, start=utc(p.start), end=utc(p.end), hours=p.hours,
            fee_total=money(self.fee_total_cents), credit_uncapped=money(self.credit_uncapped_cents),
            credit_total=money(self.credit_total_cents),
            cap_amount=money(self.cap_cents) if self.cap_cents is not None else None, cap_applied=self.cap_applied,
            minimum=self.minimum, minimum_applied=self.minimum_applied,
            minimum_rule="more_than" if self.minimum_strict else "at_least",
            not_charged_total=money(self.not_charged_cents) if rev11 else None,
            remedy_total=money(self.remedy_cents) if rev11 else None,
            claim_due=utc(claim.due) if claim is not None and claim.due is not None else None,
            claim_status=claim.status if claim is not None else None)

    def unit_months(self, scope: str | None = None) -> list[UnitMonth]:
        """The month's `UnitMonth` records, scope by scope (or of one scope), topology order."""
        out: list[UnitMonth] = []
        for name, sm in self.scopes.items():
            if scope is None or name == scope:
                out.extend(sm.records(self))
        return out

    def node_credits(self) -> list[NodeCredit]:
        return self.nodes.records(self)


@dataclass(frozen=True, kw_only=True)
class Result:
    contract: str
    contract_sha256: str | None
    currency: str
    timezone: str
    as_of: int
    incidents_file: str | None
    incidents_sha256: str | None
    skipped_rows: tuple[dict[str, Any], ...]
    periods: tuple[PeriodResult, ...]
    support: SupportFigures | None = None     # None: computed without the support figures
    termination: Termination | None = None
    open_incidents: tuple[str, ...] = ()      # ids without an end (they run until as_of)
    figures: IncidentFigures | None = None   # per-incident figures: computed with incidents=True
    claims: ClaimSummary | None = None       # each month's claim deadline against as_of

    @property
    def incidents(self) -> pd.DataFrame:
        """Per-incident figures of this run (pandas DataFrame, see `calculators.incident_figures`)."""
        if self.figures is None:
            raise ValueError("per-incident figures were not computed; pass incidents=True to compute()")
        return self.figures.table

    def period(self, label: str) -> PeriodResult:
        for p in self.periods:
            if p.period.label == label:
                return p
        raise KeyError(label)

    def unit(self, label: str, scope: str, unit_id: str) -> dict[str, Any]:
        sm = self.period(label).scopes[scope]
        return sm.row(sm.ids.index(unit_id))

    def node(self, label: str, node_id: str) -> dict[str, Any]:
        nm = self.period(label).nodes
        return nm.row(nm.ids.index(node_id))

    def month_totals(self) -> tuple[MonthTotals, ...]:
        """Each computed month's totals (with its claim deadline when the run judged claims)."""
        claims = {m.period: m for m in self.claims.months} if self.claims is not None else {}
        return tuple(p.totals(claims.get(p.period.label)) for p in self.periods)

    def quarter_totals(self) -> tuple[QuarterTotals, ...]:
        """Sums over each quarter whose three months were all computed (shown next to the
        months); a quarter with a month missing has no sum, it would be no quarter's figure."""
        acc: dict[str, dict[str, Any]] = {}
        for p in self.periods:
            q = f"{p.period.year}-Q{(p.period.month - 1) // 3 + 1}"
            d = acc.setdefault(q, {"months": [], "fee": 0, "credit": 0, "nc": None, "remedy": None})
            d["months"].append(p.period.label)
            d["fee"] += p.fee_total_cents
            d["credit"] += p.credit_total_cents
            if p.not_charged_cents is not None:
                d["nc"] = (d["nc"] or 0) + p.not_charged_cents
                d["remedy"] = (d["remedy"] or 0) + p.remedy_cents
        return tuple(QuarterTotals(quarter=q, months=tuple(d["months"]), fee_total=money(d["fee"]),
                                   credit_total=money(d["credit"]),
                                   not_charged_total=money(d["nc"]) if d["nc"] is not None else None,
                                   remedy_total=money(d["remedy"]) if d["remedy"] is not None else None)
                     for q, d in acc.items() if len(set(d["months"])) == 3)

    def unit_months(self, label: str, scope: str | None = None) -> list[UnitMonth]:
        """The `UnitMonth` records of month `label` (all scopes, or one)."""
        return self.period(label).unit_months(scope)

    def unit_month(self, label: str, scope: str, unit_id: str) -> UnitMonth:
        pr = self.period(label)
        sm = pr.scopes[scope]
        return sm.records(pr, [sm.ids.index(unit_id)])[0]

    def node_credits(self, label: str) -> list[NodeCredit]:
        return self.period(label).node_credits()

    def to_json(self, include_units: bool = True, include_incidents: bool = False) -> dict[str, Any]:
        """The JSON document (`calculators.result_json`) parsed back into Python values, for
        callers that want the machine form. Renderers read the typed records instead.
        `include_incidents` (needs `incidents=True` in `compute`) adds the per-incident
        parts (see `calculators.result_json`)."""
        import orjson

        from calculators.result_json import document_bytes

        return orjson.loads(document_bytes(self, include_units=include_units, include_incidents=include_incidents))

    def dumps(self) -> str:
        return self.dumps_utf8().decode("utf-8")

    def dumps_utf8(self, extra: dict[str, Any] | None = None) -> bytes:
        """The JSON document as UTF-8 bytes (what the credits command writes); `extra` adds
        top-level members after the others (the credits command's `performance`)."""
        from calculators.result_json import document_bytes

        return document_bytes(self, extra=extra)

    def dumps_pieces(self, extra: dict[str, Any] | None = None) -> list[bytes | memoryview]:
        """`dumps_utf8()` as UTF-8 pieces in order, not joined (`slaschema.fileio.write_atomic`
        writes them), without a second copy of the document."""
        from calculators.result_json import document_chunks

        return document_chunks(self, extra=extra)

    def write_json(self, write, extra: dict[str, Any] | None = None) -> None:
        """`dumps_utf8()` handed to `write(pieces)` a batch at a time as it is made (what the
        credits command does: `slaschema.fileio.atomic_writer` writes each batch as it comes)."""
        from calculators.result_json import write_document

        write_document(self, write, extra=extra)

    @property
    def revision_1_1(self) -> bool:
        """The contract uses revision 1.1 fields: results carry service seconds, hours not
        charged and the remedy (credit owed + not charged)."""
        return any(p.not_charged_cents is not None for p in self.periods)

    def unit_rows(self) -> list[dict[str, Any]]:
        """One flat record per unit-month (the CSV form). Revision 1.1: node rows also carry
        the node's `not_charged` amount (their sum is the month's `not_charged_total`)."""
        rows = []
        with gc_paused():
            for p in self.periods:
                nc = None
                if p.not_charged_cents is not None and "node" in p.scopes:
                    nc = dict(zip(p.nodes.ids, _money_list(p.nodes.not_charged_cents)))
                for sm in p.scopes.values():
                    for r in sm.rows():
                        r["period"] = p.period.label
                        r["incidents"] = " ".join(r["incidents"])
                        r["flags"] = " ".join(r["flags"])
                        if nc is not None:
                            r["not_charged"] = nc[r["id"]] if sm.scope == "node" else ""
                        rows.append(r)
        return rows
