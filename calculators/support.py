"""Support figures (detection, response, restore) and acceptance-delay remedies.

Section 6 of sla-semantics.md. These figures are reported next to the credits; they earn
credits only where the contract says so (acceptance delay).

Which incidents count
    An incident counts in the support figures of the period in which it *starts*
    (`period_start_s <= start < period_end_s`), once, whatever its scope and however many
    nodes its hostlist names. An incident that runs across a month boundary is therefore
    measured once, in the month it began, and a quarter's figures are the union of its
    months' incidents. Planned work announced in advance (`notice_at` present and not
    after `start`) is left out of all three figures and counted in `planned_excluded`:
    nobody "detects" or "responds to" work they scheduled.

What is measured
    - detection: `detected_at - start` against `support.detection`; incidents without
      `detected_at` are counted but not measured.
    - response, per severity: `responded_at - reported_at`, or `responded_at - start` when
      the incident has no `reported_at`, against `support.response[severity]`; incidents
      without a severity are grouped as `unset` (no target applies).
    - restore, per scope: `end - start` against `support.restore[scope]`. An incident still
      open at `as_of` (default: the period end) is not measured, but it is a breach
      already if `as_of - start` exceeds the target.

A breach is a measured time strictly greater than the target (exactly on target is met).
Percentiles use the nearest-rank method: P-th percentile = the value at rank
ceil(P/100 * n) of the sorted measured times, so every figure is a real, whole-second
observation and the result is the same on every machine.
"""

from __future__ import annotations

import math
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

import numpy as np

from calculators import kernels
from calculators.id_list import IdList
from calculators.incidents import coded
from calculators.log_columns import Columns, columns_of, first_rows
from calculators.vocabulary import NA
from calculators.result_records import utc
from calculators.support_records import AcceptanceDelay, SupportFigure, SupportFigures
from slaschema.models import SCOPES

if TYPE_CHECKING:
    from calculators.incidents import IncidentLog
    from slaschema.loader import LoadedContract

SEVERITIES = ("sev1", "sev2", "sev3", "sev4")
CENT = Decimal("0.01")


def percentiles(values: np.ndarray, ps: tuple[float, ...]) -> list[int | None]:
    """`percentile` for several p at once (one partial sort)."""
    arr = np.asarray(values, dtype=np.int64)
    if arr.size == 0:
        return [None] * len(ps)
    ranks = [max(1, math.ceil(p / 100 * arr.size)) - 1 for p in ps]
    part = np.partition(arr, sorted(set(ranks)))
    return [int(part[r]) for r in ranks]


def percentile(values: list[int] | np.ndarray, p: float) -> int | None:
    """Nearest-rank percentile of whole seconds; None for no values."""
    arr = np.sort(np.asarray(values, dtype=np.int64))
    if arr.size == 0:
        return None
    rank = max(1, math.ceil(p / 100 * arr.size))
    return int(arr[rank - 1])


def _secs(td: timedelta | None) -> int | None:
    return None if td is None else int(td.total_seconds())


def _figure(group: str, names: np.ndarray, ids: np.ndarray, durations: np.ndarray, measured: np.ndarray,
            target: int | None, open_elapsed: np.ndarray | None = None) -> SupportFigure:
    """`ids`: the incidents' codes into `names` (ids are looked up for the breaches only)."""
    vals = durations[measured]
    breach = np.zeros(len(ids), dtype=bool)
    n_open = 0
    if open_elapsed is not None:
        is_open = ~measured & (open_elapsed >= 0)
        n_open = int(is_open.sum())
    if target is not None:
        breach = measured & (durations > target)
        if open_elapsed is not None:
            breach |= is_open & (open_elapsed > target)
    p50, p95 = percentiles(vals, (50, 95))
    return SupportFigure(
        group=group, target_seconds=target, count=len(ids), measured=int(measured.sum()),
        breaches=None if target is None else int(breach.sum()),
        p50_seconds=p50, p95_seconds=p95,
        max_seconds=int(vals.max()) if vals.size else None,
        breach_ids=IdList(ids[breach], names), open=n_open)


