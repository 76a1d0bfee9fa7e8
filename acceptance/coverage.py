"""Coverage: what a criterion's evidence covers, and what it does not.

A verdict is over every criterion of the contract x every unit in scope. The unit is what
one piece of evidence covers, by the check's layout (`Check.layout`):

- `node`     one output per node (`raw/<criterion>/<node>.*`);
- `rack`     one run inside every rack of the topology (`raw/<criterion>/<rack>.*`; a
             `_cluster` output or a file named after a node is filed to the rack whose nodes
             the output names);
- `cluster`  one run for the cluster (`raw/<criterion>/_cluster.*`).

The scope is the contract's topology unless the run names a subset (`--nodes`); a rack is
in scope when any of its nodes is. A unit in scope with no evidence gets a `not_run`
verdict. Evidence about a contract node or rack outside the scope is left out; evidence
filed under a name that is neither is not judged and gets a `warn evidence_not_in_scope`
(it covers nothing, so the unit it was meant for stays `not_run`). A `_cluster` output that
cannot be filed to one unit is an `error` (`layout_mismatch`, `evidence_node_mismatch`,
`evidence_not_in_scope`).

Before a check's verdicts count, the evidence is cross-checked against what it is filed
under; a finding replaces the check's verdicts for that evidence (what they would have said
is kept under `details.judged`), so a mislabelled or cut-off output never passes:

- `evidence_node_mismatch`: the output names a host (nccl-tests rank lines, the node or
  job hostlist the executor recorded in a RawOutput JSON (Slurm's task node), a `Hostname :`
  line, the versions probe or a transcript's `hostname` / `uname -a`, fio's `hostname`,
  iperf3's `system_info`) that is not the node or a node of the rack it is filed under;
- `layout_mismatch`: an NCCL run over another number of nodes than `params.nodes`, or with
  another number of ranks than nodes x GPUs per node;
- `truncated_output`: JSON (DCGM, fio, iperf3, the versions probe) that had to be closed to
  be read; what could be recovered is shown under `details.recovered`.

Pure functions of the criterion, its params, the raw outputs and the scope.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from acceptance.checks.base import CLUSTER, Check, CheckParams, judge_output
from acceptance.document import ScopeInfo
from acceptance.executors.base import RawOutput
from acceptance.judge import verdict
from acceptance.parsers._common import load_truncated_json, outside_strings
from acceptance.results import Status, Verdict
from slaschema.loader import LoadedContract
from slaschema.models import Criterion

NODE, RACK, WHOLE = "node", "rack", "cluster"


@dataclass(frozen=True)
class Unit:
    key: str                      # node name, rack id or "_cluster"
    kind: str                     # node | rack | cluster
    nodes: tuple[str, ...]        # the contract's nodes of the unit (for a node: itself)
    in_scope: tuple[str, ...]     # those of them in scope


@dataclass(frozen=True)
class Scope:
    """The nodes and criteria a run or evaluation is about."""

    nodes: tuple[str, ...]                            # nodes in scope, topology order first
    contract_nodes: tuple[str, ...]
    racks: tuple[tuple[str, tuple[str, ...]], ...]    # every rack of the topology with its nodes
    selected: tuple[str, ...] = ()                    # criterion ids judged
    not_selected: tuple[str, ...] = ()                # contract criteria left out by --only
    only: tuple[str, ...] = ()

    @classmethod
    def of(cls, contract: LoadedContract, nodes: Sequence[str] | None = None, *, only: Sequence[str] = (),
           selected: Sequence[str] | None = None) -> Scope:
        topo = contract.topology
        contract_nodes = tuple(topo.nodes)
        racks: dict[str, list[str]] = {r: [] for r in topo.racks}
        for i, n in enumerate(contract_nodes):
            racks[topo.racks[topo.node_rack[i]]].append(n)
        if nodes is None:
            chosen = contract_nodes
        else:
            order = topo.node_index
            chosen = tuple(sorted(dict.fromkeys(nodes), key=lambda n: (order.get(n, len(order)), n)))
        ids = [c.id for c in contract.model.acceptance.criteria]
        sel = tuple(selected) if selected is not None else tuple(ids)
        return cls(chosen, contract_nodes, tuple((r, tuple(ns)) for r, ns in racks.items()), sel,
                   tuple(i for i in ids if i not in sel), tuple(w for w in only if w))

    # -- derived ---------------------------------------------------------------------------
    @property
    def subset(self) -> bool:
        return set(self.nodes) != set(self.contract_nodes)

    @property
    def partial(self) -> bool:
        return self.subset or bool(self.not_selected)

    @property
    def largest_rack(self) -> int:
        return max((len(ns) for _, ns in self.racks), default=0)

    def outside(self) -> list[str]:
        """Contract nodes that are not in scope."""
        inside = set(self.nodes)
        return [n for n in self.contract_nodes if n not in inside]

    def foreign(self) -> list[str]:
        """Nodes in scope that the contract's topology does not list."""
        known = set(self.contract_nodes)
        return [n for n in self.nodes if n not in known]

    def units(self, layout: str) -> list[Unit]:
        if layout == WHOLE:
            return [Unit(CLUSTER, WHOLE, self.contract_nodes, self.nodes)]
        if layout == RACK:
            inside = set(self.nodes)
            return [Unit(r, RACK, ns, tuple(n for n in ns if n in inside))
                    for r, ns in self.racks if any(n in inside for n in ns)]
        return [Unit(n, NODE, (n,), (n,)) for n in self.nodes]

    def known_key(self, key: str) -> bool:
        """A contract node or rack (in scope or not)."""
        known = self.__dict__.get("_known")
        if known is None:
            known = frozenset(self.contract_nodes) | {r for r, _ in self.racks}
            object.__setattr__(self, "_known", known)
        return key in known

    def info(self) -> ScopeInfo:
        """The run document's record of the scope."""
        from slaschema.hostlist import compress

        def hl(items: Sequence[str]) -> str:
            try:
                return compress(list(items))
            except Exception:  # noqa: BLE001 - names that do not compress are listed as they are
                return ",".join(items)

        outside = self.outside()
        return ScopeInfo(
            partial=self.partial,
            nodes=self.nodes,
            nodes_expr=hl(self.nodes),
            contract_nodes=len(self.contract_nodes),
            nodes_not_covered=hl(outside),
            nodes_not_covered_count=len(outside),
            nodes_not_in_contract=tuple(self.foreign()),
            only=self.only,
            criteria=self.selected,
            criteria_not_covered=self.not_selected,
        )


