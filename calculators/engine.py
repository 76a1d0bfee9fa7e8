"""Incident log -> each unit's downtime per month -> availability -> credits.

Implements sla-semantics.md sections 1-5 and the chronic-failure trigger of section 6.
The public entry point is `compute(lc, log, periods, as_of=None, accepted_on=None)`.

Pipeline (every step is a few vectorised numpy passes over all incidents at once):
 1. open incidents end at `as_of`; `degraded` rows are dropped (`ignore`), made `down`,
    or kept as proportional losses;
 2. exclusions per incident row: notice rule, then the monthly cap per (category, scope,
    target), spent in chronological order on the union of that target's excluded time;
 3. counted parts are propagated site -> cluster -> rack -> node;
 4. node down time is merged and `min_outage` drops short merged outages; without service
    windows the pieces pushed down from racks and above are not copied onto every node: they
    are merged once per rack, and a node's own pieces are widened to the rack blocks they
    touch (`NodeLift`), so a rack's long outages stay one interval per rack;
 5. rack rule (k of n nodes down) and `nodes_follow_rack`;
 6. cluster rule (share of nodes up below X%, exact integer test) and `nodes_follow_cluster`;
    a rack's or cluster's down time is not copied onto each of its nodes: the nodes' final
    down time is kept as disjoint layers (`Trace.node_layers`) and figures are summed per
    layer, then spread to the nodes;
 7. site: its own incidents, or all its clusters down;
 8. per month: seconds of downtime (or lost GPU-seconds for proportional degraded time),
    excluded seconds, availability, credits (see `calculators.credits`).

Decisions where the spec leaves room (also in docs of `Result`):
 - `min_outage` applies to sites as it does to racks and clusters;
 - proportional degraded time: a node's degraded incidents are merged among themselves and
   a merged degraded stretch shorter than `min_outage` is dropped; time a node is down
   counts in full, degraded time only where the node is not down;
 - excluded seconds of a unit are the excluded time of the unit and of the units above it
   that is not downtime of the unit;
 - a closed incident is used as logged even if it ends after `as_of`.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import numpy as np

from calculators import credits as cr
from calculators import kernels
from calculators.id_list import IdList  # noqa: F401  (a unit's ids in the result; also read from here)
from calculators.incidents import UnitIds, coded
from calculators.log_columns import columns_of
from calculators.intervals import (
    MAX_TIME,
    Intervals,
    at_least,
    beside,
    concat,
    csr,
    drop_short,
    expand,
    intersect,
    key,
    merge,
    merge_labels,
    merge_sorted,
    minus_parent,
    overlap_pairs,
    positions,
    seconds_in,
    sorted_take,
)
from calculators.periods import EARLIEST_S, FIRST_MONTH, LAST_MONTH, LATEST_S, Period, month_bounds, parse_periods  # noqa: F401 (EARLIEST_S, LATEST_S are also read from here)
from calculators.service import (Service, at_least_varying, bucket_seconds, cluster_threshold, not_charged_seconds,
                                 service_fee, uses_revision_1_1)
from calculators.vocabulary import (  # noqa: F401  (scopes and flags: calculators/vocabulary.py)
    ALL_GPUS,
    CLUSTER,
    DOWN,
    F_CAP,
    F_NOT_REPORTED,
    F_NOTICE,
    F_OPEN,
    F_OUTSIDE,
    F_UNKNOWN,
    FLAG_NAMES,
    NA,
    NODE,
    RACK,
    SCOPES,
    SITE,
)
from slaschema.errors import InputError, Problem, SlakitError
from slaschema.textsafe import unicode_name

if TYPE_CHECKING:
    import pandas as pd

    from calculators.incidents import IncidentLog
    from slaschema.loader import LoadedContract

I64 = np.int64


def flag_names(bits: int) -> list[str]:
    return [name for bit, name in FLAG_NAMES if bits & bit]


@dataclass(frozen=True)
class Pieces:
    """Parts of incidents on units of one scope (times relative to the run's origin)."""

    iv: Intervals
    row: np.ndarray      # position of the incident row in the log frame
    flags: np.ndarray    # F_* bits
    ga: np.ndarray       # DOWN, ALL_GPUS, or GPUs lost (degraded, proportional)

    def __len__(self) -> int:
        return len(self.row)

    def take(self, idx) -> Pieces:
        ix = positions(idx, len(self))
        return Pieces(self.iv.take(ix), self.row.take(ix), self.flags.take(ix), self.ga.take(ix))

    @staticmethod
    def empty() -> Pieces:
        z = np.zeros(0, dtype=I64)
        return Pieces(Intervals.empty(), z, z.copy(), z.copy())

    @staticmethod
    def cat(*parts: Pieces) -> Pieces:
        parts = tuple(p for p in parts if len(p))
        if not parts:
            return Pieces.empty()
        return Pieces(concat(*(p.iv for p in parts)), np.concatenate([p.row for p in parts]),
                      np.concatenate([p.flags for p in parts]), np.concatenate([p.ga for p in parts]))

    def down(self) -> Pieces:
        """The pieces that make their unit down (worked out once per `Pieces`)."""
        got = self.__dict__.get("_down")
        if got is None:
            m = self.ga == DOWN
            got = self.__dict__["_down"] = True if m.all() else self.take(m)     # True: all of self
        return self if got is True else got


class Tree:
    """Index arrays of the topology: owners up the tree and children (CSR) down it."""

    def __init__(self, topo) -> None:
        nr = np.asarray(topo.node_rack, dtype=I64)
        rc = np.asarray(topo.rack_cluster, dtype=I64)
        cs = np.asarray(topo.cluster_site, dtype=I64)
        self.size = (len(topo.nodes), len(topo.racks), len(topo.clusters), len(topo.sites))
        self.up = {(NODE, RACK): nr, (NODE, CLUSTER): rc[nr], (NODE, SITE): cs[rc[nr]],
                   (RACK, CLUSTER): rc, (RACK, SITE): cs[rc], (CLUSTER, SITE): cs}
        self.gpus = np.asarray(topo.node_gpus, dtype=I64)
        self.names = (topo.nodes, topo.racks, topo.clusters, topo.sites)
        self._csr: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def owner(self, child: int, parent: int) -> np.ndarray:
        if child == parent:
            return np.arange(self.size[child], dtype=I64)
        return self.up[(child, parent)]

    def children(self, parent: int, child: int) -> tuple[np.ndarray, np.ndarray]:
        if (parent, child) not in self._csr:
            self._csr[(parent, child)] = csr(self.up[(child, parent)], self.size[parent])
        return self._csr[(parent, child)]

    def count(self, child: int, parent: int) -> np.ndarray:
        """Number of `child` units under each `parent` unit."""
        return np.bincount(self.owner(child, parent), minlength=self.size[parent]).astype(I64)

    def push_down(self, p: Pieces, parent: int, child: int) -> Pieces:
        if not len(p):
            return Pieces.empty()
        ptr, kids = self.children(parent, child)
        rows, unit = expand(p.iv.unit, ptr, kids)
        return Pieces(Intervals(unit, p.iv.start[rows], p.iv.end[rows]), p.row[rows], p.flags[rows], p.ga[rows])

    def spread_sorted(self, iv: Intervals, parent: int, child: int) -> Intervals:
        """`spread` for `iv` sorted by (parent, start), returned sorted by (child, start)."""
        if not len(iv):
            return Intervals.empty()
        bounds = np.searchsorted(iv.unit, np.arange(self.size[parent] + 1, dtype=I64))
        unit, at = expand(self.owner(child, parent), bounds, np.arange(len(iv), dtype=I64))
        return Intervals(unit, iv.start[at], iv.end[at])

    def spread(self, iv: Intervals, parent: int, child: int) -> Intervals:
        if not len(iv):
            return Intervals.empty()
        ptr, kids = self.children(parent, child)
        rows, unit = expand(iv.unit, ptr, kids)
        return Intervals(unit, iv.start[rows], iv.end[rows])


@dataclass(frozen=True)
class NodeLift:
    """Step 4 with the units above a node kept whole (no service windows).

    A node's down time is the merge of its own pieces with those pushed down onto it from its
    rack, cluster and site, less merged outages under `min_outage`. Those pushed-down pieces
    are the same for every node of a rack, so they are merged once per rack (blocks): a
    block of at least `min_outage` (`long_blocks`) is down time of every node of the rack; a
    node's own pieces, each widened to the blocks it overlaps or touches and merged, give the
    node's other outages, of which those of at least `min_outage` minus the long blocks are
    `rest`. The node's down time is then `rest` plus its rack's `long_blocks` (disjoint)."""

    parent: Pieces                     # counted down pieces on racks (the rack's own and pushed down)
    order: np.ndarray                  # positions in `parent`, sorted by (rack, start)
    block: np.ndarray                  # the block (`parent` merged per rack) of each `order` entry
    long: np.ndarray                   # blocks of at least min_outage
    long_blocks: Intervals
    rest: Intervals                    # per node: down time outside its rack's long blocks
    attribution_job: Any               # `attribution`, or the future of it (worked out in a worker)

    @property
    def attribution(self) -> tuple:
        """(unit, start, end, row, flags) of the node-level pieces inside the nodes' down time
        (own pieces and pieces of short blocks)."""
        return _done(self.attribution_job)

    def parent_attribution(self) -> tuple:
        """(rack, start, end, row, flags) of the pieces in long blocks (down time of every node
        of the rack)."""
        at = self.order[self.long[self.block]]
        p = self.parent
        return p.iv.unit[at], p.iv.start[at], p.iv.end[at], p.row[at], p.flags[at]


def _node_outages(node_p: Pieces, mo: int) -> tuple[Intervals, Intervals, np.ndarray]:
    """Step 4 on every piece of the nodes: (down time, outages dropped by min_outage, positions
    of the down pieces inside the down time)."""
    is_down = node_p.ga == DOWN
    down_at = None if is_down.all() else np.flatnonzero(is_down)      # positions of the down pieces
    order, block, merged = merge_labels(node_p.iv if down_at is None else node_p.iv.take(down_at))
    long = (merged.end - merged.start) >= mo
    node_down, node_short = (merged, Intervals.empty()) if long.all() else (merged.take(long), merged.take(~long))
    node_inside = order[long[block]]      # the down pieces inside node_down (each within one outage)
    if down_at is not None:
        node_inside = down_at[node_inside]
    return node_down, node_short, node_inside


def _outside_long_blocks(merged: Intervals, long: np.ndarray, order: np.ndarray, block: np.ndarray,
                         lo: np.ndarray, hi: np.ndarray, p_long: np.ndarray, long_blocks: Intervals) -> Intervals:
    """The long outages in `merged` less the racks' long blocks inside them, sorted by (node, start).

    A node's outage holds exactly the rack blocks its pieces touch ([lo, hi) of each piece,
    `order` and `block` from the merge): a block inside the outage touches one of its pieces,
    since the rack's blocks neither overlap nor touch each other. Those blocks are one run of
    the rack's, so the outage's long blocks are a run of `long_blocks` and the parts left are
    the gaps between them (`minus_parent` without a search)."""
    if not len(merged):
        return merged
    if not len(long_blocks):
        return merged if long.all() else merged.take(long)
    k = kernels.compiled
    if k is not None:      # two passes over the outages (`outside_counts`, `outside_fill`)
        i64 = kernels.as_i64
        before = np.zeros(len(p_long) + 1, dtype=I64)
        np.cumsum(p_long, out=before[1:])
        lng = long.astype(I64)
        first, count = np.zeros(len(merged), dtype=I64), np.zeros(len(merged), dtype=I64)
        total = k.outside_counts(i64(order), i64(block), i64(lo), i64(hi), before, lng, first, count)
        if total >= 0:
            out = [np.empty(total, dtype=I64) for _ in range(3)]
            n = k.outside_fill(lng, first, count, i64(merged.unit), i64(merged.start), i64(merged.end),
                               i64(long_blocks.start), i64(long_blocks.end), *out)
            return Intervals.first(out, n)
    return _outside_long_blocks_numpy(merged, long, order, block, lo, hi, p_long, long_blocks)


def _outside_long_blocks_numpy(merged: Intervals, long: np.ndarray, order: np.ndarray, block: np.ndarray,
                               lo: np.ndarray, hi: np.ndarray, p_long: np.ndarray, long_blocks: Intervals) -> Intervals:
    """`_outside_long_blocks` in numpy: the definition of the two compiled passes."""
    first = np.flatnonzero(np.concatenate([[True], block[1:] != block[:-1]]))
    touched = hi > lo
    b_lo = np.minimum.reduceat(np.where(touched, lo, len(p_long))[order], first)
    b_hi = np.maximum.reduceat(np.where(touched, hi, 0)[order], first)
    before = np.concatenate([[0], np.cumsum(p_long)])          # long blocks before each block
    a = before[np.minimum(b_lo, len(p_long))]
    cnt = np.where(b_hi > b_lo, before[b_hi] - a, 0)
    keep = np.flatnonzero(long)
    a, cnt = a[keep], cnt[keep]
    m = merged.take(keep)
    total = int(cnt.sum()) + len(keep)
    j = np.repeat(np.arange(len(keep), dtype=I64), cnt + 1)    # one more gap than long blocks
    i = np.arange(total, dtype=I64) - np.repeat(np.cumsum(cnt + 1) - (cnt + 1), cnt + 1)
    lb = a[j] + i
    start = np.where(i == 0, m.start[j], long_blocks.end[np.maximum(lb - 1, 0)])
    end = np.where(i == cnt[j], m.end[j], long_blocks.start[np.minimum(lb, len(long_blocks) - 1)])
    ok = end > start
    return Intervals(m.unit[j][ok], start[ok], end[ok])


def _touched_blocks(rack: np.ndarray, s: np.ndarray, e: np.ndarray, blocks: Intervals,
                    n_racks: int) -> tuple[np.ndarray, np.ndarray]:
    """For each piece [s, e) on `rack`, the blocks of that rack it overlaps or touches:
    `[lo, hi)` into `blocks` (sorted by rack and start, disjoint per rack). Two searches in
    numpy (the definition), or one walk of each rack's blocks with the compiled kernels."""
    k = kernels.compiled
    if k is None or int(rack.min()) < 0 or int(rack.max()) >= n_racks:
        lo = np.searchsorted(key(blocks.unit, blocks.end), key(rack, s), side="left")
        hi = np.searchsorted(key(blocks.unit, blocks.start), key(rack, e), side="right")
        return lo, hi
    i64 = kernels.as_i64
    bounds = np.searchsorted(blocks.unit, np.arange(n_racks + 1, dtype=I64)).astype(I64)
    lo = np.empty(len(s), dtype=I64)
    hi = np.empty(len(s), dtype=I64)
    k.touched_blocks(i64(rack), i64(s), i64(e), bounds, i64(blocks.start), i64(blocks.end), lo, hi)
    return lo, hi


def _lift(own: Pieces, parent: Pieces, tree: Tree, mo: int, pool: ThreadPoolExecutor | None = None) -> NodeLift:
    """`NodeLift` from the nodes' own pieces (all impacts) and the racks' counted down pieces.
    With `pool`, its `attribution` (needed only once the trace is done) is worked out there
    while the caller goes on with the racks' and clusters' steps."""
    p_order, p_block, blocks = merge_labels(parent.iv)
    p_long = (blocks.end - blocks.start) >= mo
    long_blocks = blocks if p_long.all() else blocks.take(p_long)
    is_down = own.ga == DOWN
    at = np.flatnonzero(is_down & (own.iv.end > own.iv.start))
    at, o = sorted_take(own.iv, at)       # sorted by (node, start): sorted needles, much faster searches
    s, e = o.start, o.end
    lo = hi = np.zeros(len(at), dtype=I64)
    if len(blocks) and len(at):
        rack = tree.owner(NODE, RACK)[o.unit]
        # the blocks of the node's rack that the piece overlaps or touches: [lo, hi)
        lo, hi = _touched_blocks(rack, s, e, blocks, tree.size[RACK])
        t = hi > lo
        if t.any():
            s = np.where(t, np.minimum(s, blocks.start[np.minimum(lo, len(blocks) - 1)]), s)
            e = np.where(t, np.maximum(e, blocks.end[np.maximum(hi - 1, 0)]), e)
    order, block, merged = merge_labels(Intervals(o.unit, s, e))
    long = (merged.end - merged.start) >= mo
    rest = _outside_long_blocks(merged, long, order, block, lo, hi, p_long, long_blocks)
    job = (_lift_attribution, own, parent, o, at, order, block, long, lo, hi, p_order, p_block, p_long, len(blocks))
    return NodeLift(parent, p_order, p_block, p_long, long_blocks, rest,
                    pool.submit(*job) if pool is not None else job[0](*job[1:]))


def _lift_attribution(own: Pieces, parent: Pieces, o: Intervals, at: np.ndarray, order: np.ndarray,
                      block: np.ndarray, long: np.ndarray, lo: np.ndarray, hi: np.ndarray, p_order: np.ndarray,
                      p_block: np.ndarray, p_long: np.ndarray, n_blocks: int) -> tuple:
    """`NodeLift.attribution` from `_lift`'s working arrays."""
    inside = order[long[block]]           # own down pieces inside the nodes' down time
    parts = [(o.unit[inside], own.iv.start[at[inside]], own.iv.end[at[inside]], own.row[at[inside]],
              own.flags[at[inside]])]
    # pieces of the short blocks merged into a node's outage: the node's, once each
    cnt = np.maximum(hi[inside] - lo[inside], 0)
    total = int(cnt.sum())
    if total:
        b = np.repeat(lo[inside], cnt) + (np.arange(total, dtype=I64) - np.repeat(np.cumsum(cnt) - cnt, cnt))
        n = np.repeat(o.unit[inside], cnt)
        short = ~p_long[b]
        if short.any():
            pair = kernels.distinct(n[short] * n_blocks + b[short])
            n, b = pair // n_blocks, pair % n_blocks
            ptr = np.searchsorted(p_block, np.arange(n_blocks + 1, dtype=I64))
            k, piece = expand(b, ptr, p_order)
            parts.append((n[k], parent.iv.start[piece], parent.iv.end[piece], parent.row[piece],
                          parent.flags[piece]))
    return tuple(np.concatenate([x[i] for x in parts]) for i in range(5))


def _done(job: Any) -> Any:
    """A value worked out in a worker (a future: its result, waited for) or here (itself)."""
    return job.result() if hasattr(job, "result") else job


def _degraded(node_p: Pieces, tree: Tree, mo: int) -> tuple[Pieces, Pieces]:
    """The proportional degraded time on nodes: (the pieces kept, with ga the GPUs lost; those
    dropped by min_outage)."""
    deg = node_p.take(node_p.ga != DOWN)
    if not len(deg):
        return Pieces.empty(), Pieces.empty()
    g = tree.gpus[deg.iv.unit]
    lost = np.where(deg.ga == ALL_GPUS, g, np.minimum(deg.ga, g))
    deg = Pieces(deg.iv, deg.row, deg.flags, lost)
    order, block, blocks = merge_labels(deg.iv)
    long_block = (blocks.end - blocks.start) >= mo
    deg_keep = deg.take(order[long_block[block]])
    deg_short = deg.take(order[~long_block[block]])
    return deg_keep.take(deg_keep.ga > 0), deg_short


def _degraded_levels(degraded: Pieces) -> list[tuple[int, Intervals]]:
    """For each distinct number of GPUs lost `v` (ascending), the merged time in which at least
    `v` are: `(v, intervals)` (the proportional degraded time of `compute`)."""
    d = degraded
    return [(v, merge(d.iv.take(d.ga >= v))) for v in kernels.distinct(d.ga).tolist()] if len(d) else []


@dataclass(frozen=True)
class Trace:
    """Every intermediate interval set of one run (relative times; `base` is the origin)."""

    base: int
    as_of: int
    periods: tuple[Period, ...]
    by_scope: tuple[Pieces, ...]       # per scope, the counted pieces of its own incidents (all impacts)
    views: tuple[Pieces | None, ...]   # per scope, incl. parts pushed down from above (None: see `counted`)
    excluded: tuple[Pieces, ...]       # per scope, incl. parts pushed down from above
    node_pieces: Pieces                # the pieces step 4 reads on nodes: `counted[NODE]`, or with
                                       # `lift`, the nodes' own and the pushed-down degraded ones
    rack_rule: Intervals               # times >= k nodes down (before merging with incidents)
    rack_down: Intervals
    rack_short: Intervals
    cluster_rule: Intervals
    cluster_down: Intervals
    cluster_short: Intervals
    site_rule: Intervals
    site_down: Intervals
    site_short: Intervals
    degraded_job: Any                  # (`degraded`, `degraded_short`), or the future of them
    degraded_levels_job: Any           # `_degraded_levels` of `degraded`, or its future
    excluded_merged_job: Any           # per scope, `merge` of the excluded pieces' intervals, or its future
    own_counted: tuple[int, ...]       # per scope: the first pieces of `counted` that are the scope's own
    node_layers: tuple[tuple[int, Intervals], ...]
    """Nodes' final down time as disjoint layers `(scope, intervals per unit of that scope)`:
    the nodes' own down time not covered by the layers above; the racks' (`nodes_follow_rack`:
    their down time not covered by their cluster's; otherwise the long blocks of the pieces
    pushed down from racks and above, `NodeLift`); the clusters' (`nodes_follow_cluster`). A
    rack's down time is not copied onto each of its nodes: figures are summed per layer and
    spread."""
    tree: Tree
    min_outage: int
    lift: NodeLift | None = None       # no service windows: step 4 with the units above kept whole
    step4: tuple | None = None         # with service windows: (node_down, node_short, node_inside)
    service: Service | None = None     # revision 1.1: service windows (None: every unit always in service)
    void: tuple[Pieces, ...] = ()      # revision 1.1: per scope, pieces that count nowhere (flags only)

    def excluded_merged(self, scope: int) -> Intervals:
        """The excluded time of each unit of `scope`: its pieces' intervals merged (worked out
        on the other thread while the trace went on)."""
        return _done(self.excluded_merged_job)[scope]

    @property
    def degraded_levels(self) -> list[tuple[int, Intervals]]:
        """`_degraded_levels(degraded)` (worked out after `degraded` on its thread)."""
        return _done(self.degraded_levels_job)

    @property
    def degraded(self) -> Pieces:
        """The surviving proportional pieces (node scope, ga = GPUs lost)."""
        return self._degraded_pair()[0]

    @property
    def degraded_short(self) -> Pieces:
        """The degraded pieces dropped by min_outage."""
        return self._degraded_pair()[1]

    def _degraded_pair(self) -> tuple[Pieces, Pieces]:
        return _done(self.degraded_job)

    @cached_property
    def counted(self) -> tuple[Pieces, ...]:
        """Per scope, the counted pieces on its units: its own (first) plus those pushed down
        from above (on nodes built on first use when `lift` is set)."""
        if self.views[NODE] is not None:
            return self.views
        node = Pieces.cat(self.by_scope[NODE], *(self.tree.push_down(self.by_scope[p], p, NODE) for p in range(1, 4)))
        return (node, *self.views[1:])

    def view(self, scope: int) -> Pieces:
        """`counted[scope]`, without building the nodes' pushed-down pieces for the other scopes."""
        v = self.views[scope]
        return v if v is not None else self.counted[scope]

    @cached_property
    def _step4(self) -> tuple[Intervals, Intervals, np.ndarray]:
        return self.step4 if self.step4 is not None else _node_outages(self.counted[NODE], self.min_outage)

    @property
    def node_down(self) -> Intervals:
        """Step 4: each node's merged down time, after min_outage (sorted by node and start)."""
        return self._step4[0]

    @property
    def node_short(self) -> Intervals:
        """Step 4: the nodes' merged outages dropped by min_outage."""
        return self._step4[1]

    @property
    def node_inside(self) -> np.ndarray:
        """Positions in counted[NODE] of the down pieces inside node_down."""
        return self._step4[2]

    def own(self, scope: int) -> Pieces:
        """The counted pieces of incidents on units of `scope` itself (none pushed down)."""
        if scope == NODE and self.views[NODE] is None:
            return self.by_scope[NODE]
        p, n = self.view(scope), self.own_counted[scope]
        return p if n == len(p) else p.take(slice(0, n))

    def node_attribution(self) -> tuple:
        """(node, start, end, row, flags) of the counted pieces that make each node's own down
        time (not the parts from its rack's or cluster's when it follows them); with `lift`,
        the pieces in the racks' long blocks are in `lift.parent_attribution()` instead."""
        if self.lift is not None:
            return self.lift.attribution
        p, k = self.counted[NODE], self.node_inside
        return p.iv.unit[k], p.iv.start[k], p.iv.end[k], p.row[k], p.flags[k]

    def final(self, scope: int) -> Intervals:
        return self.node_final if scope == NODE else (None, self.rack_down, self.cluster_down, self.site_down)[scope]

    @cached_property
    def node_final(self) -> Intervals:
        """Step 6: each node's final down time (sorted by node and start, disjoint)."""
        if len(self.node_layers) == 1:
            return self.node_layers[0][1]
        spread = [iv if s == NODE else self.tree.spread(iv, s, NODE) for s, iv in self.node_layers]
        return merge_sorted(*spread)

    def node_seconds(self, lo: int, hi: int) -> np.ndarray:
        """Per node, seconds of its final down time inside [lo, hi)."""
        total = np.zeros(self.tree.size[NODE], dtype=I64)
        for scope, iv in self.node_layers:
            got = seconds_in(iv, lo, hi, self.tree.size[scope])
            total += got if scope == NODE else got[self.tree.owner(NODE, scope)]
        return total

    def node_overlap(self, iv: Intervals) -> Intervals:
        """The parts of `iv` (node intervals, disjoint per node) inside the nodes' final down
        time, unsorted (for `seconds_in`)."""
        parts = []
        for scope, layer in self.node_layers:
            i, j = overlap_pairs(iv if scope == NODE else iv.relabel(self.tree.owner(NODE, scope)), layer)
            parts.append(Intervals(iv.unit[i], np.maximum(iv.start[i], layer.start[j]),
                                   np.minimum(iv.end[i], layer.end[j])))
        return concat(*parts)




class EngineError(SlakitError, ValueError):
    """The log does not fit the contract (a unit the topology lacks, times out of range)."""


class LogRangeError(EngineError, InputError):
    """Incident times outside what the engine computes: an `EngineError` that is also the
    log's located problem (`log_out_of_range`: file, row, column, value), printed as every
    bad input is (the problems document with --format json)."""


def _log_range_error(log: IncidentLog, cols, bad: list[tuple[np.ndarray, str, np.ndarray]]) -> LogRangeError:
    """The problem of the first row (in log order) whose time in `bad` (mask, column, times)
    lies outside EARLIEST_S .. LATEST_S, and how many more rows have one."""
    rows = cols.ints("row", 0)
    i, col, times = min(((int(np.flatnonzero(m)[0]), col, t) for m, col, t in bad if m.any()), key=lambda x: x[0])
    more = int(np.count_nonzero(np.logical_or.reduce([m for m, _, _ in bad]))) - 1
    value = f"{np.datetime64(int(times[i]), 's')}Z"       # numpy writes year 0 and 10000 too
    return LogRangeError([Problem(
        "log_out_of_range",
        "incident time before 1970-01-02 or after 9997-12-31 (UTC), the times credits are computed for"
        + (f" ({more} more such row(s))" if more else ""),
        file=log.file, row=int(rows[i]) or None, column=col, value=value,
        fix="correct the timestamp (a year such as 0001 or 9999 is a placeholder, not a time)")])


def _log_span(parts: list[tuple[np.ndarray, str, np.ndarray]]) -> tuple[tuple[int, int, str], ...] | None:
    """The earliest and the latest of the log's own times in `parts` (mask, column, times):
    each as (time, row position, column); None where no row has one."""
    ends = []
    for m, col, t in parts:
        at = np.flatnonzero(m)
        if len(at):
            v = t[at]
            lo, hi = int(np.argmin(v)), int(np.argmax(v))
            ends += [(int(v[lo]), int(at[lo]), col), (int(v[hi]), int(at[hi]), col)]
    return (min(ends), max(ends)) if ends else None


def _log_span_error(log: IncidentLog, cols, span: tuple[tuple[int, int, str], ...], anchor: int) -> LogRangeError:
    """`log_out_of_range` for a log whose own times span more than the engine computes over
    (270 years): located at the end of the span farther from `anchor` (the first period's
    start), the other end named in the message."""
    rows = cols.ints("row", 0)
    lo, hi = span
    far, near = (lo, hi) if anchor - lo[0] > hi[0] - anchor else (hi, lo)
    years = (hi[0] - lo[0]) / (365.2425 * 86400)
    shown = lambda t: f"{np.datetime64(t, 's')}Z"        # noqa: E731 (numpy writes year 0 and 10000 too)
    return LogRangeError([Problem(
        "log_out_of_range",
        f"incident times span {years:,.0f} years, more than the 270 credits are computed over: this {far[2]} "
        f"and the {near[2]} of row {int(rows[near[1]])} ({shown(near[0])}) are the earliest and latest",
        file=log.file, row=int(rows[far[1]]) or None, column=far[2], value=shown(far[0]),
        fix="correct the timestamp (a year far from the log's others is a typo or a placeholder)")])


def _as_epoch(ts: datetime | int | None) -> int | None:
    if ts is None:
        return None
    if isinstance(ts, (int, np.integer)):
        return int(ts)
    if ts.tzinfo is None:
        raise EngineError("as_of must be an aware datetime (with a zone or offset)")
    return int(ts.timestamp())


def _targets(log, scope: np.ndarray, tree: Tree, topology: Any = None) -> np.ndarray:
    """Position of each row's target among the units of its scope (lookups per distinct
    target), or the positions the loader looked up where it checked the log against
    `topology` (the same object as the tree's)."""
    known = getattr(columns_of(log), "unit_positions", None)
    target = known(topology) if known is not None and topology is not None else None
    if target is None:
        codes, uniques = coded(log, "target")
        target = np.full(len(codes), -1, dtype=I64)
        for code, names in enumerate(tree.names):
            m = scope == code
            if m.any():
                target[m] = UnitIds(names).positions_of(codes[m], uniques.astype(str))
    bad = np.flatnonzero((target < 0) & (scope >= 0))
    frame = log.frame if len(bad) or (scope < 0).any() else None     # (for the message)
    if len(bad):
        r = int(bad[0])
        raise EngineError(f"incident {frame['id'].iloc[r]!r}: unknown {SCOPES[scope[r]]} "
                          f"{str(frame['target'].iloc[r])!r}")
    if (scope < 0).any():
        r = int(np.flatnonzero(scope < 0)[0])
        raise EngineError(f"incident {frame['id'].iloc[r]!r}: unknown scope {frame['scope'].iloc[r]!r}")
    return target


def _exclusions(contract, cat_codes, cat_names, scope, target, start, end, notice_at, open_, ga, zone, base):
    """Split every incident row into counted and excluded pieces (sla-semantics 2)."""
    n = len(start)
    kinds = np.zeros(len(cat_names), dtype=I64)          # 0 counted, 1 excludable, 2 unknown
    notice_s = np.full(len(cat_names), -1, dtype=I64)
    cap_s = np.full(len(cat_names), -1, dtype=I64)
    for i, name in enumerate(cat_names):
        ex = contract.exclusions.get(name)
        if name == "unplanned":
            kinds[i] = 0
        elif ex is None:
            kinds[i] = 2
        else:
            kinds[i] = 1
            if ex.notice is not None:
                notice_s[i] = int(ex.notice.total_seconds())
            if ex.max_per_month is not None:
                cap_s[i] = int(ex.max_per_month.total_seconds())
    kind = kinds[cat_codes]
    excl = kind == 1
    ns = notice_s[cat_codes]
    need = excl & (ns >= 0)
    ok = (notice_at != NA) & (notice_at <= (start + base) - ns)
    late = need & ~ok
    excl &= ~late
    cap = cap_s[cat_codes]
    capped = excl & (cap >= 0)
    ci = np.flatnonzero(capped)
    # the capped rows are cut on the other thread (`_capped`) while the rest are split here; it
    # starts before the rows' flags are made (a capped row is excludable and not late: its only
    # flag is F_OPEN, which `_capped` reads from `open_`)
    cut = beside(_capped, ci, cat_codes, scope, target, start, end, open_, ga, cap_s, zone, base) if len(ci) else None
    flags = np.where(open_, F_OPEN, 0).astype(I64)
    flags |= np.where(kind == 2, F_UNKNOWN, 0)
    flags |= np.where(late, F_NOTICE, 0)

    rows = np.arange(n, dtype=I64)
    # the rows counted whole (class 0) and those excluded without a monthly cap (1), in one pass;
    # the capped ones (2) are cut by `_capped`
    (ct, cs, ce, crow, cf, cg, csc), (et, es, ee, erow, ef, eg, esc) = kernels.split(
        excl.astype(I64) + capped, 2, [target, start, end, rows, flags, ga, scope])
    counted = [Pieces(Intervals(ct, cs, ce), crow, cf, cg)]
    excluded = [Pieces(Intervals(et, es, ee), erow, ef, eg)]
    counted_scope = [csc]
    excluded_scope = [esc]
    if cut is not None:
        (over, over_scope), (ex, ex_scope) = cut.result()
        counted.append(over)
        counted_scope.append(over_scope)
        excluded.append(ex)
        excluded_scope.append(ex_scope)
    return (Pieces.cat(*counted), np.concatenate(counted_scope)), (Pieces.cat(*excluded), np.concatenate(excluded_scope))


def _capped(ci: np.ndarray, cat_codes, scope, target, start, end, open_, ga, cap_s: np.ndarray, zone: str,
            base: int) -> tuple[tuple[Pieces, np.ndarray], tuple[Pieces, np.ndarray]]:
    """The rows `ci` of an exclusion with a monthly cap, cut at each group's cap in each month:
    the counted overflow (flagged F_CAP) and the excluded parts, each with its rows' scopes
    (`_exclusions`). One group per (category, scope, target): the union of its excluded time,
    cut at months. A capped row's flags: F_OPEN where `open_`, nothing else."""
    gkey = (cat_codes[ci] * 4 + scope[ci]) * (int(target.max()) + 1) + target[ci]
    guniq, g = np.unique(gkey, return_inverse=True)
    g = g.astype(I64)
    rows_iv = Intervals(g, start[ci], end[ci])
    order, _, merged = merge_labels(rows_iv)
    # (the rows in (group, start) order, as `overlap_pairs` would sort them: every capped row
    # has a positive length, so none is left out of `order`)
    rows_order = order if len(order) == len(ci) else None
    months = month_bounds(int(merged.start.min()) + base, int(merged.end.max()) + base, zone)
    mb = np.array([p.start for p in months] + [months[-1].end], dtype=I64) - base
    m0 = np.searchsorted(mb, merged.start, side="right") - 1
    m1 = np.searchsorted(mb, merged.end - 1, side="right") - 1
    cnt = m1 - m0 + 1
    rep = np.repeat(np.arange(len(merged), dtype=I64), cnt)
    mi = np.repeat(m0, cnt) + (np.arange(int(cnt.sum()), dtype=I64) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    pg = merged.unit[rep]
    ps = np.maximum(merged.start[rep], mb[mi])
    pe = np.minimum(merged.end[rep], mb[mi + 1])
    ln = pe - ps
    new = np.ones(len(ps), dtype=bool)
    new[1:] = (pg[1:] != pg[:-1]) | (mi[1:] != mi[:-1])
    csum = np.cumsum(ln)
    before = csum - ln
    used = before - before[np.flatnonzero(new)][np.cumsum(new) - 1]
    gcap = cap_s[(guniq // (int(target.max()) + 1)) // 4][pg]
    ex = np.clip(gcap - used, 0, ln)
    over = ex < ln
    overflow = Intervals(pg[over], ps[over] + ex[over], pe[over])
    has_ex = ex > 0
    ex_parts = Intervals(pg[has_ex], ps[has_ex], ps[has_ex] + ex[has_ex])
    out = []
    for parts, extra in ((overflow, F_CAP), (ex_parts, 0)):
        a, b = overlap_pairs(rows_iv, parts, rows_order)
        r = ci[a]
        s = np.maximum(start[r], parts.start[b])
        e = np.minimum(end[r], parts.end[b])
        out.append((Pieces(Intervals(target[r], s, e), r, np.where(open_[r], F_OPEN, 0).astype(I64) | extra, ga[r]),
                    scope[r]))
    return out[0], out[1]


def _views(pieces: Pieces, scope: np.ndarray, tree: Tree, proportional: bool,
           node: bool = True) -> tuple[tuple[Pieces | None, ...], tuple[int, ...], tuple[Pieces, ...]]:
    """For each scope, the pieces on its units: its own (first) plus those pushed down from
    above (`node=False`: None for nodes); for each scope how many of its pieces are its own;
    and each scope's own pieces."""
    p = pieces
    by = tuple(Pieces(Intervals(u, s, e), r, f, g) for u, s, e, r, f, g in
               kernels.split(scope, 4, [p.iv.unit, p.iv.start, p.iv.end, p.row, p.flags, p.ga]))
    out: list[Pieces | None] = []
    own = []
    for c in range(4):
        n_own = len(by[c])
        if c == NODE and not node:
            out.append(None)
            own.append(n_own)
            continue
        parts = [by[c]] + [tree.push_down(by[p], p, c) for p in range(c + 1, 4)]
        v = Pieces.cat(*parts)
        if c > NODE and proportional:
            v = v.down()            # proportional degraded time never makes a rack/cluster/site down
            n_own = int(np.count_nonzero(by[c].ga == DOWN))
        out.append(v)
        own.append(n_own)
    return tuple(out), tuple(own), by


def trace(lc: LoadedContract, log: IncidentLog, periods: list[Period], as_of: int | None = None) -> Trace:
    """Run steps 1-7 for the whole log; the intervals every figure is computed from."""
    contract = lc.model
    tree = Tree(lc.topology)
    zone = contract.contract.timezone
    dt = contract.downtime
    mo = int(dt.min_outage.total_seconds())
    cols = columns_of(log)
    if as_of is None:
        as_of = max(p.end for p in periods)

    n = len(cols)
    if n:
        codes, uniques = coded(log, "scope")
        scope = np.append(UnitIds(SCOPES).get_indexer(uniques.astype(str)), -1).astype(I64)[codes]
    else:
        scope = np.zeros(0, I64)
    target = _targets(log, scope, tree, lc.topology) if n else np.zeros(0, I64)
    start_abs = cols.ints("start", 0)
    end_raw = cols.ints("end", NA)
    open_ = end_raw == NA
    end_abs = np.where(open_, as_of, end_raw) if open_.any() else end_raw      # (only read from here on)
    notice_at = cols.ints("notice_at", NA)
    degraded = np.zeros(n, bool)
    if n and "impact" in cols:
        codes, uniques = coded(log, "impact")
        degraded = np.append(uniques.astype(str) == "degraded", False)[codes]
    not_reported = np.zeros(n, dtype=bool)
    start_fault = start_abs
    if dt.counts_from == "report":
        # 8.2: the clock starts at reported_at; a row without one counts nowhere (flagged)
        rep = cols.ints("reported_at", NA)
        not_reported = (rep == NA) & (end_abs > start_abs)
        start_abs = np.where(rep == NA, end_abs, np.maximum(start_abs, rep))
    gaff = cols.ints("gpus_affected", NA)
    if dt.degraded == "down":
        ga = np.full(n, DOWN, dtype=I64)
        keep = np.ones(n, dtype=bool)
    elif dt.degraded == "ignore":
        ga = np.full(n, DOWN, dtype=I64)
        keep = ~degraded
    else:
        # GPUs lost: DOWN for a row that is not degraded, else its gpus_affected (ALL_GPUS where
        # not given); worked out on the degraded rows only where they are a few (most logs:
        # 2.5 ms instead of 14 for a million rows with a tenth degraded)
        d = np.flatnonzero(degraded) if np.count_nonzero(degraded) * 3 < n else None
        if d is None:
            ga = np.where(degraded, np.where(gaff == NA, ALL_GPUS, np.maximum(gaff, 0)), DOWN).astype(I64)
        else:
            ga = np.full(n, DOWN, dtype=I64)
            g = gaff[d]
            ga[d] = np.where(g == NA, ALL_GPUS, np.maximum(g, 0))
        keep = np.ones(n, dtype=bool)
    not_reported &= keep
    keep &= end_abs > start_abs

    first_period = min(periods, key=lambda p: p.start)
    if first_period.start < EARLIEST_S:     # a period, not the log: `period_option` refuses it on the command line
        raise EngineError(f"the period {first_period.label} starts before 1970-01-02 UTC, the earliest instant "
                          f"computed; name {FIRST_MONTH} or later [period_out_of_range]")
    if as_of > LATEST_S:
        raise EngineError(f"as_of ({as_of} s after 1970-01-01 UTC) is after 9997-12-31T16:00Z, the latest instant "
                          f"computed; name periods up to {LAST_MONTH} and an --as-of before 9997-12-31T16:00Z "
                          "[period_out_of_range]")
    every_row = bool(keep.all())
    if not keep.any():
        kept_start = kept_end = None
    elif every_row:         # (the usual log: every row counts; its columns are not gathered)
        kept_start, kept_end = start_abs, end_abs
    else:
        kept_start, kept_end = start_abs[keep], end_abs[keep]
    log_lo = min(([int(kept_start.min())] if kept_start is not None else [])
                 + ([int(start_fault[not_reported].min())] if not_reported.any() else []), default=None)
    log_hi = max(([int(kept_end.max())] if kept_end is not None else [])
                 + ([int(end_abs[not_reported].max())] if not_reported.any() else []), default=None)
    del kept_start, kept_end
    if (log_lo is not None and log_lo < EARLIEST_S) or (log_hi is not None and log_hi > LATEST_S):
        raise _log_range_error(log, cols, [(keep & (start_abs < EARLIEST_S), "start", start_abs),
                                           (not_reported & (start_fault < EARLIEST_S), "start", start_fault),
                                           ((keep | not_reported) & (end_abs > LATEST_S), "end", end_abs)])
    base = min([first_period.start] + ([log_lo] if log_lo is not None else []))
    base = month_bounds(base, base + 1, zone)[0].start - 86400      # room for the first month's start
    top = max([as_of] + [p.end for p in periods] + ([log_hi] if log_hi is not None else []))
    if top - base >= MAX_TIME:
        # the log's own times: starts and the ends written (an open incident runs to as_of)
        own = [(keep, "start", start_abs), (keep & ~open_, "end", end_abs), (not_reported, "start", start_fault)]
        span = _log_span(own)
        if span is not None and span[1][0] - span[0][0] >= MAX_TIME - 32 * 86400:
            raise _log_span_error(log, cols, span, first_period.start)
        # the log alone fits: it is the periods (or as_of), or their distance from the log's incidents
        year = lambda t: datetime.fromtimestamp(t, timezone.utc).year  # noqa: E731
        shown = f" and the log's incident times (from {year(log_lo)})" if log_lo is not None else ""
        raise EngineError(f"the periods ({first_period.label} .. {max(periods, key=lambda p: p.end).label}, as_of in "
                          f"{year(as_of)}){shown} span more than 270 years together; name periods (and --as-of) "
                          "within 270 years of each other and of the incidents [period_out_of_range]")
    if "category" in cols and n:
        codes, uniques = coded(log, "category")
        cat_names = [*uniques.astype(str).tolist(), "unplanned"]       # missing: unplanned
        cat_codes = np.where(codes < 0, len(cat_names) - 1, codes) if int(codes.min()) < 0 else codes
    else:
        cat_codes, cat_names = np.zeros(n, dtype=I64), ["unplanned"]
    if every_row:      # (the usual log: every row counts; its columns as they are, not gathered)
        (cp, cscope), (ep, escope) = _exclusions(
            contract, cat_codes, cat_names, scope, target, start_abs - base, end_abs - base, notice_at, open_, ga,
            zone, base)
    else:
        k = np.flatnonzero(keep)
        (cp, cscope), (ep, escope) = _exclusions(
            contract, cat_codes[k], cat_names, scope[k], target[k], start_abs[k] - base, end_abs[k] - base,
            notice_at[k], open_[k], ga[k], zone, base)
        # rows back to frame positions
        cp = Pieces(cp.iv, k[cp.row], cp.flags, cp.ga)
        ep = Pieces(ep.iv, k[ep.row], ep.flags, ep.ga)
        del k
    v = np.flatnonzero(not_reported)
    void_p = Pieces(Intervals(target[v], start_fault[v] - base, end_abs[v] - base), v,
                    np.where(open_[v], F_OPEN, 0).astype(I64) | F_NOT_REPORTED, ga[v])
    void_scope = scope[v]
    # the per-row columns are done with: let them go before the big interval steps
    del scope, target, start_abs, end_raw, end_abs, open_, notice_at, degraded, gaff, ga, keep, cat_codes
    del start_fault, not_reported
    proportional = dt.degraded == "proportional"
    lifted = lc.topology.node_service is None
    counted, own_counted, by_scope = _views(cp, cscope, tree, proportional, node=not lifted)
    del cp, cscope
    excluded, _, _ = _views(ep, escope, tree, proportional)
    del ep, escope
    void: tuple[Pieces, ...] = ()
    if len(void_p):
        void = _views(void_p, void_scope, tree, proportional)[0]
    svc = None
    if lc.topology.node_service is not None:
        # 8.1: counted and excluded time outside each unit's service time is removed before
        # merging, min_outage and the rules; pieces entirely outside are kept for their flag
        svc = Service.build(lc.topology.node_service, zone, tree, base, top - base + 86400)
        clipped, own_n, outside = [], [], []
        for c in range(4):
            kept, n_own, out = svc.clip(counted[c], c, own_counted[c], F_OUTSIDE)
            clipped.append(kept)
            own_n.append(n_own)
            outside.append(out)
        counted, own_counted = tuple(clipped), tuple(own_n)
        ex_clipped = []
        for c in range(4):
            kept, _, out = svc.clip(excluded[c], c, len(excluded[c]), F_OUTSIDE)
            ex_clipped.append(kept)
            outside[c] = Pieces.cat(outside[c], out)
        excluded = tuple(ex_clipped)
        void = tuple(Pieces.cat(void[c] if void else Pieces.empty(), outside[c]) for c in range(4))

    # each scope's excluded time merged on the other thread (`Trace.excluded_merged`): needed
    # only once the trace is done
    excluded_merged = beside(lambda ex: tuple(merge(p.iv) for p in ex), excluded)
    # step 4: nodes
    lift = step4 = None
    if lifted:
        # the pieces pushed down from racks and above are kept per rack (`NodeLift`); degraded
        # ones (proportional) stay with the node's own
        node_p = Pieces.cat(by_scope[NODE], *(tree.push_down(by_scope[p].take(by_scope[p].ga != DOWN), p, NODE)
                                              for p in range(1, 4) if proportional))
    else:
        node_p = counted[NODE]
    # a worker takes what the racks', clusters' and sites' steps below do not need: step 4's
    # attribution and the proportional degraded time (the thread ends when they are done; the
    # results are kept in the trace)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="slakit-trace")
    try:
        if lifted:
            lift = _lift(node_p, counted[RACK].down(), tree, mo, pool)
            node_down = lift.rest            # and, on every node of a rack, lift.long_blocks
        else:
            step4 = _node_outages(node_p, mo)
            node_down = step4[0]
        degraded = pool.submit(_degraded, node_p, tree, mo)
        # (after `degraded` on the same thread: its result is there when this begins)
        degraded_levels = pool.submit(lambda: _degraded_levels(degraded.result()[0]))
    finally:
        pool.shutdown(wait=False)
    # step 5: racks
    rack_rule = Intervals.empty()
    n_rack = tree.count(NODE, RACK)
    if dt.rack is not None:
        k_rack = np.full(tree.size[RACK], dt.rack.down_when_nodes_down, dtype=I64)
        rack_rule = at_least(node_down.relabel(tree.owner(NODE, RACK)), k_rack)
        if lift is not None and len(lift.long_blocks):   # a long block is down time of all the rack's nodes
            lb = lift.long_blocks
            rack_rule = merge_sorted(rack_rule, lb.take(n_rack[lb.unit] >= k_rack[lb.unit]))
    rack_down, rack_short = drop_short(merge(concat(counted[RACK].iv, rack_rule)), mo)
    follow_rack = dt.rack is not None and dt.rack.nodes_follow_rack and len(rack_down) > 0
    # node down time outside its rack's: with the rack's, the nodes' down time after step 5
    # (the long blocks lie inside the rack's down time)
    node_rest = (minus_parent(node_down, tree.owner(NODE, RACK), rack_down) if follow_rack and svc is None
                 else node_down)
    # the racks' part of their nodes' down time
    rack_part = rack_down if follow_rack else (lift.long_blocks if lift is not None else Intervals.empty())
    # step 6: clusters
    cluster_rule = Intervals.empty()
    after_rack = None
    if svc is not None:
        # 8.1: a node follows its rack only while in service; the cluster rule's share is of
        # the nodes in service at each instant
        after_rack = (merge_sorted(node_down, svc.clip_nodes(tree.spread(rack_down, RACK, NODE))) if follow_rack
                      else node_down)
        if dt.cluster is not None:
            cluster_rule = at_least_varying(after_rack.relabel(tree.owner(NODE, CLUSTER)),
                                            svc.sets[NODE].relabel(tree.owner(NODE, CLUSTER)), tree.size[CLUSTER],
                                            cluster_threshold(dt.cluster.down_when_available_below))
    elif dt.cluster is not None:
        p, q = cr.ratio(dt.cluster.down_when_available_below)
        n_nodes = tree.count(NODE, CLUSTER)
        # down while 100*q*(n - d) < p*n  <=>  d >= floor(n - p*n/(100 q)) + 1
        threshold = np.array([(int(x) * 100 * q - p * int(x)) // (100 * q) + 1 for x in n_nodes.tolist()],
                             dtype=I64)
        members = node_rest.relabel(tree.owner(NODE, CLUSTER))
        if len(rack_part):       # a rack's part counts all its nodes down
            cluster_rule = at_least(concat(members, rack_part.relabel(tree.owner(RACK, CLUSTER))), threshold,
                                    np.concatenate([np.ones(len(members), dtype=I64), n_rack[rack_part.unit]]))
        else:
            cluster_rule = at_least(members, threshold)
    cluster_down, cluster_short = drop_short(merge(concat(counted[CLUSTER].iv, cluster_rule)), mo)
    layers: list[tuple[int, Intervals]] = [(NODE, node_rest)]
    if svc is None and dt.cluster is not None and dt.cluster.nodes_follow_cluster and len(cluster_down):
        layers[0] = (NODE, minus_parent(node_rest, tree.owner(NODE, CLUSTER), cluster_down))
        rack_part = minus_parent(rack_part, tree.owner(RACK, CLUSTER), cluster_down)
        layers.append((CLUSTER, cluster_down))
    if svc is None and (follow_rack or len(rack_part)):
        layers.insert(1, (RACK, rack_part))
    if svc is not None:
        final = after_rack
        if dt.cluster is not None and dt.cluster.nodes_follow_cluster and len(cluster_down):
            final = merge_sorted(final, svc.clip_nodes(tree.spread(cluster_down, CLUSTER, NODE)))
        layers = [(NODE, final)]
    # step 7: sites
    if svc is not None:      # all of its clusters in service down
        site_rule = at_least_varying(cluster_down.relabel(tree.owner(CLUSTER, SITE)),
                                     svc.sets[CLUSTER].relabel(tree.owner(CLUSTER, SITE)), tree.size[SITE],
                                     lambda n: n)
    else:
        site_rule = at_least(cluster_down.relabel(tree.owner(CLUSTER, SITE)), tree.count(CLUSTER, SITE))
    site_down, site_short = drop_short(merge(concat(counted[SITE].iv, site_rule)), mo)

    return Trace(base=base, as_of=as_of, periods=tuple(periods), by_scope=by_scope, views=counted,
                 excluded=excluded, node_pieces=node_p, rack_rule=rack_rule, rack_down=rack_down,
                 rack_short=rack_short, cluster_rule=cluster_rule, cluster_down=cluster_down,
                 cluster_short=cluster_short, site_rule=site_rule, site_down=site_down, site_short=site_short,
                 degraded_job=degraded, own_counted=own_counted, node_layers=tuple(layers),
                 excluded_merged_job=excluded_merged, degraded_levels_job=degraded_levels,
                 tree=tree, min_outage=mo, lift=lift, step4=step4, service=svc, void=void)



# --- figures per month ----------------------------------------------------------------------

class IdCodes:
    """Incident ids of the log as integer codes (first-appearance order), made on first use."""

    def __init__(self, log) -> None:
        self._log = log            # the loader's codes of the ids (`IncidentLog.coded`), or the frame's
        self._done: tuple[np.ndarray, np.ndarray] | None = None
        self._rows_are_codes: bool | None = None

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        if self._done is None:
            self._done = coded(self._log, "id")
        return self._done

    def of_rows(self, rows: np.ndarray) -> np.ndarray:
        """The id codes of the frame rows `rows` (`codes[rows]`). In a log whose ids are all
        distinct the codes are the rows themselves (each id appears first in its own row):
        then `rows` is returned as it is (the caller must not change it), without the gather
        of hundreds of thousands of codes from all over the log's million (3 ms for a month's
        clusters). That is looked at once, by comparing the codes with their positions."""
        codes = self.get()[0]
        if self._rows_are_codes is None:
            self._rows_are_codes = bool(np.array_equal(codes, np.arange(len(codes), dtype=codes.dtype)))
        return rows.astype(codes.dtype, copy=False) if self._rows_are_codes else codes[rows]


def _unique_pairs(units: list[np.ndarray], codes: list[np.ndarray], n_names: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (unit, id code) pairs of the parts, sorted by unit then code."""
    k = kernels.sort(np.concatenate(units).astype(I64) * (n_names + 1) + np.concatenate(codes))
    k = kernels.distinct_sorted(k)
    return k // (n_names + 1), k % (n_names + 1)


class IdIndex:
    """Incident ids per unit, in log order, sorted out on first use (computing the figures
    stays cheap when only money is needed). Built from (unit, frame row) pairs; `extra` adds
    the ids of a parent unit whose down time the unit follows (rack or cluster -> nodes)."""

    def __init__(self, unit: np.ndarray, rows: np.ndarray, codes: IdCodes, n_units: int,
                 extra: tuple[tuple[np.ndarray, np.ndarray, IdIndex], ...] = ()) -> None:
        self._raw = (unit, rows)
        self._codes = codes
        self.n_units = n_units
        self.extra = extra           # (ptr, children, parent index)
        self._pairs: tuple[np.ndarray, np.ndarray] | None = None
        self._csr: tuple[np.ndarray, np.ndarray] | None = None
        self._csr_lock = threading.Lock()      # (the document's id gathers run in two threads)
        self._lists: list[list[str]] | None = None

    def _pairs_of(self, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`pairs()` restricted to `units` (sorted, distinct), without sorting everyone's."""
        names = self._codes.get()[1]
        unit, rows = self._raw
        wanted = np.zeros(self.n_units + 1, dtype=bool)
        wanted[units] = True
        m = wanted[unit]
        us, cs = [unit[m]], [self._codes.of_rows(rows[m])]
        for ptr, kids, parent in self.extra:
            owner = np.full(self.n_units, -1, dtype=I64)     # the parent unit of each child
            owner[kids] = np.repeat(np.arange(len(ptr) - 1, dtype=I64), np.diff(ptr))
            parents = kernels.distinct(owner[units])
            parents = parents[parents >= 0]
            if not len(parents):
                continue
            pu, pc = parent._pairs_of(parents)
            at, child = expand(pu, ptr, kids)
            keep = wanted[child]
            us.append(child[keep])
            cs.append(pc[at][keep])
        return _unique_pairs(us, cs, len(names))

    def id_lists(self, units) -> dict[int, Sequence[str]]:
        """The ids of a few units (the rows a table shows), each an `IdList`: their codes are
        worked out for these units only, and no id is made a string until it is read
        (units whose ids are already strings here come as those tuples)."""
        todo = kernels.distinct(np.asarray([int(i) for i in units], dtype=I64))
        if self._lists is not None:
            return {i: tuple(self._lists[i]) for i in todo.tolist()}
        if not len(todo):
            return {}
        if self._pairs is not None:
            unit, code = self._pairs
            b = np.searchsorted(unit, np.concatenate([todo, todo + 1])).tolist()
            lo, hi = b[:len(todo)], b[len(todo):]
        else:
            unit, code = self._pairs_of(todo)
            b = np.searchsorted(unit, np.append(todo, todo[-1] + 1)).tolist()
            lo, hi = b[:-1], b[1:]
        names = self._codes.get()[1]
        return {i: IdList(code[lo[n]:hi[n]], names) for n, i in enumerate(todo.tolist())}

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted unique (unit, id code)."""
        if self._pairs is None:
            bounds, code = self.lists_csr()
            self._pairs = np.repeat(np.arange(self.n_units, dtype=I64), np.diff(bounds)), code
        return self._pairs

    def lists_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """`pairs()` as (bounds, codes): unit u's distinct id codes, ascending, are
        codes[bounds[u]:bounds[u + 1]]. With the kernels, each unit's own list is merged with
        its parents' lists unit by unit (`merge_lists`: a node's ids are its own, its rack's
        and its cluster's), where numpy expands the parents' pairs to every child and sorts
        them all (1.9 million pairs for the nodes of a month of the benchmark fleet). Made
        once, also where two threads ask at once (a node month's and its racks' gathers)."""
        if self._csr is None:
            with self._csr_lock:
                if self._csr is None:
                    self._csr = self._make_csr()
        return self._csr

    def _make_csr(self) -> tuple[np.ndarray, np.ndarray]:
        names = self._codes.get()[1]
        unit, rows = self._raw
        codes = self._codes.of_rows(rows)       # (`rows` itself where the ids are all distinct: only read here)
        compiled = kernels.compiled
        if compiled is None or not self.extra or len(self.extra) > 4:
            units, cs = [unit], [codes]
            for ptr, kids, parent in self.extra:
                pu, pc = parent.pairs()
                at, child = expand(pu, ptr, kids)
                units.append(child)
                cs.append(pc[at])
            u, code = _unique_pairs(units, cs, len(names))
            return np.searchsorted(u, np.arange(self.n_units + 1, dtype=I64)).astype(I64), code
        own_u, own_c = _unique_pairs([unit], [codes], len(names))
        own_b = np.searchsorted(own_u, np.arange(self.n_units + 1, dtype=I64)).astype(I64)
        owners, pbs, pcs = [], [], []
        room = len(own_c)
        for ptr, kids, parent in self.extra:
            owner = np.full(self.n_units, -1, dtype=I64)        # each child's parent unit
            owner[kids] = np.repeat(np.arange(len(ptr) - 1, dtype=I64), np.diff(ptr))
            pb, pc = parent.lists_csr()
            has = owner >= 0
            room += int(np.diff(pb)[owner[has]].sum())
            owners.append(owner)
            pbs.append(pb)
            pcs.append(kernels.as_i64(pc))
        bounds = np.empty(self.n_units + 1, dtype=I64)
        out = np.empty(room, dtype=I64)
        n = compiled.merge_lists(own_b, kernels.as_i64(own_c), tuple(owners), tuple(pbs), tuple(pcs),
                                 bounds, out)
        return bounds, out[:n]

    def names(self) -> np.ndarray:
        """The incident ids the codes of `pairs()` index (object array, first-appearance order)."""
        return self._codes.get()[1]

    def lists(self) -> list[list[str]]:
        if self._lists is None:
            self._lists = self._make_lists()
        return self._lists

    def take_lists(self) -> list[list[str]]:
        """Lists of their own for the caller (the result document), not kept here."""
        if self._lists is not None:
            return [list(x) for x in self._lists]
        return self._make_lists()

    def _make_lists(self) -> list[list[str]]:
        unit, code = self.pairs()
        names = self._codes.get()[1]
        b = np.searchsorted(unit, np.arange(self.n_units + 1)).tolist()
        flat = names[code].tolist() if len(code) else []
        return [flat[b[i]:b[i + 1]] for i in range(self.n_units)]

    def get(self, i: int, default=()) -> tuple[str, ...]:
        if self._lists is not None:
            got = self._lists[i]
        else:                        # one unit: no lists for all the others
            unit, code = self.pairs()
            a, b = np.searchsorted(unit, [i, i + 1])
            got = self._codes.get()[1][code[a:b]].tolist()
        return tuple(got) if got else default


def _relabel(p: Pieces, owner: np.ndarray) -> Pieces:
    return Pieces(p.iv.relabel(owner), p.row, p.flags, p.ga)


def _unit_attribution(tr: Trace, tree: Tree, c: int, needed: set[int]) -> tuple:
    """(unit, start, end, frame row, flags) of the incident parts inside the down time of each
    unit of scope `c`, once for all months (empty where no figure of the run needs them).

    A node's incidents are matched with its own down time only: the parts of its final down
    time that come from its rack or cluster bring the ids (and flags) of the rack's or
    cluster's attribution (IdIndex `extra`), which has every piece in them."""
    f = None if c == NODE else tr.final(c)
    if c not in needed or (f is not None and not len(f)):
        z = np.zeros(0, dtype=I64)
        return z, z, z, z, z
    if c == NODE:
        # a node's pieces are those merged into its down time: each lies inside one outage
        return tr.node_attribution()
    # each overlap of an incident part with the unit's downtime (part by part: the node
    # pieces are not copied into one array with the others)
    got = []
    for cand in _candidate_parts(tr, tree, c):
        a, b = overlap_pairs(cand.iv, f)
        got.append((cand.iv.unit[a], np.maximum(cand.iv.start[a], f.start[b]),
                    np.minimum(cand.iv.end[a], f.end[b]), cand.row[a], cand.flags[a]))
    return tuple(np.concatenate([g[i] for g in got]) for i in range(5))


def _candidate_parts(tr: Trace, tree: Tree, scope: int) -> list[Pieces]:
    """Pieces that may explain a unit's downtime: its own (and pushed-down) incidents and,
    for racks, clusters and sites, the incidents on the nodes under it (rules): those of the
    nodes themselves and, once per unit rather than once per node, those of the units
    between (incidents pushed down onto the nodes from the unit or above are already its own)."""
    own = tr.view(scope).down()
    if scope == NODE:
        return [own]
    parts = [own, _relabel(tr.own(NODE).down(), tree.owner(NODE, scope))]
    for s in range(RACK, scope):
        p = tr.own(s).down()
        if len(p):
            p = p.take(tree.count(NODE, s)[p.iv.unit] > 0)      # a unit without nodes pushes nothing down
        parts.append(_relabel(p, tree.owner(s, scope)))
    return parts


def _attribution(tr: Trace, tree: Tree, scope: int, ps: int, pe: int,
                 pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit, frame row, flags) of the incident pieces that overlap the unit's downtime in [ps, pe)."""
    o_unit, o_start, o_end, o_row, o_flags = pairs
    k = kernels.compiled
    if k is not None and len(o_start) and all(x.dtype == I64 for x in pairs):
        # one pass selecting and gathering the three columns
        i64 = kernels.as_i64
        outs = tuple(np.empty(len(o_start), dtype=I64) for _ in range(3))
        m = k.select_overlapping(i64(o_start), i64(o_end), int(ps), int(pe), (i64(o_unit), i64(o_row), i64(o_flags)),
                                 outs)
        unit, rows, flags = (x[:m].copy() for x in outs)
    else:
        hit = np.minimum(o_end, pe) > np.maximum(o_start, ps)
        unit, rows, flags = o_unit[hit], o_row[hit], o_flags[hit]
    if scope == NODE and len(tr.degraded):
        d = tr.degraded
        m = (np.minimum(d.iv.end, pe) > np.maximum(d.iv.start, ps))
        unit = np.concatenate([unit, d.iv.unit[m]])
        rows = np.concatenate([rows, d.row[m]])
        flags = np.concatenate([flags, d.flags[m]])
    return unit, rows, flags


_ALL_FLAGS = sum(bit for bit, _ in FLAG_NAMES)


def _flag_bits(n_units: int, groups: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Per unit, the F_* bits of the pieces on it (one pass a group with the compiled
    kernels, `or_per_unit`; a mask and a unique a bit in numpy, the definition)."""
    out = np.zeros(n_units, dtype=I64)
    k = kernels.compiled
    if k is not None:
        i64 = kernels.as_i64
        if all(k.or_per_unit(i64(units), i64(flags), _ALL_FLAGS, out) for units, flags in groups):
            return out
        out = np.zeros(n_units, dtype=I64)         # a unit out of range: numpy says what that means
    for units, flags in groups:
        for bit, _ in FLAG_NAMES:
            m = (flags & bit) != 0
            if m.any():
                out[kernels.distinct(units[m])] |= bit
    return out


def _in_period(p: Pieces, ps: int, pe: int) -> Pieces:
    return p.take(np.minimum(p.iv.end, pe) > np.maximum(p.iv.start, ps))


def _share_stack(shares: list[tuple[str, np.ndarray, np.ndarray]], stacking: str, n: int):
    """Per node: the credit share of its fee from all scopes (max or sum, at most 1) and its basis."""
    best_n = cr.obj(np.zeros(n, dtype=I64))
    best_d = cr.obj(np.ones(n, dtype=I64))
    basis = np.full(n, "", dtype=object)
    for name, num, den in shares:
        positive = np.asarray(num > 0, dtype=bool)
        if stacking == "max":
            better = np.asarray(num * best_d > best_n * den, dtype=bool)
            best_n = np.where(better, num, best_n)
            best_d = np.where(better, den, best_d)
            basis = np.where(better, name, basis)
        else:
            best_n = best_n * den + num * best_d
            best_d = best_d * den
            basis = np.where(positive, np.where(basis == "", name, basis + "+" + name), basis)
    over = np.asarray(best_n > best_d, dtype=bool)
    best_n = np.where(over, 1, best_n).astype(object)
    best_d = np.where(over, 1, best_d).astype(object)
    return best_n, best_d, basis


def _period_figures(lc: LoadedContract, tr: Trace, tree: Tree, period: Period, ids: IdCodes, att_pairs,
                    excluded_sets: tuple[tuple[Intervals, Intervals], ...],
                    degraded_sets: list[tuple[int, Intervals, Intervals]], flagged: tuple[Pieces, ...],
                    rack_part: tuple | None = None):
    from calculators.result import NodeMonth, PeriodResult, ScopeMonth

    contract = lc.model
    ps, pe = period.start - tr.base, period.end - tr.base
    M = period.seconds
    proportional = contract.downtime.degraded == "proportional"
    svc = tr.service
    measure = contract.downtime.measure
    nc_rule = contract.credits.not_charged
    rev11 = uses_revision_1_1(lc)
    # revision 1.1: fees over each node's service time (8.1) and less the hours not charged (8.5)
    service_s = [svc.seconds(c, ps, pe, tree.size[c]) for c in range(4)] if svc is not None else None
    if svc is not None or nc_rule is not None:
        node_s = service_s[NODE] if service_s is not None else np.full(tree.size[NODE], M, dtype=I64)
        fee_node_num, fee_den = service_fee(contract.pricing, tree.gpus, node_s, M)
    else:
        fee_node_num, fee_den = cr.fee_fraction(contract.pricing, tree.gpus, M)
    nc_node_num = None
    charged_node_num = fee_node_num
    if nc_rule is not None:
        nc_s = not_charged_seconds(tr.node_final, ps, pe, int(nc_rule.per.total_seconds()),
                                   int(nc_rule.when_down_over.total_seconds()), tree.size[NODE],
                                   svc.node_from if svc is not None else None, svc.node_to if svc is not None else None)
        nc_node_num, _ = service_fee(contract.pricing, tree.gpus, nc_s, M)
        charged_node_num = fee_node_num - nc_node_num

    def seconds(c: int) -> np.ndarray:
        return tr.node_seconds(ps, pe) if c == NODE else seconds_in(tr.final(c), ps, pe, tree.size[c])

    scopes: dict[str, ScopeMonth] = {}
    shares: list[tuple[str, np.ndarray, np.ndarray]] = []
    indexes: dict[int, IdIndex] = {}
    dt = contract.downtime
    follows = {RACK: bool(dt.rack and dt.rack.nodes_follow_rack),
               CLUSTER: bool(dt.cluster and dt.cluster.nodes_follow_cluster)}
    attributed: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for c in (SITE, CLUSTER, RACK, NODE):
        sl = getattr(contract.service_levels, SCOPES[c])
        if sl is None and not (follows.get(c) and contract.service_levels.node is not None):
            continue
        u, codes, fl = attributed[c] = _attribution(tr, tree, c, ps, pe, att_pairs[c])
        extra: tuple = ()
        if c == NODE:
            extra = tuple(tree.children(parent, NODE) + (indexes[parent],) for parent in (RACK, CLUSTER)
                          if follows[parent] and parent in indexes)
            if rack_part is not None:
                ru, rr, _ = _attribution(tr, tree, RACK, ps, pe, rack_part[0])
                if len(ru):
                    extra += (tree.children(RACK, NODE) + (IdIndex(ru, rr, ids, tree.size[RACK]),),)
        indexes[c] = IdIndex(u, codes, ids, tree.size[c], extra)
    for c, name in enumerate(SCOPES):
        sl = getattr(contract.service_levels, name)
        if sl is None:
            continue
        u, codes, fl = attributed[c]
        idx = indexes[c]
        n = tree.size[c]
        if measure is None:
            D = seconds(c)
        else:                        # 8.3: counted in clock buckets, on the exact down intervals
            D = bucket_seconds(tr.final(c), ps, pe, int(measure.bucket.total_seconds()), measure.counts_when, n,
                               svc.sets[c] if svc is not None else None,
                               (svc.node_from, svc.node_to) if svc is not None and c == NODE else None)
        Mc = M
        if service_s is not None:    # 8.1: availability over service time (none: no unit-month)
            Mc = cr.obj(np.maximum(service_s[c], 1))
        if c == NODE and proportional:
            lnum = tree.gpus * D
            for weight, part, overlap in degraded_sets:
                lnum = lnum + weight * (seconds_in(part, ps, pe, n) - seconds_in(overlap, ps, pe, n))
            dn = cr.obj(tree.gpus)
        else:
            lnum = D
            dn = cr.obj(np.ones(n, dtype=I64))
        lnum = cr.obj(lnum)
        ex_all, ex_down = excluded_sets[c]
        excl = seconds_in(ex_all, ps, pe, n) - seconds_in(ex_down, ps, pe, n)
        avail = cr.availability_e4(lnum, dn, Mc)
        met = ~cr.below(lnum, dn, Mc, sl.effective_target)
        if service_s is not None:
            met |= service_s[c] == 0
        if sl.credits is not None:
            pct, snum, sden = cr.tiered(lnum, dn, Mc, sl)
        else:
            pct, snum, sden = cr.pro_rata(lnum, dn, Mc, sl)
            if sl.pro_rata.only_below_target:       # 8.4
                snum = np.where(met, 0, snum).astype(object)
        charged = None
        if rev11:
            unum = fee_node_num if c == NODE else _sum_by(fee_node_num, tree.owner(NODE, c), n)
            charged = charged_node_num if c == NODE else _sum_by(charged_node_num, tree.owner(NODE, c), n)
        elif c == NODE:
            unum = fee_node_num
        else:
            unum, den_c = cr.fee_fraction(contract.pricing, np.bincount(tree.owner(NODE, c), weights=tree.gpus,
                                                                        minlength=n).astype(I64), M, tree.count(NODE, c))
            # whole-month fractions of one pricing share their denominator with the nodes'
            assert den_c == fee_den, (den_c, fee_den)
        credit = cr.cents_half_up(snum * (unum if charged is None else charged), sden * fee_den)
        own = _in_period(flagged[c], ps, pe)
        flags = _flag_bits(n, [(u, fl), (own.iv.unit, own.flags)])
        if c == NODE:
            for parent in (RACK, CLUSTER):
                if follows[parent] and parent in attributed:
                    pu, _, pf = attributed[parent]
                    flags |= _flag_bits(tree.size[parent], [(pu, pf)])[tree.owner(NODE, parent)]
            if rack_part is not None:      # the flagged pieces on racks (those of long blocks among them)
                up = _in_period(rack_part[1], ps, pe)
                flags |= _flag_bits(tree.size[RACK], [(up.iv.unit, up.flags)])[tree.owner(NODE, RACK)]
        scopes[name] = ScopeMonth(
            scope=name, ids=tree.names[c], lnum=lnum, dn=dn, excluded=excl, avail_e4=avail,
            target=sl.effective_target, met=met, credit_pct=pct, share_num=snum, share_den=sden,
            fee_num=unum, fee_den=fee_den, credit_cents=credit, flags=flags, incidents=idx,
            proportional=proportional and c == NODE, month_seconds=M,
            service=(service_s[c] if service_s is not None else np.full(n, M, dtype=I64)) if rev11 else None,
            charged_num=charged)
        shares.append((name, snum[tree.owner(NODE, c)], sden[tree.owner(NODE, c)]))

    n_nodes = tree.size[NODE]
    share_n, share_d, basis = _share_stack(shares, contract.credits.stacking, n_nodes)
    node_credit = cr.cents_half_up(share_n * charged_node_num, share_d * fee_den)
    node_fee = cr.cents_half_up(fee_node_num, fee_den)
    total_num = int(fee_node_num.sum()) if n_nodes else 0
    charged_total_num = int(charged_node_num.sum()) if n_nodes else 0
    fee_total = cr.cents_half_up(total_num, fee_den)
    uncapped = int(node_credit.sum()) if n_nodes else 0
    cap_cents = None
    total = uncapped
    if contract.credits.cap is not None:        # of the charged fees (8.5)
        cp, cq = cr.ratio(contract.credits.cap)
        cap_cents = cr.cents_floor(cp * charged_total_num, 100 * cq * fee_den)
        total = min(total, cap_cents)
    minimum = contract.credits.minimum_amount
    strict = contract.credits.minimum_strict
    mn, md = cr.ratio(minimum)
    minimum_applied = 0 < total and (total * md <= mn * 100 if strict else total * md < mn * 100)   # 8.6
    if minimum_applied:
        total = 0
    nc_cents = cr.cents_half_up(nc_node_num, fee_den) if nc_node_num is not None else None
    extra = {}
    if rev11:
        extra = {"service": service_s[NODE] if service_s is not None else np.full(n_nodes, M, dtype=I64),
                 "not_charged_cents": nc_cents if nc_cents is not None else np.zeros(n_nodes, dtype=I64),
                 "not_charged_num": nc_node_num if nc_node_num is not None else cr.obj(np.zeros(n_nodes, dtype=I64))}
    nodes = NodeMonth(ids=tree.names[NODE], fee_num=fee_node_num, fee_den=fee_den, fee_cents=node_fee,
                      credit_cents=node_credit, basis=basis, **extra)
    nc_total = (int(nc_cents.sum()) if nc_cents is not None and n_nodes else 0) if rev11 else None
    return PeriodResult(period=period, fee_total_cents=fee_total, credit_uncapped_cents=uncapped, cap_cents=cap_cents,
                        cap_applied=cap_cents is not None and uncapped > cap_cents, minimum=minimum,
                        minimum_applied=minimum_applied, credit_total_cents=total, scopes=scopes, nodes=nodes,
                        not_charged_cents=nc_total, minimum_strict=strict)


def _sum_by(values: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Exact per-parent sums of per-node Python ints."""
    out = np.zeros(n, dtype=object)
    out[:] = 0
    np.add.at(out, owner, values)
    return out


def _chronic(lc: LoadedContract, periods: list, tree: Tree):
    """The chronic-failure trigger judged on the computed months (`ChronicTrigger`; None when
    the contract has no `termination.chronic`)."""
    from calculators.support_records import ChronicTrigger, chronic_units

    chronic = lc.model.termination.chronic
    if chronic is None:
        return None
    considered = periods[-chronic.within_months:]
    labels = tuple(p.period.label for p in considered)
    triggered = []
    for name in SCOPES:
        below_by_month = [(p.period.label, ~p.scopes[name].met) for p in considered if name in p.scopes]
        if not below_by_month:
            continue
        count = np.sum([m for _, m in below_by_month], axis=0)
        hit = np.flatnonzero(count >= chronic.months_below_target)
        if not len(hit):
            continue
        # months below target of each triggered unit: one label tuple per distinct pattern
        below = np.stack([np.asarray(m[hit], dtype=bool) for _, m in below_by_month], axis=1)
        # each unit's pattern as the bits of its months (a row of `below`), one label tuple a pattern
        # (more than 62 months: the rows themselves, as tuples)
        if below.shape[1] <= 62:
            bits = (below.astype(np.int64) << np.arange(below.shape[1], dtype=np.int64)).sum(axis=1).tolist()
        else:
            bits = [sum(1 << j for j, x in enumerate(row) if x) for row in below.tolist()]
        labels_of: dict[int, tuple[str, ...]] = {}
        for b in set(bits):
            labels_of[b] = tuple(lab for j, (lab, _) in enumerate(below_by_month) if b >> j & 1)
        ids = tree.names[SCOPES.index(name)]
        triggered += chronic_units(name, map(ids.__getitem__, hit.tolist()), map(labels_of.__getitem__, bits))
    return ChronicTrigger(
        months_below_target=chronic.months_below_target,
        within_months=chronic.within_months,
        months_considered=labels,
        window_complete=len(considered) >= chronic.within_months,
        note=("judged on the months computed here; pass the last "
              f"{chronic.within_months} months to see the contract's whole window")
        if len(considered) < chronic.within_months else None,
        triggered=tuple(triggered))


def compute(lc: LoadedContract, log: IncidentLog, periods: list[str] | list[Period],
            as_of: datetime | int | None = None, accepted_on: date | None = None, support: bool = True,
            incidents: bool = False):
    """Downtime, availability and credits for each month in `periods` (labels `YYYY-MM`,
    `YYYY-Qn`, or `Period`s). Returns a frozen `calculators.result.Result`.

    `as_of` (aware datetime or epoch seconds) ends open incidents; default: the end of the
    last period. `accepted_on` adds the acceptance-delay figures to `termination`.
    `support=False` leaves out the support figures (simulations). `incidents=True` adds the
    per-incident figures of the same run (`Result.incidents`, see `calculators.incident_figures`).
    """
    return run(lc, log, periods, as_of, accepted_on, support, incidents)[0]


def run(lc: LoadedContract, log: IncidentLog, periods: list[str] | list[Period],
        as_of: datetime | int | None = None, accepted_on: date | None = None, support: bool = True,
        incidents: bool = False):
    """`compute`, also returning the `Trace` and `Tree` (for explanations)."""
    from calculators import support as support_mod
    from calculators.result import Result
    from calculators.support_records import Termination

    zone = lc.model.contract.timezone
    if periods and isinstance(periods[0], Period):
        plist = sorted(set(periods))
    else:
        plist = parse_periods(list(periods), zone)
    if not plist:
        raise EngineError("name at least one period")
    as_of_s = _as_epoch(as_of)
    tree = Tree(lc.topology)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="slakit-support")
    # the support figures (JSON only) need none of the interval sets: they are worked out on
    # the other core while the trace is (numpy's sorts and searches release the GIL)
    sup_job = pool.submit(support_mod.support_report, lc, log, plist[0].start, plist[-1].end,
                          as_of_s if as_of_s is not None else max(p.end for p in plist)) if support else None
    try:
        tr = trace(lc, log, plist, as_of_s)
    finally:
        pool.shutdown(wait=True)
    sup = sup_job.result() if sup_job is not None else None
    dt = lc.model.downtime
    levels = lc.model.service_levels
    needed = {c for c in range(4) if getattr(levels, SCOPES[c]) is not None}
    if levels.node is not None:
        needed |= {RACK} if dt.rack and dt.rack.nodes_follow_rack else set()
        needed |= {CLUSTER} if dt.cluster and dt.cluster.nodes_follow_cluster else set()
    # the racks' and sites' attribution (overlap searches, which release the GIL) is worked out
    # on the other core while the nodes' figures below are
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="slakit-attribution") as pool:
        above = pool.submit(lambda: [_unit_attribution(tr, tree, c, needed) for c in (RACK, SITE)])
        # and then each scope's excluded time and its part inside the down time
        excluded_job = pool.submit(_excluded_sets, tr, levels)
        node_att = _unit_attribution(tr, tree, NODE, needed)
        degraded_sets = []
        prev = 0
        for v, part in tr.degraded_levels:
            degraded_sets.append((v - prev, part, tr.node_overlap(part)))
            prev = v
        ids = IdCodes(log)
        # the counted and excluded pieces with a flag (most have none), for each unit's flags
        flagged = tuple(Pieces.cat(*(p.take(p.flags != 0) for p in (tr.node_pieces if c == NODE else tr.view(c),
                                                                       tr.excluded[c])),
                                   *((tr.void[c],) if tr.void else ())) for c in range(4))
        # with `lift`, the pieces of the racks' long blocks (down time of each of the rack's nodes)
        # bring their ids to the nodes from the rack, and every flagged piece on a rack its flags
        # (the pieces pushed down onto the nodes brought both before)
        rack_part = None
        if tr.lift is not None and NODE in needed:
            up = tr.lift.parent
            rack_part = (tr.lift.parent_attribution(), up.take(up.flags != 0))
        # the clusters' attribution here, once this thread's own work is done (the worker has
        # the racks' and sites', then the excluded sets: the two threads then finish about together)
        cluster_att = _unit_attribution(tr, tree, CLUSTER, needed)
        rack_att, site_att = above.result()
        att_pairs = [node_att, rack_att, cluster_att, site_att]
        excluded_sets = excluded_job.result()
    month = partial(_period_figures, lc, tr, tree, ids=ids, att_pairs=att_pairs, excluded_sets=tuple(excluded_sets),
                    degraded_sets=degraded_sets, flagged=flagged, rack_part=rack_part)
    if len(plist) > 1:
        # every other month in a worker (their numpy steps release the GIL), the rest here
        ids.get()                        # (the id codes made once, before the two threads read them)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="slakit-months") as pool:
            odd = [pool.submit(month, period=p) for p in plist[1::2]]
            even = [month(period=p) for p in plist[0::2]]
            results = [even[k // 2] if k % 2 == 0 else odd[k // 2].result() for k in range(len(plist))]
    else:
        results = [month(period=p) for p in plist]
    chronic = _chronic(lc, results, tree)
    figures = None
    if incidents:
        from calculators.incident_figures import incident_figures

        figures = incident_figures(lc, log, tr, tree, plist)
    delay = None
    if accepted_on is not None:
        fee, fee_month = _deadline_month_fee(lc, tree)
        delay = support_mod.acceptance_delay(lc, accepted_on, fee, fee_month)
    termination = Termination(chronic=chronic, acceptance_delay=delay)
    result = Result(contract=lc.id, contract_sha256=getattr(lc, "sha256", None), currency=lc.model.contract.currency,
                    timezone=zone, as_of=tr.as_of, incidents_file=unicode_name(getattr(log, "file", None)),
                    incidents_sha256=getattr(log, "sha256", None),
                    skipped_rows=tuple(p.to_json() for p in getattr(log, "skipped", [])), periods=tuple(results),
                    support=sup, termination=termination, open_incidents=_open_ids(log), figures=figures)
    result = with_claims(result, lc.model.credits.claim_window)
    return result, tr, tree


def _excluded_sets(tr: Trace, levels) -> list[tuple[Intervals, Intervals]]:
    """For each scope with a service level, `(excluded time, the part of it inside the units'
    final down time)`; empty sets for the others."""
    out = []
    for c in range(4):
        if getattr(levels, SCOPES[c]) is None:
            out.append((Intervals.empty(), Intervals.empty()))
        else:
            ex = tr.excluded_merged(c)
            out.append((ex, tr.node_overlap(ex) if c == NODE else intersect(ex, tr.final(c))))
    return out


def with_claims(result, window, as_of: int | None = None):
    """`result` with the claim deadline of each month (sla-semantics 8.7) against `as_of`
    (default: the run's as_of)."""
    import dataclasses

    from calculators.claims import for_result

    return dataclasses.replace(result, claims=for_result(result, window, as_of))


def _open_ids(log) -> tuple[str, ...]:
    """The ids of the incidents without an end, each once, in log order."""
    cols = columns_of(log)
    if not len(cols) or "end" not in cols:
        return ()
    open_ = cols.ints("end", NA) == NA
    if not open_.any():
        return ()
    codes, names = coded(log, "id")
    picked = codes[open_]
    if (picked < 0).any():          # an incident without an id (a frame made by hand): as the frame shows it
        frame = log.frame
        return tuple(dict.fromkeys(frame.loc[frame["end"].isna(), "id"].astype(str).tolist()))
    return tuple(dict.fromkeys(str(v) for v in names[picked]))


def _deadline_month_fee(lc: LoadedContract, tree: Tree):
    """Monthly fee for acceptance-delay credits: all nodes, in the deadline's month."""
    from decimal import Decimal

    from calculators.periods import month

    acc = lc.model.acceptance
    d = acc.deadline
    if d is None:
        return Decimal("0.00"), None
    p = month(d.year, d.month, lc.model.contract.timezone)
    num, den = cr.fee_fraction(lc.model.pricing, tree.gpus, p.seconds)
    return cr.money_decimal(cr.cents_half_up(int(num.sum()), den)), p.label