def _col(cols: Columns, name: str, pick: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(values as int64 with 0 for missing, present mask) of a nullable Int64 column,
    at the rows `pick` (positions; default all)."""
    raw = cols.ints(name, NA)
    present = raw != NA
    values = np.where(present, raw, 0)
    if pick is None:
        return values, present
    return values[pick], present[pick]


def support_report(lc: LoadedContract, log: IncidentLog, period_start_s: int, period_end_s: int,
                   as_of_s: int | None = None) -> SupportFigures:
    """Support figures for incidents starting in [period_start_s, period_end_s), judged as of
    `as_of_s` (default: the period end): the `SupportFigures` record of `Result.support`."""
    sup = lc.model.support
    as_of = period_end_s if as_of_s is None else int(as_of_s)
    cols = columns_of(log)
    # rows starting in the period, each incident once (its first row), as positions
    start_all = cols.ints("start", 0)
    pick = np.flatnonzero((start_all >= period_start_s) & (start_all < period_end_s))
    codes, names = coded(log, "id")
    rows = cols.ints("row", 0)[pick] if "row" in cols else None
    if rows is not None and (rows[1:] >= rows[:-1]).all():
        # the loader's log: an incident's rows (one per node of a hostlist) are adjacent
        # and share its input row number
        first = np.ones(len(pick), dtype=bool)
        first[1:] = rows[1:] != rows[:-1]
        pick = pick[first]
    else:
        pick = pick[first_rows(codes[pick])]                      # each id's first row
    notice, has_notice = _col(cols, "notice_at", pick)
    start = start_all[pick]
    planned = has_notice & (notice <= start)
    total = len(pick)
    pick = pick[~planned]
    start = start_all[pick]
    ids = codes[pick]
    det, has_det = _col(cols, "detected_at", pick)
    detection = _figure("all", names, ids, det - start, has_det, _secs(sup.detection))

    rep, has_rep = _col(cols, "reported_at", pick)
    resp, has_resp = _col(cols, "responded_at", pick)
    base = np.where(has_rep, rep, start)
    resp_dur = resp - base
    # severity codes: SEVERITIES in order, then "unset" for anything that is not a string
    sev_codes, sev_names = coded(log, "severity")
    sev_map = np.array([SEVERITIES.index(v) if isinstance(v, str) and v in SEVERITIES
                        else (len(SEVERITIES) if not isinstance(v, str) else -1) for v in sev_names]
                       + [len(SEVERITIES)], dtype=np.int64)
    sev = sev_map[sev_codes[pick]]
    # each severity's incidents in one pass over the columns (`kernels.split`), not a mask each
    by_sev = kernels.split(sev, len(SEVERITIES) + 1, [kernels.as_i64(ids), resp_dur, has_resp.view(np.int8).astype(np.int64)])
    response: list[SupportFigure] = []
    for k, s in enumerate(SEVERITIES + ("unset",)):
        k_ids, k_dur, k_has = by_sev[k]
        target = _secs(getattr(sup.response, s)) if (sup.response is not None and s != "unset") else None
        if not len(k_ids) and target is None:
            continue
        response.append(_figure(s, names, k_ids, k_dur, k_has.astype(bool), target))

    end, has_end = _col(cols, "end", pick)
    s_codes, s_names = coded(log, "scope")
    scope_of = np.append([SCOPES.index(v) if v in SCOPES else -1 for v in s_names.tolist()], -1).astype(np.int64)
    scope_codes = scope_of[s_codes[pick]]
    by_scope = kernels.split(scope_codes, len(SCOPES), [kernels.as_i64(ids), kernels.as_i64(start), end,
                                                        has_end.view(np.int8).astype(np.int64)])
    restore: list[SupportFigure] = []
    for k, s in enumerate(SCOPES):
        k_ids, k_start, k_end, k_has = by_scope[k]
        target = _secs(getattr(sup.restore, s)) if sup.restore is not None else None
        if not len(k_ids) and target is None:
            continue
        elapsed = np.where(k_start <= as_of, as_of - k_start, -1)
        restore.append(_figure(s, names, k_ids, k_end - k_start, k_has.astype(bool), target, open_elapsed=elapsed))

    return SupportFigures(start=utc(period_start_s), end=utc(period_end_s), as_of=utc(as_of), incidents=total,
                          planned_excluded=int(planned.sum()), detection=detection, response=tuple(response),
                          restore=tuple(restore))


def acceptance_delay(lc: LoadedContract, accepted_on: date, monthly_fee: Decimal,
                     fee_month: str | None = None) -> AcceptanceDelay:
    """Acceptance-delay remedy: whole days late x credit_per_day_late x monthly fee.

    Days late = (accepted_on - deadline) in whole calendar days, 0 when on time. The credit is
    rounded half-up to cents. The termination right exists once the delay has reached
    `termination_right_after` (accepted on or after deadline + that duration). `fee_month`
    names the month `monthly_fee` is the fee of (the engine passes the deadline's month).
    """
    acc = lc.model.acceptance
    fee = Decimal(monthly_fee)
    currency = lc.model.contract.currency
    remedies = acc.remedies
    per_day = remedies.credit_per_day_late if remedies else None
    if acc.deadline is None:
        return AcceptanceDelay(deadline=None, accepted_on=accepted_on, days_late=0, credit_per_day_pct=per_day,
                               monthly_fee=fee, credit=Decimal("0.00"), currency=currency, termination_right=False,
                               termination_right_from=None, monthly_fee_month=fee_month)
    days_late = max(0, (accepted_on - acc.deadline).days)
    credit = Decimal("0.00")
    if per_day is not None and days_late:
        credit = (fee * per_day / Decimal(100) * days_late).quantize(CENT, rounding=ROUND_HALF_UP)
    right_from: date | None = None
    right = False
    if remedies is not None and remedies.termination_right_after is not None:
        after = remedies.termination_right_after
        right_from = acc.deadline + timedelta(days=math.ceil(after.total_seconds() / 86400))
        right = accepted_on >= right_from
    return AcceptanceDelay(deadline=acc.deadline, accepted_on=accepted_on, days_late=days_late,
                           credit_per_day_pct=per_day, monthly_fee=fee, credit=credit, currency=currency,
                           termination_right=right, termination_right_from=right_from, monthly_fee_month=fee_month)
