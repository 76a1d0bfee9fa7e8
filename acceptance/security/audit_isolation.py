"""`security.isolation`: is the tenant fenced off from the hardware and the control plane?

- IOMMU on: /sys/kernel/iommu_groups populated; /proc/cmdline for `*iommu=off`.
- GPU device node permissions (/dev/nvidia*, /dev/nvidia-caps/*), with Slurm's
  `ConstrainDevices=yes` taken into account.
- BMC/IPMI: an in-band IPMI device node (/dev/ipmi*), and, only when the caller names a BMC
  address, one bounded TCP connect to it (never a scan).
- Kubernetes (only when a kubeconfig is given): does the API server answer anonymous requests,
  is the kubelet read-only port (10255) open, does the kubelet (10250) accept anonymous requests.
  Probes carry no credentials.

collect(host, params) -> IsolationRaw (IO); evaluate(raw, ...) -> list[Verdict] (pure).
"""

from __future__ import annotations

import re
import socket
import ssl
import stat as st
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from acceptance.results import Status, Verdict

from .host import FileStat, Host

CHECK = "security.isolation"
GPU_GLOBS = ["/dev/nvidia*", "/dev/nvidia-caps/*"]
IPMI_GLOBS = ["/dev/ipmi*", "/dev/ipmi/*", "/dev/ipmidev/*"]
CGROUP_CONFS = ["/etc/slurm/cgroup.conf", "/etc/slurm-llnl/cgroup.conf"]
KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"
DEFAULT_BMC_PORT = 443


@dataclass(frozen=True)
class IsolationParams:
    bmc_address: str | None = None     # "10.0.0.5", "10.0.0.5:623", "[fd00::5]:443"
    kubeconfig: str | None = None      # path on the audited host
    kubelet_host: str = "127.0.0.1"
    connect_timeout_s: float = 2.0


def params_from(criterion_params: Mapping[str, Any] | None) -> IsolationParams:
    cp = dict(criterion_params or {})
    return IsolationParams(
        bmc_address=cp.get("bmc_address"), kubeconfig=cp.get("kubeconfig"),
        kubelet_host=str(cp.get("kubelet_host", "127.0.0.1")),
        connect_timeout_s=float(cp.get("connect_timeout_s", 2.0)),
    )


@dataclass(frozen=True)
class Probe:
    target: str
    connected: bool
    http_status: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class IsolationRaw:
    cmdline: str | None
    iommu_groups: int | None           # None: /sys/kernel/iommu_groups missing
    hypervisor: bool
    gpu_nodes: tuple[FileStat, ...]
    constrain_devices: str | None      # value of ConstrainDevices in cgroup.conf, if any
    ipmi_nodes: tuple[FileStat, ...]
    bmc: Probe | None
    kubeconfig_server: str | None
    kubeconfig_error: str | None
    api_probe: Probe | None
    kubelet_ro_probe: Probe | None
    kubelet_probe: Probe | None
    kubelet_config: str | None


# ---------------------------------------------------------------- collect (IO)

def split_host_port(address: str, default_port: int) -> tuple[str, int]:
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\](?::(\d+))?", address.strip())
    if m:
        return m.group(1), int(m.group(2) or default_port)
    if address.count(":") == 1:
        h, p = address.rsplit(":", 1)
        return h, int(p)
    return address.strip(), default_port


def tcp_probe(host: str, port: int, timeout: float) -> Probe:
    target = f"{host}:{port}"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return Probe(target, True)
    except OSError as exc:
        return Probe(target, False, error=f"{type(exc).__name__}: {exc}")


