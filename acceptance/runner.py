"""Run a contract's acceptance criteria and write the evidence bundle; or judge a bundle.

The runner knows no tool: for each selected criterion it asks the check for validated params,
lets the check `collect` through the executor (IO), writes the raw outputs, and judges them
with the pure `judge_output` pipeline. After every criterion the bundle (raw outputs,
metrics, run.json, results.json, junit.xml, manifest.json) is complete and consistent, so
an interrupted run leaves evidence that verifies, and `--resume` continues it.

The run document (results.json, format `slakit-acceptance-run/2`) is the one input of
every renderer; it is built here as the typed records of `acceptance.document` (a
`RunDocument`), whose JSON form is:

    {"format", "contract": {id, title, provider, customer, file, sha256},
     "run": {mode (run | evaluate), state (complete | interrupted), started, finished,
             executor, nodes, overrides},
     "status": worst criterion status, "counts": {status: criteria},
     "criteria": [{id, check, area, metric, severity, source, description, params,
                   thresholds {min, max, warn_below, warn_above, expect}, expected, unit,
                   status, reason, state, duration_s, nodes,
                   verdicts: [{criterion, node, status, measured, expected, reason,
                               remediation, details}]}],
     "aggregate": {"overall": {status, nodes, node_counts, counts, cluster_counts},
                   "racks": [{rack, status, nodes, node_counts, counts}],
                   "nodes": [{node, rack, status, counts, criteria: {id: status}}]}}

A criterion's status is the worst of its verdicts (fail > error > not_run > skip > waived >
warn > pass, `acceptance.results.PRECEDENCE`); its `reason` is the decisive verdict's (the
first by that precedence, a measured finding before a missing value) and `reason_text` says
it with what was measured and expected (`model_mismatch: A100 != model GB200`).

Coverage (`acceptance.coverage`): every criterion is judged over every node or group in
scope; one without evidence is `not_run`. `scope` says what the run covered (`partial` when
limited by --only or --nodes, with what was not covered), `waivers` the waivers given and
their state, and `decision` (`acceptance.decision`) the result every output leads with:

    "scope": {partial, nodes, nodes_expr, contract_nodes, nodes_not_covered, ..., criteria_not_covered},
    "waivers": [{index, criterion, nodes, reason, approved_by, expires, state, verdicts_waived}],
    "decision": {result, accepted, partial, headline, subset_result, blocking, verdict_counts, exit_status},
    "as_of": the time waivers are judged at
With a scheduler executor (Slurm) the first entry of `criteria` is `topology.node-list`:
the scheduler's node list (raw/topology.node-list/_cluster.json) against the contract's
topology; a contract node the scheduler does not know fails, a scheduler node the contract
does not list warns. It counts like any criterion (status, counts, exit code).

`aggregate` rolls the verdicts up: per node the worst status of its verdicts, the number of
verdicts per status (`counts`) and the criteria it did not pass; per rack of the contract
topology (nodes the topology does not list go under "(not in contract)") the worst status of
its nodes and of the verdicts about the whole rack (a rack-scoped NCCL run), the number of
nodes per status (`node_counts`) and of verdicts per status; overall the same over every
node, plus the verdicts about no single node or rack (`cluster_counts`).
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from acceptance.checks import get_check
from acceptance.checks.base import CLUSTER, Check, CheckParams, CollectContext
from acceptance.children import child_pids, stop_children
from acceptance.coverage import Scope, judge_criterion
from acceptance.decision import decide
from acceptance.document import (
    RUN_FORMAT,
    Aggregate,
    ContractInfo,
    Counts,
    CriterionOutcome,
    CriterionState,
    NodeRollup,
    OverallRollup,
    RackRollup,
    RunDocument,
    RunInfo,
    Thresholds,
    VerdictEntry,
    zero_counts,
)
from acceptance.evidence import Bundle, make_folder, read_raw_dir, verify
from acceptance.executors.base import Clock, Executor, RawOutput, utc_now
from acceptance.identity import repeated_gpu_verdicts
from acceptance.judge import Bounds, verdict
from acceptance.outliers import OutlierRule, fleet_outlier_verdicts
from acceptance.results import NOT_IN_CONTRACT, PRECEDENCE, Status, Verdict, worst
from acceptance.waivers import Waiver, apply_waivers, waiver_report
from slaschema.checks import AREAS, KNOWN_CHECKS
from slaschema.errors import InputError, Problem
from slaschema.loader import LoadedContract
from slaschema.models import Contract, Criterion


# --------------------------------------------------------------------------- executors

def _local(partition: str | None = None) -> Executor:
    from acceptance.executors.local import LocalExecutor

    return LocalExecutor()


def _slurm(partition: str | None = None) -> Executor:
    from acceptance.executors.slurm import SlurmExecutor

    return SlurmExecutor(partition=partition)


# name -> factory(partition=...) of an object with the acceptance.executors.base.Executor interface
EXECUTORS: dict[str, Callable[..., Executor]] = {"local": _local, "slurm": _slurm}


def make_executor(name: str, partition: str | None = None) -> Executor:
    try:
        factory = EXECUTORS[name]
    except KeyError:
        raise InputError([Problem("unknown_executor", f"no executor {name!r}", value=name,
                                  fix=f"use one of: {', '.join(EXECUTORS)}")]) from None
    return factory(partition=partition)


# --------------------------------------------------------------------------- planning

@dataclass(frozen=True)
class Planned:
    criterion: Criterion
    check: Check
    params: CheckParams
    timeout_s: float
    outliers: OutlierRule = field(default_factory=OutlierRule)


def select(criteria: Sequence[Criterion], only: Iterable[str]) -> list[Criterion]:
    """Criteria matching any of `only` (criterion id, check name or area); all when empty."""
    wanted = [w for w in only if w]
    if not criteria:
        raise InputError([Problem("no_criteria", "the contract has no acceptance criteria", path="acceptance.criteria",
                                  fix="list the criteria to test under acceptance.criteria")])
    if not wanted:
        return list(criteria)
    problems = []
    for w in wanted:
        if not any(c.id == w or c.check == w or _area(c.check) == w for c in criteria):
            problems.append(Problem("unknown_selection", f"--only {w}: no criterion, check or area of that name",
                                    value=w, fix="criterion ids: " + ", ".join(c.id for c in criteria)
                                    + f"; areas: {', '.join(AREAS)}"))
    if problems:
        raise InputError(problems)
    return [c for c in criteria if any(c.id == w or c.check == w or _area(c.check) == w for w in wanted)]


def _area(check: str) -> str:
    return KNOWN_CHECKS.get(check, (check.split(".")[0],))[0]


def parse_overrides(items: Iterable[str]) -> dict[str, dict[str, Any]]:
    """`["shared-fs-read.path=/tmp/x", "shared-fs-read.numjobs=2"]` -> {id: {key: value}}."""
    out: dict[str, dict[str, Any]] = {}
    problems = []
    for item in items:
        key, sep, value = item.partition("=")
        cid, dot, name = key.rpartition(".")
        if not sep or not dot or not cid or not name:
            problems.append(Problem("bad_param_override", f"--param {item}: expected CRITERION.KEY=VALUE", value=item,
                                    fix="e.g. --param shared-fs-read.path=/tmp/fio"))
            continue
        out.setdefault(cid, {})[name] = _scalar(value)
    if problems:
        raise InputError(problems)
    return out


def _scalar(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def plan(criteria: Sequence[Criterion], overrides: Mapping[str, Mapping[str, Any]] | None = None,
         timeout_s: float | None = None, contract: Contract | None = None,
         base_dir: Path | None = None) -> list[Planned]:
    """Validate every criterion's params up front; all problems at once. `contract` (the model)
    supplies params some checks take from other sections (the security checks: `access`).
    `base_dir`: the contract's folder; file params the contract names must lie inside it."""
    overrides = dict(overrides or {})
    problems: list[Problem] = []
    usage: list[Problem] = []           # values a --param gave that the check refuses: exit 2
    known_ids = {c.id for c in criteria}
    for cid in overrides:
        if cid not in known_ids:
            problems.append(Problem("unknown_criterion", f"--param names criterion {cid!r}, which is not selected",
                                    value=cid, fix="criterion ids: " + ", ".join(sorted(known_ids))))
    out = []
    for c in criteria:
        check = get_check(c.check)
        if check is None:
            problems.append(Problem("unknown_check", f"criterion {c.id}: no check {c.check!r}", value=c.check,
                                    path=f"acceptance.criteria[{c.id}].check"))
            continue
        try:
            c, own = _confine_files(check, c, overrides.get(c.id), base_dir)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        try:
            defaults = check.contract_params(contract) if contract is not None else None
            params = check.params(c, own, defaults)
        except InputError as exc:
            mine = _from_the_command_line(exc.problems, c.id, own)
            problems.extend(mine)
            usage.extend(p for p in mine if p not in exc.problems)
            continue
        rule = OutlierRule.of(getattr(getattr(contract, "acceptance", None), "outliers", None))
        out.append(Planned(c, check, params, float(timeout_s) if timeout_s else check.timeout(params), rule))
    if problems:
        exc = InputError(problems)
        if all(p in usage or p.code == "unknown_criterion" for p in problems):
            exc.exit_code = 2
        raise exc
    return out


