"""gpu.dcgm: DCGM diagnostics (`dcgmi diag -r LEVEL -j`), judged per test.

Each failed test is a `fail` verdict naming the test and the GPUs; a warning is a `warn`;
`expect: {overall: pass}` (the default) asks for no failure. `failed_tests` counts the failed
tests and can be bounded with `max`. DCGM 3 and 4 JSON and the text table are read alike.
Without dcgmi on the node the criterion is skipped (`no_dcgm`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from acceptance.checks.base import Check, CheckParams, CollectContext, register
from acceptance.executors.base import RawOutput
from acceptance.judge import verdict
from acceptance.parsers.dcgmi import parse_dcgmi
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

FIX = "rerun the failing DCGM test on its own (dcgmi diag -r TEST -v); replace the GPU or fix the fabric it names"


class DcgmParams(CheckParams):
    level: int = Field(default=3, ge=1, le=4)


@register
class DcgmCheck(Check):
    id = "gpu.dcgm"
    Params = DcgmParams
    default_timeout_s = 3600.0
    expect_keys = ("overall",)
    launch_failure = (Status.SKIP, "no_dcgm", "install DCGM (datacenter-gpu-manager) to run GPU diagnostics")
    remediation = {"failed_tests": FIX}

    def argv(self, params: DcgmParams, ctx: CollectContext) -> list[str]:
        return ["dcgmi", "diag", "-r", str(params.level), "-j"]

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        rec = parse_dcgmi(raw.stdout + ("\n" + raw.stderr if "{" not in raw.stdout else "")).to_json()
        tests = [{"name": t["name"], "result": t["result"],
                  "gpus": sorted({i for r in t["gpu_results"] if r["result"] in ("fail", "warn") for i in r["gpu_ids"]}),
                  "warnings": list(t["warnings"])[:5]} for t in rec["tests"]]
        out = {"overall": rec["overall"], "version": rec["version"], "tests": tests,
               "failed_tests": sum(1 for t in tests if t["result"] == "fail")}
        if rec["overall"] == "error":
            out.update(error_reason="dcgm_runtime_error", error_detail=rec["runtime_error"],
                       remediation="DCGM could not run the diagnostic: check nv-hostengine and the driver")
        return out

    def evaluate(self, criterion: Criterion, params: DcgmParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        cid = criterion.id
        out = self.check_expect(criterion, params, metrics, node)
        want = str((criterion.expect or {}).get("overall", "pass")).lower()
        for t in metrics.get("tests", []):
            if t["result"] == "fail":
                out.append(verdict(cid, node, Status.FAIL, "diag_test_failed", measured=f"{t['name']}: fail",
                                   expected=f"{t['name']}: pass", remediation=FIX,
                                   details={"test": t["name"], "gpus": t["gpus"], "warnings": t["warnings"]}))
            elif t["result"] == "warn" and want == "pass":
                out.append(verdict(cid, node, Status.WARN, "diag_test_warned", measured=f"{t['name']}: warn",
                                   expected=f"{t['name']}: pass", remediation=FIX,
                                   details={"test": t["name"], "gpus": t["gpus"], "warnings": t["warnings"]}))
        overall = metrics.get("overall")
        if overall == "skip":
            out.append(verdict(cid, node, Status.ERROR, "no_test_ran", measured="skip", expected=f"overall {want}",
                               remediation="DCGM skipped every test: check the run level and GPU support"))
        elif not any(v.status in (Status.FAIL, Status.WARN) for v in out):
            ok = overall == "pass" or (want == "warn" and overall == "warn")
            out.append(verdict(cid, node, Status.PASS if ok else Status.FAIL, "as_expected" if ok else "diag_failed",
                               measured=overall, expected=f"overall {want}", remediation="" if ok else FIX))
        if self.judged_metric(criterion) is not None:
            out.append(self.judge_metric(criterion, metrics, node))
        return out
