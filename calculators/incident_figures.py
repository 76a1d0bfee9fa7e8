"""Per-incident figures of one engine run: what each incident cost, by category, cause and rack-day.

`incident_figures(lc, log, tr, tree, periods)` is called by `calculators.engine.run` on the
trace of that same run (`compute(..., incidents=True)`), so the SLA review and any other
consumer read these figures from the `Result` instead of re-running the engine.

Per incident id (all rows of a hostlist incident together), inside the computed months:

- `counted_seconds`: unit-seconds counted as downtime after the exclusions (notice rule and
  monthly caps), before merging and the `min_outage` rule;
- `downtime_seconds`: the part of the counted time that is downtime of its unit after
  merging, `min_outage` and the rack/cluster/site rules (for proportional degraded time on
  nodes: the degraded stretches that survive `min_outage`), so 0 for an incident whose only
  outage was too short to count;
- `excluded_seconds`: unit-seconds excluded under the contract's exclusions;
- `flags`: the engine's flag bits (`calculators.vocabulary.FLAG_NAMES`).

Seconds are summed over the units the incident names at its own scope (a rack incident of
one hour is 3,600 rack-seconds). The breakdowns by category and by cause are in node-seconds
(a rack-hour costs as many node-hours as the rack has nodes) for each month. `RackDays` holds
node-seconds of downtime per rack and local calendar day (after the rack and cluster rules,
i.e. the capacity the customer lost). Everything is whole-column numpy/pandas work.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from calculators.incidents import IncidentLog
    from slaschema.loader import LoadedContract

I64 = np.int64
OPEN_BIT = 8
COLUMNS = ("id", "scope", "target", "units", "category", "impact", "severity", "cause", "ticket", "start", "end",
           "counted_seconds", "downtime_seconds", "excluded_seconds", "flags")
MISSING_CAUSE = "(no cause given)"


@dataclass(frozen=True, kw_only=True)
class RackDays:
    """Node-seconds of downtime per rack (row, topology order) and local day (column)."""

    racks: tuple[str, ...]
    days: tuple[str, ...]
    seconds: np.ndarray          # int64, shape (racks, days)

    def to_json(self) -> dict[str, Any]:
        return {"days": list(self.days), "racks": list(self.racks), "node_seconds": self.seconds.tolist()}


@dataclass(frozen=True, kw_only=True)
class IncidentFigures:
    """See the module docstring. `table` has the columns in `COLUMNS`, one row per incident id
    touching the computed months, ordered by start then id; `start`/`end` are epoch seconds
    UTC (`end` -1 while open). `by_category` / `by_cause`: per month label, a frame indexed
    by key with columns counted, downtime, excluded (node-seconds), largest total first."""

    table: pd.DataFrame
    by_category: dict[str, pd.DataFrame]
    by_cause: dict[str, pd.DataFrame]
    rack_days: RackDays

    def records(self) -> list[dict[str, Any]]:
        from calculators.result_records import iso
        from calculators.vocabulary import FLAG_LISTS, FLAG_MASK

        t = self.table
        out = t.drop(columns=["flags", "start", "end"]).to_dict(orient="records")
        starts, ends, flags = t["start"].tolist(), t["end"].tolist(), t["flags"].tolist()
        for r, s, e, f in zip(out, starts, ends, flags):
            r["start"] = iso(s)
            r["end"] = iso(e) if e >= 0 else None
            r["flags"] = list(FLAG_LISTS[int(f) & FLAG_MASK])
            r["units"] = int(r["units"])
            for k in ("counted_seconds", "downtime_seconds", "excluded_seconds"):
                r[k] = int(r[k])
        return out

    @staticmethod
    def breakdown_json(frame: pd.DataFrame) -> list[dict[str, Any]]:
        return [{"key": k, "counted_node_seconds": int(c), "downtime_node_seconds": int(d),
                 "excluded_node_seconds": int(x)}
                for k, c, d, x in zip(frame.index.tolist(), frame["counted"].tolist(), frame["downtime"].tolist(),
                                      frame["excluded"].tolist())]


def _coded(frame: pd.DataFrame, col: str, default: str) -> tuple[np.ndarray, np.ndarray]:
    """(codes, keys) of a text column, missing and blank values as `default` (work on the distinct values)."""
    if col not in frame or not len(frame):
        return np.zeros(len(frame), dtype=I64), np.asarray([default], dtype=object)
    codes, uniq = pd.factorize(frame[col], use_na_sentinel=True)
    clean = [default if (u is None or u is pd.NA or (isinstance(u, float) and u != u) or not str(u).strip())
             else str(u) for u in list(uniq)] + [default]
    kcodes, keys = pd.factorize(np.asarray(clean, dtype=object))
    return kcodes[codes].astype(I64), np.asarray(keys, dtype=object)


def _text(frame: pd.DataFrame, col: str, default: str, at: np.ndarray):
    """The column's texts at rows `at` (missing and blank: `default`), a text array made from
    the distinct values (no Python object per row)."""
    codes, keys = _coded(frame, col, default)
    return pd.array(keys, dtype="str").take(codes[at])


COUNTED, DOWNTIME, EXCLUDED = 0, 1, 2


def _segments(tr, own_scope: np.ndarray):
    """(kind, (row, start, end)) parts of the counted, downtime and excluded time of every frame
    row at its own scope (kind: COUNTED, DOWNTIME or EXCLUDED), one part at a time: the parts of
    a million-incident run are hundreds of MB together, so they are summed as they come
    (`_per_row`) and never held all at once. A row's counted pieces at its own scope are the
    scope's own pieces (`Trace.own`): the nodes' pieces pushed down from racks and above
    (`Trace.counted`, a rack incident once per node, built on first use) are not needed."""
    from calculators.vocabulary import DOWN, NODE
    from calculators.intervals import overlap_pairs

    def part(row, st, en):
        return row.astype(I64, copy=False), st.astype(I64, copy=False), en.astype(I64, copy=False)

    for s in range(4):
        for pieces, kind in ((tr.own(s), COUNTED), (tr.excluded[s], EXCLUDED)):
            if not len(pieces):
                continue
            keep = own_scope[pieces.row] == s
            if s == NODE and kind == COUNTED:
                keep &= pieces.ga == DOWN      # degraded node time: the surviving pieces below
            yield kind, part(pieces.row[keep], pieces.iv.start[keep], pieces.iv.end[keep])
            if kind == COUNTED:
                p = pieces.take(keep & (pieces.ga == DOWN))
                del keep
                # a node's final down time is the disjoint layers (its own, its rack's, its
                # cluster's): a piece's part in each, summed, is its part in their union, without
                # the union spread onto every node (`Trace.node_final`, millions of intervals)
                layers = tr.node_layers if s == NODE else ((s, tr.final(s)),)
                for scope, final in layers:
                    iv = p.iv if scope == s else p.iv.relabel(tr.tree.owner(s, scope))
                    a, b = overlap_pairs(iv, final)
                    yield DOWNTIME, part(p.row[a], np.maximum(p.iv.start[a], final.start[b]),
                                         np.minimum(p.iv.end[a], final.end[b]))
                    del iv, a, b
                del p
    for d in (tr.degraded, tr.degraded_short):
        if len(d):
            keep = own_scope[d.row] == NODE
            seg = part(d.row[keep], d.iv.start[keep], d.iv.end[keep])
            yield COUNTED, seg
            if d is tr.degraded:
                yield DOWNTIME, seg
            del seg


def _per_row(seg, lo: int, hi: int, n: int) -> np.ndarray:
    row, st, en = seg
    secs = np.clip(np.minimum(en, hi) - np.maximum(st, lo), 0, None)
    return np.bincount(row, weights=secs, minlength=n).astype(I64)


def _per_period(tr, own_scope: np.ndarray, periods, n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per period, (counted, downtime, excluded) seconds of every frame row inside it: the
    parts' sums in whole seconds (each part's sum is exact in float64, as a sum over all
    parts at once was)."""
    out = [(np.zeros(n, dtype=I64), np.zeros(n, dtype=I64), np.zeros(n, dtype=I64)) for _ in periods]
    if not n:
        return out
    for kind, seg in _segments(tr, own_scope):
        for p, sums in zip(periods, out):
            np.add(sums[kind], _per_row(seg, p.start - tr.base, p.end - tr.base, n), out=sums[kind])
        del seg
    return out


