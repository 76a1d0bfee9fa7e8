"""Revision 1.1 of the semantics (sla-semantics.md section 8): service windows, clock buckets,
hours not charged.

Vectorised helpers the engine calls only when a contract uses these fields, so a revision-1
contract runs exactly the code it ran before:

- `Service`: each node's service window and each unit's service time (the union of its
  nodes' windows) as interval sets in the engine's relative time; clipping incident pieces
  to them (8.1: time outside a unit's service time is removed before merging, `min_outage`
  and the rules; a piece entirely outside is kept aside, flagged `outside_service`);
- `at_least_varying`: "at least k(t) members down" where k changes with the number of
  members in service (cluster rule: share of in-service nodes up; site rule: all in-service
  clusters down);
- `bucket_seconds`: downtime counted in clock buckets from the month's local midnight (8.3),
  `full` or `any`, judged on the part of each bucket inside the unit's service time;
- `not_charged_seconds`: per node, the in-service length of the clock buckets in which its
  exact downtime is strictly greater than `when_down_over` (8.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from calculators.intervals import MAX_TIME, Intervals, concat, intersect, merge, overlap_pairs, seconds_in, sweep

if TYPE_CHECKING:
    from slaschema.loader import LoadedContract

I64 = np.int64
NEVER = 1 << 40          # a threshold no count reaches


@dataclass(frozen=True)
class Service:
    """Service time per scope (node, rack, cluster, site), relative to the engine's origin.

    `sets[c]` is merged and sorted by (unit, start); a node's set is its window (none when the
    window is empty); a rack's, cluster's or site's is the union of its nodes' windows."""

    node_from: np.ndarray
    node_to: np.ndarray
    sets: tuple[Intervals, Intervals, Intervals, Intervals]

    @staticmethod
    def build(windows, zone: str, tree, base: int, hi: int) -> Service:
        from slaschema.types import instant_epoch

        lo_t, hi_t = 0, min(hi, MAX_TIME - 1)
        n = tree.size[0]
        fr = np.empty(n, dtype=I64)
        to = np.empty(n, dtype=I64)
        cache: dict = {None: None}

        def rel(v) -> int | None:
            if v not in cache:
                cache[v] = min(max(instant_epoch(v, zone) - base, lo_t), hi_t)
            return cache[v]
        for i, (a, b) in enumerate(windows):
            x, y = rel(a), rel(b)
            fr[i] = lo_t if x is None else x
            to[i] = hi_t if y is None else y
        to = np.maximum(to, fr)
        nodes = Intervals(np.arange(n, dtype=I64), fr, to)
        nodes = nodes.take(to > fr)
        sets = [nodes]
        for c in (1, 2, 3):
            sets.append(merge(nodes.relabel(tree.owner(0, c))))
        return Service(fr, to, tuple(sets))

    def seconds(self, scope: int, lo: int, hi: int, n_units: int) -> np.ndarray:
        """Per unit, its service seconds inside [lo, hi)."""
        if scope == 0:
            return np.maximum(np.minimum(self.node_to, hi) - np.maximum(self.node_from, lo), 0)
        return seconds_in(self.sets[scope], lo, hi, n_units)

    def clip_nodes(self, iv: Intervals) -> Intervals:
        """Node intervals cut to each node's window (one window per node: a clamp)."""
        if not len(iv):
            return iv
        s = np.maximum(iv.start, self.node_from[iv.unit])
        e = np.minimum(iv.end, self.node_to[iv.unit])
        keep = e > s
        return Intervals(iv.unit[keep], s[keep], e[keep])

    def clip(self, pieces, scope: int, n_own: int, outside_flag: int):
        """`pieces` (own first, then pushed down) cut to the service time of their units.
        Returns (kept pieces, how many of them are own, pieces entirely outside (flagged))."""
        Pieces = type(pieces)          # the engine's piece record (no import of the engine)

        if not len(pieces):
            return pieces, 0, Pieces.empty()
        if scope == 0:       # one window per node: a clamp keeps the order (no search)
            u = pieces.iv.unit
            s = np.maximum(pieces.iv.start, self.node_from[u])
            e = np.minimum(pieces.iv.end, self.node_to[u])
            inside = e > s
            if inside.all():
                return Pieces(Intervals(u, s, e), pieces.row, pieces.flags, pieces.ga), n_own, Pieces.empty()
            k = np.flatnonzero(inside)
            kept = Pieces(Intervals(u[k], s[k], e[k]), pieces.row[k], pieces.flags[k], pieces.ga[k])
            out = pieces.take(~inside)
            out = Pieces(out.iv, out.row, out.flags | outside_flag, out.ga)
            return kept, int(np.count_nonzero(k < n_own)), out
        i, j = overlap_pairs(pieces.iv, self.sets[scope])
        o = np.argsort(i, kind="stable")
        i, j = i[o], j[o]
        s = self.sets[scope]
        kept = Pieces(Intervals(pieces.iv.unit[i], np.maximum(pieces.iv.start[i], s.start[j]),
                                np.minimum(pieces.iv.end[i], s.end[j])), pieces.row[i], pieces.flags[i],
                      pieces.ga[i])
        touched = np.zeros(len(pieces), dtype=bool)
        touched[i] = True
        out = pieces.take(~touched)
        out = Pieces(out.iv, out.row, out.flags | outside_flag, out.ga)
        return kept, int(np.count_nonzero(i < n_own)), out


