"""What is owed, node by node: the month's credit after the cap and the minimum, spread back
over the nodes so that the settled amounts add up to the credit total to the cent.

The engine rounds each node's credit (after stacking and the node ceiling) half-up to the
cent and applies the cap and then the minimum to the month's sum (spec section 5). The cap
and the minimum act on the month, not on a node; to say what a node (or a unit) is owed
after them, the month's total is shared out in proportion to the rounded node credits:

- no cap applied and minimum not applied: each node keeps its rounded credit;
- minimum applied: every node is owed 0;
- cap applied: node i gets floor(credit_i x total / uncapped) cents, and the cents left
  over go one each to the nodes with the largest remainders (ties: topology order), so the
  settled amounts sum exactly to the month's credit total.

A unit's (rack, cluster ...) credit after the cap and minimum is its credit x total /
uncapped, rounded half-up to the cent: an indication of how the cap scales it. Money is
settled per node; unit figures do not add up across scopes when credits stack.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

from calculators import credits as cr

HOURS = Decimal("0.0001")


def settled_node_cents(pr: Any) -> np.ndarray:
    """Per node of a `PeriodResult`: the credit owed after the cap and the minimum, in cents."""
    credit = np.asarray([int(x) for x in pr.nodes.credit_cents], dtype=object)
    total, uncapped = int(pr.credit_total_cents), int(pr.credit_uncapped_cents)
    if total == uncapped:
        return credit
    if total == 0 or uncapped == 0:
        return np.asarray([0] * len(credit), dtype=object)
    scaled = [c * total for c in credit.tolist()]
    base = [s // uncapped for s in scaled]
    rest = total - sum(base)
    if rest:
        order = sorted(range(len(base)), key=lambda i: (-(scaled[i] % uncapped), i))
        for i in order[:rest]:
            base[i] += 1
    return np.asarray(base, dtype=object)


def scaled_cents(cents: int, pr: Any) -> int:
    """A unit credit scaled by the month's cap and minimum (rounded half-up to the cent)."""
    total, uncapped = int(pr.credit_total_cents), int(pr.credit_uncapped_cents)
    if total == uncapped:
        return int(cents)
    if uncapped == 0:
        return 0
    return (2 * int(cents) * total + uncapped) // (2 * uncapped)


def hours(seconds: int | float) -> str:
    """Seconds as hours with four decimals (half-up): 9000 -> 2.5000."""
    return format((Decimal(str(seconds)) / 3600).quantize(HOURS, ROUND_HALF_UP), "f")


CSV_COLUMNS = ("period", "row", "scope", "id", "downtime_seconds", "downtime_hours", "excluded_seconds",
               "excluded_hours", "availability_pct", "target_pct", "met", "credit_pct", "fee", "credit",
               "settled_credit", "credit_owed", "basis", "incidents", "flags")


def csv_rows(result: Any) -> list[dict[str, Any]]:
    """The rows of `slakit credits --format csv`, month by month.

    `row` says what a row is: `unit` (one per unit and scope with a service level, as
    computed: `credit` before stacking and the cap), `node` (one per node: `credit` after
    stacking and the node ceiling, `settled_credit` after the cap and the minimum),
    `total` (one per month: `fee` and `credit` summed, `credit_owed` the month's credit
    total) and, with `--accepted-on` and a late handover, one `acceptance_delay` row (that
    remedy's credit, outside the months' cap). Summing `settled_credit` over the file gives
    the amount owed.
    """
    rows: list[dict[str, Any]] = []
    for pr in result.periods:
        label = pr.period.label
        for sm in pr.scopes.values():
            for r in sm.rows():
                r["period"] = label
                r["row"] = "unit"
                r["downtime_hours"] = hours(r["downtime_seconds"])
                r["excluded_hours"] = hours(r["excluded_seconds"])
                r["incidents"] = " ".join(r["incidents"])
                r["flags"] = " ".join(r["flags"])
                rows.append(r)
        settled = settled_node_cents(pr).tolist()
        for n, s in zip(pr.nodes.rows(), settled):
            row = {"period": label, "row": "node", "scope": "node", "id": n["id"], "fee": n["fee"],
                   "credit": n["credit"], "settled_credit": cr.money(int(s)), "basis": n["basis"]}
            for key in ("service_seconds", "not_charged"):          # revision 1.1 contracts
                if key in n:
                    row[key] = n[key]
            rows.append(row)
        flags = [f for f, on in (("cap_applied", pr.cap_applied), ("minimum_applied", pr.minimum_applied)) if on]
        total = {"period": label, "row": "total", "id": "total", "fee": cr.money(pr.fee_total_cents),
                 "credit": cr.money(pr.credit_uncapped_cents), "credit_owed": cr.money(pr.credit_total_cents),
                 "flags": " ".join(flags)}
        if getattr(pr, "not_charged_cents", None) is not None:
            total["not_charged"] = cr.money(pr.not_charged_cents)
        rows.append(total)
    acc = result.termination.acceptance_delay if result.termination is not None else None
    if acc is not None and acc.credit > 0:
        # a remedy of its own (acceptance section), outside the months' cap and minimum
        credit = str(acc.credit)
        rows.append({"period": acc.monthly_fee_month or "", "row": "acceptance_delay", "id": "acceptance",
                     "fee": str(acc.monthly_fee), "credit": credit, "settled_credit": credit,
                     "credit_owed": credit, "flags": f"days_late={acc.days_late}"})
    return rows