def scope_text(scope: ScopeInfo | None) -> str:
    """One line naming the subset of a partial run (empty for a full one)."""
    if scope is None or not scope.partial:
        return ""
    parts = []
    if scope.criteria_not_covered:
        parts.append(f"criteria {', '.join(scope.criteria)} only (--only {' '.join(scope.only)})"
                     .replace(" (--only )", ""))
    if scope.nodes_not_covered_count or scope.nodes_not_in_contract:
        # only the contract's own nodes count as covered: a host the contract does not list is
        # named apart, never as one of the contract's nodes
        foreign = set(scope.nodes_not_in_contract)
        inside = [n for n in scope.nodes if n not in foreign]
        named = scope.nodes_expr if not foreign else _hostlist(inside)
        text = f"{len(inside)} of the contract's {scope.contract_nodes} nodes ({named or 'none'})"
        if foreign:
            text += (f", and {len(foreign)} node{'s' if len(foreign) > 1 else ''} the contract does not list "
                     f"({_hostlist(scope.nodes_not_in_contract)})")
        parts.append(text)
    return "; ".join(parts)


def _hostlist(items: Sequence[str]) -> str:
    from slaschema.hostlist import compress

    try:
        return compress(list(items)) if items else ""
    except Exception:  # noqa: BLE001 - names that do not compress are listed as they are
        return ",".join(items)


def not_covered_lines(scope: ScopeInfo | None) -> list[str]:
    """What a partial run did not cover, one line each."""
    out: list[str] = []
    if scope is None:
        return out
    if scope.criteria_not_covered:
        out.append("criteria not run: " + ", ".join(scope.criteria_not_covered))
    if scope.nodes_not_covered_count:
        out.append(f"nodes not covered ({scope.nodes_not_covered_count}): {scope.nodes_not_covered}")
    if scope.nodes_not_in_contract:
        out.append("nodes in the run that the contract does not list: " + ", ".join(scope.nodes_not_in_contract))
    return out


# --------------------------------------------------------------------------- host names

_MASKED = re.compile(r"[{}<>\[\]$%]")
_SYSTEM_INFO = re.compile(r'"system_info"\s*:\s*"\S+\s+(\S+)')
_HOSTNAME_LINE = re.compile(r"^[ \t#]*host ?name\s*[:=]\s*([A-Za-z0-9][A-Za-z0-9_.-]*)\s*$", re.I | re.M)


