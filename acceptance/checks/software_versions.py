"""software.versions: driver, CUDA, NCCL, kernel, OS, fabric manager, container runtime,
Slurm and Kubernetes versions against the contract's constraints.

`versions_probe.py` gathers raw text on the node; `parse` extracts each version (pure).
A provider may hand over a transcript of standard commands instead (`nvidia-smi -q`,
`uname -r`, `ofed_info -s`, `dpkg -l` / `rpm -qa` excerpts, `/etc/os-release`; see
`versions_text`), judged the same way.
A component that is not installed is a `skip` with reason `<key>_not_found`, never a pass;
a component below its constraint is a `fail` with reason `constraint_not_met`.

expect keys: driver, cuda, nccl, kernel, os (`22.04`, `>=22.04` or `ubuntu>=22.04`),
fabric_manager (`running`), container_runtime (`enroot`, `docker>=24`), slurm, kubernetes,
ofed (MLNX_OFED / DOCA-OFED release from `ofed_info -s`).
"""

from __future__ import annotations

import re
from typing import Any

from acceptance.checks.base import Check, CheckParams, CollectContext, register, script
from acceptance.checks.constraint import ConstraintError, satisfies
from acceptance.checks.versions_text import versions_from_transcript
from acceptance.executors.base import RawOutput
from acceptance.judge import verdict
from acceptance.parsers._common import ParseError, iter_json_objects
from acceptance.results import Status, Verdict
from slaschema.models import Criterion

KEYS = ("driver", "cuda", "nccl", "kernel", "os", "fabric_manager", "container_runtime", "slurm", "kubernetes",
        "ofed")
RUNTIMES = ("enroot", "docker", "podman", "apptainer", "nvidia_container_cli")
FIX = {
    "driver": "install the NVIDIA driver branch the contract names",
    "cuda": "install the CUDA version the contract names (driver and toolkit)",
    "nccl": "install the NCCL version the contract names",
    "kernel": "boot the kernel version the contract names",
    "os": "install the OS release the contract names",
    "fabric_manager": "enable and start nvidia-fabricmanager (systemctl enable --now nvidia-fabricmanager)",
    "container_runtime": "install the container runtime the contract names",
    "slurm": "install the Slurm release the contract names",
    "kubernetes": "install the Kubernetes release the contract names",
    "ofed": "install the MLNX_OFED / DOCA-OFED release the contract names",
}


class VersionsParams(CheckParams):
    pass


def _text(value: Any) -> str | None:
    """A probe text: a string (probe format 1) or a list of its lines (format 2)."""
    if isinstance(value, list):
        return "\n".join(str(x) for x in value) + "\n"
    return None if value is None else str(value)


def _out(cmds: dict, name: str) -> str | None:
    c = cmds.get(name) or {}
    if c.get("rc") == 0 and c.get("stdout"):
        return _text(c["stdout"])
    return None


def _search(pattern: str, text: str | None, flags: int = 0) -> str | None:
    if not text:
        return None
    m = re.search(pattern, text, flags)
    return m.group(1) if m else None


def extract_versions(probe: dict[str, Any]) -> dict[str, Any]:
    """Probe JSON -> {driver, cuda, nccl, kernel, os, os_id, os_version, fabric_manager,
    container_runtime, runtimes, slurm, kubernetes}; None for what is not installed. Pure."""
    cmds = probe.get("commands") or {}
    files = {k: _text(v) for k, v in (probe.get("files") or {}).items()}
    driver = _search(r"^\s*(\d+(?:\.\d+)+)\s*$", _out(cmds, "nvidia_smi_query"), re.M) or _search(
        r"Kernel Module\s+(?:for \S+\s+)?(\d+(?:\.\d+)+)", files.get("nvidia_proc"))
    cuda = _search(r"CUDA Version:\s*(\d+(?:\.\d+)+)", _out(cmds, "nvidia_smi")) or _search(
        r"release\s+(\d+(?:\.\d+)+)", _out(cmds, "nvcc"))
    libs = [m.group(1) for p in probe.get("nccl_libraries") or []
            if (m := re.search(r"libnccl\.so\.(\d+\.\d+\.\d+)", str(p)))]
    nccl = max(libs, key=lambda s: tuple(int(x) for x in s.split("."))) if libs else probe.get("torch_nccl")
    osr = files.get("os_release") or ""
    os_id = _search(r'^ID="?([^"\n]+)"?', osr, re.M)
    os_version = _search(r'^VERSION_ID="?([^"\n]+)"?', osr, re.M)
    fm_cmd = cmds.get("fabric_manager") or {}
    if fm_cmd.get("missing") or fm_cmd.get("error"):
        fabric_manager = None
    else:
        state = (_text(fm_cmd.get("stdout")) or "").strip().splitlines()
        fabric_manager = state[0] if state else None
        if fabric_manager == "active":
            fabric_manager = "running"
    runtimes = {}
    for name in RUNTIMES:
        text = _out(cmds, name)
        if text:
            runtimes[name] = _search(r"(\d+(?:\.\d+)+)", text) or text.strip()[:40]
    slurm = _search(r"slurm(?:-wlm)?\s+(\d+(?:\.\d+)+)", _out(cmds, "sinfo") or _out(cmds, "slurmd"), re.I)
    kubernetes = _search(r"v(\d+(?:\.\d+)+)", _out(cmds, "kubelet"))
    return {
        "driver": driver,
        "cuda": cuda,
        "nccl": nccl,
        "kernel": probe.get("kernel"),
        "os": f"{os_id} {os_version}" if os_id and os_version else os_version,
        "os_id": os_id,
        "os_version": os_version,
        "fabric_manager": fabric_manager,
        "container_runtime": ", ".join(f"{k} {v}" for k, v in runtimes.items()) or None,
        "runtimes": runtimes,
        "slurm": slurm,
        "kubernetes": kubernetes,
        "ofed": _search(r"-(\d[\w.\-]*?):?\s*$", _out(cmds, "ofed_info"), re.M),
        "hostname": probe.get("slurm_node") or probe.get("hostname"),
    }


