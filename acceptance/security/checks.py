"""The security checks in the acceptance catalogue: security.versions, .access, .isolation.

Same design as every check: `argv` runs the read-only probe on each node (collect), `parse`
reads its JSON (pure), `evaluate` judges it (pure) with the shared security logic.

The contract's `access` section reaches the checks as params: the runner passes
`contract_overrides(contract)` to `Check.params(criterion, overrides)`, which fills
`provider_staff_keys`, `customer_keys`, `allowed_ports` and `bmc_address` from it.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, PrivateAttr

from acceptance.checks.base import Check, CheckParams, CollectContext, SafePath, register
from acceptance.executors.base import RawOutput
from acceptance.parsers._common import ParseError, iter_json_objects
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

from .audit import evaluate_probe, metrics, probe_argv
from .audit_access import _get
from .minimums import MinimumTable, load_minimums
from .serial import FORMAT, ProbeError

if TYPE_CHECKING:
    from .audit_access import ContractData


def contract_overrides(contract: ContractData | None) -> dict[str, Any]:
    """Params taken from the contract's `access` section (only the fields written in it)."""
    access = _get(contract, "access")
    out: dict[str, Any] = {}
    if access is None:
        return out
    for name in ("provider_staff_keys", "customer_keys", "allowed_ports", "bmc_address"):
        value = _get(access, name)
        if value is not None:
            out[name] = list(value) if isinstance(value, (list, tuple)) else value
    if "provider_staff_keys" in out or "customer_keys" in out:
        out.setdefault("provider_staff_keys", [])
        out.setdefault("customer_keys", [])
    return out


class _SecurityCheck(Check):
    default_timeout_s = 120.0
    launch_failure = (Status.ERROR, "tool_missing", "the node needs python3 and the slakit tree to run the probe")
    node_param_names: ClassVar[tuple[str, ...]] = ()
    # Each subclass defines judge(criterion, params, doc, node) -> list[Verdict] (pure).

    def argv(self, params: CheckParams, ctx: CollectContext) -> list[str]:
        node_params = {k: getattr(params, k) for k in self.node_param_names if getattr(params, k) is not None}
        return probe_argv(self.id, node_params, ctx.python)

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        for _, doc in iter_json_objects(raw.stdout):
            if doc.get("format") == FORMAT and doc.get("check") == self.id:
                return doc
        raise ParseError("security probe", "no probe JSON found")

    def evaluate(self, criterion: Criterion, params: CheckParams, doc: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        out = self.check_expect(criterion, params, doc, node)
        try:
            out += self.judge(criterion, params, doc, node)
        except ProbeError as exc:
            return out + [Verdict(criterion.id, node, Status.ERROR, None, "a security probe document", exc.reason,
                                  "rerun the check; see the raw output", {"error": str(exc)})]
        if criterion.metric is not None:
            out.append(self.judge_metric(criterion, metrics(out), node))
        return out


class _ContractAccess(CheckParams):
    """The contract's `access` section, passed by the runner as overrides (same for every
    security check, so one `contract_overrides(contract)` fits all three)."""

    provider_staff_keys: list[str] | None = None
    customer_keys: list[str] | None = None
    allowed_ports: list[int | str] | None = None
    bmc_address: str | None = None


class VersionsSecurityParams(_ContractAccess):
    minimums: str | None = Field(default=None, description="table file or URL; default: the shipped table")
    max_table_age: int | str | None = Field(default=None, description="days, e.g. 90 or '90d'")
    table_date: date | None = Field(default=None, description="the table must be dated this day or later")
    components: list[str] | None = None
    _table: MinimumTable | None = PrivateAttr(default=None)


@register
class SecurityVersionsCheck(_SecurityCheck):
    id = "security.versions"
    Params = VersionsSecurityParams
    local_files = ("minimums",)
    expect_keys = ("table_date",)

    def prepare(self, criterion: Criterion, params: VersionsSecurityParams) -> VersionsSecurityParams:
        params._table = load_minimums(params.minimums)     # IO once, before any node runs
        return params

    def judge(self, criterion, params, doc, node):
        table = params._table if params._table is not None else load_minimums(params.minimums)
        p = {"max_table_age": params.max_table_age, "components": params.components,
             "table_date": params.table_date}
        return evaluate_probe(doc, self.id, criterion=criterion.id, node=node, table=table,
                              params={k: v for k, v in p.items() if v is not None}, expect=criterion.expect)


class AccessSecurityParams(_ContractAccess):
    shared_mounts: list[SafePath] = Field(default_factory=list)
    walk_max_depth: int = Field(default=3, ge=0, le=64)
    walk_max_dirs: int = Field(default=20000, ge=1, le=10_000_000)


@register
class SecurityAccessCheck(_SecurityCheck):
    id = "security.access"
    Params = AccessSecurityParams
    node_param_names = ("shared_mounts", "walk_max_depth", "walk_max_dirs")

    def judge(self, criterion, params, doc, node):
        access = {k: getattr(params, k) for k in ("provider_staff_keys", "customer_keys", "allowed_ports")
                  if getattr(params, k) is not None}
        contract = {"access": access} if access else None
        return evaluate_probe(doc, self.id, contract=contract, criterion=criterion.id, node=node)


class IsolationSecurityParams(_ContractAccess):
    kubeconfig: SafePath | None = None
    kubelet_host: str = "127.0.0.1"
    connect_timeout_s: float = Field(default=2.0, gt=0, le=30)


@register
class SecurityIsolationCheck(_SecurityCheck):
    id = "security.isolation"
    Params = IsolationSecurityParams
    node_param_names = ("bmc_address", "kubeconfig", "kubelet_host", "connect_timeout_s")

    def judge(self, criterion, params, doc, node):
        return evaluate_probe(doc, self.id, criterion=criterion.id, node=node)
