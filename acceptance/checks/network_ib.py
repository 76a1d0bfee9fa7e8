"""network.ib: InfiniBand ports: link state, rate and error counters (sysfs snapshot) and
loopback `ib_write_bw` bandwidth per HCA, collected by the bundled `ib_probe.py`.

Every port of the selected devices must be Active / LinkUp (else `port_down`). Metrics:
`bw_gbps` (slowest HCA's average write bandwidth, Gb/s), `port_rate_gbps` (slowest port's
link rate), `symbol_errors` (sum of the ports' symbol error counters). expect keys:
`rate_gbps` (minimum link rate of every port), `devices` (number of HCAs present).
Without InfiniBand on the node the criterion is skipped (`no_infiniband`). A handed-over
`ibstat` listing or `ib_write_bw` run is read in place of the probe's JSON. A listing the
parser marks incomplete (ibstat stopped by `ibpanic:`, a port without its state file) is an
error per problem (`listing_incomplete`, `port_state_missing`): the ports it never listed are
not judged as present.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from acceptance.checks.base import Check, CheckParams, CollectContext, Size, check_name, register, script
from acceptance.executors.base import RawOutput
from acceptance.judge import fmt, verdict
from acceptance.parsers._common import ParseError, iter_json_objects
from acceptance.parsers.detect import detect_tool
from acceptance.parsers.ib_write_bw import parse_ib_write_bw
from acceptance.parsers.ibstat import parse_ibstat
from acceptance.results import Status, Verdict
from slaschema.models import Criterion


class IbParams(CheckParams):
    devices: list[str] = Field(default_factory=list, max_length=64)
    size: Size = 65536
    duration: int = Field(default=5, ge=1, le=600)
    bandwidth: bool = True

    @field_validator("devices", mode="before")
    @classmethod
    def _names(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = [x for x in re.split(r"[,\s]+", v) if x]
        return [check_name(x) for x in v] if isinstance(v, list) else v


@register
class IbCheck(Check):
    id = "network.ib"
    Params = IbParams
    default_timeout_s = 600.0
    expect_keys = ("rate_gbps", "devices")
    units = {"bw_gbps": "Gb/s", "port_rate_gbps": "Gb/s", "symbol_errors": "errors"}
    launch_failure = (Status.ERROR, "tool_missing", "the node needs the Python that runs the checks")
    remediation = {"bw_gbps": "check the HCA's PCIe link (lspci -vv), firmware and the cable/transceiver",
                   "port_rate_gbps": "the link trained below its rate: reseat or replace the cable/transceiver",
                   "symbol_errors": "symbol errors point at a bad cable or transceiver: replace it"}

    def argv(self, params: IbParams, ctx: CollectContext) -> list[str]:
        argv = [ctx.python, script("ib_probe.py"), "--size", str(params.size), "--duration", str(params.duration)]
        if params.devices:
            argv += ["--devices", ",".join(params.devices)]
        if not params.bandwidth:
            argv.append("--no-bandwidth")
        return argv

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        for _, doc in iter_json_objects(raw.stdout):
            if str(doc.get("probe", "")).startswith("slakit-ib/"):
                return ib_metrics(doc)
        # a handed-over `ibstat` listing or perftest run instead of the probe's JSON
        text = raw.stdout + "\n" + raw.stderr
        tool = detect_tool(text)
        if tool == "ibstat":
            rec = parse_ibstat(text)
            return ib_metrics({"present": list(rec.cas), "sysfs": text})
        if tool == "ib_write_bw":
            run = parse_ib_write_bw(text)
            dev = run.device or "hca"
            return ib_metrics({"present": [dev], "bw": {dev: {"output": text}}})
        raise ParseError("ib probe", "no probe JSON, ibstat listing or ib_write_bw run found")

    def evaluate(self, criterion: Criterion, params: IbParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        cid = criterion.id
        out = self.check_expect(criterion, params, metrics, node)
        expect = criterion.expect or {}
        ports = metrics.get("ports", [])
        missing = sorted(set(params.devices) - set(metrics.get("present", [])))
        for dev in missing:
            out.append(verdict(cid, node, Status.FAIL, "device_missing", measured="absent", expected=f"HCA {dev}",
                               remediation="the HCA is not visible: check the card, its driver and PCIe"))
        for p in ports:
            if p.get("link_layer") not in (None, "InfiniBand"):
                continue
            where = f"{p['ca']}/{p['port']}"
            if p.get("state") != "Active" or p.get("physical_state") not in (None, "LinkUp"):
                out.append(verdict(cid, node, Status.FAIL, "port_down",
                                   measured=f"{where} {p.get('state')}/{p.get('physical_state')}",
                                   expected="Active/LinkUp", details={"port": where},
                                   remediation="bring the link up: check the cable, switch port and subnet manager"))
            elif "rate_gbps" in expect and (p.get("rate_gbps") or 0) < float(expect["rate_gbps"]):
                out.append(verdict(cid, node, Status.FAIL, "rate_low", measured=p.get("rate_gbps"),
                                   expected=f">= {fmt(float(expect['rate_gbps']))} Gb/s", details={"port": where},
                                   remediation=self.remediation["port_rate_gbps"]))
        if "devices" in expect:
            n = len(metrics.get("present", []))
            want = int(expect["devices"])
            out.append(verdict(cid, node, Status.PASS if n == want else Status.FAIL,
                               "as_expected" if n == want else "device_count_mismatch", measured=n,
                               expected=f"{want} HCAs", remediation="" if n == want else "install/enable every HCA"))
        for n in metrics.get("listing_errors") or []:
            out.append(verdict(cid, node, Status.ERROR, n["code"], measured=n["message"][:300],
                               expected="a complete port listing", details={"device": n.get("device")},
                               remediation="the HCA could not be read: check its driver (ibstat, dmesg for mlx5 errors)"))
        for dev, err in (metrics.get("bw_errors") or {}).items():
            out.append(verdict(cid, node, Status.ERROR, "tool_failed", measured=err, expected=f"ib_write_bw on {dev}",
                               remediation="ib_write_bw did not complete on this HCA; see the raw output"))
        if self.judged_metric(criterion) is not None:
            out.append(self.judge_metric(criterion, metrics, node))
        elif not out:
            out.append(verdict(cid, node, Status.PASS, "as_expected", measured=f"{len(ports)} ports active",
                               expected="every port Active/LinkUp"))
        return out


def ib_metrics(doc: dict[str, Any]) -> dict[str, Any]:
    """Probe JSON -> metrics. Pure."""
    if doc.get("skip"):
        return {"skip_reason": str(doc["skip"]), "remediation": "no InfiniBand HCA on this node"}
    ports: list[dict[str, Any]] = []
    listing_errors: list[dict[str, Any]] = []
    if (doc.get("sysfs") or "").strip():
        rec = parse_ibstat(doc["sysfs"])
        listing_errors = [n.to_json() for n in rec.errors]
        for p in rec.ports:
            ports.append({"ca": p.ca, "port": p.port, "state": p.state, "physical_state": p.physical_state,
                          "rate_gbps": p.rate_gbps, "link_layer": p.link_layer,
                          "symbol_errors": p.counters.get("symbol_error"),
                          "link_downed": p.counters.get("link_downed")})
    bw: dict[str, float | None] = {}
    errors: dict[str, str] = {}
    for dev, res in (doc.get("bw") or {}).items():
        if res.get("missing"):
            errors[dev] = "ib_write_bw is not installed"
            continue
        try:
            r = parse_ib_write_bw(res.get("output") or "")
        except ParseError as exc:
            errors[dev] = exc.reason
            continue
        if r.error or r.bw_avg_gbps is None:
            errors[dev] = r.error or "no bandwidth reported"
        elif not r.complete:
            errors[dev] = "the ib_write_bw output ends inside its result table (cut off): the largest size may be missing"
        else:
            bw[dev] = r.bw_avg_gbps
    ib_ports = [p for p in ports if p.get("link_layer") in (None, "InfiniBand")]
    rates = [p["rate_gbps"] for p in ib_ports if p.get("rate_gbps") is not None]
    syms = [p["symbol_errors"] for p in ib_ports if p.get("symbol_errors") is not None]
    return {
        "present": doc.get("present", []),
        "ports": ports,
        "listing_errors": listing_errors,
        "bw": bw,
        "bw_errors": errors,
        "bw_gbps": min(bw.values()) if bw else None,
        "port_rate_gbps": min(rates) if rates else None,
        "symbol_errors": sum(syms) if syms else None,
    }
