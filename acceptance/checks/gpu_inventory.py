"""gpu.inventory: GPU count and model per node, driver, ECC, row remaps and retired pages,
persistence mode, power limit and clocks, from `nvidia-smi -q -x` (or a handed-over
`--query-gpu` CSV, `-q` text or the default table: the parser tells them apart).

Besides the `expect:` items, every GPU is always checked for memory health: a pending or
failed row remap, pending page retirement or uncorrectable volatile ECC errors fail the node.
The status lines nvidia-smi prints are judged too: "No devices were found" fails with
`no_gpu_found` (0 GPUs is a finding, not unreadable output), "NVIDIA-SMI has failed" with
`gpu_driver_failed`, a GPU that fell off the bus, is lost, has no device handle or shows `ERR!`
fields fails with that code (`gpu_fell_off_bus`, `gpu_lost`, `device_handle_unavailable`,
`field_error`), and "WARNING: infoROM is corrupted" warns (`inforom_corrupted`).

expect keys: gpus_per_node, model (matched as a substring of the GPU name, case-insensitive),
driver (version constraint, `>=570`), ecc, persistence (true/false), power_limit_w (minimum
enforced limit, W), max_sm_clock_mhz (minimum of the GPU's maximum SM clock).
"""

from __future__ import annotations

import re
from typing import Any

from acceptance.checks.base import Check, CheckParams, CollectContext, register
from acceptance.checks.constraint import ConstraintError, satisfies
from acceptance.executors.base import RawOutput
from acceptance.judge import fmt, verdict
from acceptance.parsers._common import ParseError
from acceptance.parsers.nvidia_smi import parse_nvidia_smi
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

_DRIVER_FAIL = re.compile(r"NVIDIA-SMI has failed[^\n]*|No devices were found", re.I)
EXPECT = ("gpus_per_node", "model", "driver", "ecc", "persistence", "power_limit_w", "max_sm_clock_mhz")
NO_GPU = (Status.SKIP, "no_gpu", "nvidia-smi is not installed here: no NVIDIA GPU on this host")


class InventoryParams(CheckParams):
    pass


