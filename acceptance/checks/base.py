"""What every check is: validated params, `collect` (IO), `parse` (pure), `evaluate` (pure).

A check never builds a shell string. Params come from the contract's `params:` map and are
validated by the check's pydantic model before anything runs: sizes (`8G`, `1M`) become
byte counts, paths must be absolute and free of characters a tool would read as syntax,
host names and counts are checked. Only then are they placed, one item each, into an argv.

`judge_output` is the shared pipeline from one node's `RawOutput` to verdicts:
no answer / timeout / launch failure -> error or skip; `parse` -> metrics; a metrics map may
say `skip_reason` (the check does not apply here, e.g. no GPU) or `error_reason` (the tool
ran but produced no usable result); otherwise the check's `evaluate` judges.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Mapping

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from acceptance.executors.base import LAUNCH_FAILED, NO_ANSWER, NODE_UNAVAILABLE, Executor, RawOutput
from acceptance.judge import Bounds, judge_value, verdict
from acceptance.parsers._common import ParseError
from acceptance.results import Status, Verdict
from slaschema.checks import KNOWN_CHECKS
from slaschema.errors import InputError, Problem
from slaschema.models import Contract, Criterion

CLUSTER = "_cluster"   # node key of a check that runs once across nodes (NCCL) or on the runner host

# --------------------------------------------------------------------------- param types

_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtp]?)(i?b)?\s*$", re.I)
_MULT = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}


def parse_size(value: Any) -> int:
    """`8G` -> 8 GiB in bytes (binary units, as fio and nccl-tests read them); ints are bytes."""
    if isinstance(value, bool):
        raise PydanticCustomError("size_invalid", "expected a size such as 4k, 1M, 8G")
    if isinstance(value, int):
        if value <= 0:
            raise PydanticCustomError("size_invalid", "a size must be positive")
        return value
    if isinstance(value, str):
        m = _SIZE.match(value)
        if m:
            n = int(m.group(1)) * _MULT[m.group(2).lower()]
            if n <= 0:
                raise PydanticCustomError("size_invalid", "a size must be positive")
            return n
    raise PydanticCustomError("size_invalid", "expected a size such as 4k, 1M, 8G (got {value})", {"value": value})


def format_size(n: int) -> str:
    """Bytes -> the shortest exact binary-unit text: 8589934592 -> 8G, 1536 -> 1536."""
    for unit, mult in (("P", 1024**5), ("T", 1024**4), ("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n % mult == 0:
            return f"{n // mult}{unit}"
    return str(n)


_BAD_PATH = re.compile(r"[\x00-\x1f:,;|&$`\\'\"<>*?{}\[\]]")


def check_path(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise PydanticCustomError("path_invalid", "expected an absolute path")
    if not value.startswith("/"):
        raise PydanticCustomError("path_not_absolute", "the path must be absolute (start with /)")
    if _BAD_PATH.search(value) or "/-" in value or ".." in Path(value).parts:
        raise PydanticCustomError(
            "path_invalid", "the path may not contain control characters, ':', ',', quotes, globs, '..' or parts starting with '-'"
        )
    return str(Path(value))


_HOST = re.compile(r"^(?=.{1,253}\Z)[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\Z|^[0-9A-Fa-f:.]+\Z")


def check_host(value: Any) -> str:
    if not isinstance(value, str) or not _HOST.match(value) or value.startswith("-"):
        raise PydanticCustomError("host_invalid", "expected a host name or IP address")
    return value


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")


def check_name(value: Any) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise PydanticCustomError("name_invalid", "expected a name of letters, digits, '.', '_' and '-'")
    return value


Size = Annotated[int, BeforeValidator(parse_size)]
SafePath = Annotated[str, BeforeValidator(check_path)]
Host = Annotated[str, BeforeValidator(check_host)]
Name = Annotated[str, BeforeValidator(check_name)]


class CheckParams(BaseModel):
    """Params every check accepts; each check extends this model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float | None = Field(default=None, gt=0, le=7 * 86400, description="Per-check time limit")


# --------------------------------------------------------------------------- context


@dataclass(frozen=True)
class CollectContext:
    """Everything `collect` may use: where to run and how long."""

    executor: Executor
    nodes: tuple[str, ...]
    timeout_s: float
    python: str = sys.executable                 # interpreter for the bundled scripts
    gpus_per_node: int | None = None
    # The criterion's groups in scope (see `Check.layout`): {rack id or node: its nodes in scope}.
    groups: Mapping[str, tuple[str, ...]] | None = None


SCRIPTS = Path(__file__).resolve().parent      # gemm_bench.py, burn.py, ... live next to the checks


def script(name: str) -> str:
    return str(SCRIPTS / name)


