"""Figures the SLA review shows that the result document's unit tables do not carry.

`review_extras(result)` takes a `calculators.result.Result` computed with
`compute(..., incidents=True)` and arranges the per-incident figures that the engine
computed in that same run (`calculators.incident_figures`); nothing here re-applies the SLA
rules or re-runs the engine:

- `incidents`: the incident register (`Register`), one row per incident id with the
  unit-seconds counted (after exclusions, before `min_outage`), the part of that in downtime
  (after `min_outage` and the rack/cluster rules) and excluded inside the reviewed months,
  the flags the engine set, and its timeline fields;
- `by_category` / `by_cause`: node-seconds counted, in downtime and excluded per category
  and per cause over the reviewed months (an incident on a rack costs the rack's node count
  per second, and so on);
- `heatmap`: node-hours down per rack and local calendar day (after the rack and cluster
  rules, i.e. the capacity the customer lost);
- `chronic`: for each unit, the months below target among the reviewed months.

The renderer (`calculators.reports.review`) only formats these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from calculators.result import FLAG_BITS
from calculators.vocabulary import FLAG_MASK

if TYPE_CHECKING:
    from calculators.result import Result

I64 = np.int64


def _flag_names(bits: int) -> list[str]:
    return [name for bit, name in FLAG_BITS if bits & bit]


@dataclass(frozen=True, kw_only=True)
class Breakdown:
    """Node-seconds of one category or cause over the reviewed months."""
    key: str
    counted_node_seconds: int
    downtime_node_seconds: int
    excluded_node_seconds: int


@dataclass(frozen=True, kw_only=True)
class Heatmap:
    """Node-hours down per rack (the `racks` shown, at most the review's limit) and local day;
    `rack_totals` has every rack's total; `note` says what was left out (None: nothing)."""
    days: tuple[str, ...]
    racks: tuple[str, ...]
    node_hours: tuple[tuple[float, ...], ...]
    rack_totals: dict[str, float]
    note: str | None


@dataclass(frozen=True, kw_only=True)
class ChronicCount:
    """A unit below target in at least one reviewed month, and in which."""
    scope: str
    id: str
    months_below_target: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ReviewExtras:
    """What the review shows beside the result's unit figures (see the module's docstring)."""
    periods: tuple[str, ...]
    zone: str
    incidents: Register
    by_category: tuple[Breakdown, ...]
    by_cause: tuple[Breakdown, ...]
    heatmap: Heatmap
    chronic: tuple[ChronicCount, ...]


def review_extras(result: Result, heatmap_racks: int = 40) -> ReviewExtras:
    """Register, cause/category breakdown, rack x day heatmap and chronic counts of a `Result`."""
    figures = result.figures
    if figures is None:
        raise ValueError("the review needs the per-incident figures: compute(..., incidents=True)")
    labels = [p.period.label for p in result.periods]
    return ReviewExtras(periods=tuple(labels), zone=result.timezone,
                        incidents=Register(figures.table, result.timezone),
                        by_category=_breakdown([figures.by_category[k] for k in labels]),
                        by_cause=_breakdown([figures.by_cause[k] for k in labels], top=12),
                        heatmap=_heatmap(figures.rack_days, heatmap_racks), chronic=_chronic_counts(result))


_FLAG_TEXT = tuple(", ".join(_flag_names(b)) for b in range(FLAG_MASK + 1))


@dataclass(frozen=True, kw_only=True)
class RegisterRow:
    """One incident of the register: times as `YYYY-MM-DD HH:MM` in the contract's zone
    (`end` empty while open), seconds summed over the units it names inside the period."""
    id: str
    scope: str
    target: str
    units: int
    category: str
    impact: str
    severity: object
    start: str
    end: str
    counted_seconds: int
    downtime_seconds: int
    excluded_seconds: int
    flags: tuple[str, ...]
    cause: object
    ticket: object


@dataclass(frozen=True)
class Register:
    """The incident register: one row per incident id, ordered by start (then id).

    Columns: id, scope, target, units, category, impact, severity, cause, ticket (as logged),
    start, end (epoch
    seconds UTC; end -1 while open), counted_seconds (after exclusions, before min_outage),
    downtime_seconds (the counted part that is downtime after min_outage and the rack/cluster
    rules), excluded_seconds, flags (bits of `calculators.result.FLAG_BITS`).
    Held as one DataFrame so a million incidents stay cheap; `rows(n)` formats the first n.
    """

    frame: pd.DataFrame
    zone: str

    def __len__(self) -> int:
        return len(self.frame)

    def _flagged(self, flag: str) -> np.ndarray:
        bit = next(b for b, name in FLAG_BITS if name == flag)
        return (self.frame["flags"].to_numpy() & bit) > 0

    def count(self, flag: str) -> int:
        return int(self._flagged(flag).sum()) if len(self.frame) else 0

    def ids(self, flag: str, limit: int | None = None) -> list[str]:
        if not len(self.frame):
            return []
        rows = np.flatnonzero(self._flagged(flag))
        if limit is not None:
            rows = rows[:limit]
        return [str(x) for x in self.frame["id"].take(rows).tolist()]      # only these ids become strings

    def _times(self, col: str, f: pd.DataFrame) -> list[str]:
        v = f[col].to_numpy()
        out = local_minutes(np.where(v < 0, 0, v), self.zone)
        out[v < 0] = ""
        return out.tolist()

    def rows(self, limit: int | None = None) -> list[RegisterRow]:
        f = self.frame if limit is None else self.frame.head(limit)
        starts, ends = self._times("start", f), self._times("end", f)
        out = []
        for k, r in enumerate(f.itertuples(index=False)):
            out.append(RegisterRow(id=r.id, scope=r.scope, target=r.target, units=int(r.units), category=r.category,
                                   impact=r.impact, severity=r.severity, start=starts[k], end=ends[k],
                                   counted_seconds=int(r.counted_seconds), downtime_seconds=int(r.downtime_seconds),
                                   excluded_seconds=int(r.excluded_seconds),
                                   flags=tuple(_flag_names(int(r.flags))), cause=r.cause, ticket=r.ticket))
        return out

    def to_csv(self, block: int = 1 << 16) -> bytes:
        """Every row, flags space-separated, times in the contract's zone.

        Written `block` rows at a time into one buffer: a million rows held as fifteen columns of
        Python values at once took about 0.6 GB beside the result; a block of them takes a few MB,
        and the bytes are the same (each cell is guarded and written on its own)."""
        import csv
        import io

        from slaschema.textsafe import csv_column

        f = self.frame
        flag_text = np.asarray([t.replace(", ", " ") for t in _FLAG_TEXT], dtype=object)
        out = io.BytesIO()
        text = io.StringIO()
        w = csv.writer(text, lineterminator="\n")
        w.writerow(("id", "scope", "target", "units", "category", "impact", "severity", "start", "end",
                    "counted_seconds", "downtime_seconds", "excluded_seconds", "flags", "cause", "ticket"))
        for lo in range(0, len(f), block):
            part = f.iloc[lo:lo + block]
            cols = [part["id"].tolist(), part["scope"].tolist(), part["target"].tolist(), part["units"].tolist(),
                    part["category"].tolist(), part["impact"].tolist(), part["severity"].tolist(),
                    self._times("start", part), self._times("end", part), part["counted_seconds"].tolist(),
                    part["downtime_seconds"].tolist(), part["excluded_seconds"].tolist(),
                    flag_text[part["flags"].to_numpy(dtype=I64) & FLAG_MASK].tolist(), part["cause"].tolist(),
                    part["ticket"].tolist()]
            w.writerows(zip(*(csv_column(c) for c in cols)))
            del cols
            out.write(text.getvalue().encode("utf-8"))
            text.seek(0)
            text.truncate()
        out.write(text.getvalue().encode("utf-8"))          # the header of an empty register
        return out.getvalue()


def local_minutes(epoch_s: np.ndarray, zone: str) -> np.ndarray:
    """`YYYY-MM-DD HH:MM` of each epoch second in `zone` (the minute it falls in, as
    strftime("%Y-%m-%d %H:%M") writes it), an object array of str: pandas converts to the
    zone, numpy writes the wall-clock minutes, a block of rows at a time (strftime took
    0.45 s per million times, this 0.15 s, with a few MB beside the result)."""
    local = pd.to_datetime(epoch_s, unit="s", utc=True).tz_convert(zone).tz_localize(None)
    minutes = local.to_numpy(dtype="datetime64[m]")
    out = np.empty(len(minutes), dtype=object)
    for lo in range(0, len(minutes), _BLOCK):
        text = np.datetime_as_string(minutes[lo:lo + _BLOCK], unit="m")       # YYYY-MM-DDTHH:MM
        width = text.dtype.itemsize // 4
        chars = text.view(np.uint32).reshape(len(text), width)
        if width < 16 or (chars[:, 16:] != 0).any() or (chars[:, 10] != ord("T")).any():
            # a year outside 0000-9999 (not in a contract's term): strftime writes it
            return np.asarray(local.strftime("%Y-%m-%d %H:%M"), dtype=object)
        chars[:, 10] = ord(" ")
        out[lo:lo + _BLOCK] = text.astype("<U16")
    return out


_BLOCK = 1 << 16


def _breakdown(frames: list[pd.DataFrame], top: int | None = None) -> tuple[Breakdown, ...]:
    """Per-month breakdowns summed over the reviewed months, largest total first (ties by key)."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return ()
    g = pd.concat(frames).groupby(level=0, sort=True).sum()
    total = (g["counted"] + g["excluded"]).to_numpy()
    g = g.iloc[np.lexsort((g.index.to_numpy(dtype=str), -total))]
    rows = [Breakdown(key=k, counted_node_seconds=int(c), downtime_node_seconds=int(d), excluded_node_seconds=int(x))
            for k, c, d, x in zip(g.index.tolist(), g["counted"].tolist(), g["downtime"].tolist(),
                                  g["excluded"].tolist())]
    if top is not None and len(rows) > top:
        rest = rows[top:]
        rows = rows[:top] + [Breakdown(key=f"{len(rest)} other causes",
                                       counted_node_seconds=sum(x.counted_node_seconds for x in rest),
                                       downtime_node_seconds=sum(x.downtime_node_seconds for x in rest),
                                       excluded_node_seconds=sum(x.excluded_node_seconds for x in rest))]
    return tuple(rows)


def _heatmap(rd, max_racks: int) -> Heatmap:
    grid = rd.seconds
    n_racks = len(rd.racks)
    totals = grid.sum(axis=1) if n_racks else np.zeros(0, dtype=I64)
    order = np.argsort(-totals, kind="stable")
    if n_racks > max_racks:
        chosen = np.sort(order[:max_racks])
        note = (f"The {max_racks} racks with the most node-hours down of {n_racks:,}; the other "
                f"{n_racks - max_racks:,} racks lost {totals[order[max_racks:]].sum() / 3600:,.1f} node-hours in all.")
    else:
        chosen = np.arange(n_racks)
        note = None
    return Heatmap(days=tuple(rd.days), racks=tuple(rd.racks[i] for i in chosen.tolist()),
                   node_hours=tuple(tuple(round(float(v) / 3600, 2) for v in grid[i]) for i in chosen.tolist()),
                   rack_totals={rd.racks[i]: round(float(totals[i]) / 3600, 2) for i in range(n_racks)}, note=note)


def _chronic_counts(result: Result) -> tuple[ChronicCount, ...]:
    """Months below target per unit among the reviewed months (units with at least one)."""
    counts: dict[tuple[str, str], list[str]] = {}
    for p in result.periods:
        for scope, sm in p.scopes.items():
            for i in np.flatnonzero(~np.asarray(sm.met, dtype=bool)).tolist():
                counts.setdefault((scope, sm.ids[i]), []).append(p.period.label)
    return tuple(ChronicCount(scope=s, id=i, months_below_target=tuple(m)) for (s, i), m in counts.items())
