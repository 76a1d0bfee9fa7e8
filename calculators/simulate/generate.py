"""Generate incident logs for a contract's topology from a failure model, for many runs at once.

Per cause and per stretch of constant hazard, the number of incidents in each run is Poisson
with mean `rate / 1000 x units x days`; start times are uniform in the stretch, the unit is
drawn uniformly (GPU-rate causes pick a node in proportion to its GPUs) and the repair time
is log-normal. Everything is drawn with one `numpy.random.Generator` in a fixed order, so a
seed gives the same logs on every machine. The result is columnar (numpy arrays over all
runs), not one Python object per incident.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calculators.simulate.models import Cause, FailureModel
from slaschema.topology import ResolvedTopology

DAY = 86400
YEAR_S = 365.25 * DAY
SCOPE_NAMES = ("node", "rack")


@dataclass(frozen=True)
class SimLogs:
    """Incidents of all runs; times are UTC epoch seconds, `end` exclusive."""

    runs: int
    start_s: int          # horizon [start_s, end_s)
    end_s: int
    run: np.ndarray       # int64 run number
    scope: np.ndarray     # int8: 0 node, 1 rack
    unit: np.ndarray      # int64 index into topology.nodes or topology.racks
    start: np.ndarray     # int64
    end: np.ndarray       # int64
    cause: np.ndarray     # int16 index into `causes`
    causes: tuple[Cause, ...]

    def __len__(self) -> int:
        return len(self.run)

    def take(self, idx: np.ndarray) -> SimLogs:
        return SimLogs(self.runs, self.start_s, self.end_s, self.run[idx], self.scope[idx], self.unit[idx],
                       self.start[idx], self.end[idx], self.cause[idx], self.causes)

    def counts_per_run(self) -> np.ndarray:
        return np.bincount(self.run, minlength=self.runs)


def _segments(cause: Cause, age0: float, t0: int, t1: int) -> list[tuple[int, int, float]]:
    """Split [t0, t1) where the cause's hazard changes with fleet age."""
    cuts = {t0, t1}
    for h in cause.hazard:
        for years in (h.from_years, h.to_years):
            if years is None:
                continue
            t = t0 + int(round((years - age0) * YEAR_S))
            if t0 < t < t1:
                cuts.add(t)
    pts = sorted(cuts)
    out = []
    for a, b in zip(pts, pts[1:]):
        mid_age = age0 + ((a + b) / 2 - t0) / YEAR_S
        out.append((a, b, cause.rate_at(mid_age)))
    return out


MAX_INCIDENTS = 20_000_000         # all runs together: about 1 GB of generated columns


def generate(topo: ResolvedTopology, model: FailureModel, start_s: int, end_s: int, runs: int,
             rng: np.random.Generator) -> SimLogs:
    """Incidents of `runs` independent runs over [start_s, end_s) for this topology."""
    causes = model.for_architecture(topo.architecture)
    gpus = np.asarray(topo.node_gpus, dtype=np.float64)
    n_nodes, n_racks = len(topo.nodes), len(topo.racks)
    p_gpu = gpus / gpus.sum()
    expected = 0.0
    for cause in causes:                # the expected count first: a huge rate is refused, not drawn
        units = {"gpu": float(gpus.sum()), "node": float(n_nodes), "rack": float(n_racks)}[cause.unit]
        for a, b, rate in _segments(cause, model.fleet_age_years, start_s, end_s):
            expected += rate / 1000.0 * units * (b - a) / DAY * runs
    if not np.isfinite(expected) or expected > MAX_INCIDENTS:
        from slaschema.errors import InputError, Problem

        raise InputError([Problem("simulation_too_large",
                                  f"the model expects {expected:,.3g} incidents over {runs:,} runs; the limit is "
                                  f"{MAX_INCIDENTS:,}", file=model.source or "--failure-model", path="causes",
                                  value=model.name,
                                  fix="check the rates (per 1000 unit-days), or use fewer --runs or --months")])
    parts: list[tuple[np.ndarray, ...]] = []
    for ci, cause in enumerate(causes):
        units = {"gpu": float(gpus.sum()), "node": float(n_nodes), "rack": float(n_racks)}[cause.unit]
        if units == 0:
            continue
        for a, b, rate in _segments(cause, model.fleet_age_years, start_s, end_s):
            lam = rate / 1000.0 * units * (b - a) / DAY
            counts = rng.poisson(lam, size=runs)
            total = int(counts.sum())
            if total == 0:
                continue
            run = np.repeat(np.arange(runs, dtype=np.int64), counts)
            start = rng.integers(a, b, size=total, dtype=np.int64)
            if cause.unit == "gpu":
                unit = rng.choice(n_nodes, size=total, p=p_gpu).astype(np.int64)
            elif cause.unit == "node":
                unit = rng.integers(0, n_nodes, size=total, dtype=np.int64)
            else:
                unit = rng.integers(0, n_racks, size=total, dtype=np.int64)
            dur = np.exp(cause.repair.mu + cause.repair.sigma * rng.standard_normal(total))
            dur = np.maximum(np.rint(dur), 1).astype(np.int64)
            scope = np.full(total, 1 if cause.unit == "rack" else 0, dtype=np.int8)
            parts.append((run, scope, unit, start, start + dur, np.full(total, ci, dtype=np.int16)))
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return SimLogs(runs, start_s, end_s, z, z.astype(np.int8), z, z, z, z.astype(np.int16), causes)
    cols = [np.concatenate([p[i] for p in parts]) for i in range(6)]
    order = np.lexsort((cols[3], cols[0]))        # by run, then start
    run, scope, unit, start, end, cause = (c[order] for c in cols)
    return SimLogs(runs, start_s, end_s, run, scope, unit, start, end, cause, causes)