def _flags(tr, own_scope: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=I64)
    for s in range(4):
        for pieces in (tr.own(s), tr.excluded[s]):
            if not len(pieces):
                continue
            keep = own_scope[pieces.row] == s
            rows, flags = pieces.row[keep], pieces.flags[keep]
            for bit in (1, 2, 4, 8):
                hit = np.bincount(rows[(flags & bit) > 0], minlength=n) > 0
                out |= np.where(hit, bit, 0)
    return out


def _breakdown(codes: np.ndarray, keys, counted, downtime, excluded) -> pd.DataFrame:
    k = len(keys)
    df = pd.DataFrame({"counted": np.bincount(codes, weights=counted, minlength=k).astype(I64),
                       "downtime": np.bincount(codes, weights=downtime, minlength=k).astype(I64),
                       "excluded": np.bincount(codes, weights=excluded, minlength=k).astype(I64)},
                      index=pd.Index([str(x) for x in keys], name="key"))
    df = df[(df["counted"] > 0) | (df["excluded"] > 0)]
    total = df["counted"] + df["excluded"]
    order = np.lexsort((df.index.to_numpy(dtype=str), -total.to_numpy()))
    return df.iloc[order]


def day_edges(start: int, end: int, zone: str) -> tuple[list[int], list[str]]:
    """Local midnights from `start` to `end` (epoch seconds; end included as the last edge) and day labels."""
    tz = ZoneInfo(zone)
    day = datetime.fromtimestamp(start, tz).date()
    edges, labels = [], []
    while True:
        t = int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp())
        if t >= end:
            edges.append(end)
            break
        edges.append(max(t, start))
        labels.append(day.isoformat())
        day = day + timedelta(days=1)
    return edges, labels


