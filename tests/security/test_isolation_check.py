"""security.isolation: IOMMU, GPU device nodes, BMC/IPMI, Kubernetes (local servers only)."""

from __future__ import annotations

import os
import socket
import stat
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from acceptance.results import Status
from acceptance.security import audit_isolation as ai
from acceptance.security.audit import run_isolation
from acceptance.security.host import FileStat, Host


def raw(**kw) -> ai.IsolationRaw:
    base = dict(cmdline="BOOT_IMAGE=/vmlinuz root=/dev/sda1", iommu_groups=0, hypervisor=False, gpu_nodes=(),
                constrain_devices=None, ipmi_nodes=(), bmc=None, kubeconfig_server=None, kubeconfig_error=None,
                api_probe=None, kubelet_ro_probe=None, kubelet_probe=None, kubelet_config=None)
    base.update(kw)
    return ai.IsolationRaw(**base)


def chardev(path: str, mode: int) -> FileStat:
    return FileStat(path, stat.S_IFCHR | mode, 0, 0, False, True)


@pytest.mark.parametrize("kw,status,reason", [
    (dict(iommu_groups=112, cmdline="intel_iommu=on iommu=pt"), Status.PASS, "iommu_active"),
    (dict(iommu_groups=0, cmdline="intel_iommu=off"), Status.FAIL, "iommu_disabled"),
    (dict(iommu_groups=0), Status.FAIL, "iommu_inactive"),
    (dict(iommu_groups=None, hypervisor=True), Status.WARN, "iommu_not_visible_in_guest"),
    (dict(iommu_groups=0, hypervisor=True, cmdline="amd_iommu=off"), Status.FAIL, "iommu_disabled"),
])
def test_iommu(kw, status, reason):
    v = ai.evaluate_iommu(raw(**kw), "c", None)
    assert (v.status, v.reason) == (status, reason)


def test_gpu_device_nodes():
    nodes = (chardev("/dev/nvidia0", 0o666), chardev("/dev/nvidiactl", 0o666), chardev("/dev/nvidia-uvm", 0o666))
    v = ai.evaluate_gpu_nodes(raw(gpu_nodes=nodes), "c", None)
    assert (v.status, v.reason) == (Status.WARN, "gpu_device_world_accessible")
    v = ai.evaluate_gpu_nodes(raw(gpu_nodes=nodes, constrain_devices="yes"), "c", None)
    assert (v.status, v.reason) == (Status.PASS, "gpu_devices_cgroup_confined")
    v = ai.evaluate_gpu_nodes(raw(gpu_nodes=(chardev("/dev/nvidia0", 0o660),)), "c", None)
    assert (v.status, v.reason) == (Status.PASS, "gpu_devices_restricted")
    v = ai.evaluate_gpu_nodes(raw(gpu_nodes=(FileStat("/dev/nvidia0", stat.S_IFREG | 0o666, 0, 0, False, False),)), "c", None)
    assert (v.status, v.reason) == (Status.FAIL, "gpu_device_not_char")
    assert ai.evaluate_gpu_nodes(raw(), "c", None).reason == "no_gpu_device_nodes"