def http_probe(url: str, timeout: float) -> Probe:
    """GET without credentials. TLS is not verified: nothing secret is sent, and the question is
    only whether the endpoint answers anonymously."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(urllib.request.Request(url), timeout=timeout, context=ctx) as resp:  # noqa: S310
            return Probe(url, True, resp.status)
    except urllib.error.HTTPError as exc:
        return Probe(url, True, exc.code)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Probe(url, False, error=f"{type(reason).__name__}: {reason}")


def _safe_yaml(text: str) -> dict:
    """`yaml.safe_load` after the alias-bomb and depth check; a mapping, or ValueError."""
    from slaschema.errors import InputError
    from slaschema.strict_yaml import check_complexity

    try:
        check_complexity(text)
    except InputError as exc:
        raise ValueError(exc.problems[0].message) from None
    doc = yaml.safe_load(text) or {}
    if not isinstance(doc, dict):
        raise ValueError("not a YAML mapping")
    return doc


def kubeconfig_server(text: str) -> str:
    """The API server URL of the kubeconfig's current context (or its only cluster)."""
    doc = _safe_yaml(text)
    clusters = {c.get("name"): (c.get("cluster") or {}) for c in doc.get("clusters") or []}
    contexts = {c.get("name"): (c.get("context") or {}) for c in doc.get("contexts") or []}
    current = doc.get("current-context")
    name = (contexts.get(current) or {}).get("cluster") if current else None
    if name is None and len(clusters) == 1:
        name = next(iter(clusters))
    server = (clusters.get(name) or {}).get("server")
    if not server:
        raise ValueError("no server for the current context")
    return str(server).rstrip("/")


def collect(host: Host, params: IsolationParams) -> IsolationRaw:
    groups = host.listdir("/sys/kernel/iommu_groups")
    cpuinfo = host.read_text("/proc/cpuinfo") or ""
    hypervisor = bool(re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.M))
    gpu = tuple(s for g in GPU_GLOBS for p in host.glob(g) if (s := host.stat(p)) is not None and not s.is_dir)
    constrain = None
    for conf in CGROUP_CONFS:
        text = host.read_text(conf)
        if text:
            m = re.search(r"^\s*ConstrainDevices\s*=\s*(\S+)", text, re.M | re.I)
            if m:
                constrain = m.group(1)
    ipmi = tuple(s for g in IPMI_GLOBS for p in host.glob(g) if (s := host.stat(p)) is not None and not s.is_dir)
    bmc = None
    if params.bmc_address:
        h, p = split_host_port(params.bmc_address, DEFAULT_BMC_PORT)
        bmc = tcp_probe(h, p, params.connect_timeout_s)
    server = kerr = None
    api = ro = kubelet = None
    kcfg = None
    if params.kubeconfig:
        text = host.read_text(params.kubeconfig)
        if text is None:
            kerr = f"cannot read {params.kubeconfig}"
        else:
            try:
                server = kubeconfig_server(text)
            except (ValueError, yaml.YAMLError, AttributeError) as exc:
                kerr = f"{params.kubeconfig}: {exc}"
        if server:
            api = http_probe(server + "/api", params.connect_timeout_s)
        kh = params.kubelet_host
        kh_url = f"[{kh}]" if ":" in kh else kh
        ro = http_probe(f"http://{kh_url}:10255/pods", params.connect_timeout_s)
        kubelet = http_probe(f"https://{kh_url}:10250/pods", params.connect_timeout_s)
        kcfg = host.read_text(KUBELET_CONFIG)
    return IsolationRaw(host.read_text("/proc/cmdline"), None if groups is None else len(groups), hypervisor,
                        gpu, constrain, ipmi, bmc, server, kerr, api, ro, kubelet, kcfg)


# ---------------------------------------------------------------- evaluate (pure)

def _v(criterion: str, node: str | None, status: Status, subject: str, measured: Any, expected: str,
       reason: str, remediation: str = "", **details: Any) -> Verdict:
    return Verdict(criterion, node, status, measured, expected, reason, remediation, {"subject": subject, **details})


def cmdline_iommu(cmdline: str) -> dict[str, str]:
    out = {}
    for tok in cmdline.split():
        k, _, v = tok.partition("=")
        if k in ("intel_iommu", "amd_iommu", "iommu", "amd_iommu_intr"):
            out[k] = v
    return out


def evaluate_iommu(raw: IsolationRaw, criterion: str, node: str | None) -> Verdict:
    flags = cmdline_iommu(raw.cmdline or "")
    shown = " ".join(f"{k}={v}" for k, v in flags.items()) or "no iommu flags"
    fix = "Enable VT-d/AMD-Vi in the firmware and boot with intel_iommu=on (iommu=pt is fine); then reboot."
    if raw.iommu_groups:
        return _v(criterion, node, Status.PASS, "IOMMU", f"{raw.iommu_groups} IOMMU groups; {shown}",
                  "IOMMU on (groups present)", "iommu_active", cmdline_flags=flags)
    off = [k for k, v in flags.items() if v.split(",")[0] == "off"]
    if off:
        return _v(criterion, node, Status.FAIL, "IOMMU", shown, "IOMMU on", "iommu_disabled", fix, cmdline_flags=flags)
    if raw.hypervisor:
        return _v(criterion, node, Status.WARN, "IOMMU", f"no IOMMU groups in this virtual machine; {shown}",
                  "IOMMU on", "iommu_not_visible_in_guest",
                  "Device isolation is enforced by the hypervisor here; ask the provider for the host's IOMMU "
                  "evidence, or expose a virtual IOMMU to the guest.", cmdline_flags=flags)
    return _v(criterion, node, Status.FAIL, "IOMMU", f"no IOMMU groups; {shown}", "IOMMU on", "iommu_inactive", fix,
              cmdline_flags=flags)