@register
class VersionsCheck(Check):
    id = "software.versions"
    Params = VersionsParams
    default_timeout_s = 120.0
    expect_keys = KEYS
    launch_failure = (Status.ERROR, "tool_missing", "the node needs python3 to run the version probe")

    def argv(self, params: VersionsParams, ctx: CollectContext) -> list[str]:
        return [ctx.python, script("versions_probe.py"), "20"]

    def parse(self, raw: RawOutput) -> dict[str, Any]:
        for _, doc in iter_json_objects(raw.stdout):
            if str(doc.get("probe", "")).startswith("slakit-versions/"):
                return extract_versions(doc)
        found = versions_from_transcript(raw.stdout)
        if found is not None:
            return found
        raise ParseError("versions probe", "neither the probe's JSON nor a transcript of standard commands "
                                           "(`$ nvidia-smi -q`, `$ uname -r`, ...; see docs/acceptance.md)")

    def evaluate(self, criterion: Criterion, params: VersionsParams, metrics: dict[str, Any],
                 node: str | None) -> list[Verdict]:
        expect = criterion.expect or {}
        out = self.check_expect(criterion, params, metrics, node)
        if not expect:
            return out + [verdict(criterion.id, node, Status.ERROR, "no_threshold",
                                  expected=f"expect: one of {', '.join(KEYS)}",
                                  remediation="list the version constraints under `expect:`")]
        for key, want in expect.items():
            if key in KEYS:
                out.append(judge_component(criterion.id, node, key, want, metrics))
        return out


def judge_component(cid: str, node: str | None, key: str, want: Any, m: dict[str, Any]) -> Verdict:
    """One expect entry against the extracted versions. Pure."""
    details = {"component": key}
    expected = f"{key} {want}"
    if key == "fabric_manager":
        state = m.get("fabric_manager")
        wanted = "running" if want is True or str(want).lower() in ("running", "active", "true") else str(want)
        if state is None:
            return verdict(cid, node, Status.SKIP, "fabric_manager_not_found", expected=expected,
                           remediation="systemd or the fabric manager service is not present on this node",
                           details=details)
        return verdict(cid, node, Status.PASS if state == wanted else Status.FAIL,
                       "as_expected" if state == wanted else "service_not_running", measured=state,
                       expected=expected, remediation="" if state == wanted else FIX[key], details=details)
    if key == "container_runtime":
        runtimes: dict[str, str] = m.get("runtimes") or {}
        if not runtimes:
            return verdict(cid, node, Status.SKIP, "container_runtime_not_found", expected=expected,
                           remediation=FIX[key], details=details)
        mm = re.match(r"^\s*([A-Za-z_-]+)\s*(.*)$", str(want))
        name = mm.group(1).replace("-", "_") if mm else str(want)
        cons = mm.group(2).strip() if mm else ""
        have = runtimes.get(name)
        measured = m.get("container_runtime")
        if have is None:
            return verdict(cid, node, Status.FAIL, "constraint_not_met", measured=measured, expected=expected,
                           remediation=FIX[key], details=details)
        return _versus(cid, node, key, have, cons, expected, details) if cons else verdict(
            cid, node, Status.PASS, "as_expected", measured=measured, expected=expected, details=details)
    value = m.get("os_version") if key == "os" else m.get(key)
    cons = str(want)
    if key == "os":
        mm = re.match(r"^\s*([A-Za-z][A-Za-z0-9_-]*)\s*(.*)$", cons)
        if mm:
            if value is not None and (m.get("os_id") or "").lower() != mm.group(1).lower():
                return verdict(cid, node, Status.FAIL, "constraint_not_met", measured=m.get("os"),
                               expected=expected, remediation=FIX[key], details=details)
            cons = mm.group(2).strip() or "0"
    if value is None:
        return verdict(cid, node, Status.SKIP, f"{key}_not_found", expected=expected,
                       remediation=f"{key} is not installed or not readable on this node", details=details)
    return _versus(cid, node, key, value, cons, expected, details)


def _versus(cid: str, node: str | None, key: str, value: str, cons: str, expected: str,
            details: dict[str, Any]) -> Verdict:
    try:
        ok = satisfies(value, cons)
    except ConstraintError as exc:
        return verdict(cid, node, Status.ERROR, "bad_constraint", measured=value, expected=expected,
                       remediation=str(exc), details=details)
    if ok is None:
        return verdict(cid, node, Status.ERROR, "metric_missing", measured=value, expected=expected,
                       remediation="the reported version holds no number", details=details)
    return verdict(cid, node, Status.PASS if ok else Status.FAIL, "as_expected" if ok else "constraint_not_met",
                   measured=value, expected=expected, remediation="" if ok else FIX[key], details=details)
