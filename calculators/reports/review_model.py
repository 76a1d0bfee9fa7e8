"""Figures the SLA review shows that the result document does not carry.

`review_extras(lc, log, result)` adds, from the engine's own trace of the same run and the
incident frame (never by re-applying the SLA rules):

- `incidents`: the incident register (`Register`), one row per incident id with the
  unit-seconds counted and excluded inside the reviewed months, the flags the engine set,
  and its timeline fields;
- `by_category` / `by_cause`: node-hours counted and excluded per category and per cause
  (an incident on a rack costs the rack's node count per hour, and so on);
- `heatmap`: node-hours down per rack and local calendar day (after the rack and cluster
  rules, i.e. the capacity the customer lost);
- `chronic`: for each unit, the months below target among the reviewed months.

`review_extras` returns plain data (the register as a `Register`); the renderer (`calculators.reports.review`)
only formats it. Everything is whole-column numpy/pandas work, so a log of a million
incidents stays within seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from calculators import engine
from calculators.periods import parse_periods

I64 = np.int64


def _epoch(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def _day_edges(start: int, end: int, zone: str) -> tuple[np.ndarray, list[str]]:
    """Local midnights from `start` to `end` (epoch seconds) and the day labels."""
    tz = ZoneInfo(zone)
    day = datetime.fromtimestamp(start, tz).date()
    edges, labels = [], []
    while True:
        t = int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp())
        if t >= end:
            edges.append(end)
            break
        edges.append(t)
        labels.append(day.isoformat())
        day = day + timedelta(days=1)
    return np.asarray(edges, dtype=I64), labels


def _per_row_seconds(pieces: engine.Pieces, own: np.ndarray, lo: int, hi: int, n_rows: int) -> np.ndarray:
    """Seconds of each frame row's own pieces inside [lo, hi) (relative times)."""
    if not len(pieces):
        return np.zeros(n_rows, dtype=I64)
    keep = own[pieces.row]
    st = np.maximum(pieces.iv.start[keep], lo)
    en = np.minimum(pieces.iv.end[keep], hi)
    secs = np.clip(en - st, 0, None)
    return np.bincount(pieces.row[keep], weights=secs, minlength=n_rows).astype(I64)


def _per_row_flags(pieces: engine.Pieces, own: np.ndarray, n_rows: int) -> np.ndarray:
    out = np.zeros(n_rows, dtype=I64)
    if not len(pieces):
        return out
    keep = own[pieces.row]
    rows, flags = pieces.row[keep], pieces.flags[keep]
    for bit, _ in engine.FLAG_NAMES:
        hit = np.bincount(rows[(flags & bit) > 0], minlength=n_rows) > 0
        out |= np.where(hit, bit, 0)
    return out


def review_extras(lc, log, result: dict[str, Any], heatmap_racks: int = 40) -> dict[str, Any]:
    """Register, cause/category breakdown, rack x day heatmap and chronic counts for a result."""
    zone = lc.model.contract.timezone
    labels = [p["period"] for p in result["periods"]]
    periods = parse_periods(labels, zone)
    as_of = _epoch(result["as_of"])
    tree = engine.Tree(lc.topology)
    frame = log.frame
    n = len(frame)
    tr = engine.trace(lc, log, periods, as_of)
    base = tr.base
    lo, hi = periods[0].start - base, periods[-1].end - base

    scope_code = (pd.Index(engine.SCOPES).get_indexer(frame["scope"].astype(str)).astype(I64)
                  if n else np.zeros(0, I64))
    counted = np.zeros(n, dtype=I64)
    excluded = np.zeros(n, dtype=I64)
    flags = np.zeros(n, dtype=I64)
    for s in range(4):
        own = scope_code == s
        counted += _per_row_seconds(tr.counted[s], own, lo, hi, n)
        excluded += _per_row_seconds(tr.excluded[s], own, lo, hi, n)
        flags |= _per_row_flags(tr.counted[s], own, n) | _per_row_flags(tr.excluded[s], own, n)
    # nodes under each row's target, for node-hours
    node_weight = np.ones(n, dtype=I64)
    if n:
        for s in (1, 2, 3):
            m = scope_code == s
            if m.any():
                idx = lc.topology.index_of(engine.SCOPES[s])
                units = np.asarray([idx[t] for t in frame["target"][m].astype(str)], dtype=I64)
                node_weight[m] = tree.count(0, s)[units]

    out: dict[str, Any] = {"periods": labels, "zone": zone}
    out["incidents"] = _register(frame, counted, excluded, flags, periods, zone)
    out["by_category"] = _breakdown(frame, "category", counted * node_weight, excluded * node_weight, "unplanned")
    out["by_cause"] = _breakdown(frame, "cause", counted * node_weight, excluded * node_weight, "(no cause given)",
                                 top=12)
    out["heatmap"] = _heatmap(lc, tr, periods, zone, heatmap_racks)
    out["chronic"] = _chronic_counts(result)
    return out