def short(host: str) -> str:
    return host.strip().split(".")[0].lower()


def _clean_hosts(names: Sequence[Any]) -> list[str]:
    """Host names as named in an output; masked placeholders ({hostname}, <host>) dropped."""
    out = []
    for n in names:
        if isinstance(n, str) and n.strip() and not _MASKED.search(n) and short(n) not in out:
            out.append(short(n))
    return out


def _json_docs(text: str) -> list[dict[str, Any]]:
    from acceptance.parsers._common import iter_json_objects

    return [d for _, d in iter_json_objects(text)]


def recorded_hosts(raw: RawOutput, key: str) -> list[str]:
    """The node(s) the executor recorded in a RawOutput JSON (`node`: a name, or the hostlist
    of a multi-node job); empty when it records nothing beyond the file's own name."""
    from slaschema.hostlist import HostlistError, expand

    n = raw.node
    if not n or n in (CLUSTER, key):
        return []
    try:
        return _clean_hosts(expand(n))
    except HostlistError:
        return _clean_hosts([n])


def named_hosts(check_id: str, raw: RawOutput, metrics: Mapping[str, Any] | None) -> list[str]:
    """The hosts an output says it comes from (short, lower-case); empty when it names none."""
    m = metrics or {}
    if check_id == "network.nccl":
        return _clean_hosts(m.get("hosts") or [])
    text = raw.stdout
    names: list[Any] = []
    if check_id == "network.iperf3":
        # start.system_info is `uname -a` of the client: "Linux HOST KERNEL ..."
        names += _SYSTEM_INFO.findall(text)
    elif check_id in ("storage.fio", "gpu.dcgm") and ('"hostname"' in text or '"host"' in text):
        for doc in _json_docs(text):
            if check_id == "storage.fio":
                for group in ("client_stats", "jobs"):
                    names += [j.get("hostname") for j in doc.get(group) or [] if isinstance(j, dict)]
            else:
                names.append(doc.get("hostname") or doc.get("host"))
    if check_id == "software.versions" and m.get("hostname"):
        names.append(m["hostname"])
    if "ostname" in text or "OSTNAME" in text or "ost name" in text:
        names += _HOSTNAME_LINE.findall(text)
    return _clean_hosts(names)


# --------------------------------------------------------------------------- truncation

JSON_CHECKS = ("gpu.dcgm", "storage.fio", "network.iperf3", "software.versions")
_OBJ = re.compile(r"\{\s*\"")


def truncated_json(text: str) -> dict[str, Any] | None:
    """The document recovered from JSON in `text` that is cut off (its brackets are still
    open where the text ends), or None when the JSON is whole or there is none. A cut-off
    document that cannot be closed (cut inside a string) gives {}."""
    m = _OBJ.search(text)
    if not m:
        return None
    try:
        json.JSONDecoder().raw_decode(text, m.start())
        return None                         # the first object is whole (the common case, at C speed)
    except (ValueError, RecursionError):    # cut off, or nested too deep to decode: the brackets tell
        pass
    depth = 0
    commas: list[int] = []
    body = text[m.start():]
    for pos, ch in outside_strings(body):
        if pos == -1:
            break                           # the text ends inside a string
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return None                 # the outermost object closes: whole
        elif ch == ",":
            commas.append(pos + 1)          # a cut just after this comma keeps the item before it
    # Close the brackets; when the cut falls inside a string, drop back to an earlier item.
    # Each try reads the text again: the tries stop after about four readings of it, so a large
    # text that no try closes (nested too deep, items that are no JSON) costs seconds, not an
    # hour; what is not recovered is only not shown, the output is truncated_output all the same.
    budget = 4 * len(body) + (1 << 16)
    for end in [len(body), *reversed(commas[-50:])]:
        budget -= end
        if budget < 0:
            break
        doc = load_truncated_json(body[:end])
        if isinstance(doc, dict):
            return doc
    return {}