def evaluate_gpu_nodes(raw: IsolationRaw, criterion: str, node: str | None) -> Verdict:
    if not raw.gpu_nodes:
        return _v(criterion, node, Status.SKIP, "GPU device nodes", None, "/dev/nvidia* present", "no_gpu_device_nodes")
    listing = {s.path: f"{st.S_IMODE(s.mode):04o}" for s in raw.gpu_nodes}
    not_char = [s.path for s in raw.gpu_nodes if not s.is_char_device]
    if not_char:
        return _v(criterion, node, Status.FAIL, "GPU device nodes", ", ".join(not_char), "character devices",
                  "gpu_device_not_char", "Remove the stray files and let the driver recreate the device nodes.",
                  modes=listing)
    open_nodes = [s.path for s in raw.gpu_nodes if st.S_IMODE(s.mode) & 0o006]
    confined = (raw.constrain_devices or "").lower() == "yes"
    if not open_nodes:
        return _v(criterion, node, Status.PASS, "GPU device nodes", "no access for others", "mode 0660 or stricter",
                  "gpu_devices_restricted", modes=listing)
    if confined:
        return _v(criterion, node, Status.PASS, "GPU device nodes", f"{len(open_nodes)} world-accessible, "
                  "confined by Slurm ConstrainDevices=yes", "per-job device confinement", "gpu_devices_cgroup_confined",
                  modes=listing)
    return _v(criterion, node, Status.WARN, "GPU device nodes", ", ".join(f"{p} {listing[p]}" for p in open_nodes[:8]),
              "mode 0660 with a GPU group, or per-job device cgroups", "gpu_device_world_accessible",
              "Set NVreg_DeviceFileMode=0660 and NVreg_DeviceFileGID in the nvidia module options, or set "
              "ConstrainDevices=yes in Slurm's cgroup.conf so a job sees only its GPUs.", modes=listing)


def evaluate_bmc(raw: IsolationRaw, criterion: str, node: str | None) -> list[Verdict]:
    out = []
    if raw.ipmi_nodes:
        out.append(_v(criterion, node, Status.FAIL, "in-band IPMI",
                      ", ".join(f"{s.path} {st.S_IMODE(s.mode):04o}" for s in raw.ipmi_nodes), "no IPMI device node",
                      "bmc_in_band_reachable",
                      "Unload and blacklist ipmi_devintf/ipmi_si on tenant nodes, or disable the BMC's in-band "
                      "(KCS/host interface) access; with it root on the node can reconfigure the BMC."))
    else:
        out.append(_v(criterion, node, Status.PASS, "in-band IPMI", "no /dev/ipmi*", "no IPMI device node",
                      "no_ipmi_device"))
    if raw.bmc is None:
        out.append(_v(criterion, node, Status.SKIP, "BMC network", None, "no connection to the BMC", "no_bmc_address",
                      detail="no BMC address given; nothing is probed without one"))
    elif raw.bmc.connected:
        out.append(_v(criterion, node, Status.FAIL, "BMC network", f"{raw.bmc.target} accepted a connection",
                      "no connection to the BMC", "bmc_network_reachable",
                      "Put BMCs on a management network the tenant hosts cannot route to (ACL/VLAN)."))
    else:
        out.append(_v(criterion, node, Status.PASS, "BMC network", f"{raw.bmc.target}: {raw.bmc.error}",
                      "no connection to the BMC", "bmc_not_reachable"))
    return out


def _kubelet_config(text: str) -> tuple[int | None, bool | None]:
    try:
        doc = _safe_yaml(text)
    except (yaml.YAMLError, ValueError):
        return None, None
    ro = doc.get("readOnlyPort")
    anon = ((doc.get("authentication") or {}).get("anonymous") or {}).get("enabled")
    return (int(ro) if ro is not None else None), (bool(anon) if anon is not None else None)


