"""Claim deadlines (sla-semantics 8.7): when a month's claim is due and whether it still can be made.

Pure functions of the contract's `credits.claim_window`, a month and an instant; nothing
here reads files or the clock.

- `claim_window: D` (a duration): due at the month's end + D, in exact seconds (1d = 86,400 s),
  so across a daylight-saving change the due instant is an hour off local midnight.
- `claim_window: {months_after: N}`: due at the end of the N-th calendar month after the
  measured month, i.e. local midnight (contract zone) starting month M + N + 1.
- No `claim_window`: no deadline; the claim stays `open`.

Against `as_of` a claim is `expired` once `as_of` reaches the due instant (half-open: a
claim is possible strictly before it), `due_soon` with 7 days (604,800 s) or less left, and
`open` otherwise. The claimable total is the issued credit (after cap and minimum) of the
months that are not expired; hours not charged are a billing adjustment, not a claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from calculators.periods import Period, month, shift_label

DUE_SOON_SECONDS = 7 * 86400
Status = Literal["open", "due_soon", "expired"]
STATUSES: tuple[str, ...] = ("open", "due_soon", "expired")


@dataclass(frozen=True, kw_only=True)
class ClaimDeadline:
    """One month's claim: its due instant (UTC epoch seconds, None without a window) and status."""

    period: str
    due: int | None
    status: Status
    seconds_left: int | None            # due - as_of (negative once expired); None without a deadline
    credit_cents: int                   # issued credit of the month (after cap and minimum)

    @property
    def claimable(self) -> bool:
        return self.status != "expired"


@dataclass(frozen=True, kw_only=True)
class ClaimSummary:
    """The claims of a run: one deadline per month, against one `as_of`."""

    as_of: int
    window: str | None                  # the contract's window as written (30d, months_after: 2) or None
    months: tuple[ClaimDeadline, ...]

    @property
    def claimable_cents(self) -> int:
        return sum(m.credit_cents for m in self.months if m.claimable)

    @property
    def expired_cents(self) -> int:
        return sum(m.credit_cents for m in self.months if not m.claimable)

    def month(self, label: str) -> ClaimDeadline:
        for m in self.months:
            if m.period == label:
                return m
        raise KeyError(label)


def due_instant(period: Period, window) -> int | None:
    """The instant (UTC epoch seconds) the claim for `period` is due; None without a window.

    `window` is the contract's `credits.claim_window`: a `timedelta` or an object with
    `months_after` (slaschema.models.ClaimMonthsAfter)."""
    if window is None:
        return None
    if isinstance(window, timedelta):
        return period.end + int(window.total_seconds())
    n = int(window.months_after)
    y, m = (int(x) for x in shift_label(period.label, n).split("-"))
    return month(y, m, period.zone).end          # local midnight after the N-th month


def status_at(due: int | None, as_of: int) -> Status:
    if due is None:
        return "open"
    left = due - as_of
    if left <= 0:
        return "expired"
    return "due_soon" if left <= DUE_SOON_SECONDS else "open"


def deadline(period: Period, window, as_of: int, credit_cents: int = 0) -> ClaimDeadline:
    due = due_instant(period, window)
    return ClaimDeadline(period=period.label, due=due, status=status_at(due, as_of),
                         seconds_left=None if due is None else due - as_of, credit_cents=int(credit_cents))


def window_text(window) -> str | None:
    if window is None:
        return None
    if isinstance(window, timedelta):
        from slaschema.types import format_duration

        return format_duration(window)
    return f"months_after: {int(window.months_after)}"


def summarize(periods: list[tuple[Period, int]], window, as_of: int) -> ClaimSummary:
    """Deadlines of `(month, issued credit in cents)` pairs against `as_of`."""
    return ClaimSummary(as_of=int(as_of), window=window_text(window),
                        months=tuple(deadline(p, window, as_of, c) for p, c in periods))


def for_result(result, window, as_of: int | None = None) -> ClaimSummary:
    """The claims of a `calculators.result.Result`, against `as_of` (default: the run's as_of)."""
    when = result.as_of if as_of is None else int(as_of)
    return summarize([(p.period, p.credit_total_cents) for p in result.periods], window, when)
