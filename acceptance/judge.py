"""Judging: a measured value against a criterion's bounds, as a pure function.

`judge_value` is the one place where `min`, `max`, `warn_below` and `warn_above` are read:

- no value measured                 -> error  `metric_missing`
- below `min` / above `max`         -> fail   `below_min` / `above_max`
- below `warn_below` / above `warn_above` -> warn `below_warn` / `above_warn`
- otherwise                         -> pass   `within_bounds`
- no bound at all                   -> error  `no_threshold` (a criterion that cannot fail is no criterion)

Durations are compared in seconds (`slaschema.types.threshold_value`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from acceptance.results import Status, Verdict
from slaschema.models import Criterion
from slaschema.types import threshold_value


@dataclass(frozen=True)
class Bounds:
    min: float | None = None
    max: float | None = None
    warn_below: float | None = None
    warn_above: float | None = None

    @classmethod
    def of(cls, criterion: Criterion) -> Bounds:
        return cls(
            threshold_value(criterion.min),
            threshold_value(criterion.max),
            threshold_value(criterion.warn_below),
            threshold_value(criterion.warn_above),
        )

    @property
    def empty(self) -> bool:
        return self.min is None and self.max is None and self.warn_below is None and self.warn_above is None

    def describe(self, unit: str = "") -> str:
        u = f" {unit}" if unit else ""
        parts = []
        if self.min is not None:
            parts.append(f">= {fmt(self.min)}{u}")
        if self.max is not None:
            parts.append(f"<= {fmt(self.max)}{u}")
        warn = []
        if self.warn_below is not None:
            warn.append(f"warn below {fmt(self.warn_below)}")
        if self.warn_above is not None:
            warn.append(f"warn above {fmt(self.warn_above)}")
        text = ", ".join(parts) if parts else "no bound"
        return f"{text} ({', '.join(warn)})" if warn else text

    def to_json(self) -> dict[str, float | None]:
        return {"min": self.min, "max": self.max, "warn_below": self.warn_below, "warn_above": self.warn_above}


def fmt(value: Any) -> str:
    """Numbers without float noise: 1800.0 -> 1800, 23.456789 -> 23.457."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.4g}" if abs(value) < 1 else f"{value:.6g}" if abs(value) >= 1e5 else f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


def judge_value(
    criterion: str,
    node: str | None,
    measured: float | None,
    bounds: Bounds,
    *,
    unit: str = "",
    remediation: str = "",
    details: dict[str, Any] | None = None,
) -> Verdict:
    """One verdict for one measured value; see the module docstring for the rules."""
    expected = bounds.describe(unit)
    extra = dict(details or {})
    if bounds.empty:
        return Verdict(criterion, node, Status.ERROR, measured, expected, "no_threshold",
                       "give the criterion a min, max, warn_below or warn_above", extra)
    if measured is None or (isinstance(measured, float) and not math.isfinite(measured)):
        return Verdict(criterion, node, Status.ERROR, None, expected, "metric_missing",
                       "the output holds no value for this metric; check the raw output", extra)
    if bounds.min is not None and measured < bounds.min:
        return Verdict(criterion, node, Status.FAIL, measured, expected, "below_min", remediation, extra)
    if bounds.max is not None and measured > bounds.max:
        return Verdict(criterion, node, Status.FAIL, measured, expected, "above_max", remediation, extra)
    if bounds.warn_below is not None and measured < bounds.warn_below:
        return Verdict(criterion, node, Status.WARN, measured, expected, "below_warn", remediation, extra)
    if bounds.warn_above is not None and measured > bounds.warn_above:
        return Verdict(criterion, node, Status.WARN, measured, expected, "above_warn", remediation, extra)
    return Verdict(criterion, node, Status.PASS, measured, expected, "within_bounds", "", extra)


def judge_equal(
    criterion: str,
    node: str | None,
    measured: Any,
    expected: Any,
    *,
    reason: str,
    remediation: str,
    details: dict[str, Any] | None = None,
) -> Verdict:
    """pass when measured == expected, else fail with `reason`; error when nothing was measured."""
    extra = dict(details or {})
    if measured is None:
        return Verdict(criterion, node, Status.ERROR, None, fmt(expected), "metric_missing",
                       "the output holds no value for this item; check the raw output", extra)
    if measured == expected:
        return Verdict(criterion, node, Status.PASS, _scalar(measured), fmt(expected), "as_expected", "", extra)
    return Verdict(criterion, node, Status.FAIL, _scalar(measured), fmt(expected), reason, remediation, extra)


def _scalar(v: Any) -> float | str | None:
    if v is None or isinstance(v, (str, float)):
        return v
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return float(v)
    return str(v)


def verdict(criterion: str, node: str | None, status: Status, reason: str, *, measured: Any = None,
            expected: str = "", remediation: str = "", details: dict[str, Any] | None = None) -> Verdict:
    return Verdict(criterion, node, status, _scalar(measured), expected, reason, remediation, dict(details or {}))