# --------------------------------------------------------------------------- the check


class Check:
    """Base class. Subclasses set `id`, `Params`, and implement collect/parse/evaluate."""

    id: ClassVar[str]
    Params: ClassVar[type[CheckParams]] = CheckParams
    default_timeout_s: ClassVar[float] = 300.0
    # How a failure to launch the tool is judged: (status, reason, remediation).
    launch_failure: ClassVar[tuple[Status, str, str]] = (
        Status.ERROR, "tool_missing", "install the tool on the node or fix its path"
    )
    # Remediation text per reason code used by `evaluate`.
    remediation: ClassVar[dict[str, str]] = {}
    units: ClassVar[dict[str, str]] = {}

    # -- params --------------------------------------------------------------------------
    # params naming a file read on the runner host: a contract's value must lie inside the
    # contract's folder, a --param value may lie anywhere but /proc, /sys and /dev
    local_files: tuple[str, ...] = ()

    def params(self, criterion: Criterion, overrides: Mapping[str, Any] | None = None,
               defaults: Mapping[str, Any] | None = None) -> CheckParams:
        """Validated params: `defaults` (from the contract), then the criterion's, then `overrides`."""
        raw = dict(defaults or {})
        raw.update(criterion.params or {})
        raw.update(overrides or {})
        try:
            return self.prepare(criterion, self.Params.model_validate(raw))
        except ValidationError as exc:
            raise InputError([
                Problem(
                    code=str(err["type"]),
                    message=err["msg"],
                    path="acceptance.criteria[" + criterion.id + "].params." + ".".join(str(p) for p in err["loc"]),
                    value=None if err.get("input") is None else str(err.get("input"))[:200],
                    fix="see the check's parameters in docs/acceptance.md",
                )
                for err in exc.errors()
            ]) from None

    def contract_params(self, contract: Contract) -> dict[str, Any]:
        """Params the check takes from other sections of the contract (e.g. `access`).

        A check module may define `contract_overrides(contract) -> dict`; the criterion's own
        params and `--param` overrides take precedence over what it returns.
        """
        hook = getattr(sys.modules.get(type(self).__module__), "contract_overrides", None)
        return dict(hook(contract)) if callable(hook) else {}

    def timeout(self, params: CheckParams, default: float | None = None) -> float:
        if params.timeout_s is not None:
            return float(params.timeout_s)
        return float(default) if default is not None else self.default_timeout_s

    def layout(self, params: CheckParams, largest_rack: int) -> str:
        """What one piece of evidence covers: `node` (one output per node, the default),
        `rack` (one run per rack of the topology) or `cluster` (one run for the cluster).
        `largest_rack` is the node count of the contract's largest rack."""
        return "node"

    def prepare(self, criterion: Criterion, params: CheckParams) -> CheckParams:
        """Params completed from the criterion (e.g. the data type named by the metric)."""
        return params

    # -- the three functions -------------------------------------------------------------
    def collect(self, params: CheckParams, ctx: CollectContext) -> dict[str, RawOutput]:
        """Run the tool; one RawOutput per node (key CLUSTER for a run across nodes)."""
        return dict(ctx.executor.run(self.argv(params, ctx), list(ctx.nodes), ctx.timeout_s))

    def argv(self, params: CheckParams, ctx: CollectContext) -> list[str]:
        raise TypeError(f"{type(self).__name__} defines neither argv nor collect")

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        """Pure: raw output -> metrics (JSON-able). May raise ParseError."""
        raise TypeError(f"{type(self).__name__} defines no parse")

    def parse_for(self, params: CheckParams, raw: RawOutput) -> dict[str, Any]:
        """Pure: `parse` for checks whose reading of the output depends on their params
        (custom.command's metric regexes); the default ignores the params."""
        return self.parse(raw)

    def evaluate(self, criterion: Criterion, params: CheckParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        """Pure: metrics -> verdicts. The default judges `criterion.metric` against the bounds."""
        out = self.check_expect(criterion, params, metrics, node)
        if self.judged_metric(criterion) is not None or not out:
            out.append(self.judge_metric(criterion, metrics, node))
        return out

    def check_expect(self, criterion: Criterion, params: CheckParams, metrics: dict[str, Any],
                     node: str | None) -> list[Verdict]:
        """Verdicts for the `expect:` map; the default accepts no keys."""
        return [
            verdict(criterion.id, node, Status.ERROR, "unknown_expect_key", measured=key,
                    expected=f"one of: {', '.join(self.expect_keys) or 'none'}",
                    remediation=f"check {self.id} does not know `expect.{key}`")
            for key in (criterion.expect or {})
            if key not in self.expect_keys
        ]

    expect_keys: ClassVar[tuple[str, ...]] = ()

    def judged_metric(self, criterion: Criterion) -> str | None:
        """The metric a criterion judges: its `metric`, or the check's only metric when bounds are given."""
        if criterion.metric is not None:
            return criterion.metric
        known = KNOWN_CHECKS.get(self.id, ("", (), ""))[1]
        if len(known) == 1 and not Bounds.of(criterion).empty:
            return known[0]
        return None

    def judge_metric(self, criterion: Criterion, metrics: dict[str, Any], node: str | None,
                     details: dict[str, Any] | None = None) -> Verdict:
        name = self.judged_metric(criterion)
        known = KNOWN_CHECKS.get(self.id, ("", (), ""))[1]
        if name is None:
            return verdict(criterion.id, node, Status.ERROR, "no_metric", expected=f"one of: {', '.join(known)}",
                           remediation="name the metric to judge (`metric:`) or give `expect:`")
        if name not in known and name not in metrics:
            return verdict(criterion.id, node, Status.ERROR, "unknown_metric", measured=name,
                           expected=f"one of: {', '.join(known)}",
                           remediation=f"check {self.id} measures: {', '.join(known)}")
        value = metrics.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            value = None
        return judge_value(
            criterion.id, node, None if value is None else float(value), Bounds.of(criterion),
            unit=self.units.get(name, ""),
            remediation=self.remediation.get(name, self.remediation.get("*", "")),
            details={"metric": name, **(details or {})},
        )


REGISTRY: dict[str, type[Check]] = {}


def register(cls: type[Check]) -> type[Check]:
    if cls.id in REGISTRY and REGISTRY[cls.id] is not cls:
        raise ValueError(f"check {cls.id} registered twice")
    if cls.id not in KNOWN_CHECKS:
        raise ValueError(f"check {cls.id} is not in slaschema.checks.KNOWN_CHECKS")
    REGISTRY[cls.id] = cls
    return cls


# Packages whose import registers more checks (the security checks live with the security audit).
CHECK_MODULES = ("acceptance.checks", "acceptance.security.checks")


def load_checks() -> dict[str, type[Check]]:
    """Import every check module; the full registry."""
    import importlib

    for name in CHECK_MODULES:
        importlib.import_module(name)
    return REGISTRY


def get_check(name: str) -> Check | None:
    cls = load_checks().get(name)
    return cls() if cls is not None else None


# --------------------------------------------------------------------------- shared pipeline


def judge_output(check: Check, criterion: Criterion, params: CheckParams, node: str,
                 raw: RawOutput) -> tuple[dict[str, Any] | None, list[Verdict]]:
    """One node's raw output -> (metrics or None, verdicts). Pure."""
    who = None if node == CLUSTER else node
    cid = criterion.id
    detail = {"rc": raw.rc, "stderr": raw.stderr[-500:]} if raw.stderr else {"rc": raw.rc}
    if raw.error in (NODE_UNAVAILABLE, NO_ANSWER):
        return None, [verdict(cid, who, Status.ERROR, raw.error, expected="an answer from the node",
                              remediation="bring the node back into service and rerun the check", details=detail)]
    if raw.timed_out:
        return None, [verdict(cid, who, Status.ERROR, "timeout", measured=raw.duration_s,
                              expected="finish within the time limit",
                              remediation="raise params.timeout_s or --timeout, or investigate the hang",
                              details=detail)]
    if raw.error == LAUNCH_FAILED or (raw.error is None and raw.rc in (126, 127) and not raw.stdout.strip()):
        status, reason, fix = check.launch_failure
        return None, [verdict(cid, who, status, reason, expected="the tool runs", remediation=fix, details=detail)]
    if raw.error is not None:
        return None, [verdict(cid, who, Status.ERROR, raw.error, expected="a usable answer",
                              remediation="see stderr in the raw output", details=detail)]
    try:
        metrics = check.parse_for(params, raw)
    except ParseError as exc:
        return None, [verdict(cid, who, Status.ERROR, "unparseable_output", expected="tool output",
                              remediation="rerun the check; see the raw output",
                              details={**detail, "problem": exc.reason})]
    if metrics.get("skip_reason"):
        return metrics, [verdict(cid, who, Status.SKIP, str(metrics["skip_reason"]),
                                 measured=metrics.get("skip_detail"), expected="applicable on this node",
                                 remediation=str(metrics.get("remediation", "")))]
    if metrics.get("error_reason"):
        return metrics, [verdict(cid, who, Status.ERROR, str(metrics["error_reason"]),
                                 measured=metrics.get("error_detail"), expected="a usable result",
                                 remediation=str(metrics.get("remediation", "see the raw output")),
                                 details=detail)]
    return metrics, check.evaluate(criterion, params, metrics, who)
