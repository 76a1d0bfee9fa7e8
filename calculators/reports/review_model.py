"""Figures the SLA review shows that the result document does not carry.

`review_extras(lc, log, result)` adds, from the engine's own trace of the same run and the
incident frame (never by re-applying the SLA rules):

- `incidents`: the incident register, one record per incident id with the unit-seconds
  counted and excluded inside the reviewed months, the flags the engine set, and its
  timeline fields;
- `by_category` / `by_cause`: node-hours counted and excluded per category and per cause
  (an incident on a rack costs the rack's node count per hour, and so on);
- `heatmap`: node-hours down per rack and local calendar day (after the rack and cluster
  rules, i.e. the capacity the customer lost);
- `chronic`: for each unit, the months below target among the reviewed months.

`review_extras` returns plain JSON-able data; the renderer (`calculators.reports.review`)
only formats it. Everything is whole-column numpy/pandas work, so a log of a million
incidents stays within seconds.
"""

from __future__ import annotations

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


def _iso(epoch: int | None, zone: ZoneInfo) -> str:
    if epoch is None:
        return ""
    return datetime.fromtimestamp(int(epoch), zone).strftime("%Y-%m-%d %H:%M")


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
    out["incidents"] = _register(frame, counted, excluded, flags, periods, ZoneInfo(zone))
    out["by_category"] = _breakdown(frame, "category", counted * node_weight, excluded * node_weight, "unplanned")
    out["by_cause"] = _breakdown(frame, "cause", counted * node_weight, excluded * node_weight, "(no cause given)",
                                 top=12)
    out["heatmap"] = _heatmap(lc, tr, periods, zone, heatmap_racks)
    out["chronic"] = _chronic_counts(result)
    return out


def _register(frame: pd.DataFrame, counted, excluded, flags, periods, tz: ZoneInfo) -> list[dict[str, Any]]:
    if not len(frame):
        return []
    lo, hi = periods[0].start, periods[-1].end
    f = pd.DataFrame({
        "id": frame["id"].astype(str).to_numpy(), "scope": frame["scope"].astype(str).to_numpy(),
        "target": frame["target"].astype(str).to_numpy(), "start": frame["start"].to_numpy(dtype=I64),
        "end": frame["end"].astype("float64").to_numpy(), "category": frame["category"].fillna("unplanned")
        .astype(str).to_numpy(), "impact": frame["impact"].astype(str).to_numpy(),
        "severity": frame["severity"].astype(object).where(frame["severity"].notna(), "").astype(str).to_numpy(),
        "cause": frame["cause"].astype(object).where(frame["cause"].notna(), "").astype(str).to_numpy(),
        "counted": counted, "excluded": excluded, "flags": flags})
    # incidents that touch the reviewed months (open ones included)
    end_fill = np.where(np.isnan(f["end"].to_numpy()), np.inf, f["end"].to_numpy())
    f = f[(f["start"].to_numpy() < hi) & (end_fill > lo)]
    if not len(f):
        return []
    g = f.groupby("id", sort=False)
    agg = g.agg(scope=("scope", "first"), start=("start", "min"), end=("end", "max"), category=("category", "first"),
                impact=("impact", "first"), severity=("severity", "first"), cause=("cause", "first"),
                counted=("counted", "sum"), excluded=("excluded", "sum"), units=("target", "size"),
                first_target=("target", "first"), open=("end", lambda s: bool(s.isna().any())))
    flag_bits = g["flags"].agg(lambda s: int(np.bitwise_or.reduce(s.to_numpy())))
    multi = agg.index[agg["units"] > 1]
    targets: dict[str, str] = {}
    if len(multi):
        from slaschema import hostlist

        sub = f[f["id"].isin(set(multi))]
        for k, names in sub.groupby("id", sort=False)["target"]:
            targets[k] = hostlist.compress(list(dict.fromkeys(names)))
    agg = agg.sort_values(["start"], kind="stable")
    rows = []
    for k, r in zip(agg.index.tolist(), agg.itertuples(index=False)):
        bits = int(flag_bits[k])
        if r.open:
            bits |= engine.F_OPEN
        rows.append({
            "id": k, "scope": r.scope, "target": targets.get(k, r.first_target), "units": int(r.units),
            "category": r.category, "impact": r.impact, "severity": r.severity,
            "start": _iso(int(r.start), tz), "end": "" if r.open else _iso(int(r.end), tz),
            "counted_seconds": int(r.counted), "excluded_seconds": int(r.excluded),
            "flags": engine.flag_names(bits), "cause": r.cause,
        })
    return rows


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