def node_intervals(logs: SimLogs, topo: ResolvedTopology) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each incident as node intervals (rack incidents expanded to the rack's nodes):
    (run, node, start, end, lost_fraction) without merging."""
    gpus = np.asarray(topo.node_gpus, dtype=np.float64)
    node_rack = np.asarray(topo.node_rack, dtype=np.int64)
    is_node = logs.scope == 0
    frac = np.ones(len(logs), dtype=np.float64)
    for ci, c in enumerate(logs.causes):
        if c.impact == "degraded":
            m = is_node & (logs.cause == ci)
            frac[m] = np.minimum(c.gpus_affected or 1, gpus[logs.unit[m]]) / gpus[logs.unit[m]]
    run = [logs.run[is_node]]
    node = [logs.unit[is_node]]
    st, en, fr = [logs.start[is_node]], [logs.end[is_node]], [frac[is_node]]
    rk = np.flatnonzero(~is_node)
    if len(rk):
        order = np.argsort(node_rack, kind="stable")
        counts = np.bincount(node_rack, minlength=len(topo.racks))
        ptr = np.concatenate([[0], np.cumsum(counts)])
        racks = logs.unit[rk]
        reps = counts[racks]
        rows = np.repeat(rk, reps)
        offs = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        run.append(logs.run[rows])
        node.append(order[np.repeat(ptr[racks], reps) + offs])
        st.append(logs.start[rows])
        en.append(logs.end[rows])
        fr.append(np.ones(len(rows)))
    return (np.concatenate(run), np.concatenate(node), np.concatenate(st), np.concatenate(en), np.concatenate(fr))


def union_seconds(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Length of the union of intervals per key: (unique keys, seconds)."""
    if not len(key):
        return key[:0], np.zeros(0, dtype=np.int64)
    order = np.lexsort((start, key))
    key, s, e = key[order], start[order], end[order]
    first = np.concatenate([[True], key[1:] != key[:-1]])
    grp = np.cumsum(first) - 1
    big = int(max(int(e.max()), 0)) + 1
    running = np.maximum.accumulate(grp * big + e) - grp * big      # max end so far, per group
    prev = np.empty_like(running)
    prev[1:] = running[:-1]
    prev[first] = s[first]
    seg = np.maximum(e - np.maximum(s, prev), 0)
    return key[first], np.bincount(grp, weights=seg).astype(np.int64)


def lost_gpu_hours(logs: SimLogs, topo: ResolvedTopology) -> np.ndarray:
    """GPU-hours each run physically lost inside the horizon: per node the union of its
    outages; where degraded incidents overlap, the largest lost share counts."""
    run, node, st, en, fr = node_intervals(logs, topo)
    gpus = np.asarray(topo.node_gpus, dtype=np.float64)
    st = np.clip(st, logs.start_s, logs.end_s)
    en = np.clip(en, logs.start_s, logs.end_s)
    out = np.zeros(logs.runs, dtype=np.float64)
    n_nodes = len(topo.nodes)
    levels = np.unique(fr)
    lower = 0.0
    for level in levels:            # lost(t) = sum over levels of (level - lower) x [some share >= level]
        m = fr >= level
        keys, secs = union_seconds(run[m] * n_nodes + node[m], st[m], en[m])
        np.add.at(out, keys // n_nodes, secs * gpus[keys % n_nodes] * (level - lower))
        lower = float(level)
    return out / 3600.0
