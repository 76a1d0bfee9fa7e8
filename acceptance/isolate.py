"""Fault isolation: which node makes a multi-node criterion fail.

`accept isolate` re-runs one criterion on parts of a failing node set until the faulty nodes
remain (adaptive group testing by halving):

1. The baseline run covers the whole set. If it passes there is nothing to isolate.
2. A failing set is split into two halves of whole *units* (a unit is the criterion's
   smallest valid group: a node for per-node and `custom.command` steps, a pair for 2-node
   tests, a rack for rack-scoped NCCL). The first half runs; if it fails it is searched
   further and the second half runs as well (it may hold a second fault); if it passes the
   fault is in the second half, which is then known to fail without a run.
3. A failing single unit is a suspect. Each suspect is run once more on its own to confirm
   it. A suspect that failed on its own in the search but passes its confirmation is
   reported as `intermittent`, not isolated; one that was only inferred (its sibling passed)
   and passes is cleared, and the result says the failure was `not_reproduced`.

With one faulty node among N nodes this costs at most 2*ceil(log2 N) runs for the search
plus one confirmation (the baseline is not counted: it is the run that failed). Two faulty
nodes are both found. Units never mix: a rack-scoped NCCL test is only ever run on whole
racks.

The search (`search`) is pure: it takes a `probe(nodes) -> Probe` function, so it is tested
without a cluster; `isolate_criterion` wires it to the runner and writes every run into the
evidence bundle (`raw/<criterion>@run-NN/`), with `isolation.json` and a run document whose
verdicts name each isolated node and its reason.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from acceptance.executors.base import Executor, utc_now
from slaschema.errors import InputError, Problem
from slaschema.loader import LoadedContract

ISOLATION_FORMAT = "slakit-isolation/1"


@dataclass(frozen=True)
class Probe:
    """One run of the criterion on a node set."""

    nodes: tuple[str, ...]
    failed: bool
    reason: str                    # the decisive verdict's reason code (e.g. task_failed)
    detail: str = ""               # measured value / message of the decisive verdict
    purpose: str = "search"        # baseline | search | confirm
    index: int = 0                 # 0 = baseline, 1.. = extra runs


@dataclass(frozen=True)
class Isolated:
    unit: tuple[str, ...]
    reason: str
    detail: str
    confirmed: bool


@dataclass(frozen=True)
class Isolation:
    baseline: Probe
    probes: tuple[Probe, ...]                 # the extra runs, in order
    isolated: tuple[Isolated, ...]            # confirmed faulty units
    intermittent: tuple[Isolated, ...]        # suspects whose confirmation passed
    cleared: tuple[str, ...]                  # nodes that passed in some run
    not_reproduced: bool = False              # a failure inferred for a part did not come back

    @property
    def runs(self) -> int:
        return len(self.probes)

    @property
    def isolated_nodes(self) -> list[str]:
        return [n for u in self.isolated for n in u.unit]


def units_of(nodes: Sequence[str], unit_size: int = 1,
             groups: Sequence[Sequence[str]] | None = None) -> list[tuple[str, ...]]:
    """The node set as indivisible units: the given groups (racks) restricted to `nodes`, or
    consecutive chunks of `unit_size` nodes (pairs). A trailing short chunk is its own unit."""
    ordered = list(dict.fromkeys(nodes))
    if groups:
        wanted = set(ordered)
        out = [tuple(n for n in g if n in wanted) for g in groups]
        seen = {n for u in out for n in u}
        out = [u for u in out if u]
        rest = tuple(n for n in ordered if n not in seen)
        return out + ([rest] if rest else [])
    size = max(1, unit_size)
    return [tuple(ordered[i:i + size]) for i in range(0, len(ordered), size)]


def search(units: Sequence[tuple[str, ...]], probe: Callable[[tuple[str, ...], str], Probe],
           baseline: Probe | None = None) -> Isolation:
    """Adaptive halving over `units`. `probe(nodes, purpose)` runs the criterion once."""
    all_nodes = tuple(n for u in units for n in u)
    probes: list[Probe] = []

    def run(nodes: tuple[str, ...], purpose: str) -> Probe:
        p = probe(nodes, purpose)
        probes.append(p)
        return p

    base = baseline if baseline is not None else probe(all_nodes, "baseline")
    cleared: list[str] = []
    if not base.failed:
        return Isolation(base, (), (), (), all_nodes)

    suspects: list[tuple[tuple[str, ...], Probe]] = []

    def visit(part: list[tuple[str, ...]], known: Probe) -> None:
        # `known` is a failing probe covering exactly `part` (run, or inferred from a sibling).
        if len(part) == 1:
            suspects.append((part[0], known))
            return
        half = (len(part) + 1) // 2
        left, right = part[:half], part[half:]
        left_nodes = tuple(n for u in left for n in u)
        right_nodes = tuple(n for u in right for n in u)
        p_left = run(left_nodes, "search")
        if p_left.failed:
            visit(left, p_left)
            p_right = run(right_nodes, "search")
            if p_right.failed:
                visit(right, p_right)
            else:
                cleared.extend(right_nodes)
        else:
            cleared.extend(left_nodes)
            # The whole part failed and its left half passed: the fault is on the right.
            inferred = Probe(right_nodes, True, known.reason, known.detail, "inferred", known.index)
            visit(right, inferred)

    visit(list(units), base)
    isolated: list[Isolated] = []
    intermittent: list[Isolated] = []
    not_reproduced = False
    for unit, seen in suspects:
        confirm = run(unit, "confirm")
        if confirm.failed:
            isolated.append(Isolated(unit, confirm.reason, confirm.detail, True))
            continue
        cleared.extend(unit)
        if seen.purpose == "inferred":
            # Never failed on its own: the failure it was inferred from did not come back.
            not_reproduced = True
        else:
            intermittent.append(Isolated(unit, seen.reason, seen.detail, False))
    return Isolation(base, tuple(probes), tuple(isolated), tuple(intermittent),
                     tuple(dict.fromkeys(cleared)), not_reproduced)


def isolation_json(result: Isolation, *, criterion: str, unit: str) -> dict[str, Any]:
    def probe_json(p: Probe) -> dict[str, Any]:
        return {"run": p.index, "purpose": p.purpose, "nodes": list(p.nodes),
                "status": "fail" if p.failed else "pass", "reason": p.reason, "detail": p.detail}

    return {
        "format": ISOLATION_FORMAT,
        "criterion": criterion,
        "unit": unit,
        "nodes": list(result.baseline.nodes),
        "baseline": probe_json(result.baseline),
        "isolated": result.isolated_nodes,
        "isolated_units": [{"nodes": list(u.unit), "reason": u.reason, "detail": u.detail} for u in result.isolated],
        "intermittent": [{"nodes": list(u.unit), "reason": u.reason, "detail": u.detail}
                         for u in result.intermittent],
        "cleared": list(result.cleared),
        "not_reproduced": result.not_reproduced,
        "runs": result.runs,
        "probes": [probe_json(p) for p in result.probes],
    }


# --------------------------------------------------------------------------- on a cluster

def criterion_unit(check_id: str, params: Any, topology: Any, nodes: Sequence[str],
                   unit_size: int | None = None) -> tuple[str, list[tuple[str, ...]]]:
    """How a criterion's node set may be split: (description, units). Pure.

    `unit_size` (the `--unit` option) wins. Otherwise: an NCCL test spanning as many nodes as
    a rack holds is rack-scoped (whole racks); any other NCCL test needs two nodes per part
    (pairs); a 2-node test of any check runs on pairs; everything else splits to single nodes.
    """
    if unit_size:
        return (f"{unit_size} node(s)", units_of(nodes, unit_size))
    span = getattr(params, "nodes", None) or 1
    if check_id == "network.nccl":
        rack_sizes = set(topology.nodes_per_rack()) if topology is not None else set()
        if span > 2 and span in rack_sizes:
            groups = [topology.nodes_of("rack", r) for r in topology.racks]
            return ("rack", units_of(nodes, groups=groups))
        return ("pair", units_of(nodes, 2))
    if span == 2:
        return ("pair", units_of(nodes, 2))
    return ("node", units_of(nodes, 1))


@dataclass
class IsolateOptions:
    out: Path
    criterion: str
    nodes: list[str]
    executor_name: str = "slurm"
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    timeout_s: float | None = None
    unit_size: int | None = None
    python: str = sys.executable


def isolate_criterion(contract: LoadedContract, opts: IsolateOptions, executor: Executor, *,
                      on_probe: Callable[[Probe], None] | None = None,
                      clock: Callable[[], datetime] = utc_now) -> dict[str, Any]:
    """Run the search for one criterion on the cluster; write the bundle; the isolation document."""
    from acceptance.checks.base import CollectContext
    from acceptance.evidence import Bundle, node_file
    from acceptance.report.render import render_junit
    from acceptance.results import PRECEDENCE, Status, worst
    from acceptance.runner import CriterionResult, Judging, judge_outputs, plan, run_document

    criteria = [c for c in contract.model.acceptance.criteria if c.id == opts.criterion]
    if not criteria:
        known = ", ".join(c.id for c in contract.model.acceptance.criteria) or "none"
        raise InputError([Problem("unknown_criterion", f"--criterion {opts.criterion}: not in the contract",
                                  value=opts.criterion, fix=f"criterion ids: {known}")])
    nodes = list(dict.fromkeys(opts.nodes))
    if len(nodes) < 2:
        raise InputError([Problem("too_few_nodes", "isolation needs at least two nodes", value=",".join(nodes),
                                  fix="name the failing node set with --nodes")])
    base_plan = plan(criteria, opts.overrides, opts.timeout_s, contract.model)[0]
    unit_name, units = criterion_unit(base_plan.criterion.check, base_plan.params, contract.topology, nodes,
                                      opts.unit_size)
    if len(units) < 2:
        raise InputError([Problem("nothing_to_split", f"the node set is one {unit_name}; it cannot be split",
                                  value=",".join(nodes), fix="give more nodes, or a smaller --unit")])
    has_span = "nodes" in type(base_plan.params).model_fields
    bundle = Bundle(opts.out, durable=False)
    started = clock().isoformat()
    counter = {"n": 0}
    last: dict[str, Any] = {}

    def probe(part: tuple[str, ...], purpose: str) -> Probe:
        index = counter["n"]
        counter["n"] += 1
        over = {k: dict(v) for k, v in opts.overrides.items()}
        if has_span and (getattr(base_plan.params, "nodes", 1) or 1) > 1:
            over.setdefault(opts.criterion, {})["nodes"] = len(part)
        p = plan(criteria, over, opts.timeout_s, contract.model)[0]
        ctx = CollectContext(executor=executor, nodes=tuple(part), timeout_s=p.timeout_s, python=opts.python,
                             gpus_per_node=contract.model.topology.gpus_per_node)
        outputs = p.check.collect(p.params, ctx)
        folder = f"isolation/run-{index:02d}"
        for node, raw in outputs.items():
            bundle.write_json(f"{folder}/{node_file(node)}.json", raw.to_json(), pretty=False)
        judging = Judging.of(contract, list(part), (opts.criterion,), [opts.criterion], (), clock())
        verdicts, _ = judge_outputs(p, outputs, judging)
        status = worst(v.status for v in verdicts) if verdicts else Status.ERROR
        decisive = next((v for s in PRECEDENCE for v in verdicts if v.status == s), None)
        failed = status in (Status.FAIL, Status.ERROR)
        detail = "" if decisive is None or decisive.measured is None else str(decisive.measured)[:200]
        result = Probe(tuple(part), failed, decisive.reason if decisive else "no_evidence", detail, purpose, index)
        bundle.write_json(f"{folder}/probe.json", {"run": index, "purpose": purpose, "nodes": list(part),
                                                   "status": str(status), "verdicts": [
                                                       {"node": v.node, "status": str(v.status),
                                                        "reason": v.reason, "measured": v.measured}
                                                       for v in verdicts]})
        last["plan"] = p
        if status == Status.SKIP and index == 0:
            last["skipped"] = decisive
        if on_probe is not None:
            on_probe(result)
        return result

    result = search(units, probe)
    doc = isolation_json(result, criterion=opts.criterion, unit=unit_name)
    doc["executor"] = opts.executor_name
    doc["started"] = started
    doc["finished"] = clock().isoformat()
    bundle.write_json("isolation.json", doc)

    # A run document whose verdicts say, per node, what the isolation found: the certificate
    # (`accept report`) then names each isolated node with its reason.
    from acceptance.judge import verdict

    cid = opts.criterion
    vs = []
    for u in result.isolated:
        for n in u.unit:
            vs.append(verdict(cid, n, Status.FAIL, "isolated_fault", measured=f"{u.reason}: {u.detail}".rstrip(": "),
                              expected=f"the criterion passes on this {unit_name}",
                              remediation="repair or replace the node, then rerun the criterion on the whole set",
                              details={"unit": list(u.unit), "confirmed": True}))
    for u in result.intermittent:
        for n in u.unit:
            vs.append(verdict(cid, n, Status.WARN, "intermittent_fault", measured=f"{u.reason}: {u.detail}".rstrip(": "),
                              expected="the same result on every run",
                              remediation="failed in the search but passed when confirmed: rerun or burn in this node",
                              details={"unit": list(u.unit), "confirmed": False}))
    for n in result.cleared:
        if n not in {x for u in (*result.isolated, *result.intermittent) for x in u.unit}:
            vs.append(verdict(cid, n, Status.PASS, "cleared_by_isolation", expected="passes in a part without the fault"))
    if result.baseline.failed and not result.isolated and not result.intermittent:
        vs.insert(0, verdict(cid, None, Status.FAIL, "not_isolated",
                             measured=f"{result.baseline.reason}: {result.baseline.detail}".rstrip(": "),
                             expected="a part of the set that fails on its own",
                             remediation="the whole set failed but no part did: look at what the nodes share "
                                         "(switch, file system) or rerun; the failure may be intermittent",
                             details={"not_reproduced": result.not_reproduced}))
    if not result.baseline.failed:
        vs = [verdict(cid, None, Status.PASS, "baseline_passed", expected="a failing node set to isolate",
                      details={"nodes": nodes})]
    if "skipped" in last:
        sk = last["skipped"]
        vs = [verdict(cid, None, Status.SKIP, sk.reason, measured=sk.measured, expected="the criterion runs",
                      remediation=sk.remediation)]
    run_meta = {"mode": "isolate", "state": "complete", "started": started, "finished": doc["finished"],
                "executor": opts.executor_name, "nodes": nodes, "overrides": opts.overrides, "resumed": False,
                "isolation": {"runs": result.runs, "isolated": result.isolated_nodes, "unit": unit_name}}
    res = CriterionResult(base_plan, vs, {}, "done", None, sorted({v.node for v in vs if v.node}))
    scope_judging = Judging.of(contract, nodes, (opts.criterion,), [opts.criterion], (), clock())
    run_doc = run_document(contract, run_meta, [res], (), scope_judging)
    bundle.write_json("results.json", run_doc.to_json(), pretty=False)
    bundle.write("junit.xml", render_junit(run_doc))
    bundle.write_manifest()
    return doc
