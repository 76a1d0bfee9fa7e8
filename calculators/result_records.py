"""Typed views of a credits `Result` for the renderers: frozen records built by keyword.

`calculators.result` keeps the figures column-wise (numpy arrays, one entry per unit) so a
12,600-node fleet computes fast; the records here are built from those columns on demand,
for the units a renderer asks for:

- `UnitMonth`: one unit of one scope in one month (what the `units` list of the JSON
  document holds);
- `NodeMonth` figures as `NodeCredit`: one node's fee and credit in one month;
- `MonthTotals`: a month's fee, credits, cap, minimum and claim deadline;
- `QuarterTotals`: the sums of a quarter whose three months were all computed.

The run's claim summary is `Result.claims` (`calculators.claims.ClaimSummary`), already typed.

Money is `Decimal` with two places (`Decimal("1234.50")`), percentages are `Decimal`
(availability truncated to four decimals, as shown), times are aware UTC `datetime`s and
seconds are `int` (a proportional node downtime is a `Decimal` with three decimals). The
records carry no text parsed back from the JSON document: renderers format them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal

from calculators import credits as cr
from slaschema.gc_pause import gc_paused  # noqa: F401  (used from here by the result modules)


def money(cents: int) -> Decimal:
    """Cents as a two-place Decimal amount: 123456 -> Decimal('1234.56')."""
    return cr.money_decimal(cents)


def percent_e4(e4: int) -> Decimal:
    """A percentage held as x 10**4 (`cr.pct_text`) as a Decimal with four places."""
    return Decimal(int(e4)).scaleb(-4)


def utc(epoch: int) -> datetime:
    return datetime.fromtimestamp(int(epoch), timezone.utc)


def iso(epoch: int) -> str:
    return datetime.fromtimestamp(int(epoch), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, kw_only=True)
class UnitMonth:
    """One unit of a scope with a service level, in one month.

    `downtime_seconds` is counted downtime after exclusions, merging, `min_outage` and the
    rack/cluster/site rules: an int, or for a node whose degraded time counts
    proportionally the lost GPU-seconds / GPUs as a Decimal rounded to 3 decimals
    (`lost_gpu_seconds` then holds the exact integer). `availability` is in percent,
    truncated to 4 decimals (`met` was judged on the exact value). `credit` is the unit's
    credit before it is spread over its nodes; `credit_after_cap_and_minimum` the same
    scaled by the month's credit total / uncapped credit. `service_seconds` and
    `charged_fee` are set for revision 1.1 results only. `incidents` holds the ids in log
    order as a tuple; it is None only in records asked for without them
    (`ScopeMonth.records(..., incidents=False)`)."""

    period: str
    scope: str
    id: str
    downtime_seconds: int | Decimal
    excluded_seconds: int
    availability: Decimal
    target: Decimal
    met: bool
    credit_pct: Decimal
    fee: Decimal
    credit: Decimal
    credit_after_cap_and_minimum: Decimal
    incidents: tuple[str, ...] | None
    flags: tuple[str, ...]
    lost_gpu_seconds: int | None = None
    service_seconds: int | None = None
    charged_fee: Decimal | None = None


@dataclass(frozen=True, kw_only=True)
class NodeCredit:
    """One node in one month: its fee, its credit after stacking and the node ceiling
    (before the month's cap), the scope(s) the credit came from (`basis`: `node`, `rack`,
    `node+rack`, ... or `none`) and its share of the month's credit total."""

    period: str
    id: str
    fee: Decimal
    credit: Decimal
    basis: str
    credit_after_cap_and_minimum: Decimal
    service_seconds: int | None = None      # revision 1.1
    not_charged: Decimal | None = None      # revision 1.1: fee of the hours not charged


@dataclass(frozen=True, kw_only=True)
class MonthTotals:
    """A month's totals. `cap_amount` is None without a cap; `minimum_rule` is `at_least`
    or `more_than` (revision 1.1 `minimum: {more_than: X}`); `not_charged_total` and
    `remedy_total` (credit owed + hours not charged) are set for revision 1.1 results.
    `claim_status` (`open`, `due_soon`, `expired` as of the run's `as_of`, sla-semantics 8.7)
    is None when the run judged no claims; `claim_due` is None also without a claim window."""

    period: str
    start: datetime
    end: datetime
    hours: Decimal
    fee_total: Decimal
    credit_uncapped: Decimal
    credit_total: Decimal
    cap_amount: Decimal | None
    cap_applied: bool
    minimum: Decimal
    minimum_applied: bool
    minimum_rule: str
    not_charged_total: Decimal | None = None
    remedy_total: Decimal | None = None
    claim_due: datetime | None = None
    claim_status: str | None = None


@dataclass(frozen=True, kw_only=True)
class QuarterTotals:
    """Sums over a quarter whose three months were all computed."""

    quarter: str
    months: tuple[str, ...]
    fee_total: Decimal
    credit_total: Decimal
    not_charged_total: Decimal | None = None
    remedy_total: Decimal | None = None