def recovered_summary(check_id: str, doc: Mapping[str, Any]) -> dict[str, Any]:
    """What a cut-off document still holds, for the verdict's detail."""
    out: dict[str, Any] = {"keys": sorted(str(k) for k in doc)[:20]}
    if check_id == "storage.fio":
        jobs = [j for j in doc.get("jobs") or [] if isinstance(j, dict)]
        out["jobs"] = [j.get("jobname") for j in jobs]
        out["fio_version"] = doc.get("fio version")
    elif check_id == "network.iperf3":
        out["intervals"] = len(doc.get("intervals") or [])
        out["has_end_summary"] = bool(doc.get("end"))
    elif check_id == "gpu.dcgm":
        names = re.findall(r'"(?:test_name|name)"\s*:\s*"([^"]+)"', json.dumps(doc))
        out["tests"] = names[:30]
    return out


# --------------------------------------------------------------------------- judging


@dataclass(frozen=True)
class CoverageResult:
    verdicts: list[Verdict]
    metrics: dict[str, Any]
    covered: tuple[str, ...]         # unit keys with evidence
    ignored: tuple[str, ...]         # evidence keys outside the scope, left out


def judge_criterion(check: Check, criterion: Criterion, params: CheckParams, outputs: Mapping[str, RawOutput],
                    scope: Scope, gpus_per_node: Mapping[str, int] | None = None) -> CoverageResult:
    """Every unit in scope of one criterion: the check's verdicts on its evidence (after the
    cross-checks), `not_run` where there is none. Pure."""
    layout = check.layout(params, scope.largest_rack)
    units = scope.units(layout)
    by_key = {u.key: u for u in units}
    unit_of_node = {n: u.key for u in units for n in u.nodes}
    verdicts: list[Verdict] = []
    metrics: dict[str, Any] = {}
    covered: dict[str, None] = {}
    ignored: list[str] = []
    cid = criterion.id
    for key in sorted(outputs):
        raw = outputs[key]
        judge_as = key if layout == NODE and key != CLUSTER else CLUSTER
        m, vs = judge_output(check, criterion, params, judge_as, raw)
        hosts = list(dict.fromkeys([*named_hosts(check.id, raw, m), *recorded_hosts(raw, key)]))
        unit_key, problem = _attribute(key, hosts, layout, units, by_key, unit_of_node, scope)
        if unit_key is None and problem is None:
            ignored.append(key)                 # a contract node or rack outside the scope
            continue
        metrics[key] = m
        node = unit_key if layout == NODE else None
        # Where the evidence is filed, when the node alone does not say it (kept small: 19,000
        # verdicts of a large fleet are rendered as JSON).
        tag = {} if layout == NODE and key == unit_key else {
            "unit": unit_key or key, "layout": layout, **({"evidence": key} if key != unit_key else {})}
        if problem is not None:
            verdicts.append(_finding(cid, node if unit_key else (key if key != CLUSTER else None), problem, vs, tag))
            continue
        unit = by_key[unit_key]
        finding = _cross_check(check, params, raw, m, hosts, unit, layout, gpus_per_node or {})
        if finding is not None:
            verdicts.append(_finding(cid, node, finding, vs, tag))
        else:
            verdicts.extend(replace(v, node=node if layout == NODE else v.node,
                                    details={**v.details, **tag}) for v in vs)
        covered[unit_key] = None
    if not units and not verdicts:
        # No node or group of this layout lies in the scope (a rack run, and no contract rack in
        # it): nothing was covered, which is never a pass.
        verdicts.append(verdict(
            cid, None, Status.NOT_RUN, "no_group_in_scope",
            expected=f"a {layout} of the contract's topology in scope",
            remediation=f"run on the nodes of a whole {layout} of the contract (--nodes)",
            details={"unit": CLUSTER if layout == WHOLE else None, "layout": layout}))
    for u in units:
        if u.key not in covered:
            verdicts.append(verdict(
                cid, u.key if layout == NODE else None, Status.NOT_RUN, "no_evidence",
                expected=_expected_evidence(cid, u, layout),
                remediation="run the check there, or hand over its raw output",
                details={"unit": u.key, "layout": layout}))
    return CoverageResult(verdicts, metrics, tuple(covered), tuple(ignored))


def _expected_evidence(cid: str, u: Unit, layout: str) -> str:
    if layout == RACK:
        return f"raw/{cid}/{u.key}.* (one run inside rack {u.key})"
    if layout == WHOLE:
        return f"raw/{cid}/_cluster.*"
    return f"raw/{cid}/{u.key}.*"