def _rack_days(lc: LoadedContract, tr, tree, periods, zone: str) -> RackDays:
    """Node-seconds down per rack and local day, layer by layer of the nodes' final down time
    (`Trace.node_layers`, disjoint): a rack's or cluster's layer counts once per node under
    each rack it covers, as if spread onto the nodes."""
    from calculators.vocabulary import NODE, RACK

    n_racks = tree.size[RACK]
    per_rack = tree.count(NODE, RACK)
    parts = []
    for scope, layer in tr.node_layers:
        if not len(layer):
            continue
        if scope == NODE:
            parts.append((tree.owner(NODE, RACK)[layer.unit], layer.start, layer.end, None))
        else:
            iv = layer if scope == RACK else tree.spread(layer, scope, RACK)
            parts.append((iv.unit, iv.start, iv.end, per_rack[iv.unit]))
    grids, days = [], []
    for p in periods:
        e, labels = day_edges(p.start, p.end, zone)
        edges = np.asarray(e, dtype=I64) - tr.base
        grid = np.zeros((n_racks, len(labels)), dtype=I64)
        for rack_all, start, end, nodes in parts:
            st = np.maximum(start, edges[0])
            en = np.minimum(end, edges[-1])
            ok = en > st
            rack, st, en = rack_all[ok], st[ok], en[ok]
            weight = nodes[ok] if nodes is not None else None
            first = np.searchsorted(edges, st, side="right") - 1
            last = np.searchsorted(edges, en, side="left") - 1
            span = int((last - first).max()) if len(first) else -1
            for k in range(span + 1):
                day = first + k
                m = day <= last
                d = day[m]
                secs = np.clip(np.minimum(en[m], edges[d + 1]) - np.maximum(st[m], edges[d]), 0, None)
                np.add.at(grid, (rack[m], d), secs if weight is None else secs * weight[m])
        grids.append(grid)
        days.extend(labels)
    seconds = np.concatenate(grids, axis=1) if grids else np.zeros((n_racks, 0), dtype=I64)
    return RackDays(racks=tuple(tree.names[RACK]), days=tuple(days), seconds=seconds)


def incident_figures(lc: LoadedContract, log: IncidentLog, tr, tree, periods) -> IncidentFigures:
    """The per-incident register, the breakdowns per month and the rack x day downtime of a run."""
    from calculators.vocabulary import SCOPES

    zone = lc.model.contract.timezone
    frame = log.frame
    n = len(frame)
    own_scope = (pd.Index(SCOPES).get_indexer(frame["scope"].astype(str)).astype(I64) if n
                 else np.zeros(0, dtype=I64))
    per_period = _per_period(tr, own_scope, periods, n)
    counted = sum((x[0] for x in per_period), np.zeros(n, dtype=I64))
    downtime = sum((x[1] for x in per_period), np.zeros(n, dtype=I64))
    excluded = sum((x[2] for x in per_period), np.zeros(n, dtype=I64))
    flags = _flags(tr, own_scope, n) if n else np.zeros(0, dtype=I64)

    # nodes under each row's target, for node-seconds
    weight = np.ones(n, dtype=I64)
    if n:
        target = frame["target"].astype(str)
        for s in (1, 2, 3):
            m = own_scope == s
            if m.any():
                units = pd.Index(tree.names[s]).get_indexer(target[m])
                weight[m] = tree.count(0, s)[units]
    cat_codes, cat_keys = _coded(frame, "category", "unplanned")
    cause_codes, cause_keys = _coded(frame, "cause", MISSING_CAUSE)
    by_category, by_cause = {}, {}
    for p, (c, dn, x) in zip(periods, per_period):
        by_category[p.label] = _breakdown(cat_codes, cat_keys, c * weight, dn * weight, x * weight)
        by_cause[p.label] = _breakdown(cause_codes, cause_keys, c * weight, dn * weight, x * weight)
    table = _register(frame, counted, downtime, excluded, flags, periods)
    return IncidentFigures(table=table, by_category=by_category, by_cause=by_cause,
                           rack_days=_rack_days(lc, tr, tree, periods, zone))