def _from_the_command_line(problems: Sequence[Problem], cid: str,
                           own: Mapping[str, Any] | None) -> list[Problem]:
    """A problem with a param that `--param` gave names `--param ID.KEY`, not the contract's field."""
    from dataclasses import replace

    out = []
    for p in problems:
        key = (p.path or "").rpartition(".params.")[2] if ".params." in (p.path or "") else None
        if own and key in own:
            p = replace(p, path=f"--param {cid}.{key}", file=None, line=None, col=None)
        out.append(p)
    return out


def _confine_files(check: Check, c: Criterion, own: Mapping[str, Any] | None,
                   base_dir: Path | None) -> tuple[Criterion, dict[str, Any] | None]:
    """The criterion and its overrides with the file params of `check.local_files` resolved:
    a contract's value inside the contract's folder, an override where the user points (but
    not /proc, /sys, /dev). URLs are left to the check. Raises InputError."""
    from slaschema.safefiles import resolve_named

    if not check.local_files:
        return c, dict(own) if own is not None else None
    problems: list[Problem] = []
    params = dict(c.params or {})
    own = dict(own) if own is not None else None
    for key in check.local_files:
        for where, src, cli in ((f"acceptance.criteria[{c.id}].params.{key}", params, False),
                                (f"--param {c.id}.{key}", own, True)):
            if src is None or not isinstance(src.get(key), str) or "://" in src[key]:
                continue
            try:
                src[key] = str(resolve_named(src[key], base_dir=base_dir, from_cli=cli,
                                             what=f"{c.id}.{key}", field=where))
            except InputError as exc:
                problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return (c.model_copy(update={"params": params}) if c.params else c), own