def _attribute(key: str, hosts: list[str], layout: str, units: list[Unit], by_key: dict[str, Unit],
               unit_of_node: dict[str, str], scope: Scope) -> tuple[str | None, dict[str, Any] | None]:
    """(unit key, None), or (None, finding) for evidence that cannot be filed, or (None, None)
    for evidence about a contract node or rack outside the scope."""
    if key in by_key:
        return key, None
    if key != CLUSTER and key in unit_of_node and layout != NODE:
        return unit_of_node[key], None
    if key == CLUSTER:
        if layout == WHOLE:
            return CLUSTER, None
        lower = {short(n): n for u in units for n in u.nodes}
        owners = {unit_of_node[lower[h]] for h in hosts if h in lower}
        if hosts and len(owners) == 1 and all(h in lower for h in hosts):
            return owners.pop(), None
        if hosts and len(owners) > 1:
            return None, {"reason": "layout_mismatch", "measured": ", ".join(hosts[:8]),
                          "expected": f"one {layout} per output",
                          "remediation": f"hand over one output per {layout} (raw/<criterion>/<{layout}>.*)"}
        if hosts:
            return None, {"reason": "evidence_node_mismatch", "measured": ", ".join(hosts[:8]),
                          "expected": "hosts in scope", "remediation": "file the output under the node it comes from"}
        if len(units) == 1:
            return units[0].key, None
        return None, {"reason": "evidence_not_in_scope", "measured": key,
                      "expected": f"one output per {layout}",
                      "remediation": f"file the output under the {layout} it covers (raw/<criterion>/<{layout}>.*)"}
    if scope.known_key(key):
        return None, None
    return None, {"reason": "evidence_not_in_scope", "measured": key, "status": Status.WARN,
                  "expected": f"a {layout} in scope" if layout != WHOLE else "_cluster",
                  "remediation": "not judged: name the file after a node or rack of the contract's topology in scope"}


def _cross_check(check: Check, params: CheckParams, raw: RawOutput, m: Mapping[str, Any] | None, hosts: list[str],
                 unit: Unit, layout: str, gpus_per_node: Mapping[str, int]) -> dict[str, Any] | None:
    if check.id in JSON_CHECKS and raw.error is None and not raw.timed_out and not (
            check.id == "storage.fio" and m is not None and m.get("complete") is True):   # fio's parser closed nothing
        doc = truncated_json(raw.stdout)
        if doc is not None:
            return {"reason": "truncated_output", "measured": "JSON cut off",
                    "expected": "the tool's complete JSON output",
                    "remediation": "hand over the complete output; a cut-off document is never judged",
                    "recovered": recovered_summary(check.id, doc)}
    members = {short(n) for n in unit.nodes}
    stray = [h for h in hosts if h not in members]
    if stray:
        want = unit.key if layout == NODE else f"nodes of {layout} {unit.key}"
        return {"reason": "evidence_node_mismatch", "measured": ", ".join(stray[:8]), "expected": want,
                "remediation": "file each output under the node (or rack) it comes from"}
    if check.id == "network.nccl" and m:
        want_nodes = getattr(params, "nodes", None)
        if m.get("nodes") is not None and want_nodes is not None and m["nodes"] != want_nodes:
            return {"reason": "layout_mismatch", "measured": f"{m['nodes']} nodes",
                    "expected": f"{want_nodes} nodes ({layout} {unit.key})",
                    "remediation": f"run the collective across {want_nodes} nodes of the {layout}"}
        per = getattr(params, "gpus_per_node", None)
        if per is None:
            named = [n for n in unit.nodes if short(n) in set(hosts)] or list(unit.in_scope)
            counts = {gpus_per_node.get(n) for n in named if gpus_per_node.get(n)}
            per = counts.pop() if len(counts) == 1 else None
        if per and want_nodes and m.get("ranks") is not None and m["ranks"] != want_nodes * per:
            return {"reason": "layout_mismatch", "measured": f"{m['ranks']} ranks",
                    "expected": f"{want_nodes * per} ranks ({want_nodes} nodes x {per} GPUs)",
                    "remediation": "run one rank per GPU on every node of the group"}
    return None


def _finding(cid: str, node: str | None, f: dict[str, Any], judged: list[Verdict], tag: dict[str, Any]) -> Verdict:
    details: dict[str, Any] = {**tag, "judged": [f"{v.status}: {v.reason}" for v in judged][:10]}
    if "recovered" in f:
        details["recovered"] = f["recovered"]
    return verdict(cid, node, f.get("status", Status.ERROR), f["reason"], measured=f["measured"], expected=f["expected"],
                   remediation=f["remediation"], details=details)