def evaluate_kubernetes(raw: IsolationRaw, criterion: str, node: str | None) -> list[Verdict]:
    if raw.api_probe is None and raw.kubeconfig_error is None and raw.kubelet_ro_probe is None:
        return [_v(criterion, node, Status.SKIP, "Kubernetes", None, "a kubeconfig to audit", "no_kubeconfig")]
    out = []
    if raw.kubeconfig_error:
        out.append(_v(criterion, node, Status.ERROR, "Kubernetes API", None, "a readable kubeconfig",
                      "kubeconfig_unreadable", error=raw.kubeconfig_error))
    elif raw.api_probe is not None:
        p = raw.api_probe
        if not p.connected:
            out.append(_v(criterion, node, Status.ERROR, "Kubernetes API", p.error, "an answer from the API server",
                          "api_unreachable", target=p.target))
        elif p.http_status == 401:
            out.append(_v(criterion, node, Status.PASS, "Kubernetes API", "401 to an anonymous request",
                          "anonymous requests rejected (401)", "anonymous_auth_disabled", target=p.target))
        elif p.http_status == 403:
            out.append(_v(criterion, node, Status.WARN, "Kubernetes API", "403 to an anonymous request",
                          "anonymous requests rejected (401)", "anonymous_auth_enabled",
                          "Start kube-apiserver with --anonymous-auth=false (or restrict anonymous to health endpoints "
                          "with an AuthenticationConfiguration).", target=p.target))
        elif p.http_status is not None and 200 <= p.http_status < 300:
            out.append(_v(criterion, node, Status.FAIL, "Kubernetes API", f"{p.http_status} to an anonymous request",
                          "anonymous requests rejected (401)", "anonymous_api_access",
                          "Set --anonymous-auth=false and remove RBAC bindings for system:anonymous / "
                          "system:unauthenticated.", target=p.target))
        else:
            out.append(_v(criterion, node, Status.WARN, "Kubernetes API", f"HTTP {p.http_status}",
                          "anonymous requests rejected (401)", "api_unexpected_status", target=p.target))
    ro_port, anon = _kubelet_config(raw.kubelet_config) if raw.kubelet_config else (None, None)
    ro = raw.kubelet_ro_probe
    if ro is not None:
        if ro.connected or (ro_port not in (None, 0)):
            out.append(_v(criterion, node, Status.FAIL, "kubelet read-only port",
                          f"{ro.target} answered HTTP {ro.http_status}" if ro.connected else f"readOnlyPort: {ro_port}",
                          "read-only port 10255 closed (readOnlyPort: 0)", "kubelet_read_only_port_open",
                          "Set readOnlyPort: 0 in the kubelet configuration and restart the kubelet."))
        else:
            out.append(_v(criterion, node, Status.PASS, "kubelet read-only port", ro.error,
                          "read-only port 10255 closed", "kubelet_read_only_port_closed"))
    k = raw.kubelet_probe
    if k is not None:
        open_anon = (k.connected and k.http_status is not None and 200 <= k.http_status < 300) or anon is True
        if open_anon:
            out.append(_v(criterion, node, Status.FAIL, "kubelet anonymous access",
                          f"{k.target} answered HTTP {k.http_status}" if k.connected else "authentication.anonymous.enabled: true",
                          "anonymous kubelet requests rejected", "kubelet_anonymous_auth",
                          "Set authentication.anonymous.enabled: false and authorization.mode: Webhook in the kubelet config."))
        elif k.connected:
            out.append(_v(criterion, node, Status.PASS, "kubelet anonymous access", f"HTTP {k.http_status}",
                          "anonymous kubelet requests rejected", "kubelet_anonymous_rejected"))
        else:
            out.append(_v(criterion, node, Status.SKIP, "kubelet anonymous access", k.error,
                          "a kubelet on this host", "kubelet_not_listening"))
    return out


def evaluate(raw: IsolationRaw, criterion: str = CHECK, node: str | None = None) -> list[Verdict]:
    return ([evaluate_iommu(raw, criterion, node), evaluate_gpu_nodes(raw, criterion, node)]
            + evaluate_bmc(raw, criterion, node) + evaluate_kubernetes(raw, criterion, node))
