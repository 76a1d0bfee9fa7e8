"""network.nccl: NCCL collective bandwidth (nccl-tests) at the contract's fixed message size.

The run covers exactly `params.size` (`-b SIZE -e SIZE`) and the verdict reads the table row
of that size: never the "Avg bus bandwidth" line, which averages over every size in a sweep
and is dominated by small messages. Any `#wrong` other than 0 fails (the collective
returned wrong data). A handed-over sweep is judged the same way: the row at `size`, or an
error `size_not_measured` when the sweep did not include it.

Across nodes the check asks the executor for one job of `nodes` nodes with one task per GPU
(`-g 1`); on the local executor one process drives all GPUs (`-g GPUS`).

Layout (`params.layout`, what one run covers): `node` when `nodes` is 1, `rack` when `nodes`
fits in the contract's largest rack (one run inside every rack), `cluster` otherwise. Given
the groups in scope, `collect` runs once per group, on the first `nodes` nodes of it, and
files each output under the group (the rack id, the node, or `_cluster`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from acceptance.checks.base import CLUSTER, Check, CheckParams, CollectContext, SafePath, Size, format_size, register
from acceptance.executors.base import RawOutput
from acceptance.judge import Bounds, judge_value, verdict
from acceptance.parsers.nccl_tests import parse_nccl_tests
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

Collective = Literal["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv"]
FIX = ("check NVLink/IB link state and speeds (nvidia-smi nvlink -s, ibstat), NCCL_* settings and topology; "
       "rerun with NCCL_DEBUG=INFO")


class NcclParams(CheckParams):
    collective: Collective = "all_reduce"
    nodes: int = Field(default=1, ge=1, le=100000)
    size: Size = 8 * 1024**3
    gpus_per_node: int | None = Field(default=None, ge=1, le=64)
    iters: int = Field(default=20, ge=1, le=10000)
    warmup: int = Field(default=5, ge=0, le=1000)
    binary_dir: SafePath | None = None
    layout: Literal["node", "rack", "cluster"] | None = None


@register
class NcclCheck(Check):
    id = "network.nccl"
    Params = NcclParams
    default_timeout_s = 1800.0
    launch_failure = (Status.SKIP, "no_nccl_tests",
                      "nccl-tests (all_reduce_perf, ...) is not installed here; build it and set params.binary_dir")
    units = {"busbw_gbps": "GB/s", "algbw_gbps": "GB/s"}

    def command(self, params: NcclParams, gpus_per_process: int) -> list[str]:
        name = f"{params.collective}_perf"
        binary = f"{params.binary_dir}/{name}" if params.binary_dir else name
        size = str(params.size)
        return [binary, "-b", size, "-e", size, "-f", "2", "-g", str(gpus_per_process),
                "-n", str(params.iters), "-w", str(params.warmup), "-c", "1"]

    def layout(self, params: NcclParams, largest_rack: int) -> str:
        if params.layout:
            return params.layout
        if params.nodes <= 1:
            return "node"
        return "rack" if params.nodes <= largest_rack else "cluster"

    def collect(self, params: NcclParams, ctx: CollectContext) -> dict[str, RawOutput]:
        if ctx.groups is None:
            return {CLUSTER: self._run(params, ctx, list(ctx.nodes)[: params.nodes])}
        # A group with fewer nodes in scope than the run needs is not run (it stays not_run).
        return {key: self._run(params, ctx, list(nodes)[: params.nodes])
                for key, nodes in ctx.groups.items() if len(nodes) >= params.nodes}

    def _run(self, params: NcclParams, ctx: CollectContext, nodes: list[str]) -> RawOutput:
        gpus = params.gpus_per_node or ctx.gpus_per_node or 1
        if ctx.executor.name == "local":
            return ctx.executor.run_multi(self.command(params, gpus), nodes, 1, ctx.timeout_s)
        return ctx.executor.run_multi(self.command(params, 1), nodes, gpus, ctx.timeout_s)

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        rec = parse_nccl_tests(raw.stdout + "\n" + raw.stderr)
        out: dict[str, Any] = {
            "collective": rec.collective, "nccl_version": rec.nccl_version, "ranks": rec.ranks,
            "nodes": rec.nodes, "hosts": list(rec.hosts),
            "rows": [{"size_bytes": r.size_bytes, "busbw_gbps": r.busbw_gbps,
                      "algbw_gbps": r.oop_algbw_gbps if r.oop_algbw_gbps is not None else r.ip_algbw_gbps,
                      "wrong": r.wrong} for r in rec.rows],
            "avg_busbw_gbps_not_judged": rec.avg_busbw_gbps,
            "wrong_total": rec.wrong_total,
        }
        if rec.error:
            out.update(error_reason="tool_failed", error_detail=rec.error,
                       remediation="the collective did not run: see the raw output (MPI/Slurm launch, CUDA, NCCL)")
        return out

    def evaluate(self, criterion: Criterion, params: NcclParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        return judge_nccl(criterion, params, metrics, node)


def judge_nccl(criterion: Criterion, params: NcclParams, m: dict[str, Any], node: str | None) -> list[Verdict]:
    """Verdicts at the fixed size. Pure."""
    cid = criterion.id
    size = params.size
    want_coll = f"{params.collective}_perf"
    if m.get("collective") and m["collective"] != want_coll:
        return [verdict(cid, node, Status.ERROR, "job_mismatch", measured=m["collective"], expected=want_coll,
                        remediation=f"run {want_coll}, the collective the contract names")]
    if m.get("nodes") is not None and m["nodes"] < params.nodes:
        return [verdict(cid, node, Status.ERROR, "node_count_mismatch", measured=m["nodes"],
                        expected=f"{params.nodes} nodes", details={"hosts": m.get("hosts")},
                        remediation=f"run the collective across {params.nodes} nodes (e.g. --executor slurm)")]
    row = next((r for r in m.get("rows", []) if r["size_bytes"] == size), None)
    if row is None:
        sizes = [format_size(r["size_bytes"]) for r in m.get("rows", [])]
        return [verdict(cid, node, Status.ERROR, "size_not_measured", measured=", ".join(sizes[-6:]) or "no rows",
                        expected=f"a row at {format_size(size)}",
                        remediation=f"run with -b {format_size(size)} -e {format_size(size)}")]
    out: list[Verdict] = []
    wrong = row.get("wrong")
    if wrong is None:
        out.append(verdict(cid, node, Status.ERROR, "correctness_not_checked", measured="N/A", expected="#wrong = 0",
                           details={"size_bytes": size}, remediation="run nccl-tests with -c 1 so results are checked"))
    elif wrong != 0:
        out.append(verdict(cid, node, Status.FAIL, "wrong_results", measured=wrong,
                           expected="#wrong = 0", details={"size_bytes": size},
                           remediation="the collective returned wrong data: check GPU memory health and the fabric"))
    metric = criterion.metric or "busbw_gbps"
    if metric not in ("busbw_gbps", "algbw_gbps"):
        out.append(verdict(cid, node, Status.ERROR, "unknown_metric", measured=metric,
                           expected="busbw_gbps or algbw_gbps", remediation="judge busbw_gbps or algbw_gbps"))
        return out
    out.append(judge_value(cid, node, row.get(metric), Bounds.of(criterion), unit="GB/s", remediation=FIX,
                           details={"metric": metric, "size": format_size(size), "nodes": m.get("nodes"),
                                    "ranks": m.get("ranks")}))
    return out