def at_least_varying(members: Intervals, count_sets: Intervals, n_units: int, threshold_of) -> Intervals:
    """Merged times where at least `threshold_of(n)` of a unit's member intervals are active,
    `n` being how many of its members are in service at that time (`count_sets`: the members'
    service intervals labelled with the unit). Where no member is in service nothing is down."""
    u, t0, t1, level = sweep(count_sets)
    keep = level > 0
    u, t0, t1, level = u[keep], t0[keep], t1[keep], level[keep]
    if not len(u) or not len(members):
        return Intervals.empty()
    segs = Intervals(u, t0, t1)              # sorted by (unit, t0), disjoint per unit
    thr = np.asarray(threshold_of(level), dtype=I64)
    a, b = overlap_pairs(members, segs)
    if not len(a):
        return Intervals.empty()
    parts = Intervals(b.astype(I64), np.maximum(members.start[a], segs.start[b]),
                      np.minimum(members.end[a], segs.end[b]))
    u2, s0, s1, lv = sweep(parts)
    hit = lv >= thr[u2]
    return merge(Intervals(segs.unit[u2[hit]], s0[hit], s1[hit]))


def cluster_threshold(pct) -> callable:
    """Down members needed for "nodes up below pct%" among n in service: d >= floor(n - p n/(100 q)) + 1."""
    from calculators.credits import ratio

    p, q = ratio(pct)

    def f(n: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=object)
        return np.asarray((n * 100 * q - p * n) // (100 * q) + 1, dtype=I64)
    return f


def _clip(iv: Intervals, lo: int, hi: int) -> Intervals:
    s = np.maximum(iv.start, lo)
    e = np.minimum(iv.end, hi)
    keep = e > s
    return Intervals(iv.unit[keep], s[keep], e[keep])


def complement(sets: Intervals, lo: int, hi: int, n_units: int) -> Intervals:
    """Per unit, the parts of [lo, hi) outside `sets` (merged, sorted by unit and start)."""
    s = _clip(sets, lo, hi)
    if not len(s):
        return Intervals(np.arange(n_units, dtype=I64), np.full(n_units, lo, dtype=I64),
                         np.full(n_units, hi, dtype=I64))
    first = np.ones(len(s), dtype=bool)
    first[1:] = s.unit[1:] != s.unit[:-1]
    last = np.ones(len(s), dtype=bool)
    last[:-1] = first[1:]
    before = Intervals(s.unit[first], np.full(int(first.sum()), lo, dtype=I64), s.start[first])
    between = Intervals(s.unit[1:][~first[1:]], s.end[:-1][~first[1:]], s.start[1:][~first[1:]])
    after = Intervals(s.unit[last], s.end[last], np.full(int(last.sum()), hi, dtype=I64))
    has = np.zeros(n_units, dtype=bool)
    has[s.unit] = True
    none = np.flatnonzero(~has).astype(I64)
    empty = Intervals(none, np.full(len(none), lo, dtype=I64), np.full(len(none), hi, dtype=I64))
    out = concat(before, between, after, empty)
    return out.take(out.end > out.start)


def _full_nodes(d: Intervals, lo: int, hi: int, bucket: int, node_from: np.ndarray, node_to: np.ndarray) -> Intervals:
    """`full` buckets of node intervals (inside each node's one window): a bucket part before the
    window's start or after its end is out of service, so an interval that begins at the window's
    start reaches back to its bucket's start, one that ends at the window's end forward to its
    bucket's end; then the whole buckets inside, cut back to the window."""
    if not len(d):
        return Intervals.empty()
    n_buckets = -(-(hi - lo) // bucket)
    a, b = node_from[d.unit], node_to[d.unit]
    s = np.where(d.start <= np.maximum(a, lo), lo + (d.start - lo) // bucket * bucket, d.start)
    e = np.where(d.end >= np.minimum(b, hi), np.minimum(lo + -(-(d.end - lo) // bucket) * bucket, hi), d.end)
    k0 = -(-(s - lo) // bucket)
    k1 = np.where(e >= hi, n_buckets, (e - lo) // bucket)
    cs = np.maximum(lo + k0 * bucket, a)
    ce = np.minimum(np.minimum(lo + k1 * bucket, hi), b)
    keep = ce > cs
    return Intervals(d.unit[keep], cs[keep], ce[keep])


def bucket_counted(down: Intervals, lo: int, hi: int, bucket: int, mode: str, n_units: int,
                   service: Intervals | None, node_window: tuple[np.ndarray, np.ndarray] | None = None
                   ) -> Intervals:
    """Per unit, the parts of clock buckets counted as downtime (8.3): buckets of `bucket`
    seconds from `lo` (the month's local midnight) up to `hi` (the last may be shorter);
    `full` counts a bucket's in-service part when the unit is down for all of it, `any` when
    down for any of it. `down` is disjoint per unit; `service` (merged) None: always in service.
    `node_window` (each node's window start and end) takes a faster path for node intervals."""
    d = _clip(down, lo, hi)
    if mode == "full" and node_window is not None:
        return _full_nodes(d, lo, hi, bucket, *node_window)
    if mode == "any":
        if not len(d):
            return Intervals.empty()
        k0 = (d.start - lo) // bucket
        k1 = (d.end - 1 - lo) // bucket + 1
        counted = merge(Intervals(d.unit, lo + k0 * bucket, np.minimum(lo + k1 * bucket, hi)))
    else:
        if service is not None:
            d = merge(concat(d, complement(service, lo, hi, n_units)))
        if not len(d):
            return Intervals.empty()
        n_buckets = -(-(hi - lo) // bucket)
        k0 = -(-(d.start - lo) // bucket)
        k1 = np.where(d.end >= hi, n_buckets, (d.end - lo) // bucket)
        s = lo + k0 * bucket
        e = np.minimum(lo + k1 * bucket, hi)
        keep = e > s
        counted = Intervals(d.unit[keep], s[keep], e[keep])
    if service is not None:
        counted = intersect(counted, service)
    return counted


def bucket_seconds(down: Intervals, lo: int, hi: int, bucket: int, mode: str, n_units: int,
                   service: Intervals | None, node_window=None) -> np.ndarray:
    """Per unit, its downtime counted in clock buckets (see `bucket_counted`)."""
    return seconds_in(bucket_counted(down, lo, hi, bucket, mode, n_units, service, node_window), lo, hi, n_units)


def not_charged_buckets(down: Intervals, lo: int, hi: int, bucket: int, over: int,
                        node_from: np.ndarray | None, node_to: np.ndarray | None) -> Intervals:
    """Per node, the in-service parts of the clock buckets (from `lo`) in which its exact
    downtime (`down`, disjoint per node, inside its window) is strictly greater than `over`
    (8.5); unsorted, disjoint per node."""
    d = _clip(down, lo, hi)
    if not len(d):
        return Intervals.empty()
    i0 = (d.start - lo) // bucket
    i1 = (d.end - 1 - lo) // bucket
    # buckets strictly between an interval's first and last are down throughout (and in
    # service, as the interval is); `over` < bucket, so they are never charged
    inner = i1 - i0 > 1
    middle = Intervals(d.unit[inner], lo + (i0[inner] + 1) * bucket, lo + i1[inner] * bucket)
    # the first and last bucket of each interval: sum the downtime per (node, bucket). With
    # `down` sorted by (node, start) and disjoint, the keys first_0 <= last_0 <= first_1 ...
    # never decrease, so equal keys are neighbours and a run sum needs no sort.
    n_b = int(-(-(hi - lo) // bucket)) + 1
    two = i1 != i0
    first_len = np.minimum(d.end, lo + (i0 + 1) * bucket) - d.start
    last_len = np.where(two, d.end - (lo + i1 * bucket), 0)
    keys = np.empty(2 * len(d), dtype=I64)
    keys[0::2] = d.unit * n_b + i0
    keys[1::2] = d.unit * n_b + i1
    length = np.empty(2 * len(d), dtype=I64)
    length[0::2] = first_len
    length[1::2] = last_len
    if not (keys[1:] >= keys[:-1]).all():       # not sorted as documented: sort them
        o = np.argsort(keys, kind="stable")
        keys, length = keys[o], length[o]
    new = np.ones(len(keys), dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(new)
    total = np.add.reduceat(length, starts)
    keys = keys[starts]
    hit = total > over
    ku, kb = keys[hit] // n_b, keys[hit] % n_b
    bs = lo + kb * bucket
    be = np.minimum(bs + bucket, hi)
    if node_from is not None:
        bs = np.maximum(bs, node_from[ku])
        be = np.minimum(be, node_to[ku])
    edges = Intervals(ku, bs, be)
    edges = edges.take(edges.end > edges.start)
    return concat(middle, edges)


def not_charged_seconds(down: Intervals, lo: int, hi: int, bucket: int, over: int, n_units: int,
                        node_from: np.ndarray | None, node_to: np.ndarray | None) -> np.ndarray:
    """Per node, the in-service seconds of its buckets not charged (see `not_charged_buckets`)."""
    return seconds_in(not_charged_buckets(down, lo, hi, bucket, over, node_from, node_to), lo, hi, n_units)


def service_fee(pricing, gpus: np.ndarray, seconds: np.ndarray, month_s: int) -> tuple[np.ndarray, int]:
    """Per node, the fee for `seconds` of the month as `num / den` (den shared and independent
    of `seconds`): gpus x per_gpu_hour x seconds / 3600, or per_node_month x seconds / month
    (`calculators.credits.fee_fraction`, the rule of `Pricing.fee_terms`)."""
    from calculators.credits import fee_fraction

    return fee_fraction(pricing, gpus, month_s, seconds=seconds)


def uses_revision_1_1(lc: LoadedContract) -> bool:
    """Whether a contract uses any field of revision 1.1 (its results then carry the revision
    1.1 figures: service seconds, hours not charged, remedy)."""
    m = lc.model
    return bool(lc.topology.node_service is not None or m.downtime.counts_from != "fault"
                or m.downtime.measure is not None or m.credits.not_charged is not None
                or m.credits.minimum_strict
                or any(sl.pro_rata is not None and sl.pro_rata.only_below_target for _, sl in m.service_levels.items()))
