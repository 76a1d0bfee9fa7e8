"""custom.command: a provider's or buyer's own test program, named by its argv in the contract.

The contract gives the argv list itself (`params.argv`); slakit never builds a shell string
from it and never passes it through a shell. With `nodes: 1` (the default) the argv runs once
on every node in scope and each node is judged on its own. With `nodes: N > 1` it runs as one
job step over N nodes (one task per node, `srun -N N --ntasks-per-node=1` on Slurm): the step
passes when every task exits 0, which is what a provider's multi-node burn tool reports.

Metrics come from the output by named regular expressions (`params.metrics: {name: regex}`,
one capture group or a group named like the metric); every match is kept, and the value
judged is the lowest match when the criterion has a lower bound (`min`, `warn_below`) and
the highest otherwise, so one slow task cannot hide behind fast ones. Without `metric:` the
criterion is judged on the exit status alone (`exit_code` must be 0).

Verdicts: `task_failed` (fail, a task exited non-zero, with its exit status and the last
lines of its output), `metric_not_found` (error, the named regex matched nothing), then the
bounds as for every check.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from acceptance.checks.base import CLUSTER, Check, CheckParams, CollectContext, register
from acceptance.executors.base import RawOutput
from acceptance.judge import Bounds, judge_value, verdict
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

MAX_SCAN = 1 << 20          # only the last MiB of output is searched for metrics
MATCH_BUDGET_S = 2.0        # seconds all metric regexes of one output may take together
_METRIC_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class CustomParams(CheckParams):
    argv: list[str] = Field(min_length=1, max_length=256)
    nodes: int = Field(default=1, ge=1, le=100000)
    metrics: dict[str, str] = Field(default_factory=dict, max_length=32)
    units: dict[str, str] = Field(default_factory=dict, max_length=32)

    @field_validator("argv")
    @classmethod
    def _argv(cls, v: list[str]) -> list[str]:
        for i, item in enumerate(v):
            if not isinstance(item, str) or "\x00" in item or len(item) > 4096:
                raise ValueError(f"argv[{i}] must be a string of at most 4096 characters without NUL")
        if not v[0] or v[0].startswith("-"):
            raise ValueError("argv[0] must name the program (not an option)")
        return v

    @field_validator("metrics")
    @classmethod
    def _metrics(cls, v: dict[str, str]) -> dict[str, str]:
        for name, pattern in v.items():
            if not _METRIC_NAME.match(name):
                raise ValueError(f"metric name {name!r}: lower-case letters, digits and '_'")
            if not isinstance(pattern, str) or len(pattern) > 512:
                raise ValueError(f"metrics.{name}: a regular expression of at most 512 characters")
            try:
                rx = re.compile(pattern, re.M)
            except re.error as exc:
                raise ValueError(f"metrics.{name}: not a regular expression ({exc})") from None
            if rx.groups < 1:
                raise ValueError(f"metrics.{name}: the expression needs a capture group around the number")
        return v


def extract_metrics(text: str, patterns: dict[str, str], timed_out: list[str] | None = None) -> dict[str, list[float]]:
    """Every numeric match of each named regex, in output order. Pure.

    The regexes come from a contract (the other party's file): a pattern with catastrophic
    backtracking such as `(a+)+b` must not hang the run, so matching runs under a time budget
    (`MATCH_BUDGET_S` for all patterns together, the `regex` module's timeout); a pattern that
    runs out of it has no values and its name is appended to `timed_out`."""
    import time

    import regex

    tail = text[-MAX_SCAN:]
    out: dict[str, list[float]] = {}
    deadline = time.monotonic() + MATCH_BUDGET_S
    for name, pattern in patterns.items():
        rx = regex.compile(pattern, regex.M)
        group: int | str = name if name in rx.groupindex else 1
        values = []
        try:
            for m in rx.finditer(tail, timeout=max(deadline - time.monotonic(), 0.01)):
                try:
                    values.append(float(m.group(group)))
                except (TypeError, ValueError):
                    continue
        except TimeoutError:
            values = []
            if timed_out is not None:
                timed_out.append(name)
        out[name] = values
    return out


@register
class CustomCommandCheck(Check):
    id = "custom.command"
    Params = CustomParams
    default_timeout_s = 3600.0
    launch_failure = (Status.ERROR, "command_missing",
                      "the program in params.argv[0] is not installed on the node or not on its PATH")

    def layout(self, params: CustomParams, largest_rack: int) -> str:
        """Per node with `nodes: 1`; one step over the nodes is one piece of evidence for the cluster."""
        return "node" if params.nodes <= 1 else "cluster"

    def collect(self, params: CustomParams, ctx: CollectContext) -> dict[str, RawOutput]:
        nodes = list(ctx.nodes)
        if params.nodes <= 1:
            return dict(ctx.executor.run(list(params.argv), nodes, ctx.timeout_s))
        return {CLUSTER: ctx.executor.run_multi(list(params.argv), nodes[: params.nodes], 1, ctx.timeout_s)}

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        return self.parse_for(CustomParams(argv=["true"]), raw)

    def parse_for(self, params: CustomParams, raw: RawOutput) -> dict[str, Any]:
        text = raw.stdout + ("\n" + raw.stderr if raw.stderr else "")
        timed_out: list[str] = []
        values = extract_metrics(text, params.metrics, timed_out)
        return {"exit_code": raw.rc, "values": values, "regex_timeout": timed_out,
                "tail": text[-2000:], "node_set": raw.node}

    def evaluate(self, criterion: Criterion, params: CustomParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        return judge_custom(criterion, params, metrics, node)


def judge_custom(criterion: Criterion, params: CustomParams, m: dict[str, Any], node: str | None) -> list[Verdict]:
    """Exit status first, then the named metric against the bounds. Pure."""
    cid = criterion.id
    rc = m.get("exit_code")
    if rc != 0:
        lines = [ln for ln in str(m.get("tail") or "").splitlines() if ln.strip()][-5:]
        return [verdict(cid, node, Status.FAIL, "task_failed", measured="no exit status" if rc is None else f"exit {rc}",
                        expected="every task exits 0",
                        details={"output_tail": "\n".join(lines), "nodes": m.get("node_set")},
                        remediation="the test program reported a failure: see its output in the raw evidence")]
    name = criterion.metric
    if name is None:
        if not Bounds.of(criterion).empty:
            return [verdict(cid, node, Status.ERROR, "no_metric", expected="metric: one of params.metrics",
                            remediation="name the metric the bounds apply to (`metric:`)")]
        return [verdict(cid, node, Status.PASS, "exit_ok", measured=0, expected="every task exits 0")]
    if name not in params.metrics:
        return [verdict(cid, node, Status.ERROR, "unknown_metric", measured=name,
                        expected=f"one of: {', '.join(params.metrics) or 'none defined'}",
                        remediation="define the metric's regex under params.metrics")]
    values = list((m.get("values") or {}).get(name) or [])
    if name in (m.get("regex_timeout") or ()):
        return [verdict(cid, node, Status.ERROR, "metric_regex_timeout", measured=name,
                        expected=f"params.metrics.{name} matched within {MATCH_BUDGET_S:g} s",
                        remediation="the regex backtracks without end on this output (nested repeats such as "
                                    "(a+)+): write it without nested quantifiers")]
    if not values:
        return [verdict(cid, node, Status.ERROR, "metric_not_found", expected=f"a match of params.metrics.{name}",
                        remediation="check the program's output format against the regex")]
    bounds = Bounds.of(criterion)
    lower = bounds.min is not None or bounds.warn_below is not None
    value = min(values) if lower else max(values)
    return [judge_value(cid, node, value, bounds, unit=params.units.get(name, ""),
                        remediation="see the program's output in the raw evidence",
                        details={"metric": name, "matches": len(values)})]
