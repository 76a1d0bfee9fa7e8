"""Goodput per month: contracted, available, allocated, completed, lost and useful GPU-hours.

Definitions (per calendar month of the contract's zone, half-open `[start, end)`; every
figure is exact integer GPU-seconds, shown as GPU-hours rounded half-up to 0.01):

- contracted (= paid): every node's GPUs for the whole month, service windows included;
- available: contracted minus each node's counted downtime from the credits engine
  (`service_levels.node`; proportional degraded time as lost GPU-seconds); absent without
  an incident log, since nothing then says what was down;
- allocated: each job run's GPUs x the part of [Start, End) inside the month (a running
  job until `as_of`);
- completed: the same for runs in state COMPLETED;
- ended by infrastructure: runs in NODE_FAIL or BOOT_FAIL, and runs REQUEUED while an
  incident on one of their nodes matched their end; each is attributed to every incident
  on its nodes (or on their rack, cluster or site) that matches its End: the incident
  starts no later than End + window (a ticket may be opened a little after Slurm saw the
  failure) and has not ended before End (open incidents never end; an incident that was
  over while the job still ran did not end it). Its lost work is [last checkpoint, End) x GPUs, the last checkpoint being
  Start + k x interval (the largest k that fits), `last_checkpoint=` in the job's comment,
  or Start when there is no checkpoint information; it is split over the months it spans;
- useful: allocated minus lost (work the customer kept, whatever its exit status: a job
  that fails on its own code ran on working GPUs);
- goodput: useful / paid (contracted); effective price: (fee - credit) / useful GPU-hours,
  with fee and credit from the credits engine.

An incident's lost work is the sum over its jobs of each job's lost GPU-seconds divided by
the number of incidents the job is attributed to, so the ranking adds up to the total.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from calculators.goodput.sacct import JobRuns
from calculators.periods import Period

if TYPE_CHECKING:
    from slaschema.loader import LoadedContract

VERSION = 1
FORMAT = "slakit-goodput/1"      # the first field of `goodput --format json` (with `version`, as before)
INFRA_STATES = ("NODE_FAIL", "BOOT_FAIL")
REQUEUE_STATES = ("REQUEUED",)
DEFAULT_WINDOW_S = 300
_CKPT_INTERVAL = re.compile(r"(?:^|[\s,;])checkpoint_interval=(\S+?)(?=$|[\s,;])")
_CKPT_LAST = re.compile(r"(?:^|[\s,;])last_checkpoint=(\S+?)(?=$|[\s,;])")
HOUR = Decimal(3600)
Q2 = Decimal("0.01")
Q4 = Decimal("0.0001")


def gpu_hours(gpu_seconds: int | Fraction | None) -> Decimal | None:
    if gpu_seconds is None:
        return None
    if isinstance(gpu_seconds, Fraction):
        return (Decimal(gpu_seconds.numerator) / Decimal(gpu_seconds.denominator) / HOUR).quantize(Q2, ROUND_HALF_UP)
    return (Decimal(int(gpu_seconds)) / HOUR).quantize(Q2, ROUND_HALF_UP)


@dataclass(frozen=True)
class IncidentCost:
    id: str
    scope: str
    target: str
    start: int
    end: int | None
    cause: str
    jobs: int
    lost_gpu_seconds: Fraction

    def to_json(self) -> dict[str, Any]:
        from calculators.result import iso

        return {"id": self.id, "scope": self.scope, "target": self.target, "start": iso(self.start),
                "end": iso(self.end) if self.end is not None else None, "cause": self.cause, "jobs": self.jobs,
                "lost_gpu_hours": str(gpu_hours(self.lost_gpu_seconds))}


@dataclass(frozen=True)
class MonthGoodput:
    period: Period
    contracted_gpu_s: int
    available_gpu_s: int | None
    allocated_gpu_s: int
    completed_gpu_s: int
    lost_gpu_s: int
    runs: int                       # runs overlapping the month
    runs_completed: int
    runs_infra: int                 # ended by infrastructure, by End in the month
    runs_infra_requeued: int        # of those, REQUEUED runs
    runs_unattributed: int          # NODE_FAIL/BOOT_FAIL with no matching incident
    fee: Decimal | None
    credit: Decimal | None

    @property
    def useful_gpu_s(self) -> int:
        return self.allocated_gpu_s - self.lost_gpu_s

    @property
    def goodput_pct(self) -> Decimal | None:
        if not self.contracted_gpu_s:
            return None
        return (Decimal(100 * self.useful_gpu_s) / Decimal(self.contracted_gpu_s)).quantize(Q2, ROUND_HALF_UP)

    @property
    def effective_price(self) -> Decimal | None:
        if self.fee is None or not self.useful_gpu_s:
            return None
        return ((self.fee - (self.credit or 0)) * HOUR / Decimal(self.useful_gpu_s)).quantize(Q4, ROUND_HALF_UP)

    def to_json(self) -> dict[str, Any]:
        from calculators.result import iso

        return {
            "period": self.period.label, "start": iso(self.period.start), "end": iso(self.period.end),
            "contracted_gpu_hours": str(gpu_hours(self.contracted_gpu_s)),
            "paid_gpu_hours": str(gpu_hours(self.contracted_gpu_s)),
            "available_gpu_hours": None if self.available_gpu_s is None else str(gpu_hours(self.available_gpu_s)),
            "allocated_gpu_hours": str(gpu_hours(self.allocated_gpu_s)),
            "completed_gpu_hours": str(gpu_hours(self.completed_gpu_s)),
            "lost_gpu_hours": str(gpu_hours(self.lost_gpu_s)),
            "useful_gpu_hours": str(gpu_hours(self.useful_gpu_s)),
            "goodput_pct": None if self.goodput_pct is None else str(self.goodput_pct),
            "fee": None if self.fee is None else str(self.fee),
            "credit": None if self.credit is None else str(self.credit),
            "effective_price_per_useful_gpu_hour": None if self.effective_price is None else str(self.effective_price),
            "jobs": {"runs": self.runs, "completed": self.runs_completed, "ended_by_infrastructure": self.runs_infra,
                     "requeued_by_infrastructure": self.runs_infra_requeued,
                     "infrastructure_unattributed": self.runs_unattributed},
        }


@dataclass(frozen=True)
class InfraJob:
    """One run ended or requeued by infrastructure (customer data: listed only on request)."""
    job_id: str
    state: str
    nodelist: str
    gpus: int
    start: int
    end: int
    lost_from: int
    lost_gpu_s: int
    requeues: int
    incidents: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        from calculators.result import iso

        return {"job_id": self.job_id, "state": self.state, "nodelist": self.nodelist, "gpus": self.gpus,
                "start": iso(self.start), "end": iso(self.end), "lost_from": iso(self.lost_from),
                "lost_gpu_hours": str(gpu_hours(self.lost_gpu_s)), "requeues": self.requeues,
                "incidents": list(self.incidents)}


@dataclass(frozen=True)
class GoodputResult:
    contract: str
    contract_sha256: str | None
    currency: str
    timezone: str
    as_of: int
    sacct: dict[str, Any]
    incidents_file: str | None
    incidents_sha256: str | None
    checkpoint_interval_s: int | None
    window_s: int
    gpus_from_nodes_runs: int           # runs whose GPUs came from the whole-node mapping
    months: tuple[MonthGoodput, ...]
    incident_costs: tuple[IncidentCost, ...]     # most lost work first
    infra_jobs: tuple[InfraJob, ...]
    training: tuple[Any, ...] = ()               # calculators.goodput.trainlog.JobProductivity

    def totals(self) -> dict[str, Any]:
        def s(attr):
            vals = [getattr(m, attr) for m in self.months]
            return None if any(v is None for v in vals) else sum(vals)
        useful = sum(m.useful_gpu_s for m in self.months)
        paid = sum(m.contracted_gpu_s for m in self.months)
        fee = s("fee")
        credit = s("credit")
        price = None
        if fee is not None and useful:
            price = ((fee - (credit or 0)) * HOUR / Decimal(useful)).quantize(Q4, ROUND_HALF_UP)
        return {
            "contracted_gpu_hours": str(gpu_hours(paid)), "paid_gpu_hours": str(gpu_hours(paid)),
            "available_gpu_hours": None if s("available_gpu_s") is None else str(gpu_hours(s("available_gpu_s"))),
            "allocated_gpu_hours": str(gpu_hours(s("allocated_gpu_s"))),
            "completed_gpu_hours": str(gpu_hours(s("completed_gpu_s"))),
            "lost_gpu_hours": str(gpu_hours(s("lost_gpu_s"))), "useful_gpu_hours": str(gpu_hours(useful)),
            "goodput_pct": str((Decimal(100 * useful) / Decimal(paid)).quantize(Q2, ROUND_HALF_UP)) if paid else None,
            "fee": None if fee is None else str(fee), "credit": None if credit is None else str(credit),
            "effective_price_per_useful_gpu_hour": None if price is None else str(price),
            "jobs": {"ended_by_infrastructure": sum(m.runs_infra for m in self.months),
                     "requeued_by_infrastructure": sum(m.runs_infra_requeued for m in self.months),
                     "infrastructure_unattributed": sum(m.runs_unattributed for m in self.months)},
        }

    def to_json(self, include_jobs: bool = False) -> dict[str, Any]:
        from calculators.result import iso

        out = {
            "format": FORMAT, "version": VERSION, "contract": self.contract, "contract_sha256": self.contract_sha256,
            "currency": self.currency, "timezone": self.timezone, "as_of": iso(self.as_of), "sacct": self.sacct,
            "incidents_file": self.incidents_file, "incidents_sha256": self.incidents_sha256,
            "checkpoint_interval_seconds": self.checkpoint_interval_s, "attribution_window_seconds": self.window_s,
            "runs_gpus_from_nodes": self.gpus_from_nodes_runs,
            "periods": [m.to_json() for m in self.months], "total": self.totals(),
            "incidents": [c.to_json() for c in self.incident_costs],
        }
        if self.training:
            out["training_logs"] = [t.to_json(include_jobs) for t in self.training]
        if include_jobs:
            out["infrastructure_jobs"] = [j.to_json() for j in self.infra_jobs]
        return out


def _node_incidents(log, tree, as_of: int):
    """Incident rows pushed down to nodes: (node, start, end, row) sorted by node; open -> far future."""
    from calculators.engine import NODE, SCOPES

    f = log.frame
    if not len(f):
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, z
    start = f["start"].to_numpy(dtype=np.int64)
    end = f["end"].to_numpy(dtype="float64", na_value=np.nan)
    end = np.where(np.isnan(end), np.iinfo(np.int64).max // 2, end).astype(np.int64)
    scope = f["scope"].to_numpy(dtype=object)
    target = f["target"].to_numpy(dtype=object)
    impact = f["impact"].to_numpy(dtype=object) if "impact" in f else np.full(len(f), "down", dtype=object)
    nodes, starts, ends, rows = [], [], [], []
    for c, name in enumerate(SCOPES):
        m = (scope == name) & (impact == "down")
        if not m.any():
            continue
        index = {u: i for i, u in enumerate(tree.names[c])}
        unit = np.asarray([index.get(t, -1) for t in target[m]], dtype=np.int64)
        r = np.flatnonzero(m)
        ok = unit >= 0
        unit, r = unit[ok], r[ok]
        if c == NODE:
            nodes.append(unit)
            rows.append(r)
        else:
            owner = tree.owner(NODE, c)
            order = np.argsort(owner, kind="stable")
            bounds = np.searchsorted(owner[order], np.arange(tree.size[c] + 1))
            for u, rr in zip(unit.tolist(), r.tolist()):
                kids = order[bounds[u]:bounds[u + 1]]
                nodes.append(kids.astype(np.int64))
                rows.append(np.full(len(kids), rr, dtype=np.int64))
    if not nodes:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, z
    node = np.concatenate(nodes)
    row = np.concatenate(rows)
    order = np.lexsort((start[row], node))
    node, row = node[order], row[order]
    return node, start[row], end[row], row


def _checkpoints(runs: JobRuns, idx: np.ndarray, end: np.ndarray, interval_s: int | None, tz: str) -> np.ndarray:
    """Start of the lost work of each run in `idx` (its last checkpoint, else its start)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from slaschema.types import parse_duration

    out = runs.start[idx].copy()
    zone = ZoneInfo(tz)
    for k, i in enumerate(idx.tolist()):
        s, e = int(runs.start[i]), int(end[k])
        comment = str(runs.comment[i] or "")
        iv = interval_s
        last = None
        if comment:
            m = _CKPT_INTERVAL.search(comment)
            if m:
                try:
                    iv = int(parse_duration(m.group(1)).total_seconds()) or interval_s
                except (ValueError, TypeError):      # not a duration: the option's interval applies
                    iv = interval_s
            m = _CKPT_LAST.search(comment)
            if m:
                try:
                    t = datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
                    last = int((t if t.tzinfo else t.replace(tzinfo=zone)).timestamp())
                except ValueError:
                    last = None
        if last is not None:
            out[k] = min(max(s, last), e)
        elif iv:
            out[k] = s + ((e - s) // iv) * iv
    return out


def compute_goodput(lc: LoadedContract, runs: JobRuns, periods: list[Period], log=None, as_of: int | None = None,
                    checkpoint_interval_s: int | None = None, window_s: int = DEFAULT_WINDOW_S,
                    credits_result=None, training=()) -> GoodputResult:
    from calculators.engine import Tree, compute

    tree = Tree(lc.topology)
    gpus_node = tree.gpus
    fleet_gpus = int(gpus_node.sum())
    ps_all = min(p.start for p in periods)
    pe_all = max(p.end for p in periods)
    as_of_s = int(as_of) if as_of is not None else pe_all
    start = runs.start
    end = np.where(runs.end < 0, as_of_s, runs.end)
    end = np.minimum(end, np.maximum(as_of_s, start))
    g = runs.gpus
    state = runs.state
    n = len(runs)
    # infrastructure candidates, their incidents at End
    ended = (runs.end >= 0) & ~runs.running
    cand = np.flatnonzero(np.isin(state, INFRA_STATES + REQUEUE_STATES) & ended)
    inc_node, inc_start, inc_end, inc_row = _node_incidents(log, tree, as_of_s) if log is not None else \
        (np.zeros(0, dtype=np.int64),) * 4
    job_incs: dict[int, list[int]] = {}
    if len(cand) and len(inc_node):
        lens = runs.node_counts(cand)
        pj = np.repeat(cand, lens)
        pn = np.concatenate([runs.nodes_of(int(i)) for i in cand]) if len(cand) else np.zeros(0, dtype=np.int64)
        lo = np.searchsorted(inc_node, pn, "left")
        hi = np.searchsorted(inc_node, pn, "right")
        cnt = hi - lo
        pj2 = np.repeat(pj, cnt)
        k = np.repeat(lo - np.r_[0, np.cumsum(cnt)[:-1]], cnt) + np.arange(int(cnt.sum()))
        t = end[pj2]
        hit = (inc_start[k] <= t + window_s) & (inc_end[k] >= t)
        for j, r in zip(pj2[hit].tolist(), inc_row[k[hit]].tolist()):
            lst = job_incs.setdefault(j, [])
            if r not in lst:
                lst.append(r)
    is_nf = np.isin(state, INFRA_STATES)
    is_rq = np.isin(state, REQUEUE_STATES)
    attributed = np.zeros(n, dtype=bool)
    if job_incs:
        attributed[np.fromiter(job_incs.keys(), dtype=np.int64)] = True
    infra = (is_nf | (is_rq & attributed)) & ended
    infra_idx = np.flatnonzero(infra)
    lost_from = _checkpoints(runs, infra_idx, end[infra_idx], checkpoint_interval_s, lc.model.contract.timezone)
    completed = state == "COMPLETED"
    # credits engine: availability and fees
    res = credits_result
    if res is None and log is not None:
        res = compute(lc, log, periods, as_of=as_of_s, support=False)
    months = []
    for p in periods:
        ps, pe = p.start, p.end
        dur = np.clip(np.minimum(end, pe) - np.maximum(start, ps), 0, None)
        gs = g * dur
        alloc = int(gs.sum())
        comp = int(gs[completed].sum())
        ldur = np.clip(np.minimum(end[infra_idx], pe) - np.maximum(lost_from, ps), 0, None)
        lost = int((g[infra_idx] * ldur).sum())
        in_p = (end[infra_idx] >= ps) & (end[infra_idx] < pe)
        contracted = fleet_gpus * p.seconds
        available = None
        fee = credit = None
        if res is not None:
            pr = res.period(p.label)
            from calculators import credits as cr

            fee = cr.money_decimal(pr.fee_total_cents)
            credit = cr.money_decimal(pr.credit_total_cents)
            sm = pr.scopes.get("node")
            if sm is not None:
                lnum = sm.lnum.tolist()
                dn = sm.dn.tolist()
                gl = gpus_node.tolist()
                lost_avail = sum(int(l) * gpu // int(d) for l, d, gpu in zip(lnum, dn, gl))
                available = contracted - lost_avail
        runs_in = int(((dur > 0) | ((start >= ps) & (start < pe))).sum())
        months.append(MonthGoodput(
            period=p, contracted_gpu_s=contracted, available_gpu_s=available, allocated_gpu_s=alloc,
            completed_gpu_s=comp, lost_gpu_s=lost, runs=runs_in,
            runs_completed=int((completed & (dur > 0)).sum()), runs_infra=int(in_p.sum()),
            runs_infra_requeued=int((in_p & is_rq[infra_idx]).sum()),
            runs_unattributed=int((in_p & ~attributed[infra_idx]).sum()), fee=fee, credit=credit))
    # incident ranking (all months)
    costs: dict[int, list] = {}
    jobs_out = []
    lost_total = g[infra_idx] * np.clip(np.minimum(end[infra_idx], pe_all) - np.maximum(lost_from, ps_all), 0, None)
    ids = log.frame["id"].to_numpy(dtype=object) if log is not None and len(log.frame) else None
    for k, i in enumerate(infra_idx.tolist()):
        rows = job_incs.get(i, [])
        share = Fraction(int(lost_total[k]), len(rows)) if rows else Fraction(0)
        for r in rows:
            c = costs.setdefault(r, [0, Fraction(0)])
            c[0] += 1
            c[1] += share
        jobs_out.append(InfraJob(job_id=str(runs.job_id[i]), state=str(state[i]), nodelist=str(runs.nodelist[i]),
                                 gpus=int(g[i]), start=int(start[i]), end=int(end[i]), lost_from=int(lost_from[k]),
                                 lost_gpu_s=int(lost_total[k]), requeues=int(runs.requeues[i]),
                                 incidents=tuple(str(ids[r]) for r in rows) if ids is not None else ()))
    inc_costs = []
    if costs:
        f = log.frame
        scope_c, target_c = f["scope"].to_numpy(dtype=object), f["target"].to_numpy(dtype=object)
        start_c = f["start"].to_numpy(dtype=np.int64)
        end_c = f["end"].to_numpy(dtype="float64", na_value=np.nan)
        cause_c = f["cause"].to_numpy(dtype=object) if "cause" in f else np.full(len(f), None, dtype=object)
        merged: dict[str, list] = {}
        for r, (jobs, lost) in costs.items():
            iid = str(ids[r])
            m = merged.get(iid)
            if m is None:
                e, cause = end_c[r], cause_c[r]
                merged[iid] = [str(scope_c[r]), {str(target_c[r])}, int(start_c[r]),
                               None if np.isnan(e) else int(e), "" if cause is None or pd.isna(cause) else str(cause),
                               jobs, lost]
            else:
                m[1].add(str(target_c[r]))
                m[5] += jobs
                m[6] += lost
        for iid, (scope, targets, s, e, cause, jobs, lost) in merged.items():
            from slaschema import hostlist

            inc_costs.append(IncidentCost(id=iid, scope=scope, target=hostlist.compress(sorted(targets)), start=s,
                                          end=e, cause=cause, jobs=jobs, lost_gpu_seconds=lost))
        inc_costs.sort(key=lambda c: (-c.lost_gpu_seconds, c.start, c.id))
    from calculators.goodput.sacct import describe

    return GoodputResult(
        contract=lc.id, contract_sha256=getattr(lc, "sha256", None), currency=lc.model.contract.currency,
        timezone=lc.model.contract.timezone, as_of=as_of_s, sacct=describe(runs),
        incidents_file=getattr(log, "file", None) if log is not None else None,
        incidents_sha256=getattr(log, "sha256", None) if log is not None else None,
        checkpoint_interval_s=checkpoint_interval_s, window_s=window_s,
        gpus_from_nodes_runs=int((~runs.gpus_from_tres).sum()), months=tuple(months),
        incident_costs=tuple(inc_costs), infra_jobs=tuple(jobs_out), training=tuple(training))