_FLAG_TEXT = tuple(", ".join(engine.flag_names(b)) for b in range(16))


@dataclass(frozen=True)
class Register:
    """The incident register: one row per incident id, ordered by start (then id).

    Columns: id, scope, target, units, category, impact, severity, cause, start, end (epoch
    seconds UTC; end -1 while open), counted_seconds, excluded_seconds, flags (engine bits).
    Held as one DataFrame so a million incidents stay cheap; `rows(n)` formats the first n.
    """

    frame: pd.DataFrame
    zone: str

    def __len__(self) -> int:
        return len(self.frame)

    def _flagged(self, flag: str) -> np.ndarray:
        bit = next(b for b, name in engine.FLAG_NAMES if name == flag)
        return (self.frame["flags"].to_numpy() & bit) > 0

    def count(self, flag: str) -> int:
        return int(self._flagged(flag).sum()) if len(self.frame) else 0

    def ids(self, flag: str, limit: int | None = None) -> list[str]:
        if not len(self.frame):
            return []
        ids = self.frame["id"].to_numpy()[self._flagged(flag)]
        return [str(x) for x in (ids[:limit] if limit is not None else ids)]

    def _times(self, col: str, f: pd.DataFrame) -> list[str]:
        v = f[col].to_numpy()
        ts = pd.to_datetime(np.where(v < 0, 0, v), unit="s", utc=True).tz_convert(self.zone).strftime("%Y-%m-%d %H:%M")
        out = np.asarray(ts, dtype=object)
        out[v < 0] = ""
        return out.tolist()

    def rows(self, limit: int | None = None) -> list[dict[str, Any]]:
        f = self.frame if limit is None else self.frame.head(limit)
        starts, ends = self._times("start", f), self._times("end", f)
        out = []
        for k, r in enumerate(f.itertuples(index=False)):
            out.append({"id": r.id, "scope": r.scope, "target": r.target, "units": int(r.units),
                        "category": r.category, "impact": r.impact, "severity": r.severity, "start": starts[k],
                        "end": ends[k], "counted_seconds": int(r.counted_seconds),
                        "excluded_seconds": int(r.excluded_seconds), "flags": engine.flag_names(int(r.flags)),
                        "cause": r.cause})
        return out

    def to_csv(self) -> bytes:
        """Every row, flags space-separated, times in the contract's zone."""
        import csv
        import io

        f = self.frame
        flag_text = np.asarray([t.replace(", ", " ") for t in _FLAG_TEXT], dtype=object)
        cols = [f["id"].tolist(), f["scope"].tolist(), f["target"].tolist(), f["units"].tolist(),
                f["category"].tolist(), f["impact"].tolist(), f["severity"].tolist(), self._times("start", f),
                self._times("end", f), f["counted_seconds"].tolist(), f["excluded_seconds"].tolist(),
                flag_text[f["flags"].to_numpy(dtype=I64) & 15].tolist() if len(f) else [], f["cause"].tolist()]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(("id", "scope", "target", "units", "category", "impact", "severity", "start", "end",
                    "counted_seconds", "excluded_seconds", "flags", "cause"))
        w.writerows(zip(*cols))
        return buf.getvalue().encode("utf-8")


def _text(frame: pd.DataFrame, col: str, default: str) -> np.ndarray:
    if col not in frame:
        return np.full(len(frame), default, dtype=object)
    s = frame[col].astype(object)
    return s.where(s.notna(), default).astype(str).to_numpy(dtype=object)


def _register(frame: pd.DataFrame, counted, excluded, flags, periods, zone: str) -> Register:
    cols = ["id", "scope", "target", "units", "category", "impact", "severity", "cause", "start", "end",
            "counted_seconds", "excluded_seconds", "flags"]
    if not len(frame):
        return Register(pd.DataFrame({c: [] for c in cols}), zone)
    lo, hi = periods[0].start, periods[-1].end
    start = frame["start"].to_numpy(dtype=I64)
    end_na = frame["end"].isna().to_numpy()
    end = np.where(end_na, -1, frame["end"].fillna(-1).to_numpy(dtype=I64))
    touch = (start < hi) & (end_na | (end > lo))
    idx = np.flatnonzero(touch)
    codes, uniq = pd.factorize(frame["id"].astype(str).to_numpy()[idx])
    order = np.argsort(codes, kind="stable")
    rows = idx[order]
    c = codes[order]
    first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    units = np.diff(np.r_[first, len(c)])
    fr = rows[first]
    tgt = frame["target"].astype(str).to_numpy(dtype=object)
    targets = tgt[fr].copy()
    multi = np.flatnonzero(units > 1)
    if len(multi):
        from slaschema import hostlist

        for m in multi.tolist():
            names = tgt[rows[first[m]:first[m] + units[m]]]
            targets[m] = hostlist.compress(list(dict.fromkeys(names.tolist())))
    e = np.where(end_na[rows], np.iinfo(I64).max, end[rows])
    e_max = np.maximum.reduceat(e, first)
    reg = pd.DataFrame({
        "id": np.asarray(uniq, dtype=object)[c[first]],
        "scope": frame["scope"].astype(str).to_numpy(dtype=object)[fr],
        "target": targets, "units": units,
        "category": _text(frame, "category", "unplanned")[fr],
        "impact": _text(frame, "impact", "down")[fr],
        "severity": _text(frame, "severity", "")[fr],
        "cause": _text(frame, "cause", "")[fr],
        "start": np.minimum.reduceat(start[rows], first),
        "end": np.where(e_max == np.iinfo(I64).max, -1, e_max),
        "counted_seconds": np.add.reduceat(counted[rows], first),
        "excluded_seconds": np.add.reduceat(excluded[rows], first),
        "flags": np.bitwise_or.reduceat(flags[rows], first) | np.where(np.maximum.reduceat(end_na[rows].astype(I64),
                                                                                           first) > 0,
                                                                        engine.F_OPEN, 0),
    })
    reg = reg.sort_values(["start", "id"], kind="stable").reset_index(drop=True)
    return Register(reg, zone)


