"""Per-incident figures summed layer by layer of the nodes' final down time, against the same
figures worked out on the union of the layers spread onto every node (`Trace.node_final`) and
on every node's pieces with those pushed down from above (`Trace.counted`), which the run
itself no longer builds: a rack's or cluster's down time is not copied onto each node."""

from __future__ import annotations

import numpy as np

from calculators.engine import run
from calculators.intervals import overlap_pairs
from calculators.vocabulary import DOWN, NODE, RACK, SCOPES
from tests.calculators.helpers import contract, inc, log
from tests.calculators.test_rules import HEAD, t, topo

RACKS = {"r1": "a[1-4]", "r2": "b[1-4]", "r3": "c[1-4]", "r4": "d[1-4]"}
FLEET = HEAD + topo(RACKS, clusters={"k1": ["r1", "r2"], "k2": ["r3", "r4"]}) + """
downtime:
  min_outage: 5m
  degraded: proportional
  rack: {down_when_nodes_down: 2, nodes_follow_rack: true}
  cluster: {down_when_available_below: 80%, nodes_follow_cluster: true}
exclusions:
  maintenance: {notice: 72h, max_per_month: 4h}
service_levels:
  node:
    credits: [{below: 99.5%, credit: 10%}]
  rack:
    target: 99.5%
    credits: [{below: 99.5%, credit: 10%}]
"""
NODES = [f"{r}{k}" for r in "abcd" for k in range(1, 5)]


def _records(seed: int) -> list[dict]:
    """Overlapping node, rack and cluster incidents over February: rack rules, a cluster rule,
    degraded time, maintenance with and without notice, outages under min_outage, one open."""
    rng = np.random.default_rng(seed)
    recs = []
    for k in range(160):
        day, hour, minute = int(rng.integers(1, 28)), int(rng.integers(0, 24)), int(rng.integers(0, 60))
        length = int(rng.choice([2, 4, 30, 90, 240, 600]))
        end_min = hour * 60 + minute + length
        end = t(min(28, day + end_min // 1440), (end_min // 60) % 24, end_min % 60) if end_min < 1440 * 2 else None
        kind = rng.random()
        kw: dict = {}
        if kind < 0.1:
            kw = {"impact": "degraded", "gpus_affected": int(rng.integers(1, 8))}
        elif kind < 0.2:
            kw = {"category": "maintenance", **({"notice_at": t(1, 0)} if rng.random() < 0.5 else {})}
        if k % 9 == 0:
            target, scope = f"r{int(rng.integers(1, 5))}", "rack"
            kw.pop("gpus_affected", None), kw.pop("impact", None)
        elif k % 31 == 0:
            target, scope = f"k{int(rng.integers(1, 3))}", "cluster"
            kw.pop("gpus_affected", None), kw.pop("impact", None)
        else:
            target, scope = NODES[int(rng.integers(0, len(NODES)))], "node"
        recs.append(inc(f"i{k:03d}", target, t(day, hour, minute), end if k != 7 else None, scope=scope, **kw))
    return recs


def _by_union(tr, own, lo, hi, n):
    """(counted, downtime) seconds per frame row in [lo, hi), from every scope's pieces with
    those pushed down from above (`counted`) and, for the downtime, against the scope's final
    down time, the nodes' as the union over every node (`node_final`)."""
    counted, downtime = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)

    def add(into, row, st, en):
        np.add.at(into, row, np.clip(np.minimum(en, hi) - np.maximum(st, lo), 0, None))

    for s in range(4):
        pieces = tr.counted[s]
        if not len(pieces):
            continue
        keep = own[pieces.row] == s
        if s == NODE:
            keep &= pieces.ga == DOWN
        add(counted, pieces.row[keep], pieces.iv.start[keep], pieces.iv.end[keep])
        p = pieces.take(keep & (pieces.ga == DOWN))
        final = tr.final(s)
        a, b = overlap_pairs(p.iv, final)
        add(downtime, p.row[a], np.maximum(p.iv.start[a], final.start[b]), np.minimum(p.iv.end[a], final.end[b]))
    for d in (tr.degraded, tr.degraded_short):
        keep = own[d.row] == NODE
        add(counted, d.row[keep], d.iv.start[keep], d.iv.end[keep])
        if d is tr.degraded:
            add(downtime, d.row[keep], d.iv.start[keep], d.iv.end[keep])
    return counted, downtime


def _rack_days_by_union(tr, tree, edges):
    """Node-seconds down per rack and day, from every node's final down time."""
    iv = tr.node_final
    rack = tree.owner(NODE, RACK)[iv.unit]
    grid = np.zeros((tree.size[RACK], len(edges) - 1), dtype=np.int64)
    for d in range(len(edges) - 1):
        secs = np.clip(np.minimum(iv.end, edges[d + 1]) - np.maximum(iv.start, edges[d]), 0, None)
        np.add.at(grid[:, d], rack, secs)
    return grid


def test_layered_figures_equal_the_figures_on_the_union():
    lc = contract(FLEET)
    for seed in (1, 2, 3):
        lg = log(lc, _records(seed))
        res, tr, tree = run(lc, lg, ["2027-02"], incidents=True)
        # the run never spread the layers onto every node nor pushed rack incidents onto nodes
        assert "node_final" not in tr.__dict__ and "counted" not in tr.__dict__
        assert len(tr.node_layers) == 3          # the nodes' own, the racks', the clusters'
        frame = lg.frame
        own = np.asarray([SCOPES.index(s) for s in frame["scope"].astype(str)], dtype=np.int64)
        period = tr.periods[0]
        lo, hi = period.start - tr.base, period.end - tr.base
        ids = frame["id"].astype(str).tolist()
        reg = res.incidents
        for want, col in zip(_by_union(tr, own, lo, hi, len(frame)), ("counted_seconds", "downtime_seconds")):
            per_id = dict(zip(ids, want.tolist()))
            got = dict(zip(reg["id"].astype(str), reg[col].tolist()))
            assert got == {i: per_id[i] for i in got}
            assert sum(got.values()) > 0
        edges = np.asarray([lo + k * 86400 for k in range(29)], dtype=np.int64)
        grid = _rack_days_by_union(tr, tree, edges)
        assert grid.sum() > 0
        assert np.array_equal(res.figures.rack_days.seconds, grid)