# --------------------------------------------------------------------------- judging

@dataclass
class CriterionResult:
    planned: Planned
    verdicts: list[Verdict]
    metrics: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    state: CriterionState = "done"
    duration_s: float | None = None
    nodes: list[str] = field(default_factory=list)
    _outcome: CriterionOutcome | None = field(default=None, repr=False)

    def outcome(self) -> CriterionOutcome:
        """The criterion's entry of the run document (computed once: results do not change)."""
        if self._outcome is None:
            self._outcome = criterion_outcome(self)
        return self._outcome


@dataclass(frozen=True)
class Judging:
    """What judging needs beyond the raw outputs: the scope, GPUs per node, the waivers."""

    scope: Scope
    gpus_per_node: Mapping[str, int] = field(default_factory=dict)
    waivers: tuple[Waiver, ...] = ()
    as_of: datetime = field(default_factory=utc_now)

    @classmethod
    def of(cls, contract: LoadedContract, nodes: Sequence[str] | None, only: Sequence[str],
           selected: Sequence[str], waivers: Sequence[Waiver] = (), as_of: datetime | None = None) -> Judging:
        topo = contract.topology
        return cls(Scope.of(contract, nodes, only=only, selected=selected),
                   {n: g for n, g in zip(topo.nodes, topo.node_gpus)}, tuple(waivers), as_of or utc_now())

    def finish(self, verdicts: Sequence[Verdict]) -> list[Verdict]:
        return apply_waivers(verdicts, self.waivers, self.as_of) if self.waivers else list(verdicts)


def judge_outputs(p: Planned, outputs: Mapping[str, RawOutput], judging: Judging) -> tuple[list[Verdict], dict[str, Any]]:
    """All raw outputs of one criterion -> verdicts over every node or group in the scope of
    `judging` (`acceptance.coverage`; none without evidence passes), a GPU reported by two
    nodes refused (`acceptance.identity`), waivers applied, fleet outliers flagged
    (`acceptance.outliers`), and the metrics per output. Pure."""
    res = judge_criterion(p.check, p.criterion, p.params, outputs, judging.scope, judging.gpus_per_node)
    copied = repeated_gpu_verdicts(p.criterion.id, res.metrics)       # one GPU on two nodes (acceptance.identity)
    return judging.finish([*res.verdicts, *copied, *_outliers(p, res.metrics)]), res.metrics


def _outliers(p: Planned, metrics: Mapping[str, Any]) -> list[Verdict]:
    """`warn: fleet_outlier` over the nodes' metrics of one criterion (acceptance.outliers)."""
    return fleet_outlier_verdicts(p.criterion.id, metrics, p.outliers, judged=p.check.judged_metric(p.criterion),
                                  bounds=Bounds.of(p.criterion),
                                  known=KNOWN_CHECKS.get(p.criterion.check, ("", (), ""))[1])


def verdict_entry(v: Verdict) -> VerdictEntry:
    return VerdictEntry.of(v)


def expected_text(c: Criterion, check: Check) -> str:
    parts = []
    metric = check.judged_metric(c)
    if metric:
        parts.append(f"{metric} {Bounds.of(c).describe(check.units.get(metric, ''))}")
    for k, v in (c.expect or {}).items():
        parts.append(f"{k}: {str(v).lower() if isinstance(v, bool) else v}")
    return "; ".join(parts) or "—"


# Reasons that say a value is missing: a verdict with a measured finding of the same status decides first.
UNDECIDED = frozenset({"metric_missing", "no_evidence", "memory_health_not_reported"})


