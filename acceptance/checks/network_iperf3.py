"""network.iperf3: Ethernet throughput from the node to an iperf3 server (`iperf3 -c ... -J`).

The server (`params.server`, a host name or address; `params.port`) must already be
listening (`iperf3 -s`). `throughput_gbps` is the receiver-side rate (what arrived), in
Gbit/s; `retransmits` the TCP sender's retransmissions. A run that could not connect is an
error `tool_failed` with iperf3's message, not a zero.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from acceptance.checks.base import Check, CheckParams, CollectContext, Host, register
from acceptance.executors.base import RawOutput
from acceptance.parsers.iperf3 import parse_iperf3
from acceptance.results import Status, Verdict
from slaschema.models import Criterion


class Iperf3Params(CheckParams):
    server: Host
    port: int = Field(default=5201, ge=1, le=65535)
    duration: int = Field(default=10, ge=1, le=3600)
    streams: int = Field(default=1, ge=1, le=128)
    reverse: bool = False
    udp_bitrate: str | None = Field(default=None, pattern=r"^\d+[KMG]?$", description="UDP mode at this rate")


@register
class Iperf3Check(Check):
    id = "network.iperf3"
    Params = Iperf3Params
    default_timeout_s = 120.0
    units = {"throughput_gbps": "Gb/s", "retransmits": "retransmits"}
    launch_failure = (Status.ERROR, "tool_missing", "install iperf3 on the node (apt-get install iperf3)")
    remediation = {"throughput_gbps": "check NIC link speed (ethtool), MTU, bonding and switch port errors",
                   "retransmits": "check for packet loss: switch port errors, MTU mismatch, bad cables"}

    def timeout(self, params: Iperf3Params, default: float | None = None) -> float:
        if params.timeout_s is None and default is None:
            return float(params.duration + 30)
        return super().timeout(params, default)

    def argv(self, params: Iperf3Params, ctx: CollectContext) -> list[str]:
        argv = ["iperf3", "-c", params.server, "-p", str(params.port), "-t", str(params.duration),
                "-P", str(params.streams), "-J"]
        if params.reverse:
            argv.append("-R")
        if params.udp_bitrate:
            argv += ["-u", "-b", params.udp_bitrate]
        return argv

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        rec = parse_iperf3(raw.stdout)
        rate = rec.receiver_bits_per_second
        out = {
            "throughput_gbps": None if rate is None else rate / 1e9,
            "sender_gbps": None if rec.sender_bits_per_second is None else rec.sender_bits_per_second / 1e9,
            "retransmits": rec.retransmits,
            "protocol": rec.protocol, "streams": rec.streams, "duration_s": rec.duration_s,
            "reverse": rec.reverse, "remote_host": rec.remote_host, "lost_percent": rec.lost_percent,
            "version": rec.version,
        }
        if rec.error:
            out.update(error_reason="tool_failed", error_detail=rec.error,
                       remediation="start `iperf3 -s` on the server named in params.server and check the path to it")
        return out

    def evaluate(self, criterion: Criterion, params: Iperf3Params, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        from acceptance.judge import verdict

        if metrics.get("streams") is not None and metrics["streams"] != params.streams:
            return [verdict(criterion.id, node, Status.ERROR, "job_mismatch", measured=f"{metrics['streams']} streams",
                            expected=f"{params.streams} streams", remediation="run iperf3 with the contract's -P")]
        return super().evaluate(criterion, params, metrics, node)