def test_fake_tree(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cmdline").write_text("intel_iommu=on iommu=pt quiet\n")
    (tmp_path / "proc/cpuinfo").write_text("processor\t: 0\nflags\t\t: fpu vme de pse\n")
    for g in range(3):
        (tmp_path / f"sys/kernel/iommu_groups/{g}/devices").mkdir(parents=True)
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/ipmi0").write_text("")
    (tmp_path / "dev/nvidia0").write_text("")           # a regular file where a device node belongs
    (tmp_path / "etc/slurm").mkdir(parents=True)
    (tmp_path / "etc/slurm/cgroup.conf").write_text("ConstrainCores=yes\nConstrainDevices=yes\n")
    out = run_isolation(Host(tmp_path), {})
    v = {x.details["subject"]: x for x in out}
    assert (v["IOMMU"].status, v["IOMMU"].measured) == (Status.PASS, "3 IOMMU groups; intel_iommu=on iommu=pt")
    assert v["GPU device nodes"].reason == "gpu_device_not_char"
    assert (v["in-band IPMI"].status, v["in-band IPMI"].reason) == (Status.FAIL, "bmc_in_band_reachable")
    assert (v["BMC network"].status, v["BMC network"].reason) == (Status.SKIP, "no_bmc_address")
    assert v["Kubernetes"].reason == "no_kubeconfig"


def test_bmc_connect_only_to_the_given_address():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        out = run_isolation(Host(), {"access": {"bmc_address": f"127.0.0.1:{port}"}})
        bmc = [x for x in out if x.details["subject"] == "BMC network"][0]
        assert (bmc.status, bmc.reason) == (Status.FAIL, "bmc_network_reachable")
    finally:
        srv.close()
    out = run_isolation(Host(), {}, params={"bmc_address": f"127.0.0.1:{port}", "connect_timeout_s": 1})
    bmc = [x for x in out if x.details["subject"] == "BMC network"][0]
    assert (bmc.status, bmc.reason) == (Status.PASS, "bmc_not_reachable")


@pytest.mark.parametrize("address,expected", [
    ("10.0.0.5", ("10.0.0.5", 443)), ("10.0.0.5:623", ("10.0.0.5", 623)),
    ("[fd00::5]:8443", ("fd00::5", 8443)), ("[fd00::5]", ("fd00::5", 443)), ("bmc-01.mgmt", ("bmc-01.mgmt", 443)),
])
def test_split_host_port(address, expected):
    assert ai.split_host_port(address, 443) == expected


class _Api(BaseHTTPRequestHandler):
    code = 401

    def do_GET(self):  # noqa: N802
        self.send_response(type(self).code)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


@pytest.fixture
def api_server():
    servers = []

    def start(code):
        handler = type("H", (_Api,), {"code": code})
        server = HTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {{server: "{server}"}}
contexts:
- name: tenant
  context: {{cluster: prod, user: tenant}}
current-context: tenant
users:
- name: tenant
  user: {{token: not-sent}}
"""


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("code,status,reason", [
    (401, Status.PASS, "anonymous_auth_disabled"),
    (403, Status.WARN, "anonymous_auth_enabled"),
    (200, Status.FAIL, "anonymous_api_access"),
])
def test_kubernetes_anonymous_auth(tmp_path, api_server, code, status, reason):
    kc = tmp_path / "kubeconfig"
    kc.write_text(KUBECONFIG.format(server=api_server(code)))
    out = run_isolation(Host(), {}, params={"kubeconfig": str(kc), "connect_timeout_s": 1})
    v = {x.details["subject"]: x for x in out}
    assert (v["Kubernetes API"].status, v["Kubernetes API"].reason) == (status, reason)
    assert v["Kubernetes API"].details["target"].endswith("/api")


def test_kubelet_ports_from_probes_and_config():
    ro_open = raw(kubelet_ro_probe=ai.Probe("http://127.0.0.1:10255/pods", True, 200),
                  kubelet_probe=ai.Probe("https://127.0.0.1:10250/pods", True, 401))
    v = {x.details["subject"]: x for x in ai.evaluate_kubernetes(ro_open, "c", None)}
    assert v["kubelet read-only port"].reason == "kubelet_read_only_port_open"
    assert (v["kubelet anonymous access"].status, v["kubelet anonymous access"].reason) == (Status.PASS, "kubelet_anonymous_rejected")
    cfg = "readOnlyPort: 10255\nauthentication:\n  anonymous:\n    enabled: true\n"
    closed = raw(kubelet_ro_probe=ai.Probe("x", False, error="refused"), kubelet_probe=ai.Probe("y", False, error="refused"),
                 kubelet_config=cfg)
    v = {x.details["subject"]: x for x in ai.evaluate_kubernetes(closed, "c", None)}
    assert v["kubelet read-only port"].status is Status.FAIL              # configured even if not answering now
    assert v["kubelet anonymous access"].reason == "kubelet_anonymous_auth"


def test_kubelet_closed_on_this_host(tmp_path, api_server):
    kc = tmp_path / "kubeconfig"
    kc.write_text(KUBECONFIG.format(server=api_server(401)))
    out = run_isolation(Host(), {}, params={"kubeconfig": str(kc), "kubelet_host": "127.0.0.1", "connect_timeout_s": 1})
    v = {x.details["subject"]: x for x in out}
    with socket.socket() as s:
        s.settimeout(1)
        listening = s.connect_ex(("127.0.0.1", 10255)) == 0
    assert v["kubelet read-only port"].status is (Status.FAIL if listening else Status.PASS)


def test_bad_kubeconfig(tmp_path):
    kc = tmp_path / "kubeconfig"
    kc.write_text("clusters: []\n")
    out = run_isolation(Host(), {}, params={"kubeconfig": str(kc), "connect_timeout_s": 0.5})
    assert any(x.status is Status.ERROR and x.reason == "kubeconfig_unreadable" for x in out)


# ---------------------------------------------------------------- this machine, for real

def test_real_machine_isolation():
    out = run_isolation(Host(), {})
    v = {x.details["subject"]: x for x in out}
    groups = os.listdir("/sys/kernel/iommu_groups") if os.path.isdir("/sys/kernel/iommu_groups") else []
    if groups:
        assert v["IOMMU"].reason == "iommu_active" and v["IOMMU"].measured.startswith(f"{len(groups)} IOMMU groups")
    else:
        assert v["IOMMU"].status in (Status.FAIL, Status.WARN)
    gpu = sorted(str(p) for p in Path("/dev").glob("nvidia*"))
    if not gpu:
        assert v["GPU device nodes"].reason == "no_gpu_device_nodes"
    else:
        assert set(gpu) <= set(v["GPU device nodes"].details["modes"])
    ipmi = list(Path("/dev").glob("ipmi*"))
    assert v["in-band IPMI"].status is (Status.FAIL if ipmi else Status.PASS)
