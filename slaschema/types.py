"""Typed contract values: durations, percentages, money, time zones, thresholds.

Each type accepts what a person writes in YAML (`90s`, `PT5M`, `99.5%`, `3.25`) and
serializes back to the same kind of text, so load -> dump -> load gives an equal model.
A bare number where a duration is expected is an error: is `5` minutes or hours?
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any
from zoneinfo import ZoneInfo, available_timezones

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema
from pydantic_core import PydanticCustomError

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIMPLE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$")
_COMPOUND = re.compile(r"^\s*(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s)?\s*$")
_ISO = re.compile(
    r"^P(?:(?P<w>\d+)W)?(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)
DURATION_PATTERN = r"^(\d+(\.\d+)?\s*[smhdw]|(\d+d)?(\d+h)?(\d+m)?(\d+s)?|P(\d+W)?(\d+D)?(T(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?)$"


MAX_DURATION_S = 100 * 366 * 86400       # a century: longer than any term or window
MAX_MONEY = Decimal(10) ** 15
MAX_PLACES = 12                          # decimal places of an amount or percentage
MAX_DIGITS = 34


def _sane_decimal(value: Decimal, code: str, what: str) -> None:
    """Refuse numbers whose exponent or length would make exact arithmetic crawl."""
    sign, digits, exp = value.as_tuple()
    if not isinstance(exp, int):
        return
    trailing = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    places = -(exp + trailing)                       # decimal places once trailing zeros are dropped
    if len(digits) - trailing > MAX_DIGITS or (any(digits) and places > MAX_PLACES) or exp + len(digits) > 40:
        raise PydanticCustomError(code, f"{what} has more than {MAX_PLACES} decimal places or {MAX_DIGITS} digits")


def parse_duration(value: Any) -> timedelta:
    if isinstance(value, timedelta):
        return value
    if isinstance(value, bool) or isinstance(value, (int, float, Decimal)):
        raise PydanticCustomError(
            "duration_unit_missing",
            "a duration needs a unit: is {value} seconds, minutes, hours or days? write e.g. {value}s, "
            "{value}m, {value}h or {value}d",
            {"value": value},
        )
    if not isinstance(value, str):
        raise PydanticCustomError("duration_invalid", "expected a duration such as 90s, 5m, 72h, 1d or PT5M")
    text = value.strip()
    m = _SIMPLE.match(text)
    if m:
        seconds = Decimal(m.group(1)) * _UNITS[m.group(2)]
        return _exact_seconds(seconds, value)
    m = _ISO.match(text)
    if m and text not in ("P", "PT") and not text.endswith("T"):
        total = Decimal(0)
        for key, mult in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
            if m.group(key):
                total += Decimal(m.group(key)) * mult
        return _exact_seconds(total, value)
    m = _COMPOUND.match(text)
    if m and any(m.groups()):
        d, h, mi, s = (int(g) if g else 0 for g in m.groups())
        return _exact_seconds(Decimal(d * 86400 + h * 3600 + mi * 60 + s), value)
    raise PydanticCustomError(
        "duration_invalid", "expected a duration such as 90s, 5m, 72h, 1d, 1h30m or PT5M"
    )


def _exact_seconds(seconds: Decimal, raw: str) -> timedelta:
    if seconds > MAX_DURATION_S:
        raise PydanticCustomError(
            "duration_too_large", "a duration may be at most 100 years; {raw} is longer", {"raw": raw[:40]}
        )
    if seconds != seconds.to_integral_value():
        raise PydanticCustomError(
            "duration_invalid", "durations resolve to whole seconds; {raw} does not", {"raw": raw}
        )
    return timedelta(seconds=int(seconds))


def format_duration(td: timedelta) -> str:
    s = int(td.total_seconds())
    for unit, mult in (("d", 86400), ("h", 3600), ("m", 60)):
        if s and s % mult == 0:
            return f"{s // mult}{unit}"
    return f"{s}s"


def human_duration(td: timedelta | None) -> str:
    """Readable form for reports: 1h 30m, 2m, 3d 4h."""
    if td is None:
        return "—"
    s = int(td.total_seconds())
    if s == 0:
        return "0s"
    parts = []
    for unit, mult in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if s >= mult:
            parts.append(f"{s // mult}{unit}")
            s %= mult
    return " ".join(parts)


def parse_percent(value: Any) -> Decimal:
    if isinstance(value, bool):
        raise PydanticCustomError("percent_invalid", "expected a percentage such as 99.5%")
    raw = value
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("%"):
            text = text[:-1].strip()
        try:
            value = Decimal(text)
        except InvalidOperation:
            raise PydanticCustomError("percent_invalid", "expected a percentage such as 99.5%") from None
    elif isinstance(value, (int, float)):
        value = Decimal(str(value))
    if not isinstance(value, Decimal) or not value.is_finite():
        raise PydanticCustomError("percent_invalid", "expected a percentage such as 99.5%")
    _sane_decimal(value, "percent_invalid", "a percentage")
    if value < 0 or value > 100:
        raise PydanticCustomError(
            "percent_range", "a percentage must be between 0% and 100%"
        )
    return value


def format_percent(value: Decimal) -> str:
    return f"{_plain(value)}%"


def _plain(d: Decimal) -> str:
    text = format(d.normalize(), "f") if d != d.to_integral_value() else str(int(d))
    return text


def parse_money(value: Any) -> Decimal:
    if isinstance(value, bool):
        raise PydanticCustomError("money_invalid", "expected an amount such as 3.25")
    if isinstance(value, float):
        value = Decimal(str(value))
    elif isinstance(value, int):
        value = Decimal(value)
    elif isinstance(value, str):
        try:
            value = Decimal(value.strip())
        except InvalidOperation:
            raise PydanticCustomError(
                "money_invalid", "expected a plain decimal amount such as 3.25 (no currency sign)"
            ) from None
    if not isinstance(value, Decimal) or not value.is_finite():
        raise PydanticCustomError("money_invalid", "expected an amount such as 3.25")
    if value < 0:
        raise PydanticCustomError("money_negative", "an amount cannot be negative")
    if value > MAX_MONEY:
        raise PydanticCustomError("money_too_large", "an amount may be at most 10^15")
    _sane_decimal(value, "money_invalid", "an amount")
    return value


def format_money(value: Decimal) -> str:
    return _plain(value)


_ZONES: set[str] | None = None


def parse_timezone(value: Any) -> str:
    global _ZONES
    if not isinstance(value, str):
        raise PydanticCustomError("timezone_invalid", "expected an IANA time zone such as America/Chicago")
    try:            # a zone that loads is known (the list of all zones, a walk of the zone files, only when one does not)
        ZoneInfo(value)
        return value
    except Exception:  # noqa: BLE001, S110 - the list below decides
        pass
    if _ZONES is None:
        _ZONES = available_timezones()
    if value not in _ZONES:
        raise PydanticCustomError(
            "timezone_unknown",
            "unknown IANA time zone '{value}'; write e.g. UTC, Europe/Berlin or America/Chicago",
            {"value": value},
        )
    return value


Duration = Annotated[
    timedelta,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str),
    WithJsonSchema({"type": "string", "pattern": DURATION_PATTERN,
                    "description": "Duration with a unit: 90s, 5m, 72h, 1d, 1h30m or ISO 8601 PT5M"}),
]

Percent = Annotated[
    Decimal,
    BeforeValidator(parse_percent),
    PlainSerializer(format_percent, return_type=str),
    WithJsonSchema({"anyOf": [
        {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*%?\s*$"},
        {"type": "number", "minimum": 0, "maximum": 100},
    ], "description": "Percentage: 99.5% or a number 0-100"}),
]

Money = Annotated[
    Decimal,
    BeforeValidator(parse_money),
    PlainSerializer(format_money, return_type=str),
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*$"},
                              {"type": "number", "minimum": 0}],
                    "description": "Amount as a decimal string or number, no currency sign"}),
]

TimeZoneName = Annotated[
    str,
    BeforeValidator(parse_timezone),
    WithJsonSchema({"type": "string", "description": "IANA time zone, e.g. America/Chicago"}),
]


def parse_threshold(value: Any) -> Decimal | timedelta:
    """A criterion bound: a number, or a duration for time metrics (`max: 2m`)."""
    if isinstance(value, bool):
        raise PydanticCustomError("threshold_invalid", "expected a number or a duration")
    if isinstance(value, (int, float, Decimal)):
        return Decimal(str(value))
    if isinstance(value, timedelta):
        return value
    if isinstance(value, str):
        try:
            return Decimal(value.strip())
        except InvalidOperation:
            return parse_duration(value)
    raise PydanticCustomError("threshold_invalid", "expected a number or a duration")


def format_threshold(value: Decimal | timedelta) -> Any:
    if isinstance(value, timedelta):
        return format_duration(value)
    return int(value) if value == value.to_integral_value() else float(value)


Threshold = Annotated[
    Decimal | timedelta,
    BeforeValidator(parse_threshold),
    PlainSerializer(format_threshold),
    WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "string"}],
                    "description": "A number in the metric's unit, or a duration for time metrics"}),
]


def threshold_value(value: Decimal | timedelta | None) -> float | None:
    """A bound as a float in the metric's unit (durations in seconds)."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        return value.total_seconds()
    return float(value)


