"""Measurement periods: calendar months in the contract's time zone.

A month begins at local midnight on its first day, so in a zone with daylight saving a
month can have 743 or 745 hours. Bounds are UTC epoch seconds, half-open `[start, end)`.
A quarter is three months, each computed on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from slaschema.errors import SlakitError

_MONTH = re.compile(r"^(\d{4})-(\d{2})\Z")
_QUARTER = re.compile(r"^(\d{4})-?Q([1-4])\Z", re.IGNORECASE)


class PeriodError(SlakitError, ValueError):
    """A period label that is not `YYYY-MM` or `YYYY-Qn`."""


@dataclass(frozen=True, order=True)
class Period:
    """One calendar month in a zone: `[start, end)` as UTC epoch seconds."""

    start: int
    end: int
    label: str
    zone: str

    @property
    def seconds(self) -> int:
        return self.end - self.start

    @property
    def hours(self) -> Decimal:
        """Exact hours in the month (743, 744, 745 ... or a half hour in odd zones)."""
        return Decimal(self.seconds) / Decimal(3600)

    @property
    def year(self) -> int:
        return int(self.label[:4])

    @property
    def month(self) -> int:
        return int(self.label[5:7])

    def start_dt(self) -> datetime:
        return datetime.fromtimestamp(self.start, ZoneInfo(self.zone))

    def end_dt(self) -> datetime:
        return datetime.fromtimestamp(self.end, ZoneInfo(self.zone))


def _local_midnight(year: int, month: int, tz: ZoneInfo) -> int:
    return int(datetime(year, month, 1, tzinfo=tz).timestamp())


MIN_YEAR, MAX_YEAR = 1970, 9998       # months are epoch seconds; the next month must exist too
EARLIEST_S = 86400                 # 1970-01-02T00:00Z: months are epoch seconds, with a day of room
LATEST_S = 253_339_200_000         # 9997-12-31T16:00Z: the month after the last one still exists
# The months the credits engine computes in every zone: inside EARLIEST_S (1970-01-02 UTC) ..
# LATEST_S (9997-12-31T16:00 UTC), the first and last instants the engine computes. 1970-01 starts before the first, in any zone
# (UTC-12 .. UTC+14); 9997-12 ends after the second. Asked for on the command line (--month,
# --quarter, --period, --history-from, --start) a period outside is `period_out_of_range`.
FIRST_MONTH, LAST_MONTH = "1970-02", "9997-11"
FIRST_QUARTER, LAST_QUARTER = "1970-Q2", "9997-Q3"
COMPUTED = (f"slakit computes months {FIRST_MONTH} to {LAST_MONTH} (quarters {FIRST_QUARTER} to {LAST_QUARTER}): "
            "times from 1970-01-02 to 9997-12-31 UTC")


def outside_computed(first: str, last: str | None = None) -> bool:
    """Whether the months `first` .. `last` (labels YYYY-MM) reach outside FIRST_MONTH .. LAST_MONTH.
    Compared as numbers: a label shifted past 9999-12 has five digits ("10000-05" < "9997-11")."""
    def index(label: str) -> int:
        y, m = label.rsplit("-", 1)
        return int(y) * 12 + int(m) - 1

    return index(first) < index(FIRST_MONTH) or index(last or first) > index(LAST_MONTH)


def horizon_problem(first: str, months: int, given: str, also: str = "") -> str | None:
    """The message for `months` months from `first` (YYYY-MM, named by `given`, e.g. `--start
    9997-06`) that reach outside the computed months, else None; `also`: another fix."""
    last = shift_label(first, months - 1)
    if not outside_computed(first, last):
        return None
    return (f"{given} with {months} month(s) runs {first} to {last}; {COMPUTED}: "
            f"start at {FIRST_MONTH} or later, and end by {LAST_MONTH}{also} [period_out_of_range]")


def month(year: int, mon: int, zone: str) -> Period:
    if not 1 <= mon <= 12:
        raise PeriodError(f"month {mon} is not 1-12 [period_invalid]")
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise PeriodError(f"year {year} is outside {MIN_YEAR}-{MAX_YEAR} [period_out_of_range]")
    tz = ZoneInfo(zone)
    ny, nm = (year + 1, 1) if mon == 12 else (year, mon + 1)
    return Period(_local_midnight(year, mon, tz), _local_midnight(ny, nm, tz), f"{year:04d}-{mon:02d}", zone)


def parse_instant(text: str, assume_tz: str | None = None, zone_option: str | None = None) -> datetime:
    """An instant written in ISO 8601 (`--as-of`): with an offset or Z, or, when `assume_tz`
    names a zone, a local time there. `zone_option`: the option a user could give the zone
    with (named in the message for a time without an offset). Raises `PeriodError`."""
    try:
        ts = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise PeriodError(f"{text!r} is not an ISO 8601 timestamp (e.g. 2027-04-01T00:00:00Z)") from None
    if ts.tzinfo is None:
        if not assume_tz:
            raise PeriodError("give an offset or Z (2027-04-01T00:00:00Z)"
                              + (f", or name a zone with {zone_option}" if zone_option else ""))
        ts = ts.replace(tzinfo=ZoneInfo(assume_tz))
    return ts


def parse_month(text: str, zone: str) -> Period:
    m = _MONTH.match(text.strip())
    if not m or not 1 <= int(m.group(2)) <= 12:
        raise PeriodError(f"{text[:40]!r} is not a month; write YYYY-MM such as 2027-02 [period_invalid]")
    return month(int(m.group(1)), int(m.group(2)), zone)


def parse_quarter(text: str, zone: str) -> list[Period]:
    m = _QUARTER.match(text.strip())
    if not m:
        raise PeriodError(f"{text[:40]!r} is not a quarter; write YYYY-Qn such as 2027-Q1 [period_invalid]")
    year, q = int(m.group(1)), int(m.group(2))
    return [month(year, 3 * (q - 1) + i, zone) for i in (1, 2, 3)]


def parse_periods(labels: list[str] | tuple[str, ...], zone: str) -> list[Period]:
    """`YYYY-MM` and `YYYY-Qn` labels -> sorted, de-duplicated months."""
    out: dict[str, Period] = {}
    for text in labels:
        ps = parse_quarter(text, zone) if "q" in text.lower() else [parse_month(text, zone)]
        for p in ps:
            out[p.label] = p
    return sorted(out.values())


def shift_label(label: str, months: int) -> str:
    y, m = int(label[:4]), int(label[5:7])
    total = y * 12 + (m - 1) + months
    return f"{total // 12:04d}-{total % 12 + 1:02d}"


def month_of(epoch: int, zone: str) -> Period:
    """The month (in `zone`) that contains the instant."""
    dt = datetime.fromtimestamp(epoch, ZoneInfo(zone))
    return month(dt.year, dt.month, zone)


def month_bounds(t0: int, t1: int, zone: str) -> list[Period]:
    """Every month that overlaps `[t0, t1)` (at least the month of t0)."""
    p = month_of(t0, zone)
    out = [p]
    while out[-1].end < t1:
        out.append(month(*(int(x) for x in shift_label(out[-1].label, 1).split("-")), zone))
    return out
