"""gpu.burn: stress for a duration while sampling temperatures, clocks, power and throttle
reasons (bundled `burn.py`); Xid lines logged during the run are counted.

Metrics: `xid_events` (Xids logged during the run), `throttle_pct` (share of GPU samples with
a thermal or power-brake slowdown active), `max_temp_c`. A run with fewer than half the
expected samples is an error `too_few_samples` (the loop stalled). `stress: cpu` exercises the
same loop on a host without GPUs.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from pydantic import Field, field_validator

from acceptance.checks.base import Check, CheckParams, CollectContext, register, script
from acceptance.executors.base import RawOutput
from acceptance.judge import verdict
from acceptance.parsers._common import ParseError, iter_json_objects
from acceptance.parsers.xid import parse_xid
from acceptance.results import Status, Verdict
from slaschema.models import Criterion
from slaschema.types import parse_duration

# nvidia-smi clocks_throttle_reasons bits that mean the GPU was slowed by heat or power.
SLOWDOWN_BITS = 0x08 | 0x20 | 0x40 | 0x80   # HW slowdown, SW thermal, HW thermal, HW power brake
SKIP_FIX = {"no_torch": "install PyTorch with CUDA to stress the GPUs", "no_gpu": "no GPU on this host"}


class BurnParams(CheckParams):
    duration_s: float = Field(default=600.0, gt=0, le=7 * 86400)
    interval_s: float = Field(default=10.0, gt=0, le=3600)
    stress: Literal["gpu", "cpu"] = "gpu"
    size: int = Field(default=8192, ge=256, le=65536)

    @field_validator("duration_s", "interval_s", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> Any:
        return parse_duration(v).total_seconds() if isinstance(v, str) else v


@register
class BurnCheck(Check):
    id = "gpu.burn"
    Params = BurnParams
    expect_keys = ("max_xid_events", "max_throttle_pct", "max_temp_c")
    units = {"xid_events": "events", "throttle_pct": "%", "max_temp_c": "C"}
    launch_failure = (Status.ERROR, "tool_missing", "the node needs the Python that runs the checks")
    remediation = {"xid_events": "see the Xid lines in the raw output; drain the GPU for fatal Xids",
                   "throttle_pct": "check cooling (fans, inlet temperature, liquid loop) and power capping",
                   "max_temp_c": "check cooling (fans, inlet temperature, liquid loop)"}

    def timeout(self, params: BurnParams, default: float | None = None) -> float:
        if params.timeout_s is not None:
            return float(params.timeout_s)
        return params.duration_s * 1.2 + 120.0

    def argv(self, params: BurnParams, ctx: CollectContext) -> list[str]:
        return [ctx.python, script("burn.py"), "--duration", str(params.duration_s), "--interval",
                str(params.interval_s), "--stress", params.stress, "--size", str(params.size)]

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        for _, doc in iter_json_objects(raw.stdout):
            if str(doc.get("burn", "")).startswith("slakit-burn/"):
                return burn_metrics(doc)
        raise ParseError("burn", "no burn JSON found")

    def evaluate(self, criterion: Criterion, params: BurnParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        cid = criterion.id
        want = max(1, int(params.duration_s / params.interval_s))
        n = metrics.get("samples", 0)
        if n < want / 2:
            return [verdict(cid, node, Status.ERROR, "too_few_samples", measured=n, expected=f"about {want} samples",
                            remediation="the sampling loop stalled; see the raw output")]
        out = self.check_expect(criterion, params, metrics, node)
        expect = criterion.expect or {}
        for key, metric in (("max_xid_events", "xid_events"), ("max_throttle_pct", "throttle_pct"),
                            ("max_temp_c", "max_temp_c")):
            if key in expect:
                c = criterion.model_copy(update={"metric": metric, "max": Decimal(str(expect[key])), "min": None,
                                                 "warn_below": None, "warn_above": None})
                out.append(self.judge_metric(c, metrics, node))
        for err in metrics.get("errors", []):
            out.append(verdict(cid, node, Status.FAIL, "stress_failed", measured=err, expected="stress runs throughout",
                               remediation="the GPU failed under load: check dmesg for Xids and replace it"))
        if self.judged_metric(criterion) is not None or not out:
            out.append(self.judge_metric(criterion, metrics, node))
        return out


def burn_metrics(doc: dict[str, Any]) -> dict[str, Any]:
    """Burn JSON -> metrics. Pure."""
    if doc.get("skip"):
        return {"skip_reason": doc["skip"], "remediation": SKIP_FIX.get(doc["skip"], "")}
    samples = doc.get("samples") or []
    temps: list[float] = []
    throttled = total = 0
    min_clock = None
    for s in samples:
        if "gpus" in s:
            for g in s["gpus"]:
                if g.get("temp_c") is not None:
                    temps.append(g["temp_c"])
                if g.get("throttle") is not None:
                    total += 1
                    throttled += 1 if g["throttle"] & SLOWDOWN_BITS else 0
                if g.get("sm_mhz") is not None:
                    min_clock = g["sm_mhz"] if min_clock is None else min(min_clock, g["sm_mhz"])
        elif s.get("temp_c") is not None:
            temps.append(s["temp_c"])
    log = doc.get("kernel_log_new")
    xids = None
    if log is not None:
        try:
            xids = len(parse_xid(log).events)
        except ParseError:
            xids = 0
    return {
        "stress": doc.get("stress"),
        "samples": len(samples),
        "elapsed_s": doc.get("elapsed_s"),
        "max_temp_c": max(temps) if temps else None,
        "throttle_pct": (throttled / total * 100.0) if total else (0.0 if doc.get("stress") == "cpu" else None),
        "min_sm_clock_mhz": min_clock,
        "xid_events": xids,
        "errors": list(doc.get("errors") or []),
    }
