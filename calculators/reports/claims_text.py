"""Claim deadlines as report text: what can still be claimed and by when (sla-semantics 8.7).

Reads a credits `Result`'s claim summary (`Result.claims`, `calculators.claims`) and each
month's `MonthTotals` (`claim_due`, `claim_status`, `credit_total`); it formats, never
decides a status itself.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from calculators.reports import doc as d
from calculators.reports.fmt import money
from calculators.result_records import MonthTotals

if TYPE_CHECKING:
    from calculators.result import Result

STATUS_WORDS = {"open": "open", "due_soon": "due soon", "expired": "expired: not claimable"}

Instant = datetime | int | str      # an aware datetime, UTC epoch seconds or an ISO text ending in Z


def _instant(value: Instant) -> datetime:
    if isinstance(value, datetime):
        return value
    if isinstance(value, int):
        return datetime.fromtimestamp(value, timezone.utc)
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def local_instant(when: Instant | None, zone: str) -> str:
    """`2027-03-31 01:00 CDT` for an instant, in the contract's zone; `no deadline` for None."""
    if when is None:
        return "no deadline"
    return _instant(when).astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M %Z")


def time_left(due: Instant | None, as_of: Instant) -> str:
    """`12 days 3 hours left` / `lapsed 5 days ago`."""
    if due is None:
        return "—"
    s = int((_instant(due) - _instant(as_of)).total_seconds())
    text = _span(abs(s))
    return f"{text} left" if s > 0 else f"lapsed {text} ago" if s < 0 else "lapsed at this instant"


def _span(s: int) -> str:
    days, rest = divmod(s, 86400)
    hrs = rest // 3600
    if days and hrs:
        return f"{days} day{'s' if days != 1 else ''} {hrs} h"
    if days:
        return f"{days} day{'s' if days != 1 else ''}"
    if hrs:
        return f"{hrs} h"
    return f"{max(1, s // 60)} min"


def has_claims(result: Result) -> bool:
    return result.claims is not None


def _claimable(result: Result) -> Decimal:
    return Decimal(int(result.claims.claimable_cents)).scaleb(-2)


def claimable_sentence(result: Result) -> tuple[str, str]:
    """(text, style): what can be claimed as of the run's instant, and by when; what lapsed."""
    cur, zone = result.currency, result.timezone
    when = local_instant(result.claims.as_of, zone)
    if result.claims.window is None:
        return (f"Claimable as of {when}: {money(_claimable(result), cur)}; the contract sets no claim "
                "window, so no month's claim lapses.", "body")
    months = result.month_totals()
    live = [m for m in months if m.claim_status != "expired" and m.credit_total > 0]
    lapsed = [m for m in months if m.claim_status == "expired" and m.credit_total > 0]
    text = f"Claimable as of {when}: {money(_claimable(result), cur)}"
    if live:
        text += " — " + "; ".join(f"{m.period} ({money(m.credit_total)}) before "
                                  f"{local_instant(m.claim_due, zone)}" for m in live)
    text += "."
    if lapsed:
        total = sum((m.credit_total for m in lapsed), Decimal(0))
        parts = [f"{m.period} (due before {local_instant(m.claim_due, zone)})" for m in lapsed]
        which = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        text += (f" {money(total, cur)} can no longer be claimed: the claim{'s' if len(parts) > 1 else ''} for "
                 f"{which} lapsed.")
    soon = [m for m in live if m.claim_status == "due_soon"]
    return text, "warning" if lapsed or soon else "strong"


def cover_claim_item(result: Result) -> list[tuple[str, str]]:
    """The cover's `Claimable` line: amount, months still open and their deadlines, what lapsed."""
    if not has_claims(result):
        return []
    cur, zone = result.currency, result.timezone
    months = result.month_totals()
    live = [m for m in months if m.claim_status != "expired" and m.credit_total > 0]
    lapsed = [m for m in months if m.claim_status == "expired" and m.credit_total > 0]
    text = f"{money(_claimable(result), cur)} as of {local_instant(result.claims.as_of, zone)}"
    if live:
        text += ": " + "; ".join(f"{m.period} before {local_instant(m.claim_due, zone)}" for m in live)
    if lapsed:
        total = sum((m.credit_total for m in lapsed), Decimal(0))
        text += f". Lapsed: {money(total, cur)} ({', '.join(m.period for m in lapsed)})"
    return [("Claimable", text)]


def deadline_table(result: Result) -> d.Table:
    """Month, credit owed, claim due, status, time left; lapsed months highlighted."""
    cur, zone, as_of = result.currency, result.timezone, result.claims.as_of
    months = result.month_totals()
    rows, hl = [], []
    for m in months:
        if m.claim_status != "open" and m.credit_total > 0:
            hl.append(len(rows))
        rows.append((m.period, money(m.credit_total), local_instant(m.claim_due, zone),
                     STATUS_WORDS[m.claim_status], time_left(m.claim_due, as_of)))
    if len(months) > 1:
        rows.append(("Claimable", money(_claimable(result)), "", "", ""))
    window = result.claims.window
    return d.Table(("Month", f"Credit owed ({cur})", "Claim due before", "Status", "Time left"), tuple(rows),
                   align=("l", "r", "l", "l", "l"), widths=(1, 1.4, 1.8, 1.6, 1.4), highlight=tuple(hl),
                   total_row=len(months) > 1,
                   caption=(f"Claim window: {window}; status as of {local_instant(as_of, zone)}. A claim is open "
                            "until the due instant, due soon with 7 days or less left. Highlighted: a credit that "
                            "lapsed or is due soon." if window else "The contract sets no claim window."))


def review_claim_blocks(result: Result) -> list[d.Block]:
    """The review's first-page lines on claims (nothing when the result carries no claims)."""
    if not has_claims(result):
        return []
    text, style = claimable_sentence(result)
    return [d.Para(text, style), deadline_table(result)]


def month_claim_blocks(result: Result, month: MonthTotals) -> list[d.Block]:
    """One line under a month's credit: its claim deadline and status."""
    if month.claim_status is None:
        return []
    zone = result.timezone
    if month.claim_due is None:
        return [d.Para(f"Claim for {month.period}: no deadline (the contract sets no claim window).", "note")]
    text = (f"Claim for {month.period}: due before {local_instant(month.claim_due, zone)}; "
            f"{STATUS_WORDS[month.claim_status]} as of {local_instant(result.claims.as_of, zone)} "
            f"({time_left(month.claim_due, result.claims.as_of)}).")
    return [d.Para(text, "warning" if month.claim_status != "open" and month.credit_total > 0 else "note")]


def window_words(window: Any) -> str:
    """The contract's `claim_window` in words for letters."""
    from slaschema.models import describe_claim_window

    if window is None:
        return "no claim window"
    if isinstance(window, timedelta):
        return describe_claim_window(window).replace("the month", "the measured month")
    return describe_claim_window(window).replace("after the month", "after the measured month")
