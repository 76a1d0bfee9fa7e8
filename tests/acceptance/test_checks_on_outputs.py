"""Checks judged on real tool outputs (../shared/realdata) and this machine's fixtures."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from acceptance.checks import get_check
from acceptance.checks.base import CLUSTER, judge_output
from acceptance.executors.base import LAUNCH_FAILED, NODE_UNAVAILABLE, RawOutput
from acceptance.results import Status
from slaschema.models import Criterion
from tests.acceptance.conftest import FIXTURES, realdata

T = datetime(2026, 11, 30, tzinfo=timezone.utc)


def raw(text: str, rc: int = 0, stderr: str = "", **kw) -> RawOutput:
    return RawOutput(text, stderr, rc, T, T, node=kw.pop("node", "n1"), **kw)


def judge(crit: Criterion, out: RawOutput, node: str = "n1"):
    check = get_check(crit.check)
    params = check.params(crit)
    return judge_output(check, crit, params, node, out)


def statuses(verdicts):
    return sorted({(str(v.status), v.reason) for v in verdicts})


# --------------------------------------------------------------------------- network.nccl

def nccl_crit(size: str, min_: int, nodes: int = 1) -> Criterion:
    return Criterion(id="nccl", check="network.nccl", metric="busbw_gbps", min=Decimal(min_),
                     params={"collective": "all_reduce", "nodes": nodes, "size": size})


def test_nccl_judges_the_row_at_the_fixed_size_not_the_average():
    text = realdata("nccl_all_reduce_perf_a100_1node_gcm_fixture.txt").read_text()
    # Avg bus bandwidth is 210.99 GB/s; the 1G row is 231.72 GB/s.
    metrics, vs = judge(nccl_crit("1G", 220), raw(text), CLUSTER)
    (v,) = vs
    assert v.status == Status.PASS and v.measured == pytest.approx(231.72)
    assert metrics["avg_busbw_gbps_not_judged"] == pytest.approx(210.99)
    _, vs = judge(nccl_crit("1G", 232), raw(text), CLUSTER)
    assert statuses(vs) == [("fail", "below_min")]
    # 128M row: 204.26 < 210.99 average -> the average would have hidden nothing here, the row decides.
    _, vs = judge(nccl_crit("128M", 205), raw(text), CLUSTER)
    assert statuses(vs) == [("fail", "below_min")] and vs[0].measured == pytest.approx(204.26)


def test_nccl_size_missing_wrong_na_and_node_count():
    text = realdata("nccl_all_reduce_perf_a100_1node_gcm_fixture.txt").read_text()
    _, vs = judge(nccl_crit("3G", 1), raw(text), CLUSTER)
    assert statuses(vs) == [("error", "size_not_measured")]
    _, vs = judge(nccl_crit("1G", 1, nodes=2), raw(text), CLUSTER)
    assert statuses(vs) == [("error", "node_count_mismatch")]
    from acceptance.parsers.nccl_tests import split_samples

    multi = realdata("nccl_all_reduce_perf_h100_1node_and_2node_ib_nccl-tests-issue290.txt").read_text()
    two_node = [s for s in split_samples(multi) if "155.57" in s][0]
    _, vs = judge(nccl_crit("8G", 100, nodes=2), raw(two_node), CLUSTER)
    # nccl-tests ran with -c 0 there: #wrong is N/A, so correctness was not checked.
    assert ("error", "correctness_not_checked") in statuses(vs)
    assert ("pass", "within_bounds") in statuses(vs)


def test_nccl_wrong_results_fail():
    text = realdata("nccl_all_reduce_perf_a100_1node_gcm_fixture.txt").read_text()
    lines = text.splitlines()
    idx = next(i for i, ln in enumerate(lines) if ln.strip().startswith("1073741824"))
    parts = lines[idx].split()
    parts[8] = "3"   # out-of-place #wrong
    lines[idx] = "  ".join(parts)
    _, vs = judge(nccl_crit("1G", 1), raw("\n".join(lines)), CLUSTER)
    assert ("fail", "wrong_results") in statuses(vs)


def test_nccl_launch_failure_and_mpi_failure():
    _, vs = judge(nccl_crit("1G", 1), RawOutput("", "no such file", None, T, T, error=LAUNCH_FAILED), CLUSTER)
    assert statuses(vs) == [("skip", "no_nccl_tests")]
    text = realdata("nccl_mpirun_failure_not_enough_slots_gcm_fixture.txt").read_text()
    _, vs = judge(nccl_crit("1G", 1), raw(text, rc=1), CLUSTER)
    assert statuses(vs) == [("error", "tool_failed")]


# --------------------------------------------------------------------------- storage.fio

def fio_crit(**params) -> Criterion:
    return Criterion(id="fs", check="storage.fio", metric=params.pop("metric", "write_gbps"), min=Decimal("0.001"),
                     params={"path": "/data", **params})


def test_fio_accepts_the_job_it_asked_for():
    text = (FIXTURES / "fio" / "fio_seqwrite_1M_numjobs2_json.txt").read_text()
    metrics, vs = judge(fio_crit(rw="write", bs="1M", size="64M", numjobs=2), raw(text))
    assert statuses(vs) == [("pass", "within_bounds")]
    assert metrics["write_gbps"] > 0


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"rw": "read", "bs": "1M", "size": "64M", "numjobs": 2}, "rw=write"),
        ({"rw": "write", "bs": "4k", "size": "64M", "numjobs": 2}, "bs="),
        ({"rw": "write", "bs": "1M", "size": "64M", "numjobs": 8}, "job entries"),
        ({"rw": "write", "bs": "1M", "size": "4G", "numjobs": 2}, "size="),
    ],
)
def test_fio_rejects_a_different_job(params, needle):
    text = (FIXTURES / "fio" / "fio_seqwrite_1M_numjobs2_json.txt").read_text()
    _, vs = judge(fio_crit(**params), raw(text))
    assert statuses(vs) == [("error", "job_mismatch")]
    assert any(needle in m for m in vs[0].details["mismatches"])


def test_fio_effective_block_size_gotcha_is_a_mismatch():
    text = realdata("fio_json_throughput_1M_numjobs8_gotcha_excerpt.txt").read_text()
    _, vs = judge(fio_crit(rw="write", bs="1M", size="11G", numjobs=8), raw(text))
    # bs was "1.0MB" but each I/O moved ~1 byte: the job did not do what was asked.
    assert statuses(vs) == [("error", "job_mismatch")]
    assert any("per I/O" in m for m in vs[0].details["mismatches"])


def test_fio_missing_path_is_a_clear_error():
    stderr = "fio: /mnt/shared is not a directory\nfio: failed parsing directory=/mnt/shared\n"
    _, vs = judge(fio_crit(rw="read", bs="1M", size="4G", numjobs=8), raw("", rc=1, stderr=stderr))
    assert statuses(vs) == [("error", "path_missing")]


# --------------------------------------------------------------------------- gpu.inventory

def test_inventory_on_real_xml():
    text = realdata("nvidia_smi_q_x_a100_sxm4_telegraf.xml.txt").read_text()
    crit = Criterion(id="inv", check="gpu.inventory",
                     expect={"gpus_per_node": 1, "model": "A100", "ecc": True, "driver": ">=535"})
    metrics, vs = judge(crit, raw(text))
    assert metrics["gpu_count"] == 1
    # This driver printed N/A for row remapping and page retirement: health is not judged.
    assert {(str(v.status), v.details["item"]) for v in vs} == {
        ("pass", "gpus_per_node"), ("pass", "model"), ("pass", "ecc_mode"), ("pass", "driver"),
        ("skip", "memory_health")}
    crit = Criterion(id="inv", check="gpu.inventory",
                     expect={"gpus_per_node": 4, "model": "GB200", "driver": ">=570", "persistence": True})
    _, vs = judge(crit, raw(text))
    reasons = {v.reason for v in vs if v.status == Status.FAIL}
    assert reasons == {"gpu_count_mismatch", "model_mismatch", "constraint_not_met", "persistence_mismatch"}


def test_inventory_no_nvidia_smi_is_a_skip_and_unknown_expect_is_an_error():
    crit = Criterion(id="inv", check="gpu.inventory", expect={"gpus_per_node": 4})
    _, vs = judge(crit, RawOutput("", "cannot start 'nvidia-smi'", None, T, T, error=LAUNCH_FAILED))
    assert statuses(vs) == [("skip", "no_gpu")]
    text = realdata("nvidia_smi_q_x_a100_sxm4_telegraf.xml.txt").read_text()
    _, vs = judge(Criterion(id="inv", check="gpu.inventory", expect={"gpu_cnt": 1}), raw(text))
    assert ("error", "unknown_expect_key") in statuses(vs)


def test_inventory_driver_failure_fails():
    crit = Criterion(id="inv", check="gpu.inventory", expect={"gpus_per_node": 8})
    msg = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    _, vs = judge(crit, raw(msg, rc=9))
    assert statuses(vs) == [("fail", "gpu_driver_failed")]


# --------------------------------------------------------------------------- gpu.dcgm

def test_dcgm_failed_test_fails_with_its_name():
    text = realdata("dcgmi_diag_r3_text_8xH100_FAIL_fabricmanager_nccl-tests-issue264.txt").read_text()
    crit = Criterion(id="dcgm", check="gpu.dcgm", params={"level": 3}, expect={"overall": "pass"})
    metrics, vs = judge(crit, raw(text))
    assert metrics["failed_tests"] >= 1
    fails = [v for v in vs if v.status == Status.FAIL]
    assert fails and fails[0].reason == "diag_test_failed" and fails[0].details["test"] == "GPU Memory"


def test_dcgm_absent_is_a_skip():
    crit = Criterion(id="dcgm", check="gpu.dcgm", expect={"overall": "pass"})
    _, vs = judge(crit, RawOutput("", "", None, T, T, error=LAUNCH_FAILED))
    assert statuses(vs) == [("skip", "no_dcgm")]


# --------------------------------------------------------------------------- gpu.xid

def test_xid_policy_actions_from_real_kernel_logs():
    text = realdata("xid_kernel_log_samples.txt").read_text()
    metrics, vs = judge(Criterion(id="xid", check="gpu.xid"), raw(text))
    assert metrics["xid_events"] == len(metrics["events"]) > 0
    # Actions follow the Xid catalog's immediate action: 79 RESTART_BM -> reboot, 119/64/109 RESET_GPU ->
    # reset, 13/31/94 RESTART_APP and 63 IGNORE -> monitor (warn). No sample calls for a drain.
    assert statuses(vs) == [("fail", "xid_reboot"), ("fail", "xid_reset"), ("warn", "xid_monitor")]
    by_xid = {v.details["xid"]: v.details["action"] for v in vs}
    assert {x: by_xid[x] for x in (79, 119, 64, 109, 63, 94, 13)} == {
        79: "reboot", 119: "reset", 64: "reset", 109: "reset", 63: "monitor", 94: "monitor", 13: "monitor"}
    _, vs = judge(Criterion(id="xid", check="gpu.xid"), raw(
        "NVRM: Xid (PCI:0000:18:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)\n"))
    assert statuses(vs) == [("fail", "xid_drain")]
    _, vs = judge(Criterion(id="xid", check="gpu.xid", metric="xid_events", max=Decimal(0)), raw(text))
    assert statuses(vs) == [("fail", "above_max")]
    _, vs = judge(Criterion(id="xid", check="gpu.xid", metric="xid_events", max=Decimal(0)),
                  raw("[  1.0] Linux version 6.1\n[  2.0] usb 1-1: new device\n"))
    assert statuses(vs) == [("pass", "within_bounds")]
    # A bound without `metric:` on a check with a single metric judges that metric.
    _, vs = judge(Criterion(id="xid", check="gpu.xid", max=Decimal(0)), raw(text))
    assert statuses(vs) == [("fail", "above_max")] and vs[0].details["metric"] == "xid_events"


# --------------------------------------------------------------------------- network.iperf3

def test_iperf3_fixture_and_refused_connection():
    crit = Criterion(id="eth", check="network.iperf3", metric="throughput_gbps", min=Decimal(1),
                     params={"server": "127.0.0.1", "duration": 2})
    text = (FIXTURES / "iperf3" / "iperf3_tcp_loopback_t2.json").read_text()
    metrics, vs = judge(crit, raw(text))
    assert statuses(vs) == [("pass", "within_bounds")] and metrics["throughput_gbps"] > 1
    text = (FIXTURES / "iperf3" / "iperf3_error_connection_refused.json").read_text()
    _, vs = judge(crit, raw(text, rc=1))
    assert statuses(vs) == [("error", "tool_failed")]
    crit2 = crit.model_copy(update={"params": {"server": "127.0.0.1", "streams": 4}})
    _, vs = judge(crit2, raw((FIXTURES / "iperf3" / "iperf3_tcp_loopback_t2.json").read_text()))
    assert statuses(vs) == [("error", "job_mismatch")]


# --------------------------------------------------------------------------- software.versions

def probe(**over) -> str:
    doc = {
        "probe": "slakit-versions/1", "kernel": "6.8.0-45-generic",
        "commands": {
            "nvidia_smi_query": {"rc": 0, "stdout": "570.86.15\n570.86.15\n"},
            "nvidia_smi": {"rc": 0, "stdout": "| NVIDIA-SMI 570.86.15   Driver Version: 570.86.15   CUDA Version: 12.8 |"},
            "fabric_manager": {"rc": 3, "stdout": "inactive\n"},
            "enroot": {"rc": 0, "stdout": "3.5.0\n"},
            "sinfo": {"rc": 0, "stdout": "slurm 24.05.3\n"},
            "kubelet": {"rc": None, "missing": True},
        },
        "files": {"os_release": 'ID=ubuntu\nVERSION_ID="22.04"\n', "nvidia_proc": None},
        "nccl_libraries": ["/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.1"],
        "torch_nccl": None,
    }
    doc.update(over)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("expect", "want"),
    [
        ({"driver": ">=570"}, ("pass", "as_expected")),
        ({"driver": ">=575"}, ("fail", "constraint_not_met")),
        ({"cuda": ">=12.8,<13"}, ("pass", "as_expected")),
        ({"cuda": "12.9"}, ("fail", "constraint_not_met")),
        ({"nccl": ">=2.21"}, ("pass", "as_expected")),
        ({"kernel": ">=6.8"}, ("pass", "as_expected")),
        ({"os": "ubuntu>=22.04"}, ("pass", "as_expected")),
        ({"os": "rhel>=9"}, ("fail", "constraint_not_met")),
        ({"fabric_manager": "running"}, ("fail", "service_not_running")),
        ({"container_runtime": "enroot>=3.4"}, ("pass", "as_expected")),
        ({"container_runtime": "docker"}, ("fail", "constraint_not_met")),
        ({"slurm": ">=24.05"}, ("pass", "as_expected")),
        ({"kubernetes": ">=1.29"}, ("skip", "kubernetes_not_found")),
        ({"driver": "latest"}, ("error", "bad_constraint")),
    ],
)
def test_software_versions_table(expect, want):
    _, vs = judge(Criterion(id="sw", check="software.versions", expect=expect), raw(probe()))
    assert statuses(vs) == [want]


def test_software_versions_without_driver_skips():
    p = probe(commands={"nvidia_smi_query": {"rc": None, "missing": True}}, files={"os_release": "ID=debian\nVERSION_ID=12\n"})
    _, vs = judge(Criterion(id="sw", check="software.versions", expect={"driver": ">=570", "os": ">=12"}), raw(p))
    assert statuses(vs) == [("pass", "as_expected"), ("skip", "driver_not_found")]


# --------------------------------------------------------------------------- gemm, burn, s3, drill

def test_gemm_skips_and_judges_the_slowest_gpu():
    crit = Criterion(id="g", check="gpu.gemm", metric="tflops_bf16", min=Decimal(600), warn_below=Decimal(700))
    _, vs = judge(crit, raw('{"bench": "slakit-gemm/1", "dtype": "bf16", "skip": "no_torch", "detail": "x"}'))
    assert statuses(vs) == [("skip", "no_torch")]
    gpus = [{"index": i, "name": "H200", "tflops": t} for i, t in enumerate([720.0, 715.0, 650.0, 725.0])]
    doc = json.dumps({"bench": "slakit-gemm/1", "dtype": "bf16", "size": 8192, "gpus": gpus})
    metrics, vs = judge(crit, raw(doc))
    assert statuses(vs) == [("warn", "below_warn")] and vs[0].measured == 650.0
    assert metrics["straggler_pct"] == pytest.approx((717.5 - 650) / 717.5 * 100)
    crit = Criterion(id="g", check="gpu.gemm", metric="straggler_pct", max=Decimal(5))
    _, vs = judge(crit, raw(doc))
    assert statuses(vs) == [("fail", "above_max")]
    crit = Criterion(id="g", check="gpu.gemm", metric="tflops_fp8", min=Decimal(1))
    _, vs = judge(crit, raw(doc))
    assert statuses(vs) == [("error", "job_mismatch")]


def test_burn_metrics_throttle_and_samples():
    samples = [{"t": i, "gpus": [{"index": 0, "temp_c": 70 + i, "sm_mhz": 1980, "power_w": 690,
                                  "throttle": 0x40 if i == 3 else 0x0}]} for i in range(4)]
    doc = json.dumps({"burn": "slakit-burn/1", "stress": "gpu", "duration_s": 4, "interval_s": 1,
                      "samples": samples, "errors": [], "kernel_log_new": ""})
    crit = Criterion(id="b", check="gpu.burn", metric="throttle_pct", max=Decimal(1),
                     params={"duration_s": 4, "interval_s": 1})
    metrics, vs = judge(crit, raw(doc))
    assert metrics["throttle_pct"] == 25.0 and metrics["max_temp_c"] == 73 and metrics["xid_events"] == 0
    assert statuses(vs) == [("fail", "above_max")]
    crit = crit.model_copy(update={"params": {"duration_s": 60, "interval_s": 1}})
    _, vs = judge(crit, raw(doc))
    assert statuses(vs) == [("error", "too_few_samples")]


def test_s3_integrity_and_multipart_failures():
    crit = Criterion(id="s3", check="storage.s3", metric="put_mbps", min=Decimal(1), params={"bucket": "acc-test"})
    base = {"bench": "slakit-s3/1", "objects": 4, "object_size": 1000000, "put_bytes": 4000000, "put_s": 0.5,
            "get_bytes": 4000000, "get_s": 0.25, "integrity_errors": [], "list_count": 5, "expected_count": 5,
            "multipart": {"ok": True, "parts": 2}, "errors": []}
    metrics, vs = judge(crit, raw(json.dumps(base)))
    assert metrics["put_mbps"] == 8.0 and metrics["get_gbps"] == 0.016
    assert {str(v.status) for v in vs} == {"pass"}
    bad = {**base, "integrity_errors": ["k1"], "multipart": {"ok": False, "error": "InvalidPart"}, "list_count": 4}
    _, vs = judge(crit, raw(json.dumps(bad)))
    assert {v.reason for v in vs if v.status == Status.FAIL} == {"integrity_error", "multipart_failed", "listing_incomplete"}
    _, vs = judge(crit, raw(json.dumps({"bench": "slakit-s3/1", "error": "Could not connect", "error_kind": "unreachable"})))
    assert statuses(vs) == [("error", "s3_unreachable")]


def test_detection_drill_result():
    crit = Criterion(id="d", check="health.detection", max=__import__("datetime").timedelta(minutes=2))
    doc = {"ok": True, "status": "pass", "result": {"node": "n3", "fault": "marker", "detection_s": 75.5}}
    _, vs = judge(crit, raw(json.dumps(doc)), CLUSTER)
    assert statuses(vs) == [("pass", "within_bounds")] and vs[0].node == "n3"
    doc["result"]["detection_s"] = 130.0
    _, vs = judge(crit, raw(json.dumps(doc)), CLUSTER)
    assert statuses(vs) == [("fail", "above_max")]
    doc["result"]["detection_s"] = None
    _, vs = judge(crit, raw(json.dumps(doc)), CLUSTER)
    assert statuses(vs) == [("fail", "not_detected")]
    _, vs = judge(crit, raw(""), CLUSTER)
    assert statuses(vs) == [("skip", "no_drill_result")]


# --------------------------------------------------------------------------- shared pipeline

def test_unanswered_timed_out_and_garbage_outputs():
    crit = Criterion(id="eth", check="network.iperf3", metric="throughput_gbps", min=Decimal(1),
                     params={"server": "10.0.0.1"})
    _, vs = judge(crit, RawOutput("", "down", None, None, None, error=NODE_UNAVAILABLE))
    assert statuses(vs) == [("error", "node_unavailable")]
    _, vs = judge(crit, RawOutput("", "", None, T, T, timed_out=True))
    assert statuses(vs) == [("error", "timeout")]
    _, vs = judge(crit, raw("hello, not iperf3"))
    assert statuses(vs) == [("error", "unparseable_output")]


# --------------------------------------------------------------------------- network.ib

def ib_probe(sysfs: str, bw: dict[str, str]) -> str:
    cas = sorted({line.split("/", 1)[0] for line in sysfs.splitlines() if "/" in line and not line.startswith("#")})
    return json.dumps({"probe": "slakit-ib/1", "present": cas, "devices": cas, "sysfs": sysfs,
                       "bw": {d: {"rc": 0, "output": out} for d, out in bw.items()}})


def test_ib_on_a_real_sysfs_snapshot_and_real_ib_write_bw_runs():
    from acceptance.parsers.ib_write_bw import split_samples

    sysfs = realdata("ib_sysfs_snapshot_h100_gpud.txt").read_text()
    runs = split_samples(realdata("ib_write_bw_samples.txt").read_text())
    crit = Criterion(id="ib", check="network.ib", metric="bw_gbps", min=Decimal(350), expect={"rate_gbps": 400})
    metrics, vs = judge(crit, raw(ib_probe(sysfs, {"mlx5_0": runs[0], "mlx5_1": runs[1]})))
    assert metrics["port_rate_gbps"] == 400.0                 # the 200G Ethernet bond is not an IB port
    assert metrics["bw"] == {"mlx5_0": pytest.approx(392.34), "mlx5_1": pytest.approx(328.61)}
    assert statuses(vs) == [("fail", "below_min")] and vs[-1].measured == pytest.approx(328.61)
    down = sysfs.replace("mlx5_4/ports/1/state: 4: ACTIVE", "mlx5_4/ports/1/state: 1: DOWN")
    _, vs = judge(crit.model_copy(update={"min": Decimal(300)}), raw(ib_probe(down, {"mlx5_0": runs[0]})))
    assert statuses(vs) == [("fail", "port_down"), ("pass", "within_bounds")]
    _, vs = judge(crit, raw('{"probe": "slakit-ib/1", "skip": "no_infiniband"}'))
    assert statuses(vs) == [("skip", "no_infiniband")]


def test_dcgm_json_runs_pass_warn_fail():
    from acceptance.parsers.dcgmi import parse_dcgmi, split_samples

    crit = Criterion(id="dcgm", check="gpu.dcgm", params={"level": 3}, expect={"overall": "pass"})
    seen = set()
    for sample in split_samples(realdata("dcgmi_diag_json_samples.txt").read_text()):
        overall = parse_dcgmi(sample).overall
        _, vs = judge(crit, raw(sample))
        worst_status = min((str(v.status) for v in vs), key=["error", "fail", "warn", "skip", "pass"].index)
        assert worst_status == {"pass": "pass", "warn": "warn", "fail": "fail"}[overall]
        if overall == "fail":
            assert all(v.details.get("test") for v in vs if v.status == Status.FAIL)
        seen.add(overall)
    assert seen == {"pass", "warn", "fail"}


def test_inventory_on_every_real_nvidia_smi_format():
    """What a format does not show is `metric_missing` (error), never a fail or a pass."""
    from acceptance.parsers.nvidia_smi import split_samples

    crit = Criterion(id="inv", check="gpu.inventory", expect={"ecc": True, "persistence": True})
    table = split_samples(realdata("nvidia_smi_default_table_8xH100_nccl-tests-issue264.txt").read_text())[0]
    metrics, vs = judge(crit, raw(table))
    assert metrics["gpu_count"] == 8
    by_item = {v.details["item"]: (str(v.status), v.reason) for v in vs}
    assert by_item == {"ecc_mode": ("error", "metric_missing"), "persistence_mode": ("fail", "persistence_mismatch"),
                       "memory_health": ("skip", "memory_health_not_reported")}
    for sample in split_samples(realdata("nvidia_smi_q_text_h100_1gpu.txt").read_text()):
        _, vs = judge(crit, raw(sample))
        assert statuses(vs) == [("pass", "as_expected")]
