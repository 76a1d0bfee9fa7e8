"""storage.s3: object storage throughput and integrity (bundled `s3_bench.py`, boto3).

Metrics: `put_gbps` / `get_gbps` (GB/s) and `put_mbps` / `get_mbps` (MB/s) over all objects,
`list_s` (listing the run's objects). Integrity is always judged: an object read back with a
different SHA-256 fails (`integrity_error`), a multipart upload that did not complete or
read back wrong fails (`multipart_failed`), a listing that misses objects fails
(`listing_incomplete`). Credentials come from the environment, never from the contract.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from acceptance.checks.base import Check, CheckParams, CollectContext, Size, register, script
from acceptance.executors.base import RawOutput
from acceptance.judge import verdict
from acceptance.parsers._common import ParseError, iter_json_objects
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

_URL = re.compile(r"^https?://[A-Za-z0-9._-]+(:\d{1,5})?/?\Z")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\Z")
_PREFIX = re.compile(r"^[A-Za-z0-9._/-]{0,200}\Z")


class S3Params(CheckParams):
    endpoint: str | None = Field(default=None, description="http(s)://host[:port]; default: AWS")
    bucket: str
    prefix: str = "slakit-acceptance/"
    region: str = Field(default="us-east-1", pattern=r"^[a-z0-9-]{2,32}$")
    object_size: Size = 8 * 1024**2
    objects: int = Field(default=16, ge=1, le=100000)
    multipart_size: Size = 64 * 1024**2
    part_size: Size = 8 * 1024**2
    concurrency: int = Field(default=8, ge=1, le=256)
    create_bucket: bool = False
    verify_tls: bool = True

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, v: str | None) -> str | None:
        if v is not None and not _URL.match(v):
            raise ValueError("endpoint must be http(s)://host[:port]")
        return v

    @field_validator("bucket")
    @classmethod
    def _bucket(cls, v: str) -> str:
        if not _BUCKET.match(v) or ".." in v:
            raise ValueError("not a valid S3 bucket name")
        return v

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, v: str) -> str:
        if not _PREFIX.match(v) or v.startswith("-"):
            raise ValueError("prefix may hold letters, digits, '.', '_', '-' and '/'")
        return v

    @field_validator("part_size")
    @classmethod
    def _part(cls, v: int) -> int:
        if v < 5 * 1024**2:
            raise ValueError("S3 multipart parts are at least 5M")
        return v


@register
class S3Check(Check):
    id = "storage.s3"
    Params = S3Params
    default_timeout_s = 1800.0
    expect_keys = ("integrity", "multipart")
    units = {"put_gbps": "GB/s", "get_gbps": "GB/s", "put_mbps": "MB/s", "get_mbps": "MB/s", "list_s": "s"}
    launch_failure = (Status.ERROR, "tool_missing", "the node needs the Python that runs the checks (with boto3)")
    remediation = {"*": "check the object store's gateway load, network path and client concurrency",
                   "list_s": "listing is slow: check the metadata tier of the object store"}

    def argv(self, params: S3Params, ctx: CollectContext) -> list[str]:
        argv = [ctx.python, script("s3_bench.py"), "--bucket", params.bucket, "--prefix", params.prefix,
                "--region", params.region, "--object-size", str(params.object_size), "--objects", str(params.objects),
                "--multipart-size", str(params.multipart_size), "--part-size", str(params.part_size),
                "--concurrency", str(params.concurrency)]
        if params.endpoint:
            argv += ["--endpoint", params.endpoint]
        if params.create_bucket:
            argv.append("--create-bucket")
        if not params.verify_tls:
            argv.append("--no-verify-tls")
        return argv

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        for _, doc in iter_json_objects(raw.stdout):
            if str(doc.get("bench", "")).startswith("slakit-s3/"):
                return s3_metrics(doc)
        raise ParseError("s3 benchmark", "no benchmark JSON found")

    def evaluate(self, criterion: Criterion, params: S3Params, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        cid = criterion.id
        out = self.check_expect(criterion, params, metrics, node)
        bad = metrics.get("integrity_errors") or []
        out.append(verdict(cid, node, Status.FAIL if bad else Status.PASS,
                           "integrity_error" if bad else "as_expected",
                           measured=f"{len(bad)} of {metrics.get('objects')} objects differ" if bad else "all checksums match",
                           expected="every object reads back with its SHA-256", details={"item": "integrity", "keys": bad[:20]},
                           remediation="the store returned different data: escalate to the provider" if bad else ""))
        mp = metrics.get("multipart") or {}
        want_mp = (criterion.expect or {}).get("multipart", True)
        if want_mp:
            ok = bool(mp.get("ok"))
            out.append(verdict(cid, node, Status.PASS if ok else Status.FAIL, "as_expected" if ok else "multipart_failed",
                               measured=f"{mp.get('parts')} parts ok" if ok else (mp.get("error") or "checksum mismatch"),
                               expected="multipart upload completes and reads back intact", details={"item": "multipart"},
                               remediation="" if ok else "multipart upload must work for large objects (checkpoints)"))
        if metrics.get("list_count") is not None and metrics["list_count"] != metrics.get("expected_count"):
            out.append(verdict(cid, node, Status.FAIL, "listing_incomplete", measured=metrics["list_count"],
                               expected=f"{metrics.get('expected_count')} objects listed", details={"item": "listing"},
                               remediation="listing misses objects: check the store's consistency guarantees"))
        for err in metrics.get("errors") or []:
            out.append(verdict(cid, node, Status.ERROR, "s3_request_failed", measured=err, expected="requests succeed",
                               remediation="see the error; check credentials and the endpoint"))
        if self.judged_metric(criterion) is not None:
            out.append(self.judge_metric(criterion, metrics, node))
        return out


def s3_metrics(doc: dict[str, Any]) -> dict[str, Any]:
    """Benchmark JSON -> metrics. Pure."""
    if doc.get("error"):
        return {"error_reason": "s3_unreachable" if doc.get("error_kind") == "unreachable" else "tool_failed",
                "error_detail": doc["error"],
                "remediation": "check params.endpoint, the bucket and the credentials in the environment"}

    def rate(b: str, s: str, div: float) -> float | None:
        nb, ns = doc.get(b), doc.get(s)
        return nb / ns / div if isinstance(nb, (int, float)) and isinstance(ns, (int, float)) and ns > 0 else None

    return {
        "objects": doc.get("objects"), "object_size": doc.get("object_size"),
        "put_gbps": rate("put_bytes", "put_s", 1e9), "get_gbps": rate("get_bytes", "get_s", 1e9),
        "put_mbps": rate("put_bytes", "put_s", 1e6), "get_mbps": rate("get_bytes", "get_s", 1e6),
        "list_s": doc.get("list_s"), "list_count": doc.get("list_count"), "expected_count": doc.get("expected_count"),
        "integrity_errors": doc.get("integrity_errors"), "multipart": doc.get("multipart"),
        "errors": doc.get("errors") or [],
    }
