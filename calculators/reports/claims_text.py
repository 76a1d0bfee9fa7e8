"""Claim deadlines as report text: what can still be claimed and by when (sla-semantics 8.7).

Reads the `claim`, `claims_as_of`, `claim_window` and `claimable_total` fields of a result
document (`calculators.result`); it formats, never decides a status itself.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from calculators.reports import doc as d
from calculators.reports.fmt import dec, money

STATUS_WORDS = {"open": "open", "due_soon": "due soon", "expired": "expired: not claimable"}


def local_instant(iso: str | None, zone: str) -> str:
    """`2027-03-31 01:00 CDT` for an ISO instant, in the contract's zone; `no deadline` for None."""
    if iso is None:
        return "no deadline"
    t = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(ZoneInfo(zone))
    return t.strftime("%Y-%m-%d %H:%M %Z")


def time_left(due: str | None, as_of: str) -> str:
    """`12 days 3 hours left` / `lapsed 5 days ago`."""
    if due is None:
        return "—"
    delta = datetime.fromisoformat(due.replace("Z", "+00:00")) - datetime.fromisoformat(as_of.replace("Z", "+00:00"))
    s = int(delta.total_seconds())
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


def has_claims(result: dict[str, Any]) -> bool:
    return "claimable_total" in result


def claimable_sentence(result: dict[str, Any]) -> tuple[str, str]:
    """(text, style): what can be claimed as of the run's instant, and by when; what lapsed."""
    cur, zone = result["currency"], result["timezone"]
    as_of = result["claims_as_of"]
    when = local_instant(as_of, zone)
    if result.get("claim_window") is None:
        return (f"Claimable as of {when}: {money(result['claimable_total'], cur)}; the contract sets no claim "
                "window, so no month's claim lapses.", "body")
    periods = result["periods"]
    live = [p for p in periods if p["claim"]["status"] != "expired" and dec(p["credit_total"]) > 0]
    lapsed = [p for p in periods if p["claim"]["status"] == "expired" and dec(p["credit_total"]) > 0]
    text = f"Claimable as of {when}: {money(result['claimable_total'], cur)}"
    if live:
        text += " — " + "; ".join(f"{p['period']} ({money(p['credit_total'])}) before "
                                  f"{local_instant(p['claim']['due'], zone)}" for p in live)
    text += "."
    if lapsed:
        total = sum((dec(p["credit_total"]) for p in lapsed), Decimal(0))
        parts = [f"{p['period']} (due before {local_instant(p['claim']['due'], zone)})" for p in lapsed]
        which = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        text += (f" {money(total, cur)} can no longer be claimed: the claim{'s' if len(parts) > 1 else ''} for "
                 f"{which} lapsed.")
    soon = [p for p in live if p["claim"]["status"] == "due_soon"]
    return text, "warning" if lapsed or soon else "strong"


def cover_claim_item(result: dict[str, Any]) -> list[tuple[str, str]]:
    """The cover's `Claimable` line: amount, months still open and their deadlines, what lapsed."""
    if not has_claims(result):
        return []
    cur, zone = result["currency"], result["timezone"]
    periods = result["periods"]
    live = [p for p in periods if p["claim"]["status"] != "expired" and dec(p["credit_total"]) > 0]
    lapsed = [p for p in periods if p["claim"]["status"] == "expired" and dec(p["credit_total"]) > 0]
    text = f"{money(result['claimable_total'], cur)} as of {local_instant(result['claims_as_of'], zone)}"
    if live:
        text += ": " + "; ".join(f"{p['period']} before {local_instant(p['claim']['due'], zone)}" for p in live)
    if lapsed:
        total = sum((dec(p["credit_total"]) for p in lapsed), Decimal(0))
        text += f". Lapsed: {money(total, cur)} ({', '.join(p['period'] for p in lapsed)})"
    return [("Claimable", text)]


def deadline_table(result: dict[str, Any]) -> d.Table:
    """Month, credit owed, claim due, status, time left; lapsed months highlighted."""
    cur, zone, as_of = result["currency"], result["timezone"], result["claims_as_of"]
    rows, hl = [], []
    for p in result["periods"]:
        c = p["claim"]
        if c["status"] != "open" and dec(p["credit_total"]) > 0:
            hl.append(len(rows))
        rows.append((p["period"], money(p["credit_total"]), local_instant(c["due"], zone),
                     STATUS_WORDS[c["status"]], time_left(c["due"], as_of)))
    if len(result["periods"]) > 1:
        rows.append(("Claimable", money(result["claimable_total"]), "", "", ""))
    window = result.get("claim_window")
    return d.Table(("Month", f"Credit owed ({cur})", "Claim due before", "Status", "Time left"), tuple(rows),
                   align=("l", "r", "l", "l", "l"), widths=(1, 1.4, 1.8, 1.6, 1.4), highlight=tuple(hl),
                   total_row=len(result["periods"]) > 1,
                   caption=(f"Claim window: {window}; status as of {local_instant(as_of, zone)}. A claim is open "
                            "until the due instant, due soon with 7 days or less left. Highlighted: a credit that "
                            "lapsed or is due soon." if window else "The contract sets no claim window."))


def review_claim_blocks(result: dict[str, Any]) -> list[d.Block]:
    """The review's first-page lines on claims (nothing when the result carries no claims)."""
    if not has_claims(result):
        return []
    text, style = claimable_sentence(result)
    return [d.Para(text, style), deadline_table(result)]


def month_claim_blocks(result: dict[str, Any], period: dict[str, Any]) -> list[d.Block]:
    """One line under a month's credit: its claim deadline and status."""
    c = period.get("claim")
    if c is None:
        return []
    zone = result["timezone"]
    if c["due"] is None:
        return [d.Para(f"Claim for {period['period']}: no deadline (the contract sets no claim window).", "note")]
    text = (f"Claim for {period['period']}: due before {local_instant(c['due'], zone)}; "
            f"{STATUS_WORDS[c['status']]} as of {local_instant(result['claims_as_of'], zone)} "
            f"({time_left(c['due'], result['claims_as_of'])}).")
    return [d.Para(text, "warning" if c["status"] != "open" and dec(period["credit_total"]) > 0 else "note")]


def window_words(window: Any) -> str:
    """The contract's `claim_window` in words for letters."""
    from slaschema.models import describe_claim_window

    if window is None:
        return "no claim window"
    if isinstance(window, timedelta):
        return describe_claim_window(window).replace("the month", "the measured month")
    return describe_claim_window(window).replace("after the month", "after the measured month")