@register
class InventoryCheck(Check):
    id = "gpu.inventory"
    Params = InventoryParams
    default_timeout_s = 60.0
    expect_keys = EXPECT
    launch_failure = NO_GPU
    units = {"gpu_count": "GPUs"}
    remediation = {"gpu_count": "reseat or replace the missing GPU; check `nvidia-smi -L` and dmesg for "
                                "fallen-off-the-bus errors"}

    def argv(self, params: InventoryParams, ctx: CollectContext) -> list[str]:
        return ["nvidia-smi", "-q", "-x"]

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        text = raw.stdout if "<nvidia_smi_log" in raw.stdout else raw.stdout + "\n" + raw.stderr
        try:
            rec = parse_nvidia_smi(text).to_json()
        except ParseError:
            m = _DRIVER_FAIL.search(text)
            if m is None:
                raise
            return {"driver_failure": m.group(0).strip()[:300], "gpu_count": 0, "gpus": []}
        status = {"gpu_errors": [dict(n) for n in rec["errors"]], "gpu_warnings": [dict(n) for n in rec["warnings"]]}
        if not rec["gpus"]:
            failure = next((n for n in rec["errors"] if n["code"] == "driver_unreachable"), None)
            if failure is not None:
                return {"driver_failure": failure["message"][:300], "gpu_count": 0, "gpus": [], **status}
            return {"gpu_count": 0, "gpus": [], "no_devices": True, **status}
        return {
            **status,
            "gpu_count": rec["gpu_count"],
            "driver_version": rec["driver_version"],
            "cuda_version": rec["cuda_version"],
            "gpus": [
                {k: g.get(k) for k in (
                    "index", "name", "uuid", "pci_bus_id", "serial", "ecc_mode", "ecc_mode_pending",
                    "ecc_uncorrected_volatile", "retired_pages_pending", "remapped_rows_pending",
                    "remapped_rows_failure", "remapped_rows_uncorrectable", "persistence_mode",
                    "power_limit_w", "power_max_limit_w", "clocks_max_sm_mhz", "clocks_sm_mhz", "temperature_c",
                )}
                for g in rec["gpus"]
            ],
        }

    def evaluate(self, criterion: Criterion, params: InventoryParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        cid = criterion.id
        if metrics.get("driver_failure"):
            return [verdict(cid, node, Status.FAIL, "gpu_driver_failed", measured=metrics["driver_failure"],
                            expected="nvidia-smi lists the GPUs",
                            remediation="load the NVIDIA driver / fix the GPU; see dmesg for Xid and NVRM messages")]
        if metrics.get("no_devices"):
            return [verdict(cid, node, Status.FAIL, "no_gpu_found", measured=0, expected="nvidia-smi lists the GPUs",
                            details={"status": [n["message"] for n in metrics.get("gpu_errors", [])]},
                            remediation=self.remediation["gpu_count"])]
        out = self.check_expect(criterion, params, metrics, node)
        out += status_verdicts(cid, node, metrics)
        expect = criterion.expect or {}
        gpus: list[dict[str, Any]] = metrics.get("gpus") or []
        if "gpus_per_node" in expect:
            n = metrics.get("gpu_count")
            want = int(expect["gpus_per_node"])
            out.append(verdict(cid, node, Status.PASS if n == want else Status.FAIL,
                               "as_expected" if n == want else "gpu_count_mismatch", measured=n,
                               expected=f"{want} GPUs", details={"item": "gpus_per_node"},
                               remediation="" if n == want else self.remediation["gpu_count"]))
        if "model" in expect:
            want = str(expect["model"])
            wrong = sorted({str(g.get("name")) for g in gpus if want.lower() not in str(g.get("name") or "").lower()})
            names = ", ".join(sorted({str(g.get("name")) for g in gpus})) or "none"
            out.append(verdict(cid, node, Status.FAIL if wrong or not gpus else Status.PASS,
                               "model_mismatch" if wrong or not gpus else "as_expected", measured=names,
                               expected=f"model {want}", details={"item": "model"},
                               remediation="deliver the GPU model the contract names" if wrong or not gpus else ""))
        if "driver" in expect:
            have = metrics.get("driver_version")
            try:
                ok = satisfies(have, expect["driver"])
            except ConstraintError as exc:
                out.append(verdict(cid, node, Status.ERROR, "bad_constraint", measured=have,
                                   expected=f"driver {expect['driver']}", remediation=str(exc)))
            else:
                status = Status.ERROR if ok is None else Status.PASS if ok else Status.FAIL
                reason = "metric_missing" if ok is None else "as_expected" if ok else "constraint_not_met"
                out.append(verdict(cid, node, status, reason, measured=have, expected=f"driver {expect['driver']}",
                                   details={"item": "driver"},
                                   remediation="" if ok else "install the driver branch the contract names"))
        for key, field, label in (("ecc", "ecc_mode", "ECC"), ("persistence", "persistence_mode", "persistence mode")):
            if key in expect:
                want = bool(expect[key])
                out += _per_gpu(cid, node, gpus, lambda v, w=want: v is w,
                                f"{label} {'on' if want else 'off'}", f"{key}_mismatch", field,
                                f"set {label} {'on' if want else 'off'} (nvidia-smi -e / -pm) and reboot if pending")
        if "power_limit_w" in expect:
            lim = float(expect["power_limit_w"])
            out += _per_gpu(cid, node, gpus, lambda v: v >= lim,
                            f"power limit >= {fmt(lim)} W", "power_limit_low", "power_limit_w",
                            "restore the default power limit (nvidia-smi -pl) and check the BMC power capping")
        if "max_sm_clock_mhz" in expect:
            clk = float(expect["max_sm_clock_mhz"])
            out += _per_gpu(cid, node, gpus, lambda v: v >= clk,
                            f"max SM clock >= {fmt(clk)} MHz", "clock_low", "clocks_max_sm_mhz",
                            "remove application clock limits (nvidia-smi -rgc) and check for HW slowdown")
        out += memory_health(cid, node, gpus)
        if self.judged_metric(criterion) is not None:
            out.append(self.judge_metric(criterion, metrics, node))
        if not out:
            out.append(verdict(cid, node, Status.ERROR, "no_threshold", expected="expect: or metric:",
                               remediation="list what the inventory must show under `expect:`"))
        return out


STATUS_FIX = {
    "gpu_fell_off_bus": "the GPU dropped off PCIe: drain the node, reseat or replace the GPU (see dmesg for Xid 79)",
    "gpu_lost": "reboot the node to recover the GPU; replace it if it is lost again",
    "device_handle_unavailable": "the driver cannot reach this GPU: check dmesg for Xid/NVRM errors, reset or reboot",
    "field_error": "nvidia-smi could not read the GPU (ERR!): reset the GPU (nvidia-smi -r) or reboot, then recheck",
    "inforom_corrupted": "the GPU's InfoROM is corrupted: ECC and error counters cannot be trusted; "
                         "ask the vendor to reflash or replace the GPU",
}


def status_verdicts(cid: str, node: str | None, metrics: dict[str, Any]) -> list[Verdict]:
    """The nvidia-smi status lines next to a GPU listing: errors fail, warnings warn. Pure."""
    out = []
    for kind, status in (("gpu_errors", Status.FAIL), ("gpu_warnings", Status.WARN)):
        for n in metrics.get(kind) or []:
            out.append(verdict(cid, node, status, n["code"], measured=n["message"][:300],
                               expected="no nvidia-smi error or warning for any GPU",
                               remediation=STATUS_FIX.get(n["code"], "see the nvidia-smi output and dmesg"),
                               details={"item": "nvidia_smi_status", "pci_bus_id": n.get("device")}))
    return out


def _per_gpu(cid, node, gpus, ok, expected, reason, field, fix) -> list[Verdict]:
    if not gpus:
        return [verdict(cid, node, Status.FAIL, "no_gpu_found", measured=0, expected=expected,
                        remediation="no GPU listed by nvidia-smi", details={"item": field})]
    unknown = [g for g in gpus if g.get(field) is None]
    if unknown:
        return [verdict(cid, node, Status.ERROR, "metric_missing", measured="not in the output", expected=expected,
                        remediation="collect `nvidia-smi -q -x`, which reports this for every GPU",
                        details={"item": field, "gpus": [g.get("index") for g in unknown]})]
    bad = [g for g in gpus if not ok(g[field])]
    if not bad:
        return [verdict(cid, node, Status.PASS, "as_expected", measured=f"all {len(gpus)} GPUs", expected=expected,
                        details={"item": field})]
    return [verdict(cid, node, Status.FAIL, reason, measured=g[field], expected=expected, remediation=fix,
                    details={"item": field, "gpu": g.get("index"), "pci_bus_id": g.get("pci_bus_id")}) for g in bad]


def memory_health(cid: str, node: str | None, gpus: list[dict[str, Any]]) -> list[Verdict]:
    """Pending/failed row remaps, pending retired pages and uncorrectable volatile ECC: fail. Pure."""
    out = []
    for g in gpus:
        problems = []
        if g.get("remapped_rows_failure"):
            problems.append("row remapping failed")
        if g.get("remapped_rows_pending"):
            problems.append("row remap pending")
        if g.get("retired_pages_pending"):
            problems.append("page retirement pending")
        if (g.get("ecc_uncorrected_volatile") or 0) > 0:
            problems.append(f"{g['ecc_uncorrected_volatile']} uncorrectable ECC errors since boot")
        if problems:
            out.append(verdict(cid, node, Status.FAIL, "gpu_memory_unhealthy", measured="; ".join(problems),
                               expected="no pending or failed remaps, no uncorrectable errors",
                               remediation="reset the GPU to apply pending remaps; replace it if remapping failed",
                               details={"item": "memory_health", "gpu": g.get("index"), "pci_bus_id": g.get("pci_bus_id")}))
    # Row remapping (A100 and later) or page retirement (earlier GPUs) must be reported to judge health.
    fields = ("remapped_rows_pending", "remapped_rows_failure", "retired_pages_pending")
    silent = [g.get("index") for g in gpus if all(g.get(f) is None for f in fields)]
    if gpus and not out and silent:
        out.append(verdict(cid, node, Status.SKIP, "memory_health_not_reported", measured=f"{len(silent)} GPUs",
                           expected="no pending or failed remaps, no uncorrectable errors",
                           remediation="collect `nvidia-smi -q -x`, which reports remaps, retired pages and ECC",
                           details={"item": "memory_health", "gpus": silent}))
    elif gpus and not out:
        out.append(verdict(cid, node, Status.PASS, "as_expected", measured=f"all {len(gpus)} GPUs healthy",
                           expected="no pending or failed remaps, no uncorrectable errors",
                           details={"item": "memory_health"}))
    return out