# --- revision 1.1: a date or an instant (service windows) ----------------------------------

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\Z")


def parse_date_or_instant(value: Any):
    """`YYYY-MM-DD` (midnight in the contract's zone, resolved later) or an ISO 8601 instant
    with an offset or `Z`; a timestamp without an offset is an error."""
    from datetime import date, datetime

    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise PydanticCustomError("timestamp_naive", "a timestamp needs an offset or Z, e.g. "
                                      "2027-03-10T12:00:00-06:00; or write a date (midnight in the contract's zone)")
        return value
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("date_invalid", "expected a date YYYY-MM-DD or a timestamp with an offset")
    text = value.strip()
    if _DATE_RE.match(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            raise PydanticCustomError("date_invalid", "not a calendar date; write YYYY-MM-DD") from None
    try:
        ts = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise PydanticCustomError("date_invalid", "expected a date YYYY-MM-DD or a timestamp with an offset, "
                                  "e.g. 2027-03-10T12:00:00-06:00") from None
    if ts.tzinfo is None:
        raise PydanticCustomError("timestamp_naive", "a timestamp needs an offset or Z, e.g. "
                                  "2027-03-10T12:00:00-06:00; or write a date (midnight in the contract's zone)")
    return ts


def format_date_or_instant(value) -> str:
    return value.isoformat()


DateOrInstant = Annotated[
    Any,
    BeforeValidator(parse_date_or_instant),
    PlainSerializer(format_date_or_instant, return_type=str),
    WithJsonSchema({"type": "string",
                    "pattern": r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))?$",
                    "description": "A date YYYY-MM-DD (midnight in the contract's zone) or an ISO 8601 "
                                   "timestamp with an offset or Z"}),
]


def instant_epoch(value, zone: str) -> int:
    """Epoch seconds of a date (local midnight in `zone`) or an aware timestamp."""
    from datetime import date, datetime

    if isinstance(value, datetime):
        return int(value.timestamp())
    assert isinstance(value, date)
    return int(datetime(value.year, value.month, value.day, tzinfo=ZoneInfo(zone)).timestamp())