def _register(frame: pd.DataFrame, counted, downtime, excluded, flags, periods) -> pd.DataFrame:
    if not len(frame):
        return pd.DataFrame({c: pd.Series([], dtype=object if c in ("id", "scope", "target", "category", "impact",
                                                                      "severity", "cause", "ticket") else I64)
                             for c in COLUMNS})
    start = frame["start"].to_numpy(dtype=I64)
    end_na = frame["end"].isna().to_numpy()
    end = np.where(end_na, -1, frame["end"].fillna(-1).to_numpy(dtype=I64))
    touch = np.zeros(len(frame), dtype=bool)
    for p in periods:
        touch |= (start < p.end) & (end_na | (end > p.start))
    idx = np.flatnonzero(touch)
    # the text columns stay pandas (Arrow) arrays and are taken at the rows needed: a million
    # ids, targets and scopes as Python strings each took 60-120 MB, and all were made again
    # when the frame below was built
    ids = frame["id"].astype(str).array
    codes, uniq = pd.factorize(ids.take(idx))
    order = np.argsort(codes, kind="stable")
    rows = idx[order]
    c = codes[order]
    del touch, idx, codes, order            # (their memory serves the arrays below)
    first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]]) if len(c) else np.zeros(0, dtype=I64)
    units = np.diff(np.r_[first, len(c)]).astype(I64)
    fr = rows[first]
    tgt = frame["target"].astype(str).array
    targets = tgt.take(fr)
    multi = np.flatnonzero(units > 1)
    if len(multi):
        from slaschema import hostlist

        names = tgt.take(np.concatenate([rows[first[m]:first[m] + units[m]] for m in multi.tolist()])).tolist()
        merged, pos = [], 0
        for m in multi.tolist():
            merged.append(hostlist.compress(list(dict.fromkeys(names[pos:pos + units[m]]))))
            pos += int(units[m])
        targets = np.asarray(targets, dtype=object)
        targets[multi] = np.asarray(merged, dtype=object)
    if not len(c):
        return _register(frame.iloc[:0], counted[:0], downtime[:0], excluded[:0], flags[:0], periods)
    big = np.iinfo(I64).max
    e = np.where(end_na[rows], big, end[rows])
    e_max = np.maximum.reduceat(e, first)
    del e
    is_open = np.maximum.reduceat(end_na[rows].astype(I64), first) > 0
    id_g, start_g = uniq.take(c[first]), np.minimum.reduceat(start[rows], first)
    # the register's order (start, then id) is worked out on those two columns alone, by Arrow
    # (ids compared by code point, as pandas' sort of the frame did: 0.4 s instead of 1.9 s for
    # a million, and no Python string made), and every column is taken in it once
    import pyarrow as pa
    import pyarrow.compute as pc

    g = pc.sort_indices(pa.table({"start": pa.array(start_g), "id": pa.array(id_g)}),
                        sort_keys=[("start", "ascending"), ("id", "ascending")]).to_numpy()
    at = fr[g]
    return pd.DataFrame({
        "id": id_g.take(g),
        "scope": frame["scope"].astype(str).array.take(at),
        "target": targets.take(g),
        "units": units[g],
        "category": _text(frame, "category", "unplanned", at),
        "impact": _text(frame, "impact", "down", at),
        "severity": _text(frame, "severity", "", at),
        "cause": _text(frame, "cause", "", at),
        "ticket": _text(frame, "ticket", "", at),
        "start": start_g[g],
        "end": np.where(e_max == big, -1, e_max)[g],
        "counted_seconds": np.add.reduceat(counted[rows], first)[g],
        "downtime_seconds": np.add.reduceat(downtime[rows], first)[g],
        "excluded_seconds": np.add.reduceat(excluded[rows], first)[g],
        "flags": (np.bitwise_or.reduceat(flags[rows], first) | np.where(is_open, OPEN_BIT, 0))[g],
    })
