"""Run the security checks on one host, for a contract's criteria or on their own.

Entry points for the acceptance runner (each returns `Verdict` records, never raises for a
finding; IO happens only in the `collect` step of each check):

    run_versions(host, table=..., now=..., criterion=..., node=..., params=...)
    run_access(host, contract, criterion=..., node=..., params=...)
    run_isolation(host, contract, criterion=..., node=..., params=...)
    run_criterion(host, check, contract, criterion_id=..., params=..., expect=..., now=..., table=..., node=...)
    audit(host, contract=None, only=None, table=None, now=..., node=None) -> AuditResult

On a cluster the runner collects on each node and judges centrally:

    argv = probe_argv("security.access", params, python)     # run it on the node (srun ...)
    verdicts = evaluate_probe(json.loads(stdout), "security.access", contract=..., criterion=...,
                              node=..., params=..., expect=..., table=...)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from acceptance.results import Status, Verdict, worst

from . import audit_access, audit_isolation, audit_versions
from .host import Host
from .minimums import MAX_AGE_DAYS, MinimumTable, load_minimums
from .serial import raw_from_json

if TYPE_CHECKING:
    from .audit_access import ContractData

FORMAT = "slakit-security-audit/1"       # the first field of `security audit --format json`
CHECKS = ("security.versions", "security.access", "security.isolation")
SHORT = {"versions": "security.versions", "access": "security.access", "isolation": "security.isolation"}


def _get(obj: Any, name: str) -> Any:
    return audit_access._get(obj, name)


def _date(value: Any) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value))


def _age_days(value: Any) -> int:
    """`90`, `"90"`, `"90d"` -> 90."""
    if value is None:
        return MAX_AGE_DAYS
    text = str(value).strip().lower().removesuffix("d")
    return int(text)


def run_versions(host: Host, *, table: MinimumTable, now: datetime | date, criterion: str = "security.versions",
                 node: str | None = None, params: Mapping[str, Any] | None = None,
                 expect: Mapping[str, Any] | None = None) -> list[Verdict]:
    """Versions against `table`. params: `max_table_age` (days, default 90), `components` (subset);
    expect/params `table_date`: the table must be at least this recent."""
    return evaluate_versions(audit_versions.collect(host), table=table, now=now, criterion=criterion, node=node,
                             params=params, expect=expect)


def evaluate_versions(raw: audit_versions.VersionsRaw, *, table: MinimumTable, now: datetime | date,
                      criterion: str = "security.versions", node: str | None = None,
                      params: Mapping[str, Any] | None = None, expect: Mapping[str, Any] | None = None) -> list[Verdict]:
    """Pure: collected versions -> verdicts (see run_versions for params/expect)."""
    p = dict(params or {})
    e = dict(expect or {})
    only = set(p["components"]) if p.get("components") else None
    obs = audit_versions.parse(raw)
    out = audit_versions.evaluate(obs, table, now, criterion, node, _age_days(p.get("max_table_age")), only)
    required = _date(e.get("table_date", p.get("table_date")))
    if required is not None:
        as_of = table.as_of
        ok = as_of is not None and as_of >= required
        out.insert(1, Verdict(criterion, node, Status.PASS if ok else Status.FAIL,
                              as_of.isoformat() if as_of else "undated", f"table dated {required.isoformat()} or later",
                              "table_date_met" if ok else "table_older_than_contract",
                              "" if ok else "Load the table the contract names with --minimums FILE|URL.",
                              {"subject": "minimum-version table", "source": table.source}))
    return out


def run_access(host: Host, contract: ContractData | None = None, *, criterion: str = "security.access", node: str | None = None,
               params: Mapping[str, Any] | None = None) -> list[Verdict]:
    p = audit_access.params_from_contract(contract, params)
    return audit_access.evaluate(audit_access.collect(host, p), p, criterion, node)


def run_isolation(host: Host, contract: ContractData | None = None, *, criterion: str = "security.isolation",
                  node: str | None = None, params: Mapping[str, Any] | None = None) -> list[Verdict]:
    p = dict(params or {})
    bmc = _get(_get(contract, "access"), "bmc_address")
    if bmc and "bmc_address" not in p:
        p["bmc_address"] = bmc
    ip = audit_isolation.params_from(p)
    return audit_isolation.evaluate(audit_isolation.collect(host, ip), criterion, node)


def probe_argv(check: str, params: Mapping[str, Any] | None = None, python: str = sys.executable) -> list[str]:
    """argv that collects `check` on a node and prints the probe document (read-only)."""
    import json
    from pathlib import Path

    short = check.removeprefix("security.")
    if short not in SHORT:
        raise ValueError(f"not a security check: {check}")
    keep = {"access": ("shared_mounts", "walk_max_depth", "walk_max_dirs"),
            "isolation": ("bmc_address", "kubeconfig", "kubelet_host", "connect_timeout_s"),
            "versions": ()}[short]
    node_params = {k: v for k, v in (params or {}).items() if k in keep}
    return [python, str(Path(__file__).resolve().parent / "probe.py"), short, json.dumps(node_params, sort_keys=True)]


def evaluate_probe(doc: Mapping[str, Any], check: str, *, contract: ContractData | None = None, criterion: str | None = None,
                   node: str | None = None, params: Mapping[str, Any] | None = None,
                   expect: Mapping[str, Any] | None = None, table: MinimumTable | None = None) -> list[Verdict]:
    """Pure: one node's probe document -> verdicts. The table's age is judged at the probe's
    `collected_at`. Raises serial.ProbeError (with `.reason`) for a document that is not one."""
    raw = raw_from_json(dict(doc), check)
    cid = criterion or check
    if check == "security.versions":
        if table is None:
            raise ValueError("security.versions needs the minimum-version table")
        now = datetime.fromisoformat(str(doc["collected_at"]))
        return evaluate_versions(raw, table=table, now=now, criterion=cid, node=node, params=params, expect=expect)
    if check == "security.access":
        p = audit_access.params_from_contract(contract, params)
        return audit_access.evaluate(raw, p, cid, node)
    return audit_isolation.evaluate(raw, cid, node)


def run_criterion(host: Host, check: str, contract: ContractData | None = None, *, criterion_id: str | None = None,
                  params: Mapping[str, Any] | None = None, expect: Mapping[str, Any] | None = None,
                  now: datetime | date, table: MinimumTable | None = None, node: str | None = None) -> list[Verdict]:
    """One contract criterion (`check` is security.versions/access/isolation)."""
    cid = criterion_id or check
    if check == "security.versions":
        if table is None:
            source = (params or {}).get("minimums")
            table = load_minimums(source)
        return run_versions(host, table=table, now=now, criterion=cid, node=node, params=params, expect=expect)
    if check == "security.access":
        return run_access(host, contract, criterion=cid, node=node, params=params)
    if check == "security.isolation":
        return run_isolation(host, contract, criterion=cid, node=node, params=params)
    raise ValueError(f"not a security check: {check}")


def security_criteria(contract: ContractData | None) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(criterion id, check, params, expect) for each security criterion in the contract."""
    out = []
    for c in _get(_get(contract, "acceptance"), "criteria") or []:
        check = _get(c, "check")
        if check in CHECKS:
            out.append((_get(c, "id"), check, dict(_get(c, "params") or {}), dict(_get(c, "expect") or {})))
    return out


