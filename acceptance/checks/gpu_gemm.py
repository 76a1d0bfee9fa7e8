"""gpu.gemm: dense matmul TFLOPS per GPU (bundled `gemm_bench.py`, PyTorch) and stragglers.

The metric `tflops_<dtype>` is judged on the slowest GPU of the node (every GPU must meet
the bound); `straggler_pct` is how far the slowest GPU falls below the node's median, in
percent. Without PyTorch or without a GPU the benchmark says so and the criterion is skipped
with reason `no_torch` / `no_gpu`; it never passes on a host where nothing was measured.
"""

from __future__ import annotations

import statistics
from typing import Any, Literal

from pydantic import Field

from acceptance.checks.base import Check, CheckParams, CollectContext, register, script
from acceptance.executors.base import RawOutput
from acceptance.judge import verdict
from acceptance.parsers._common import ParseError, iter_json_objects
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

SKIP_FIX = {
    "no_torch": "install PyTorch with CUDA in the Python that runs the checks",
    "no_gpu": "run on a node with NVIDIA GPUs and a working driver",
    "dtype_unsupported": "this GPU / PyTorch build cannot run the requested data type",
}


class GemmParams(CheckParams):
    dtype: Literal["bf16", "fp16", "fp8"] | None = None
    size: int = Field(default=8192, ge=256, le=65536)
    iters: int = Field(default=50, ge=1, le=10000)
    warmup: int = Field(default=10, ge=0, le=1000)


def dtype_for(criterion: Criterion, params: GemmParams) -> str:
    if params.dtype:
        return params.dtype
    metric = criterion.metric or ""
    return metric.removeprefix("tflops_") if metric.startswith("tflops_") else "bf16"


@register
class GemmCheck(Check):
    id = "gpu.gemm"
    Params = GemmParams
    default_timeout_s = 900.0
    units = {"tflops_bf16": "TFLOPS", "tflops_fp8": "TFLOPS", "tflops_fp16": "TFLOPS", "straggler_pct": "%"}
    remediation = {"*": "check clocks, power limit and thermals of the slow GPU (nvidia-smi -q -d PERFORMANCE); "
                        "reseat or replace it if it stays slow",
                   "straggler_pct": "the slowest GPU lags its peers: check its clocks, power and PCIe/NVLink state"}
    launch_failure = (Status.ERROR, "tool_missing", "the node needs the Python that runs the checks")

    def argv(self, params: GemmParams, ctx: CollectContext) -> list[str]:
        return [ctx.python, script("gemm_bench.py"), "--dtype", params.dtype or "bf16",
                "--size", str(params.size), "--iters", str(params.iters), "--warmup", str(params.warmup)]

    def prepare(self, criterion: Criterion, params: GemmParams) -> GemmParams:
        return params.model_copy(update={"dtype": dtype_for(criterion, params)})

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        for _, doc in iter_json_objects(raw.stdout):
            if str(doc.get("bench", "")).startswith("slakit-gemm/"):
                return gemm_metrics(doc)
        raise ParseError("gemm benchmark", "no benchmark JSON found")

    def evaluate(self, criterion: Criterion, params: GemmParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        want = dtype_for(criterion, params)
        if criterion.metric and criterion.metric.startswith("tflops_") and metrics.get("dtype") != want:
            return [verdict(criterion.id, node, Status.ERROR, "job_mismatch", measured=metrics.get("dtype"),
                            expected=f"dtype {want}", remediation="run the benchmark with the data type the criterion names")]
        return super().evaluate(criterion, params, metrics, node)


def gemm_metrics(doc: dict[str, Any]) -> dict[str, Any]:
    """Benchmark JSON -> metrics. Pure."""
    if doc.get("skip"):
        reason = str(doc["skip"])
        return {"skip_reason": reason, "skip_detail": doc.get("detail"), "remediation": SKIP_FIX.get(reason, "")}
    dtype = str(doc.get("dtype"))
    gpus = doc.get("gpus") or []
    values = [g.get("tflops") for g in gpus]
    broken = [g for g in gpus if not isinstance(g.get("tflops"), (int, float))]
    out: dict[str, Any] = {"dtype": dtype, "size": doc.get("size"), "torch": doc.get("torch"), "gpus": gpus}
    if not gpus:
        return {**out, "error_reason": "no_result", "error_detail": "the benchmark listed no GPU"}
    if broken:
        return {**out, "error_reason": "gpu_error", "error_detail": "; ".join(str(g.get("error")) for g in broken)[:500],
                "remediation": "the GPU failed the matmul: check dmesg for Xid errors"}
    slowest = min(values)
    median = statistics.median(values)
    out[f"tflops_{dtype}"] = slowest
    out["tflops_median"] = median
    out["straggler_pct"] = 0.0 if median <= 0 else (median - slowest) / median * 100.0
    out["slowest_gpu"] = gpus[values.index(slowest)].get("index")
    return out
