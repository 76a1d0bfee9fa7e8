"""Number formatting shared by the reports (display only; values arrive computed)."""

from __future__ import annotations

from datetime import timedelta
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

from slaschema.types import format_percent, human_duration

CENT = Decimal("0.01")


def dec(value: str | int | float | Decimal | None) -> Decimal:
    if value is None:
        return Decimal(0)
    if isinstance(value, Decimal):
        return value
    return Decimal(str(value))


def money(value: str | Decimal | None, currency: str | None = None) -> str:
    """`1,234.50` (or `USD 1,234.50`); decimal strings stay exact."""
    if value is None:
        return "—"
    q = dec(value).quantize(CENT, ROUND_HALF_UP)
    text = f"{q:,.2f}"
    return f"{currency} {text}" if currency else text


def pct(value: str | Decimal | float | None, places: int = 4) -> str:
    """An availability percentage for display, truncated to `places` decimals (spec 8.8):
    `99.55369` shows `99.5536%`, never rounded up to a threshold it is below."""
    if value is None:
        return "—"
    q = dec(value).quantize(Decimal(1).scaleb(-places), ROUND_DOWN)
    return f"{q}%"


def pct_terms(value: Decimal) -> str:
    """A contract percentage exactly as written: `99.5%`, `10%`."""
    return format_percent(value)


def minutes(seconds: int | float | str | Decimal | None) -> str:
    """Seconds as minutes with one decimal: `241.0`."""
    if seconds is None:
        return "—"
    m = dec(seconds) / 60
    return f"{m.quantize(Decimal('0.1'), ROUND_HALF_UP):,}"


def hours(seconds: int | float | str | Decimal | None) -> str:
    if seconds is None:
        return "—"
    h = dec(seconds) / 3600
    return f"{h.quantize(Decimal('0.01'), ROUND_HALF_UP):,}"


def duration(td: timedelta | int | None) -> str:
    """Readable duration: `1h 30m`; ints are seconds."""
    if td is None:
        return "—"
    if not isinstance(td, timedelta):
        td = timedelta(seconds=int(td))
    return human_duration(td)


def count(n: int) -> str:
    return f"{n:,}"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def words(td: timedelta | None) -> str:
    """A duration in words for contract text: `2 minutes`, `1 hour 30 minutes`, `3 days`."""
    if td is None:
        return "—"
    s = int(td.total_seconds())
    if s == 0:
        return "0 seconds"
    parts = []
    for unit, mult in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        if s >= mult:
            parts.append(plural(s // mult, unit))
            s %= mult
    return " ".join(parts)


def spaced_hostlist(expr: str) -> str:
    """A hostlist with a space after each top-level comma, so long lists wrap between names."""
    out, depth = [], 0
    for ch in expr:
        depth += ch == "["
        depth -= ch == "]"
        out.append(", " if ch == "," and depth == 0 else ch)
    return "".join(out)


# --- chart axes (PDF charts and the HTML review's SVG charts) ---------------------------------

def nice_step(span: float) -> float:
    """An axis step of 1, 2, 2.5 or 5 times a power of ten giving about five ticks over `span`."""
    if span <= 0:
        return 1.0
    raw = span / 5
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def axis_label(v: float) -> str:
    """A tick or value label: thousands grouped, no trailing zeros."""
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if v == int(v):
        return f"{int(v)}"
    return f"{v:.2f}".rstrip("0").rstrip(".")
