"""security.versions on fixtures (driver, firmware, container stack) and for real on this machine."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from acceptance.results import Status
from acceptance.security import audit_versions as av
from acceptance.security.host import CommandResult, Host, table_runner
from acceptance.security.minimums import load_minimums, parse_table

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
SHARED = Path(__file__).resolve().parents[2].parent / "shared"
PROC_DRIVER = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  "
               "(dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 21:29:37 UTC 2025\nGCC version:  gcc version 12.2.0\n")
OUTPUTS = {
    "nvcc --version": "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.1, V13.1.80\n",
    "nvidia-ctk --version": "NVIDIA Container Toolkit CLI version 1.17.4\ncommit: 9b69590\n",
    "runc --version": "runc version 1.2.9\ncommit: v1.2.9-0-g1b2c3d4\nspec: 1.2.0\ngo: go1.23.4\nlibseccomp: 2.5.5\n",
    "dockerd --version": "Docker version 28.3.1, build 38b7060\n",
    "containerd --version": "containerd containerd.io 1.7.27 05044ec0a9a75232cad458027ca83437aae3f4da\n",
    "dcgmi --version": "\ndcgmi  version: 4.5.3\n\n",
    "dcgm-exporter --version": "dcgm-exporter version 4.5.3-4.8.1\n",
    "uname -r": "6.8.0-124-generic\n",
    "dpkg-query -W -f ${Package}\t${Version}\t${Status}\n linux-image-*":
        "linux-image-6.8.0-124-generic\t6.8.0-124.124\tinstall ok installed\n"
        "linux-image-6.8.0-137-generic\t6.8.0-137.137\tdeinstall ok config-files\n",
}
OS_RELEASE = 'PRETTY_NAME="Ubuntu 24.04.3 LTS"\nID=ubuntu\nVERSION_CODENAME=noble\n'


def fake_tree(root: Path, fw: dict[str, str], driver: str | None = PROC_DRIVER) -> None:
    if driver:
        (root / "proc/driver/nvidia").mkdir(parents=True)
        (root / "proc/driver/nvidia/version").write_text(driver)
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc/os-release").write_text(OS_RELEASE)
    for dev, ver in fw.items():
        d = root / "sys/class/infiniband" / dev
        d.mkdir(parents=True)
        (d / "fw_ver").write_text(ver + "\n")


def by_subject(verdicts):
    return {v.details["subject"]: v for v in verdicts}


def test_fixture_node(tmp_path):
    fake_tree(tmp_path, {"mlx5_0": "28.41.1000", "mlx5_1": "28.47.2526", "mlx5_2": "40.46.5500"})
    host = Host(tmp_path, run=table_runner(OUTPUTS))
    obs = av.parse(av.collect(host))
    verdicts = av.evaluate(obs, load_minimums(), NOW, "sec-ver", "gpu-01")
    v = by_subject(verdicts)
    assert all(x.criterion == "sec-ver" and x.node == "gpu-01" for x in verdicts)
    assert (v["minimum-version table"].status, v["minimum-version table"].reason) == (Status.PASS, "table_current")

    drv = v["nvidia_driver"]
    assert (drv.status, drv.reason, drv.measured, drv.expected) == (Status.FAIL, "below_minimum", "570.86.15",
                                                                      ">= 570.211.01 (line 570)")
    assert drv.details["advisories"][0]["source"] == "https://nvidia.custhelp.com/app/answers/detail/a_id/5747/"
    assert drv.remediation
    assert (v["cuda_toolkit"].status, v["cuda_toolkit"].measured) == (Status.PASS, "13.1.80")
    ctk = v["nvidia_container_toolkit"]
    assert (ctk.status, ctk.reason) == (Status.FAIL, "below_minimum")
    assert ctk.details["cves"] == ["CVE-2026-24260"]
    assert "https://www.cve.org/CVERecord?id=CVE-2026-24260" in ctk.details["advisories"][0]["links"]
    assert (v["runc"].status, v["runc"].details["line"]) == (Status.PASS, "1.2")          # 1.2.9 >= 1.2.8
    assert (v["docker_engine"].status, v["docker_engine"].reason) == (Status.FAIL, "unsupported_line")  # 28 < 29
    assert (v["containerd"].status, v["containerd"].reason) == (Status.SKIP, "no_minimum_in_table")
    assert v["dcgm"].status is Status.PASS
    exp = v["dcgm_exporter"]
    assert (exp.status, exp.measured, exp.details["built_with_dcgm"]) == (Status.FAIL, "4.8.1", "4.5.3")
    assert (v["connectx_firmware[mlx5_0]"].status, v["connectx_firmware[mlx5_0]"].reason) == (Status.FAIL, "below_minimum")
    assert v["connectx_firmware[mlx5_1]"].status is Status.PASS
    assert (v["connectx_firmware[mlx5_2]"].status, v["connectx_firmware[mlx5_2]"].reason) == (Status.WARN, "line_not_in_table")
    kern = v["linux_kernel_ubuntu_noble"]
    assert (kern.status, kern.measured, kern.expected) == (Status.FAIL, "6.8.0-124.124", ">= 6.8.0-137.137 (line 6.8.0)")
    # Only the advisory the kernel misses is cited (it has the USN-8373-1 fix already).
    assert [a["advisory"] for a in kern.details["advisories"]] == ["USN-8630-1 (Januscape)"]
    assert kern.details["cves"] == ["CVE-2026-53359"]


def test_realdata_sysfs_firmware(tmp_path):
    snap = SHARED / "realdata" / "ib_sysfs_snapshot_h100_gpud.txt"
    if not snap.exists():
        pytest.skip(f"{snap} not present (shared realdata lives next to the repository)")
    fw = {}
    for line in snap.read_text().splitlines():
        m = re.match(r"(\S+)/fw_ver: (\S+)$", line)
        if m:
            fw[m.group(1)] = m.group(2)
    fake_tree(tmp_path, fw, driver=None)
    obs = av.parse(av.collect(Host(tmp_path)))
    verdicts = [v for v in av.evaluate(obs, load_minimums(), NOW) if v.details.get("component") == "connectx_firmware"]
    cx7 = [v for v in verdicts if v.measured == "28.41.1000"]
    bf3 = [v for v in verdicts if v.measured == "32.38.3056"]
    assert len(cx7) == 8 and all(v.status is Status.FAIL and v.reason == "below_minimum" for v in cx7)
    # BlueField-3 32.38.3056 is past the 32.1908 floor (32.19.08xx).
    assert len(bf3) == 1 and bf3[0].status is Status.PASS and bf3[0].expected == ">= 32.1908 (line 32)"
    assert bf3[0].details["device"] == "mlx5_bond_0"


def test_realdata_driver_versions():
    # Driver versions as printed by real nvidia-smi outputs, judged per branch.
    table = load_minimums()
    cases = {"590.48.01": Status.PASS, "560.35.03": Status.FAIL, "535.54.03": Status.FAIL}
    for version, status in cases.items():
        v = av.evaluate_installed(av.Installed("nvidia_driver", version, "nvidia-smi"), table, "c", None)
        assert v.status is status, (version, v)
    assert av.evaluate_installed(av.Installed("nvidia_driver", "560.35.03", "x"), table, "c", None).reason == "unsupported_line"


def test_nvidia_smi_fallback_and_tool_failures(tmp_path):
    fake_tree(tmp_path, {}, driver=None)
    outputs = {
        "nvidia-smi --query-gpu=driver_version --format=csv,noheader": "580.159.03\n580.159.03\n",
        "runc --version": CommandResult(("runc", "--version"), 1, "", "runc: error while loading shared libraries"),
        "containerd --version": "containerd: something unexpected\n",
    }
    obs = av.parse(av.collect(Host(tmp_path, run=table_runner(outputs))))
    v = by_subject(av.evaluate(obs, load_minimums(), NOW))
    assert (v["nvidia_driver"].status, v["nvidia_driver"].measured) == (Status.PASS, "580.159.03")
    assert (v["runc"].status, v["runc"].reason) == (Status.ERROR, "tool_failed")
    assert (v["containerd"].status, v["containerd"].reason) == (Status.ERROR, "unparseable_output")
    assert (v["dcgm"].status, v["dcgm"].reason) == (Status.SKIP, "tool_not_found")
    assert (v["connectx_firmware"].status, v["connectx_firmware"].reason) == (Status.SKIP, "no_devices")
    assert not any(x.status is Status.PASS for k, x in v.items() if k not in ("nvidia_driver", "minimum-version table"))


def test_unsigned_kernel_package_and_other_release(tmp_path):
    fake_tree(tmp_path, {}, driver=None)
    outputs = dict(OUTPUTS)
    outputs["dpkg-query -W -f ${Package}\t${Version}\t${Status}\n linux-image-*"] = (
        "linux-image-unsigned-6.8.0-124-generic\t6.8.0-124.124\tinstall ok installed\n")
    v = by_subject(av.evaluate(av.parse(av.collect(Host(tmp_path, run=table_runner(outputs)))), load_minimums(), NOW))
    assert v["linux_kernel_ubuntu_noble"].details["source"] == "dpkg-query linux-image-unsigned-6.8.0-124-generic"
    (tmp_path / "etc/os-release").write_text("ID=ubuntu\nVERSION_CODENAME=jammy\n")
    v = by_subject(av.evaluate(av.parse(av.collect(Host(tmp_path, run=table_runner(outputs)))), load_minimums(), NOW))
    assert (v["linux_kernel_ubuntu_jammy"].status, v["linux_kernel_ubuntu_jammy"].reason) == (Status.SKIP, "no_minimum_in_table")


@pytest.mark.parametrize("version,status,reason", [
    ("24.10.50", Status.PASS, "at_or_above_minimum"),
    ("24.10.49", Status.FAIL, "below_minimum"),
    ("25.10.1", Status.FAIL, "below_minimum"),
    ("25.10.4", Status.WARN, "line_ambiguous"),     # passes LTS25 (25.10.2), not GA (25.10.6)
    ("25.10.6", Status.PASS, "at_or_above_minimum"),
    ("26.4.0", Status.PASS, "at_or_above_minimum"),  # no LTS26: the GA line, past 25.10.6
])
def test_virtio_net_lines(version, status, reason):
    v = av.evaluate_installed(av.Installed("virtio_net_bluefield", version, "fixture"), load_minimums(), "c", None)
    assert (v.status, v.reason) == (status, reason)


def test_unparseable_installed_version_is_an_error():
    v = av.evaluate_installed(av.Installed("runc", "1.2.x-dev", "runc --version"), load_minimums(), "c", None)
    assert (v.status, v.reason) == (Status.ERROR, "unparseable_version")


def test_stale_table_warns():
    table = parse_table('{"generated": "2026-06-01", "components": {"runc": {"branches": {"1.2": "1.2.8"}}}}', "t")
    obs = av.VersionsObservation((av.Installed("runc", "1.2.10", "runc --version"),), ())
    out = av.evaluate(obs, table, NOW)
    assert (out[0].status, out[0].reason, out[0].details["age_days"]) == (Status.WARN, "table_stale", 182)
    assert out[1].status is Status.PASS


# ---------------------------------------------------------------- this machine, for real

def test_real_machine_versions():
    obs = av.parse(av.collect(Host()))
    verdicts = av.evaluate(obs, load_minimums(), NOW, node="this-host")
    v = by_subject(verdicts)
    # Every known component is accounted for: judged, or skipped/errored with a reason.
    components = {x.details.get("component") for x in verdicts if x.details.get("component")}
    for comp in ("nvidia_driver", "cuda_toolkit", "runc", "docker_engine", "dcgm", "connectx_firmware"):
        assert comp in components
    for x in verdicts:
        assert x.reason and x.status in set(Status)
        if x.status is Status.SKIP:
            assert x.details.get("detail") or x.reason == "no_minimum_in_table"
    if shutil.which("nvidia-smi") is None and not Path("/proc/driver/nvidia/version").exists():
        assert (v["nvidia_driver"].status, v["nvidia_driver"].reason) == (Status.SKIP, "tool_not_found")
    if shutil.which("nvcc"):
        out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
        release = re.search(r"V(\d+\.\d+\.\d+)", out).group(1)
        cuda = v["cuda_toolkit"]
        assert cuda.measured == release
        major, minor = map(int, release.split(".")[:2])
        assert cuda.status is (Status.PASS if (major, minor) >= (13, 1) else Status.FAIL)
    # The kernel: judged from the running kernel's own package, or skipped saying why.
    release = subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()
    kern = [x for x in verdicts if str(x.details.get("component", "")).startswith("linux_kernel")]
    assert len(kern) == 1
    pkg = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", f"linux-image-{release}"],
                         capture_output=True, text=True) if shutil.which("dpkg-query") else None
    if pkg is not None and pkg.returncode == 0 and pkg.stdout:
        assert kern[0].measured == pkg.stdout
    else:
        assert kern[0].reason in ("kernel_not_packaged", "tool_not_found")
        assert release in kern[0].details["detail"]