def metrics(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """Counts the contract's criteria can bound with `max:` (see slaschema.checks)."""
    vs = list(verdicts)
    return {
        "vulnerable_components": sum(1 for v in vs if v.reason in ("below_minimum", "unsupported_line")),
        "unexpected_keys": sum(1 for v in vs if v.reason == "unlisted_authorized_key"),
    }


@dataclass(frozen=True)
class AuditResult:
    verdicts: tuple[Verdict, ...]
    checks: tuple[str, ...]
    table_source: str | None
    now: str

    @property
    def status(self) -> Status:
        return worst(v.status for v in self.verdicts)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "status": str(self.status),
            "now": self.now,
            "checks": list(self.checks),
            "minimums": self.table_source,
            "metrics": metrics(self.verdicts),
            "counts": {s.value: sum(1 for v in self.verdicts if v.status is s) for s in Status},
            "findings": [verdict_json(v) for v in self.verdicts],
        }


def verdict_json(v: Verdict) -> dict[str, Any]:
    return {
        "criterion": v.criterion, "node": v.node, "status": str(v.status), "subject": v.details.get("subject"),
        "measured": v.measured, "expected": v.expected, "reason": v.reason, "remediation": v.remediation,
        "details": {k: val for k, val in v.details.items() if k != "subject"},
    }


def audit(host: Host, contract: ContractData | None = None, *, only: Iterable[str] | None = None,
          table: MinimumTable | None = None, now: datetime, node: str | None = None) -> AuditResult:
    """Run the contract's security criteria (all three checks when it has none, or without a
    contract); `only` narrows to some of versions/access/isolation."""
    wanted = {SHORT.get(o, o) for o in only} if only else set(CHECKS)
    crits = [c for c in security_criteria(contract) if c[1] in wanted] if contract is not None else []
    if not crits:
        crits = [(check, check, {}, {}) for check in CHECKS if check in wanted]
    verdicts: list[Verdict] = []
    for cid, check, params, expect in crits:
        if check == "security.versions" and table is None:
            table = load_minimums(params.get("minimums"))
        verdicts += run_criterion(host, check, contract, criterion_id=cid, params=params, expect=expect,
                                  now=now, table=table, node=node)
    return AuditResult(tuple(verdicts), tuple(c[1] for c in crits), table.source if table else None, now.isoformat())
