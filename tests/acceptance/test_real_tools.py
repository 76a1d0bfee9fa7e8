"""Checks against real components on this machine: fio on a temp dir, iperf3 over loopback,
an S3-compatible server (moto in server mode), the CPU burn loop and the version probe."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.request
from decimal import Decimal
from pathlib import Path

import pytest

from acceptance.checks import get_check
from acceptance.checks.base import CollectContext, judge_output
from acceptance.executors.local import LocalExecutor
from acceptance.results import Status
from slaschema.models import Criterion
from tests.acceptance.conftest import free_port


def run_check(crit: Criterion, timeout: float = 120.0):
    check = get_check(crit.check)
    params = check.params(crit)
    ctx = CollectContext(executor=LocalExecutor(), nodes=("local",), timeout_s=timeout)
    outputs = check.collect(params, ctx)
    ((node, raw),) = outputs.items()
    metrics, verdicts = judge_output(check, crit, params, node, raw)
    return raw, metrics, verdicts


def need(tool: str) -> str:
    path = shutil.which(tool) or (str(Path(sys.executable).parent / tool) if (Path(sys.executable).parent / tool).exists() else None)
    if path is None:
        pytest.skip(f"{tool} is not installed (scripts/setup installs it)")
    return path


def test_fio_real_run_on_a_temp_dir(tmp_path):
    need("fio")
    crit = Criterion(id="fs", check="storage.fio", metric="write_gbps", min=Decimal("0.0001"),
                     params={"path": str(tmp_path), "rw": "write", "bs": "1M", "size": "16M", "numjobs": 2,
                             "ioengine": "psync", "iodepth": 1})
    raw, metrics, verdicts = run_check(crit)
    assert raw.rc == 0
    assert [(v.status, v.reason) for v in verdicts] == [(Status.PASS, "within_bounds")]
    assert metrics["write_gbps"] > 0 and len(metrics["jobs"]) == 2
    assert list(tmp_path.iterdir()) == []            # --unlink=1: fio removed its files
    # An impossible bound fails with the measured value.
    crit = crit.model_copy(update={"min": Decimal(10000)})
    _, _, verdicts = run_check(crit)
    assert verdicts[0].status == Status.FAIL and verdicts[0].reason == "below_min"


def test_fio_on_a_missing_path_is_an_error(tmp_path):
    need("fio")
    crit = Criterion(id="fs", check="storage.fio", metric="read_gbps", min=Decimal(1),
                     params={"path": str(tmp_path / "absent"), "size": "4M"})
    _, _, verdicts = run_check(crit)
    assert [(v.status, v.reason) for v in verdicts] == [(Status.ERROR, "path_missing")]


@pytest.fixture
def iperf3_server():
    need("iperf3")
    port = free_port()
    proc = subprocess.Popen(["iperf3", "-s", "-B", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    yield port
    proc.terminate()
    proc.wait(timeout=10)


def test_iperf3_real_loopback(iperf3_server):
    crit = Criterion(id="eth", check="network.iperf3", metric="throughput_gbps", min=Decimal("0.1"),
                     params={"server": "127.0.0.1", "port": iperf3_server, "duration": 1})
    raw, metrics, verdicts = run_check(crit)
    assert [(v.status, v.reason) for v in verdicts] == [(Status.PASS, "within_bounds")]
    assert metrics["throughput_gbps"] > 0.1 and metrics["protocol"] == "TCP"
    crit = crit.model_copy(update={"min": Decimal(100000)})
    _, _, verdicts = run_check(crit)
    assert verdicts[0].reason == "below_min"


def test_iperf3_no_server_is_an_error():
    need("iperf3")
    crit = Criterion(id="eth", check="network.iperf3", metric="throughput_gbps", min=Decimal(1),
                     params={"server": "127.0.0.1", "port": free_port(), "duration": 1})
    _, metrics, verdicts = run_check(crit)
    assert [(v.status, v.reason) for v in verdicts] == [(Status.ERROR, "tool_failed")]
    assert "refused" in metrics["error_detail"].lower()


@pytest.fixture
def s3_server(monkeypatch):
    exe = need("moto_server")
    port = free_port()
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1)
            break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("moto_server did not start")
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def test_s3_real_server_put_get_multipart_listing(s3_server):
    crit = Criterion(id="s3", check="storage.s3", metric="put_mbps", min=Decimal("0.01"),
                     params={"endpoint": s3_server, "bucket": "acceptance-test", "create_bucket": True,
                             "object_size": "1M", "objects": 4, "multipart_size": "11M", "part_size": "5M",
                             "concurrency": 4})
    raw, metrics, verdicts = run_check(crit)
    assert raw.rc == 0, raw.stderr
    assert {(v.status, v.reason) for v in verdicts} == {(Status.PASS, "as_expected"), (Status.PASS, "within_bounds")}
    assert metrics["integrity_errors"] == [] and metrics["multipart"]["ok"] and metrics["multipart"]["parts"] == 3
    assert metrics["list_count"] == 5 and metrics["put_mbps"] > 0 and metrics["get_mbps"] > 0


def test_s3_missing_bucket_is_unreachable_error(s3_server):
    crit = Criterion(id="s3", check="storage.s3", metric="put_mbps", min=Decimal(1),
                     params={"endpoint": s3_server, "bucket": "no-such-bucket", "objects": 1, "object_size": "1k"})
    _, _, verdicts = run_check(crit)
    assert [(v.status, v.reason) for v in verdicts] == [(Status.ERROR, "s3_unreachable")]


def test_burn_loop_samples_on_cpu():
    crit = Criterion(id="burn", check="gpu.burn", expect={"max_xid_events": 0},
                     params={"stress": "cpu", "duration_s": 1.5, "interval_s": 0.5})
    raw, metrics, verdicts = run_check(crit)
    assert raw.rc == 0
    assert metrics["samples"] >= 3
    assert {v.status for v in verdicts} <= {Status.PASS, Status.ERROR}
    if metrics["xid_events"] is not None:             # the kernel log is readable here
        assert [(v.status, v.reason) for v in verdicts] == [(Status.PASS, "within_bounds")]


def test_gpu_checks_skip_without_gpu():
    if shutil.which("nvidia-smi"):
        pytest.skip("this host has nvidia-smi; the skip path is for GPU-less hosts")
    _, _, verdicts = run_check(Criterion(id="inv", check="gpu.inventory", expect={"gpus_per_node": 8}))
    assert [(v.status, v.reason) for v in verdicts] == [(Status.SKIP, "no_gpu")]
    _, _, verdicts = run_check(Criterion(id="g", check="gpu.gemm", metric="tflops_bf16", min=Decimal(1),
                                         params={"size": 256, "iters": 1}))
    assert verdicts[0].status == Status.SKIP and verdicts[0].reason in ("no_torch", "no_gpu")


def test_software_versions_real_probe():
    crit = Criterion(id="sw", check="software.versions", expect={"kernel": ">=3", "driver": ">=570"})
    raw, metrics, verdicts = run_check(crit)
    assert raw.rc == 0
    assert metrics["kernel"]
    by_item = {v.details["component"]: (v.status, v.reason) for v in verdicts}
    assert by_item["kernel"] == (Status.PASS, "as_expected")
    if metrics["driver"] is None:
        assert by_item["driver"] == (Status.SKIP, "driver_not_found")


def test_a_check_past_its_time_limit_is_stopped_and_judged_an_error():
    crit = Criterion(id="burn", check="gpu.burn", expect={"max_xid_events": 0},
                     params={"stress": "cpu", "duration_s": 30, "interval_s": 1})
    t0 = time.monotonic()
    raw, _, verdicts = run_check(crit, timeout=1.0)
    assert time.monotonic() - t0 < 10
    assert raw.timed_out
    assert [(v.status, v.reason) for v in verdicts] == [(Status.ERROR, "timeout")]
