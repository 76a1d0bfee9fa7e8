"""health.detection: how long the provider's health checking took to take a faulty node out
of scheduling, from the result of `slakit accept drill --format json > drill.json`.

The check reads the drill's JSON (params.result, a file on the runner host); it runs nothing
on the cluster. The document is either the drill command's output (`{"result": {...}}`) or
the bare result object; `detection_s` is judged against `max` (e.g. `max: 2m`). A drill in
which the fault was never detected (`detection_s: null`) fails with `not_detected`. Without
a result file the criterion is skipped with reason `no_drill_result`.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from acceptance.checks.base import CLUSTER, Check, CheckParams, CollectContext, SafePath, register
from acceptance.executors.base import RawOutput
from acceptance.judge import verdict
from acceptance.parsers._common import ParseError, iter_json_objects
from acceptance.results import Status, Verdict
from slaschema.models import Criterion


class DetectionParams(CheckParams):
    result: SafePath | None = Field(default=None, description="drill JSON on the runner host; in a contract: relative to (and inside) the "
                                        "contract's folder; with --param: relative to the working directory")

    @field_validator("result", mode="before")
    @classmethod
    def _absolute(cls, v: Any) -> Any:
        return os.path.abspath(v) if isinstance(v, str) and v and not v.startswith("/") else v


MAX_RESULT_BYTES = 1024 * 1024


def read_drill_result(path: str) -> tuple[str, str | None]:
    """The drill JSON at `path` as it will be stored in the bundle, or a problem (which names
    the file and the rule, never its contents). Only a JSON object that is a drill result
    (`{"result": {"detection_s": ...}}` or the bare result) is accepted."""
    import json

    from slaschema.errors import InputError
    from slaschema.safefiles import read_regular

    try:
        data = read_regular(path, what="drill result", max_bytes=MAX_RESULT_BYTES)
    except InputError as exc:
        return "", f"cannot use {path}: {exc.problems[0].message} [{exc.problems[0].code}]"
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        doc = None
    res = doc.get("result") if isinstance(doc, dict) and isinstance(doc.get("result"), dict) else doc
    if not isinstance(res, dict) or "detection_s" not in res:
        return "", (f"{path} is not a drill result (a JSON object with `detection_s`, as written by "
                    "`slakit accept drill --format json`); its contents were not read into the bundle")
    return data.decode("utf-8-sig"), None


@register
class DetectionCheck(Check):
    id = "health.detection"
    Params = DetectionParams
    local_files = ("result",)
    default_timeout_s = 10.0
    units = {"detection_s": "s"}
    remediation = {"detection_s": "tighten the provider's health-check interval and drain action, then rerun the drill"}

    def layout(self, params: CheckParams, largest_rack: int) -> str:
        return "cluster"

    def collect(self, params: DetectionParams, ctx: CollectContext) -> dict[str, RawOutput]:
        now = datetime.now(timezone.utc)
        if params.result is None:
            return {CLUSTER: RawOutput("", "no drill result given (params.result)", 0, now, now, node=CLUSTER)}
        text, problem = read_drill_result(params.result)
        if problem:
            # nothing of a file that is not a drill result goes into the bundle
            return {CLUSTER: RawOutput("", problem, 1, now, now, error="not_a_drill_result", node=CLUSTER)}
        return {CLUSTER: RawOutput(text, "", 0, now, datetime.now(timezone.utc), node=CLUSTER)}

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        if not raw.stdout.strip():
            return {"skip_reason": "no_drill_result", "skip_detail": raw.stderr.strip()[:300],
                    "remediation": "run `slakit accept drill --node NODE --format json > drill.json` and pass "
                                   "params.result (or --param CRITERION.result=PATH)"}
        for _, doc in iter_json_objects(raw.stdout):
            res = doc.get("result") if isinstance(doc.get("result"), dict) else doc
            if "detection_s" in res:
                d = res.get("detection_s")
                return {
                    "detection_s": float(d) if isinstance(d, (int, float)) and not isinstance(d, bool) else None,
                    "node": res.get("node"),
                    "fault": res.get("fault"),
                    "detected_state": res.get("detected_state"),
                    "return_to_service_s": res.get("return_to_service_s"),
                }
        raise ParseError("drill result", "no object with `detection_s` found")

    def evaluate(self, criterion: Criterion, params: DetectionParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        drilled = metrics.get("node")
        if metrics.get("detection_s") is None:
            return [verdict(criterion.id, drilled, Status.FAIL, "not_detected", measured="not detected",
                            expected="node drained by the health checks",
                            remediation="configure the health check to drain nodes with this fault")]
        if criterion.metric is None:
            criterion = criterion.model_copy(update={"metric": "detection_s"})
        return [self.judge_metric(criterion, metrics, drilled, {"fault": metrics.get("fault")})]