def _breakdown(frame: pd.DataFrame, column: str, counted, excluded, missing: str, top: int | None = None):
    if not len(frame) or column not in frame:
        return []
    keys = frame[column].astype(object).where(frame[column].notna(), missing).astype(str)
    keys = keys.where(keys.str.strip() != "", missing)
    df = pd.DataFrame({"key": keys.to_numpy(), "counted": counted, "excluded": excluded})
    g = df.groupby("key", sort=True).sum()
    g = g[(g["counted"] > 0) | (g["excluded"] > 0)]
    g = g.assign(total=g["counted"] + g["excluded"]).sort_values(["total"], ascending=False, kind="stable")
    rows = [{"key": k, "counted_node_seconds": int(r.counted), "excluded_node_seconds": int(r.excluded)}
            for k, r in zip(g.index.tolist(), g.itertuples(index=False))]
    if top is not None and len(rows) > top:
        rest = rows[top:]
        rows = rows[:top] + [{"key": f"{len(rest)} other causes",
                              "counted_node_seconds": sum(x["counted_node_seconds"] for x in rest),
                              "excluded_node_seconds": sum(x["excluded_node_seconds"] for x in rest)}]
    return rows


def _heatmap(lc, tr, periods, zone: str, max_racks: int) -> dict[str, Any]:
    edges_abs, days = _day_edges(periods[0].start, periods[-1].end, zone)
    edges = edges_abs - tr.base
    topo = lc.topology
    n_racks, n_days = len(topo.racks), len(days)
    grid = np.zeros((n_racks, n_days), dtype=np.float64)
    iv = tr.node_final
    if len(iv):
        rack = np.asarray(topo.node_rack, dtype=I64)[iv.unit]
        st = np.maximum(iv.start, edges[0])
        en = np.minimum(iv.end, edges[-1])
        ok = en > st
        rack, st, en = rack[ok], st[ok], en[ok]
        first = np.searchsorted(edges, st, side="right") - 1
        last = np.searchsorted(edges, en, side="left") - 1
        span = int((last - first).max()) if len(first) else 0
        for k in range(span + 1):
            day = first + k
            m = day <= last
            d = day[m]
            secs = np.minimum(en[m], edges[d + 1]) - np.maximum(st[m], edges[d])
            np.add.at(grid, (rack[m], d), np.clip(secs, 0, None))
    totals = grid.sum(axis=1)
    order = np.argsort(-totals, kind="stable")
    if n_racks > max_racks:
        chosen = np.sort(order[:max_racks])
        note = (f"The {max_racks} racks with the most node-hours down of {n_racks:,}; the other "
                f"{n_racks - max_racks:,} racks lost {totals[order[max_racks:]].sum() / 3600:,.1f} node-hours in all.")
    else:
        chosen = np.arange(n_racks)
        note = None
    return {"days": days, "racks": [topo.racks[i] for i in chosen.tolist()],
            "node_hours": [[round(float(v) / 3600, 2) for v in grid[i]] for i in chosen.tolist()],
            "rack_totals": {topo.racks[i]: round(float(totals[i]) / 3600, 2) for i in range(n_racks)},
            "note": note}


def _chronic_counts(result: dict[str, Any]) -> dict[str, Any]:
    """Months below target per unit among the reviewed months (units with at least one)."""
    counts: dict[tuple[str, str], list[str]] = {}
    for p in result["periods"]:
        for u in p["units"]:
            if not u["met"]:
                counts.setdefault((u["scope"], u["id"]), []).append(p["period"])
    return {"units": [{"scope": s, "id": i, "months_below_target": m} for (s, i), m in counts.items()]}
