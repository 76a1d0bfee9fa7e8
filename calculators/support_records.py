"""Typed support and termination figures of a credits `Result`: frozen records built by keyword.

- `SupportFigures` (`Result.support`, made by `calculators.support.support_report`): the
  detection, response and restore figures of the incidents that start within the run's
  months (sla-semantics.md section 6), one `SupportFigure` per measured group;
- `Termination` (`Result.termination`, made by the engine): the chronic-failure trigger
  (`ChronicTrigger`, one `ChronicUnit` per unit that reached the right or is near it) and,
  with `accepted_on`, the acceptance-delay remedy (`AcceptanceDelay`).

As in `calculators.result_records`, times are aware UTC `datetime`s, calendar dates of the
acceptance section `date`s, seconds `int`, money `Decimal` (two places) and month labels
`YYYY-MM` strings; the records hold no text of the JSON document, which
`calculators.result_json` writes from them (`support_json`, `termination_json`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

SUPPORT_BASIS = "incidents that start within the period, each once; planned work with notice left out"
PERCENTILE_METHOD = "nearest-rank"


@dataclass(frozen=True, kw_only=True, slots=True)
class SupportFigure:
    """One measured quantity for one group of incidents.

    `group` is `all` for detection, the severity (`sev1` .. `sev4`, or `unset` for incidents
    without one) for response and the scope for restore. `breaches` is None when the contract
    sets no target for the group; `measured` counts the incidents with both timestamps, and
    the percentiles and maximum (nearest-rank, whole seconds) are over those. `open` (restore
    only) counts incidents still open at the run's as_of; one that has run past the target is
    a breach already."""

    group: str
    target_seconds: int | None
    count: int
    measured: int
    breaches: int | None
    p50_seconds: int | None
    p95_seconds: int | None
    max_seconds: int | None
    breach_ids: Sequence[str] = ()      # a tuple, or an `IdList` (codes into the log's ids)
    open: int = 0

    @property
    def met(self) -> bool | None:
        """No breach (None when no target applies)."""
        return None if self.breaches is None else self.breaches == 0


@dataclass(frozen=True, kw_only=True, slots=True)
class SupportFigures:
    """The support figures of a run: incidents that start in [start, end), each once, judged
    as of `as_of`; `incidents` counts them all, `planned_excluded` those left out as planned
    work with notice. `response` holds one figure per severity (contract order, `unset`
    last) and `restore` one per scope, each group listed when it has incidents or a target."""

    start: datetime
    end: datetime
    as_of: datetime
    incidents: int
    planned_excluded: int
    detection: SupportFigure
    response: tuple[SupportFigure, ...] = ()
    restore: tuple[SupportFigure, ...] = ()
    basis: str = SUPPORT_BASIS
    percentile_method: str = PERCENTILE_METHOD

    def response_for(self, severity: str) -> SupportFigure | None:
        return next((f for f in self.response if f.group == severity), None)

    def restore_for(self, scope: str) -> SupportFigure | None:
        return next((f for f in self.restore if f.group == scope), None)


@dataclass(frozen=True, kw_only=True, slots=True)
class ChronicUnit:
    """A unit and the months (labels, oldest first) in which it was below its target."""

    scope: str
    id: str
    months_below_target: tuple[str, ...]


_NEW = object.__new__
_SET_SCOPE = ChronicUnit.scope.__set__                  # (the slots' own descriptors)
_SET_ID = ChronicUnit.id.__set__
_SET_MONTHS = ChronicUnit.months_below_target.__set__


def chronic_units(scope: str, ids: Iterable[str], months: Iterable[tuple[str, ...]]) -> list[ChronicUnit]:
    """`[ChronicUnit(scope=scope, id=i, months_below_target=m) for i, m in zip(ids, months)]`,
    each record's three slots set directly (the class has no `__post_init__`): a third of
    the keyword constructor's time, which for a fleet whose every node is below target in
    two months of a quarter (12,783 records) was 16 ms at the end of the computing."""
    out = []
    append = out.append
    for i, m in zip(ids, months):
        unit = _NEW(ChronicUnit)
        _SET_SCOPE(unit, scope)
        _SET_ID(unit, i)
        _SET_MONTHS(unit, m)
        append(unit)
    return out


@dataclass(frozen=True, kw_only=True, slots=True)
class ChronicTrigger:
    """The chronic-failure termination trigger (sla-semantics.md section 6): a unit below
    target in `months_below_target` of the last `within_months` months gives a right.

    Judged by the engine on the computed months only, or (`with_history`) on the contract's
    whole window with earlier months (`calculators.history`): then `months_missing` lists the
    window's months that are not known, `history_months` those taken from earlier results and
    `near` the units one more month below target would give the right; all three are None
    when judged on the computed months only. `note` says why the window is not complete."""

    months_below_target: int
    within_months: int
    months_considered: tuple[str, ...]
    window_complete: bool
    note: str | None
    triggered: tuple[ChronicUnit, ...] = ()
    months_missing: tuple[str, ...] | None = None
    history_months: tuple[str, ...] | None = None
    near: tuple[ChronicUnit, ...] | None = None

    @property
    def termination_right(self) -> bool:
        """Some unit reached the right."""
        return bool(self.triggered)

    @property
    def with_history(self) -> bool:
        return self.months_missing is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class AcceptanceDelay:
    """The acceptance-delay remedy: whole calendar days late x `credit_per_day_pct` x the
    monthly fee, rounded half-up to cents. `deadline` is None when the contract sets none (no
    delay then); `termination_right_from` is the first acceptance date that gives the
    termination right (None without `termination_right_after`). `monthly_fee_month` is the
    month whose fee is used (the deadline's), set by the engine."""

    deadline: date | None
    accepted_on: date
    days_late: int
    credit_per_day_pct: Decimal | None
    monthly_fee: Decimal
    credit: Decimal
    currency: str
    termination_right: bool
    termination_right_from: date | None
    monthly_fee_month: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Termination:
    """Termination figures of a run: the chronic-failure trigger (None when the contract has
    no `termination.chronic`) and the acceptance delay (None unless `accepted_on` was given)."""

    chronic: ChronicTrigger | None
    acceptance_delay: AcceptanceDelay | None = None
