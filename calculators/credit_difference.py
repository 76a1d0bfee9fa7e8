"""The credit difference two incident logs of one cluster make under one contract.

`slakit reconcile` compares the buyer's incident log with the provider's; what their
disagreements are worth is the credits each log earns under the contract, per month and
node (the node's share of the month's credit after the cap and the minimum, as
`calculators.settle` settles it), and the difference (ours - theirs). `credit_difference`
is pure: it takes the two computed results (`calculators.engine.compute` of each log, the
same contract and months) and returns a frozen record; `compare_logs` computes both results
and calls it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from calculators.credits import money_decimal
from calculators.engine import compute
from calculators.incidents import IncidentLog
from calculators.periods import month_bounds
from calculators.result import Result
from calculators.settle import settled_node_cents
from slaschema.loader import LoadedContract


@dataclass(frozen=True, kw_only=True)
class NodeCreditDifference:
    """One node whose settled credit (after the month's cap and minimum, `calculators.settle`)
    differs between the logs: the nodes' differences add up to the month's difference."""

    node: str
    ours: Decimal
    theirs: Decimal

    @property
    def difference(self) -> Decimal:
        return self.ours - self.theirs

    def to_json(self) -> dict[str, str]:
        return {"node": self.node, "ours": str(self.ours), "theirs": str(self.theirs),
                "difference": str(self.difference)}


@dataclass(frozen=True, kw_only=True)
class PeriodCreditDifference:
    """One month: the credit total each log earns (after caps and minimums) and the nodes
    whose settled credits differ (summing to `difference`, to the cent)."""

    period: str
    ours: Decimal
    theirs: Decimal
    nodes: tuple[NodeCreditDifference, ...]

    @property
    def difference(self) -> Decimal:
        return self.ours - self.theirs

    def to_json(self) -> dict[str, Any]:
        return {"period": self.period, "ours": str(self.ours), "theirs": str(self.theirs),
                "difference": str(self.difference), "nodes": [n.to_json() for n in self.nodes]}


@dataclass(frozen=True, kw_only=True)
class CreditDifference:
    """The credits of our log against the provider's, month by month, in the contract's currency."""

    currency: str
    periods: tuple[PeriodCreditDifference, ...]

    @property
    def difference(self) -> Decimal:
        """Ours - theirs over all months (positive: our log earns more credit)."""
        return sum((p.difference for p in self.periods), Decimal("0.00"))

    def to_json(self) -> dict[str, Any]:
        return {"available": True, "currency": self.currency, "months": [p.to_json() for p in self.periods],
                "difference": str(self.difference)}


def credit_difference(ours: Result, theirs: Result) -> CreditDifference:
    """The difference of two results of one contract over the same months (ValueError otherwise)."""
    if ours.contract != theirs.contract or ours.currency != theirs.currency:
        raise ValueError(f"results of different contracts: {ours.contract!r} and {theirs.contract!r}")
    if [p.period.label for p in ours.periods] != [p.period.label for p in theirs.periods]:
        raise ValueError("results over different months: "
                         f"{[p.period.label for p in ours.periods]} and {[p.period.label for p in theirs.periods]}")
    months = []
    for po, pt in zip(ours.periods, theirs.periods, strict=True):
        if tuple(po.nodes.ids) != tuple(pt.nodes.ids):
            raise ValueError(f"{po.period.label}: results over different nodes")
        # settled, not as computed per node: with a cap or minimum applied the nodes' own credits
        # do not add up to the month's total, and their differences not to the month's difference
        nodes = tuple(
            NodeCreditDifference(node=node, ours=money_decimal(int(a)), theirs=money_decimal(int(b)))
            for node, a, b in zip(po.nodes.ids, settled_node_cents(po).tolist(), settled_node_cents(pt).tolist(),
                                  strict=True)
            if int(a) != int(b))
        months.append(PeriodCreditDifference(period=po.period.label, ours=money_decimal(po.credit_total_cents),
                                             theirs=money_decimal(pt.credit_total_cents), nodes=nodes))
    return CreditDifference(currency=ours.currency, periods=tuple(months))


def months_covered(first: datetime, as_of: datetime, zone: str) -> list[str]:
    """Labels of the months (in `zone`) overlapping `[first, as_of)`, at least `first`'s month:
    half-open, so an `as_of` at a month's start leaves that month out."""
    return [p.label for p in month_bounds(math.floor(first.timestamp()), math.ceil(as_of.timestamp()), zone)]


def compare_logs(contract: LoadedContract, ours_log: IncidentLog, theirs_log: IncidentLog, periods: Sequence[str],
                 *, as_of: datetime, first: datetime | None = None) -> CreditDifference:
    """Compute both logs (loaded against `contract`) over `periods` (month or quarter labels;
    none: every month from `first`, else `as_of`'s month, to `as_of`) and return their credit
    difference."""
    labels = list(periods) or months_covered(first or as_of, as_of, contract.model.contract.timezone)
    ours = compute(contract, ours_log, labels, as_of=as_of, support=False)
    theirs = compute(contract, theirs_log, labels, as_of=as_of, support=False)
    return credit_difference(ours, theirs)
