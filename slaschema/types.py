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
        return timedelta(days=d, hours=h, minutes=mi, seconds=s)
    raise PydanticCustomError(
        "duration_invalid", "expected a duration such as 90s, 5m, 72h, 1d, 1h30m or PT5M"
    )


def _exact_seconds(seconds: Decimal, raw: str) -> timedelta:
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
    return value


def format_money(value: Decimal) -> str:
    return _plain(value)


_ZONES: set[str] | None = None


def parse_timezone(value: Any) -> str:
    global _ZONES
    if not isinstance(value, str):
        raise PydanticCustomError("timezone_invalid", "expected an IANA time zone such as America/Chicago")
    if _ZONES is None:
        _ZONES = available_timezones()
    if value not in _ZONES:
        try:
            ZoneInfo(value)
        except Exception:
            raise PydanticCustomError(
                "timezone_unknown",
                "unknown IANA time zone '{value}'; write e.g. UTC, Europe/Berlin or America/Chicago",
                {"value": value},
            ) from None
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