def decisive(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The verdict a criterion's summary row names: its worst status by PRECEDENCE, and among
    those the first with a measured finding rather than a missing value."""
    for s in PRECEDENCE:
        found = [v for v in verdicts if v.status == s]
        if found:
            return next((v for v in found if v.reason not in UNDECIDED), found[0])
    return None


def reason_text(v: Verdict | None, unit: str = "") -> str | None:
    """`model_mismatch: NVIDIA A100 != model GB200`, `below_min: 650 GB/s (expected >= 700 GB/s)`."""
    if v is None:
        return None
    from acceptance.judge import fmt

    where = f" on {v.node}" if v.node else (f" in {v.details.get('unit')}" if v.details.get("unit") not in (None, CLUSTER) else "")
    waived = v.details.get("waived") if isinstance(v.details.get("waived"), Mapping) else None
    if waived:
        return f"waived {waived['status']} {waived['reason']}{where} (approved by {waived['approved_by']})"
    if v.measured is None:
        return f"{v.reason}{where}" + (f" (expected {v.expected})" if v.status == Status.NOT_RUN and v.expected else "")
    m = fmt(v.measured) if isinstance(v.measured, float) else str(v.measured)
    if isinstance(v.measured, float) and unit:
        m = f"{m} {unit}"
    if v.status == Status.SKIP:
        return f"{v.reason}: {m}{where}"             # why it does not apply; nothing was compared
    if v.reason.endswith("_mismatch") or v.reason in ("constraint_not_met", "service_not_running"):
        return f"{v.reason}: {m} != {v.expected}{where}"
    return f"{v.reason}: {m} (expected {v.expected}){where}" if v.expected else f"{v.reason}: {m}{where}"


def _not_run_text(first: Verdict | None, verdicts: Sequence[Verdict]) -> str | None:
    """For a criterion decided by not_run: how many of its units have no evidence."""
    if first is None or first.status != Status.NOT_RUN or first.reason != "no_evidence":
        return None
    units = {v.node or v.details.get("unit") for v in verdicts}
    missing = [v for v in verdicts if v.status == Status.NOT_RUN]
    layout = first.details.get("layout") or "node"
    kind = {"node": "nodes", "rack": "racks", "cluster": "cluster-wide runs"}.get(layout, "units")
    return f"{first.reason}: {len(missing)} of {len(units)} {kind} not run (e.g. {first.expected})"


def criterion_outcome(r: CriterionResult) -> CriterionOutcome:
    c, check = r.planned.criterion, r.planned.check
    if not r.verdicts:                       # nothing judged is never a pass
        r.verdicts = [verdict(c.id, None, Status.NOT_RUN, "no_evidence", expected="raw outputs of the check",
                              remediation="run the check or hand over its raw outputs")]
    status = worst(v.status for v in r.verdicts)
    first = decisive(r.verdicts)
    unit = check.units.get(check.judged_metric(c) or "", "")
    return CriterionOutcome(
        id=c.id,
        check=c.check,
        area=_area(c.check),
        metric=check.judged_metric(c),
        severity=c.severity,
        source=c.source,
        description=c.description,
        params=r.planned.params.model_dump(mode="json", exclude_none=True),
        thresholds=Thresholds(**Bounds.of(c).to_json(), expect=c.expect),
        expected=expected_text(c, check),
        unit=unit,
        status=status,
        reason=first.reason if first else None,
        reason_text=_not_run_text(first, r.verdicts) or reason_text(first, unit),
        state=r.state,
        duration_s=r.duration_s,
        nodes=tuple(r.nodes),
        # evidence in the bundle about contract nodes or racks outside the scope: not judged
        evidence_outside_scope=tuple(sorted(set(r.nodes) - set(r.metrics)) if r.metrics or r.nodes else ()),
        verdicts=tuple(VerdictEntry.of(v) for v in r.verdicts),
    )


def node_list_entry(verdicts: Sequence[Verdict], executor: str | None, contract: LoadedContract,
                    duration_s: float | None = None) -> CriterionOutcome:
    """The run document entry of the scheduler's node list against the contract's topology."""
    from acceptance.executors.slurm import NODE_LIST_ID
    from slaschema.hostlist import compress

    nodes = list(contract.topology.nodes)
    status = worst(v.status for v in verdicts)
    first = decisive(verdicts)
    try:
        listed = compress(nodes)
    except Exception:  # noqa: BLE001 - names that do not compress are counted only
        listed = f"{len(nodes)} nodes"
    return CriterionOutcome(
        id=NODE_LIST_ID,
        check=f"{executor or 'scheduler'}.node_list",
        area="topology",
        metric=None,
        severity="major",
        source="contract topology",
        description="The scheduler's node list matches the contract's topology",
        params={},
        thresholds=Thresholds(expect={"nodes": listed}),
        expected=f"the contract's {len(nodes)} nodes ({listed.replace(',', ', ')}), and no others",
        unit="",
        status=status,
        reason=first.reason if first else None,
        reason_text=reason_text(first),
        state="done",
        duration_s=duration_s,
        nodes=(CLUSTER,),
        verdicts=tuple(VerdictEntry.of(v) for v in verdicts),
    )


def aggregate(criteria: Sequence[CriterionOutcome], contract: LoadedContract) -> Aggregate:
    """Verdicts rolled up per node, per rack of the contract topology, and overall. Pure."""
    topo = contract.topology
    rank = {s: i for i, s in enumerate(PRECEDENCE)}
    per_node: dict[str, Counts] = {}
    node_criteria: dict[str, dict[str, Status]] = {}
    cluster_counts = zero_counts()
    per_rack: dict[str, Counts] = {}          # verdicts about a whole rack (a rack-scoped run)
    rack_ids = topo.rack_index
    for c in criteria:
        cid = c.id
        for v in c.verdicts:
            node, status = v.node, v.status
            if node is None or node == CLUSTER:
                unit = v.details.get("unit")
                if isinstance(unit, str) and unit in rack_ids:
                    per_rack.setdefault(unit, zero_counts())[status] += 1
                else:
                    cluster_counts[status] += 1
                continue
            per_node.setdefault(node, zero_counts())[status] += 1
            seen = node_criteria.setdefault(node, {})
            if cid not in seen or rank[status] < rank[seen[cid]]:
                seen[cid] = status

    def rack_of(node: str) -> str:
        i = topo.node_index.get(node)
        return topo.racks[topo.node_rack[i]] if i is not None else NOT_IN_CONTRACT

    order = topo.node_index
    nodes = []
    for node in sorted(per_node, key=lambda n: (order.get(n, len(order)), n)):
        counts = per_node[node]
        nodes.append(NodeRollup(
            node=node,
            rack=rack_of(node),
            status=worst(s for s, k in counts.items() if k),
            counts=counts,
            criteria={cid: s for cid, s in node_criteria[node].items() if s != Status.PASS},
        ))
    # rack -> (nodes, nodes per status, verdicts per status)
    racks: dict[str, tuple[list[int], Counts, Counts]] = {}
    for n in nodes:
        tally, node_counts, counts = racks.setdefault(n.rack, ([0], zero_counts(), zero_counts()))
        tally[0] += 1
        node_counts[n.status] += 1
        for s, k in n.counts.items():
            counts[s] += k
    for rack, extra in per_rack.items():
        _, _, counts = racks.setdefault(rack, ([0], zero_counts(), zero_counts()))
        for s, k in extra.items():
            counts[s] += k
    rack_order = topo.rack_index
    rack_list = [
        RackRollup(rack=rack, status=worst([*(s for s, k in node_counts.items() if k),
                                            *(s for s, k in per_rack.get(rack, {}).items() if k)]),
                   nodes=tally[0], node_counts=node_counts, counts=counts)
        for rack, (tally, node_counts, counts) in sorted(racks.items(),
                                                         key=lambda kv: (rack_order.get(kv[0], len(rack_order)), kv[0]))]
    node_counts = zero_counts()
    counts = dict(cluster_counts)
    for extra in per_rack.values():
        for s, k in extra.items():
            counts[s] += k
    for n in nodes:
        node_counts[n.status] += 1
        for s, k in n.counts.items():
            counts[s] += k
    overall = OverallRollup(
        status=worst(c.status for c in criteria) if criteria else Status.SKIP,
        nodes=len(nodes),
        node_counts=node_counts,
        counts=counts,
        cluster_counts=cluster_counts,
    )
    return Aggregate(overall=overall, racks=tuple(rack_list), nodes=tuple(nodes))


def run_info(meta: Mapping[str, Any]) -> RunInfo:
    """The run document's `run` record from the runner's metadata (as run.json holds it). A
    value run.json may hold that is no aware time, known state or name is left out: run.json
    comes with the bundle (`accept evaluate` reads another party's)."""
    from acceptance.document import IsolationInfo

    def when(value: Any) -> datetime | None:
        if isinstance(value, datetime):
            return value if value.tzinfo is not None else None
        try:
            at = datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            return None
        return at if at is not None and at.tzinfo is not None else None

    state = meta.get("state")
    iso = meta.get("isolation")
    return RunInfo(
        mode=meta.get("mode"),
        state=state if state is None or state in ("running", "complete", "interrupted") else "interrupted",
        started=when(meta.get("started")),
        finished=when(meta.get("finished")),
        executor=meta.get("executor") if isinstance(meta.get("executor"), str) else None,
        nodes=tuple(meta.get("nodes") or ()),
        only=tuple(meta.get("only") or ()),
        overrides={k: dict(v) for k, v in (meta.get("overrides") or {}).items()},
        resumed=bool(meta.get("resumed")),
        isolation=IsolationInfo(runs=iso["runs"], isolated=tuple(iso["isolated"]), unit=iso["unit"]) if iso else None,
    )


def run_document(contract: LoadedContract, run_meta: Mapping[str, Any], results: Sequence[CriterionResult],
                 extra: Sequence[CriterionOutcome], judging: Judging) -> RunDocument:
    """`extra`: entries that are no contract criterion (the scheduler's node list), listed first."""
    criteria = (*extra, *(r.outcome() for r in results))
    counts = zero_counts()
    for c in criteria:
        counts[c.status] += 1
    info = contract.model.contract
    scope = judging.scope.info()
    run = run_info(run_meta)
    return RunDocument(
        format=RUN_FORMAT,
        contract=ContractInfo(id=info.id, title=info.title, provider=info.provider, customer=info.customer,
                              file=contract.file, sha256=contract.sha256),
        run=run,
        status=worst(c.status for c in criteria) if criteria else Status.SKIP,
        counts=counts,
        criteria=criteria,
        aggregate=aggregate(criteria, contract),
        scope=scope,
        as_of=judging.as_of,
        waivers=waiver_report(judging.waivers, criteria, judging.as_of),
        decision=decide(criteria, scope, run.state),
    )


def failed(doc: RunDocument) -> bool:
    """Exit status 1: not accepted (a fail, error, not_run or skip in scope, or nothing judged);
    see `acceptance.decision`."""
    return doc.failed


# --------------------------------------------------------------------------- running

class Interrupted(Exception):
    """The run was stopped with Ctrl-C; the bundle is consistent and resumable."""

    def __init__(self, document: RunDocument) -> None:
        super().__init__("interrupted")
        self.document = document


def default_nodes(executor_name: str, contract: LoadedContract) -> list[str]:
    if executor_name == "local":
        return [socket.gethostname().split(".")[0] or "localhost"]
    return list(contract.topology.nodes)


Event = Callable[[str, Planned, dict[str, Any]], None]


@dataclass
class RunOptions:
    out: Path
    nodes: list[str]
    executor_name: str = "local"
    only: tuple[str, ...] = ()
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    timeout_s: float | None = None
    resume: bool = False
    python: str = sys.executable
    durable: bool = True
    waivers: tuple[Waiver, ...] = ()
    as_of: datetime | None = None        # aware datetime waivers are judged at; default: now


def run_acceptance(contract: LoadedContract, opts: RunOptions, executor: Executor, *,
                   on_event: Event | None = None, clock: Clock = utc_now) -> RunDocument:
    """Run the selected criteria; returns the run document. Raises Interrupted on Ctrl-C."""
    event = on_event or (lambda kind, p, info: None)
    # Every write is atomic (temp file + rename), so the bundle is consistent at every moment;
    # the data reach the disk with one sync at the end instead of an fsync per file.
    bundle = Bundle(opts.out, durable=False)
    previous = _previous_run(opts, contract)
    planned = plan(select(contract.model.acceptance.criteria, opts.only), opts.overrides, opts.timeout_s,
                   contract.model, _contract_dir(contract))
    make_folder(opts.out)
    if previous is not None:
        bundle.adopt_existing()
    judging = Judging.of(contract, opts.nodes, opts.only, [p.criterion.id for p in planned], opts.waivers,
                         opts.as_of or clock())
    states: dict[str, CriterionState] = {p.criterion.id: "pending" for p in planned}
    done_before = {cid for cid, s in (previous or {}).get("criteria", {}).items() if s.get("state") == "done"}
    run_meta = {
        "mode": "run",
        "state": "running",
        "started": (previous or {}).get("started") or clock().isoformat(),
        "finished": None,
        "executor": opts.executor_name,
        "nodes": list(opts.nodes),
        "only": list(opts.only),
        "overrides": opts.overrides,
        "resumed": previous is not None,
    }
    results: dict[str, CriterionResult] = {}
    extra: list[CriterionOutcome] = []      # the scheduler's node list, when the executor has one

    def save(final_state: str | None = None) -> RunDocument:
        # Ctrl-C waits until the bundle files and their manifest agree again.
        with _sigint_deferred():
            return _save(final_state)

    def _save(final_state: str | None) -> RunDocument:
        if final_state:
            run_meta["state"] = final_state
            run_meta["finished"] = clock().isoformat()
        ordered = []
        for p in planned:
            r = results.get(p.criterion.id)
            if r is None:
                reason = "interrupted" if final_state == "interrupted" else "not_run"
                r = CriterionResult(p, [verdict(p.criterion.id, None, Status.ERROR, reason, expected="the check ran",
                                                remediation="rerun with --resume to finish the run")],
                                    state=states[p.criterion.id])
            ordered.append(r)
        doc = run_document(contract, dict(run_meta), ordered, extra, judging)
        bundle.write_json("run.json", {
            **run_meta,
            "format": RUN_FORMAT,
            "contract": {"id": contract.id, "file": contract.file, "sha256": contract.sha256},
            "criteria": {cid: {"state": s, "check": results[cid].planned.criterion.check if cid in results else None,
                               "nodes": results[cid].nodes if cid in results else [],
                               "duration_s": results[cid].duration_s if cid in results else None}
                         for cid, s in states.items()},
        })
        from acceptance.report.render import render_junit

        bundle.write("results.json", doc.dumps())
        bundle.write("junit.xml", render_junit(doc))
        bundle.write_manifest()
        if final_state and opts.durable:
            os.sync()
        return doc

    save()
    current: list[str] = []
    keep = frozenset(child_pids())
    old_term = _sigterm_as_interrupt()
    try:
        judge_list = node_list_judge(opts.executor_name)
        if judge_list is not None and callable(getattr(executor, "node_list", None)):
            extra.append(_check_node_list(executor, judge_list, opts, contract, bundle, judging))
            save()
        for p in planned:
            current[:] = [p.criterion.id]
            _run_one(p, opts, contract, executor, bundle, previous, done_before, results, states, event, keep,
                     judging=judging)
            save()
    except KeyboardInterrupt:
        stop_children(keep=keep)
        for cid in current:
            if states.get(cid) != "done":
                states[cid] = "interrupted"
                results.pop(cid, None)
        raise Interrupted(save("interrupted")) from None
    finally:
        _restore_sigterm(old_term)
    return save("complete")


def _sigterm_as_interrupt() -> Any:
    """SIGTERM (a scheduler's kill, `timeout`, systemd stop) is handled like Ctrl-C: children
    stopped, the bundle left consistent with run.json saying `interrupted`."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):
        return None


def _restore_sigterm(old: Any) -> None:
    if old is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, old)


def _run_one(p: Planned, opts: RunOptions, contract: LoadedContract, executor: Executor, bundle: Bundle,
             previous: dict[str, Any] | None, done_before: set[str], results: dict[str, CriterionResult],
             states: dict[str, CriterionState], event: Event, keep: frozenset[int] = frozenset(), *,
             judging: Judging) -> None:
    cid = p.criterion.id
    if cid in done_before and previous is not None:
        outputs = read_raw_dir(opts.out, cid) or {}
        vs, ms = judge_outputs(p, outputs, judging)
        prev = previous["criteria"][cid]
        results[cid] = CriterionResult(p, vs, ms, "done", prev.get("duration_s"), sorted(outputs))
        states[cid] = "done"
        event("resumed", p, {"status": str(worst(v.status for v in vs))})
        return
    _clear(bundle, cid)
    event("start", p, {"timeout_s": p.timeout_s})
    groups = None
    layout = p.check.layout(p.params, judging.scope.largest_rack)
    if layout != "node":
        groups = {u.key: u.in_scope for u in judging.scope.units(layout)}
    elif p.check.id == "network.nccl":
        groups = {n: (n,) for n in opts.nodes}
    ctx = CollectContext(executor=executor, nodes=tuple(opts.nodes), timeout_s=p.timeout_s, python=opts.python,
                         gpus_per_node=_gpus_per_node(contract), groups=groups)
    t0 = time.perf_counter()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["outputs"] = p.check.collect(p.params, ctx)
        except BaseException as exc:  # noqa: BLE001 - reported as the criterion's error verdict
            box["error"] = exc

    worker = threading.Thread(target=work, name=f"collect-{cid}", daemon=True)
    try:
        worker.start()
        deadline = time.monotonic() + p.timeout_s + 60.0
        while worker.is_alive() and time.monotonic() < deadline:
            worker.join(0.05)
        if worker.is_alive():
            stop_children(keep=keep)
            worker.join(10.0)
            box.setdefault("error", TimeoutError("the check did not return within its time limit"))
    except KeyboardInterrupt:
        stop_children(keep=keep)
        worker.join(10.0)
        event("interrupted", p, {})
        raise
    duration = time.perf_counter() - t0
    if "error" in box:
        exc = box["error"]
        reason = "timeout" if isinstance(exc, TimeoutError) else "collect_failed"
        vs = [verdict(cid, None, Status.ERROR, reason, measured=f"{type(exc).__name__}: {exc}"[:300],
                      expected="the check runs", remediation="see the message; rerun with --resume")]
        vs += judge_outputs(p, {}, judging)[0]
        results[cid] = CriterionResult(p, vs, {}, "done", duration, [])
    else:
        outputs: dict[str, RawOutput] = box["outputs"]
        for node, raw in outputs.items():
            bundle.write_raw(cid, node, raw)
        vs, ms = judge_outputs(p, outputs, judging)
        for node, m in ms.items():
            bundle.write_metrics(cid, node, m)
        results[cid] = CriterionResult(p, vs, ms, "done", duration, sorted(outputs))
    states[cid] = "done"
    event("done", p, {"status": str(worst(v.status for v in results[cid].verdicts)), "duration_s": duration})


def node_list_judge(executor_name: str | None) -> Callable[[RawOutput, Sequence[str]], list[Verdict]] | None:
    """The pure judge of an executor's raw node list (see `node_list_entry`); None when the
    executor has no node list of its own (local)."""
    if executor_name == "slurm":
        from acceptance.executors.slurm import judge_node_list

        return judge_node_list
    return None


def _check_node_list(executor: Executor, judge_list: Callable[[RawOutput, Sequence[str]], list[Verdict]],
                     opts: RunOptions, contract: LoadedContract, bundle: Bundle,
                     judging: Judging) -> CriterionOutcome:
    from acceptance.executors.slurm import NODE_LIST_ID

    _clear(bundle, NODE_LIST_ID)
    raw: RawOutput = executor.node_list()  # type: ignore[attr-defined]
    bundle.write_raw(NODE_LIST_ID, CLUSTER, raw)
    vs = judge_list(raw, contract.topology.nodes)
    return node_list_entry(judging.finish(vs), opts.executor_name, contract, raw.duration_s)


class _sigint_deferred:
    """Block SIGINT in the main thread for the duration; a Ctrl-C pressed meanwhile arrives after."""

    def __enter__(self) -> None:
        self.active = threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_sigmask")
        if self.active:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})

    def __exit__(self, *exc: object) -> None:
        if self.active:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def _contract_dir(contract: LoadedContract) -> Path:
    return Path(contract.file).parent if contract.file and not contract.file.startswith("<") else Path(".")


def _gpus_per_node(contract: LoadedContract) -> int | None:
    gpus = contract.topology.node_gpus
    return max(gpus) if gpus else None


def _clear(bundle: Bundle, cid: str) -> None:
    for top in ("raw", "metrics"):
        folder = bundle.root / top / cid
        if folder.is_dir():
            for f in folder.iterdir():
                if f.is_file():
                    f.unlink()
                    bundle.hashes.pop(f.relative_to(bundle.root).as_posix(), None)


def _previous_run(opts: RunOptions, contract: LoadedContract) -> dict[str, Any] | None:
    import json

    run_file = opts.out / "run.json"
    if opts.out.exists() and not opts.out.is_dir():
        raise InputError([Problem("not_a_bundle", f"{opts.out} is not a folder", file=str(opts.out),
                                  fix="choose a new --out folder")])
    if not run_file.exists():
        if opts.out.exists() and any(opts.out.iterdir()):
            if opts.resume:
                raise InputError([Problem("not_a_bundle", f"{opts.out} holds no run.json to resume", file=str(opts.out))])
            raise InputError([Problem("out_not_empty", f"{opts.out} is not empty and holds no acceptance run",
                                      file=str(opts.out), fix="choose a new or empty --out folder")])
        return None
    if not opts.resume:
        raise InputError([Problem("bundle_exists", f"{opts.out} already holds an acceptance run", file=str(opts.out),
                                  fix="pass --resume to continue it, or choose a new --out folder")])
    result = verify(opts.out)
    if not result.ok:
        raise InputError([Problem("bundle_tampered", "the bundle does not match its manifest: "
                                  + ", ".join([*(f"changed {f}" for f in result.changed), *(f"missing {f}" for f in result.missing),
                                               *(f"added {f}" for f in result.added), *result.problems][:10]),
                                  file=str(opts.out), fix="resume only an untouched bundle; start a new run otherwise")])
    try:
        doc = json.loads(run_file.read_text(encoding="utf-8"))
    except (ValueError, RecursionError):        # not UTF-8, not JSON, nested too deep
        doc = None
    if (not isinstance(doc, dict) or not isinstance(doc.get("contract", {}), dict)
            or not isinstance(doc.get("criteria", {}), dict)
            or not all(isinstance(v, dict) for v in doc.get("criteria", {}).values())):
        raise InputError([Problem("not_a_bundle", "not the run record `accept run` writes",
                                  file=str(run_file), fix="resume only a bundle `accept run` made; start a new run "
                                  "otherwise")])
    if doc.get("contract", {}).get("sha256") != contract.sha256:
        raise InputError([Problem("resume_mismatch", "the bundle was made with a different contract file",
                                  file=str(opts.out), value=doc.get("contract", {}).get("sha256"),
                                  fix="resume with the same contract, or start a new run")])
    return doc


# --------------------------------------------------------------------------- evaluate

def evaluate_bundle(contract: LoadedContract, root: Path, *, only: Sequence[str] = (),
                    overrides: Mapping[str, Mapping[str, Any]] | None = None, nodes: Sequence[str] | None = None,
                    waivers: Sequence[Waiver] = (), as_of: datetime | None = None) -> RunDocument:
    """Judge the raw outputs in `root` against the contract, running nothing. The scope is
    `nodes` when given, else the nodes recorded in run.json, else the contract's topology."""
    import json

    root = Path(root)
    if not root.is_dir():
        raise InputError([Problem("no_such_directory", f"{root}: no such directory", file=str(root),
                                  fix="give the folder that holds the bundle's raw/ folder")])
    if not (root / "raw").is_dir():
        raise InputError([Problem("not_a_bundle", f"{root} has no raw/ folder", file=str(root),
                                  fix="lay out raw/<criterion>/<node>.json (or .txt) as in docs/acceptance.md")])
    from acceptance.evidence import unsafe_entries

    odd = unsafe_entries(root)
    if odd:
        raise InputError([Problem("bundle_unsafe_entry", "a bundle holds regular files only; this is a symlink, "
                                  "FIFO, device or socket", file=str(root / rel), fix="remove it from the bundle")
                          for rel in odd[:20]])
    meta: dict[str, Any] = {}
    run_file = root / "run.json"
    if run_file.is_file():
        try:
            meta = json.loads(run_file.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            meta = {}
        if not isinstance(meta, dict):
            meta = {}
    recorded = overrides is None            # the overrides the run recorded in run.json, not --param
    selected = select(contract.model.acceptance.criteria, only)
    if overrides is None:
        # those of the criteria judged now (`--only` may judge fewer than the run ran)
        ids = {c.id for c in selected}
        given = meta.get("overrides") if isinstance(meta.get("overrides"), dict) else {}
        overrides = {cid: v for cid, v in given.items() if cid in ids and isinstance(v, dict)}
    try:
        planned = plan(selected, overrides, contract=contract.model, base_dir=_contract_dir(contract))
    except InputError as exc:
        if not recorded:
            raise
        raise InputError([_in_run_json(p, run_file) for p in exc.problems]) from None
    listed_nodes = meta.get("nodes")
    scope_nodes = list(nodes) if nodes else (
        list(listed_nodes) if isinstance(listed_nodes, list) and all(isinstance(n, str) for n in listed_nodes)
        else None)                          # names that are no strings name no node: the contract's scope
    judging = Judging.of(contract, scope_nodes, only, [p.criterion.id for p in planned], waivers, as_of)
    extra = []
    judge_list = node_list_judge(meta.get("executor"))
    if judge_list is not None:
        from acceptance.executors.slurm import NODE_LIST_ID

        listed = (read_raw_dir(root, NODE_LIST_ID) or {}).get(CLUSTER)
        if listed is not None:
            extra.append(node_list_entry(judging.finish(judge_list(listed, contract.topology.nodes)),
                                         meta.get("executor"), contract, listed.duration_s))
    results = []
    for p in planned:
        outputs = read_raw_dir(root, p.criterion.id) or {}
        vs, ms = judge_outputs(p, outputs, judging)
        prev = (meta.get("criteria") or {}).get(p.criterion.id) or {}
        results.append(CriterionResult(p, vs, ms, "done", prev.get("duration_s"), sorted(outputs)))
    run_meta = {
        "mode": "evaluate",
        "state": meta.get("state", "complete"),
        "started": meta.get("started"),
        "finished": meta.get("finished"),
        "executor": meta.get("executor"),
        "nodes": list(judging.scope.nodes),
        "only": list(only),
        "overrides": dict(overrides),
        "resumed": bool(meta.get("resumed")),
    }
    return run_document(contract, run_meta, results, extra, judging)


def _in_run_json(p: Problem, run_file: Path) -> Problem:
    """A problem with an override run.json recorded (no --param was given): it names run.json."""
    from dataclasses import replace

    if (p.path or "").startswith("--param "):
        return replace(p, file=str(run_file), path="overrides." + p.path[len("--param "):],
                       message=p.message.replace("--param ", "the override ", 1))
    return replace(p, file=p.file or str(run_file))


def write_evaluation(root: Path, doc: RunDocument) -> None:
    """Store an evaluation's results.json and junit.xml in the bundle and refresh the manifest."""
    from acceptance.report.render import render_junit

    bundle = Bundle(root)
    bundle.adopt_existing()
    bundle.write("results.json", doc.dumps())
    bundle.write("junit.xml", render_junit(doc))
    bundle.write_manifest()
