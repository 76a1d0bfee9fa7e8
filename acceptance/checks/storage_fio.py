"""storage.fio: throughput, IOPS and latency of a file system, measured with fio.

The job is given entirely on the command line (argv, one option per item) and the result is
only judged when fio's own record of the job shows it did what was asked: the same `rw`,
`bs`, `numjobs` and `size`, one job entry per `numjobs`, and an effective block size
(bytes moved / I/Os) equal to `bs`. Anything else is an error with reason `job_mismatch`,
because a fast number from a different job proves nothing.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from acceptance.checks.base import Check, CheckParams, CollectContext, SafePath, Size, format_size, register
from acceptance.executors.base import RawOutput
from acceptance.judge import fmt, verdict
from acceptance.parsers._common import ParseError
from acceptance.parsers.fio import parse_fio
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

_MISSING_PATH = re.compile(r"is not a directory|failed parsing directory|No such file or directory", re.I)


class FioParams(CheckParams):
    path: SafePath = Field(description="Directory on the file system under test")
    rw: Literal["read", "write", "randread", "randwrite", "rw", "randrw"] = "read"
    bs: Size = 1024**2
    size: Size = 1024**3
    numjobs: int = Field(default=1, ge=1, le=1024)
    iodepth: int = Field(default=16, ge=1, le=4096)
    ioengine: Literal["libaio", "io_uring", "psync", "sync", "posixaio"] = "libaio"
    direct: bool = False
    runtime_s: int | None = Field(default=None, ge=1, le=86400)


@register
class FioCheck(Check):
    id = "storage.fio"
    Params = FioParams
    default_timeout_s = 1800.0
    units = {"read_gbps": "GB/s", "write_gbps": "GB/s", "read_iops": "IOPS", "write_iops": "IOPS",
             "read_p99_ms": "ms", "write_p99_ms": "ms"}
    remediation = {"*": "check the file system's health, mount options and network path; compare with the "
                        "provider's own benchmark of the same job"}
    launch_failure = (Status.ERROR, "tool_missing", "install fio on the node (apt-get install fio)")

    def argv(self, params: FioParams, ctx: CollectContext) -> list[str]:
        argv = [
            "fio", "--name=slakit-fio", f"--directory={params.path}", f"--rw={params.rw}",
            f"--bs={params.bs}", f"--size={params.size}", f"--numjobs={params.numjobs}",
            f"--iodepth={params.iodepth}", f"--ioengine={params.ioengine}",
            f"--direct={1 if params.direct else 0}", "--unlink=1", "--output-format=json",
        ]
        if params.runtime_s is not None:
            argv += [f"--runtime={params.runtime_s}", "--time_based"]
        return argv

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        try:
            rec = parse_fio(raw.stdout)
        except ParseError:
            text = raw.stdout + "\n" + raw.stderr
            if _MISSING_PATH.search(text):
                return {"error_reason": "path_missing", "error_detail": _first_line(text, _MISSING_PATH),
                        "remediation": "mount the file system under test or give params.path of an existing directory"}
            if raw.rc not in (0, None):
                return {"error_reason": "tool_failed", "error_detail": _tail(text),
                        "remediation": "see fio's messages in the raw output"}
            raise
        out: dict[str, Any] = {
            "fio_version": rec.fio_version,
            "complete": rec.complete,
            "errors": rec.errors,
            "read_gbps": _div(rec.read_bw_bytes, 1e9),
            "write_gbps": _div(rec.write_bw_bytes, 1e9),
            "read_iops": rec.read_iops,
            "write_iops": rec.write_iops,
            "read_p99_ms": _div(rec.read_clat_p99_us, 1e3),
            "write_p99_ms": _div(rec.write_clat_p99_us, 1e3),
            "jobs": [
                {
                    "name": j.name, "rw": j.rw, "bs_bytes": j.bs_bytes, "numjobs": j.numjobs,
                    "size": j.size, "group_reporting": j.options.get("group_reporting"),
                    "error": j.error,
                    "effective_bs_bytes": {name: d.effective_bs_bytes for name, d in (("read", j.read), ("write", j.write))
                                           if d is not None and d.total_ios},
                }
                for j in rec.jobs
            ],
        }
        if rec.errors:
            out.update(error_reason="tool_failed", error_detail=f"fio reported error {rec.errors}",
                       remediation="see fio's messages in the raw output")
        return out

    def evaluate(self, criterion: Criterion, params: FioParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        problems = job_mismatches(params, metrics.get("jobs", []))
        if problems:
            return [verdict(criterion.id, node, Status.ERROR, "job_mismatch", measured="; ".join(problems),
                            expected=describe_job(params),
                            remediation="run fio with exactly the contract's job (rw, bs, numjobs, size) and hand over its JSON",
                            details={"mismatches": problems})]
        if not metrics.get("complete", True):
            return [verdict(criterion.id, node, Status.ERROR, "incomplete_output", measured="the fio document is cut off",
                            expected="fio's complete JSON output", remediation="hand over fio's complete JSON output")]
        return super().evaluate(criterion, params, metrics, node)


def describe_job(p: FioParams) -> str:
    return f"rw={p.rw} bs={format_size(p.bs)} numjobs={p.numjobs} size={format_size(p.size)}"


def job_mismatches(params: FioParams, jobs: list[dict[str, Any]]) -> list[str]:
    """What in fio's record of the jobs differs from the asked job; [] when it matches. Pure."""
    if not jobs:
        return ["no job in the output"]
    out: list[str] = []
    grouped = any(str(j.get("group_reporting")) == "1" for j in jobs)
    want_entries = 1 if grouped else params.numjobs
    if len(jobs) != want_entries:
        out.append(f"{len(jobs)} job entries, expected {want_entries}")
    for j in jobs:
        name = j.get("name") or "?"
        if j.get("rw") != params.rw:
            out.append(f"{name}: rw={j.get('rw')}")
        if j.get("bs_bytes") is None or float(j["bs_bytes"]) != float(params.bs):
            out.append(f"{name}: bs={fmt(j.get('bs_bytes'))} bytes")
        if j.get("numjobs") is not None and int(j["numjobs"]) != params.numjobs:
            out.append(f"{name}: numjobs={j['numjobs']}")
        elif j.get("numjobs") is None and params.numjobs != 1:
            out.append(f"{name}: numjobs not set")
        size = _size_bytes(j.get("size"))
        if size != params.size:
            out.append(f"{name}: size={j.get('size')}")
        for direction, eff in (j.get("effective_bs_bytes") or {}).items():
            if eff is not None and abs(float(eff) - params.bs) > 0.01 * params.bs:
                out.append(f"{name}: {direction} moved {fmt(float(eff))} bytes per I/O, not {params.bs}")
    return out


def _size_bytes(value: Any) -> int | None:
    from acceptance.parsers.fio import size_to_bytes

    if value is None:
        return None
    b = size_to_bytes(str(value))
    return int(b) if b is not None else None


def _div(v: float | None, d: float) -> float | None:
    return None if v is None else v / d


def _first_line(text: str, pattern: re.Pattern[str]) -> str:
    for line in text.splitlines():
        if pattern.search(line):
            return line.strip()[:300]
    return ""


def _tail(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-3:])[:500]
