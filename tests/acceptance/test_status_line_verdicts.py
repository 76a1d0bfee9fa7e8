"""Checks judge what the parsers surface from real outputs: status lines, per-GPU DCGM 4 rows,
cut or incomplete listings, launcher-prefixed captures."""

from __future__ import annotations

import json
from decimal import Decimal

from acceptance.results import Status
from slaschema.models import Criterion
from tests.acceptance.conftest import realdata
from tests.acceptance.test_checks_on_outputs import ib_probe, judge, raw, statuses

INV = Criterion(id="inv", check="gpu.inventory", expect={"gpus_per_node": 8})
H100_TABLE = "nvidia_smi_default_table_8xH100_nccl-tests-issue264.txt"


def test_no_devices_is_a_fail_verdict_not_a_parse_error():
    metrics, vs = judge(INV, raw("No devices were found\n", rc=6))
    assert metrics["gpu_count"] == 0
    assert statuses(vs) == [("fail", "no_gpu_found")] and vs[0].measured == 0


def test_driver_unreachable_still_fails_as_before():
    _, vs = judge(INV, raw("", rc=9, stderr="NVIDIA-SMI has failed because it couldn't communicate with the "
                                          "NVIDIA driver. Make sure that the latest NVIDIA driver is installed.\n"))
    assert statuses(vs) == [("fail", "gpu_driver_failed")]


def test_inforom_warning_warns_on_the_real_capture():
    text = realdata("nvidia_smi_table_drv470_P100_infoROM_corrupt_validator_log_nvidia-docs.txt").read_text()
    crit = Criterion(id="inv", check="gpu.inventory", expect={"gpus_per_node": 1, "model": "P100"})
    _, vs = judge(crit, raw(text))
    warn = [v for v in vs if v.status == Status.WARN]
    assert [(v.reason, v.details["pci_bus_id"]) for v in warn] == [("inforom_corrupted", "0000:0B:00.0")]
    assert ("pass", "as_expected") in statuses(vs)


def test_err_fields_and_lost_gpus_fail():
    table = realdata(H100_TABLE).read_text()
    err = table.replace("| N/A   38C    P0             70W /  700W |", "| ERR!  ERR!   ERR!         ERR! / ERR!  |", 1)
    _, vs = judge(INV, raw(err))
    bad = [v for v in vs if v.reason == "field_error"]
    assert len(bad) == 1 and bad[0].status == Status.FAIL and bad[0].details["pci_bus_id"] == "00000000:19:00.0"
    off = table + "Unable to determine the device handle for gpu 0000:9B:00.0: GPU has fallen off the bus.\n"
    _, vs = judge(INV, raw(off))
    assert ("fail", "gpu_fell_off_bus") in statuses(vs)


def test_kmd_header_driver_constraint_is_judged():
    text = realdata("nvidia_smi_table_KMD_UMD_header_drv610_2gpu_club3090_report.txt").read_text()
    crit = Criterion(id="inv", check="gpu.inventory", expect={"gpus_per_node": 2, "driver": ">=610"})
    metrics, vs = judge(crit, raw(text))
    assert metrics["driver_version"] == "610.43.02" and metrics["cuda_version"] == "13.3"
    assert {v.details.get("item"): str(v.status) for v in vs if v.details.get("item") in ("driver", "gpus_per_node")} == {
        "driver": "pass", "gpus_per_node": "pass"}


def test_dcgm4_failing_gpu_is_named_in_the_verdict():
    from tests.parsers.test_real_clusters import _dcgm4_failing

    crit = Criterion(id="dcgm", check="gpu.dcgm", params={"level": 2}, expect={"overall": "pass"})
    metrics, vs = judge(crit, raw(_dcgm4_failing()))
    (fail,) = [v for v in vs if v.status == Status.FAIL]
    assert fail.reason == "diag_test_failed" and fail.details["test"] == "memory" and fail.details["gpus"] == [1]
    assert fail.details["warnings"] == ["GPU 1 Error using CUDA API cudaMalloc: out of memory"]


def test_prefixed_capture_is_judged_like_the_plain_one():
    text = realdata("nccl_all_reduce_perf_2node_16gpu_cx8_v2.18.3_mpirun_mca_warning.txt").read_text()
    tagged = "".join(f"(head, rank=0, pid=9, ip=10.0.0.1) {ln}\n" for ln in text.splitlines())
    crit = Criterion(id="nccl", check="network.nccl", metric="busbw_gbps", min=Decimal(30),
                     params={"collective": "all_reduce", "nodes": 2, "size": "8G"})
    plain_m, plain_v = judge(crit, raw(text), "cluster")
    m, v = judge(crit, raw(tagged), "cluster")
    assert m["rows"] == plain_m["rows"] and statuses(v) == statuses(plain_v) == [("pass", "within_bounds")]
    assert v[0].measured == 37.01


def test_ib_incomplete_listing_and_cut_bandwidth_are_errors():
    from acceptance.parsers.ib_write_bw import split_samples

    sysfs = realdata("ib_sysfs_snapshot_h100_gpud.txt").read_text()
    runs = split_samples(realdata("ib_write_bw_samples.txt").read_text())
    crit = Criterion(id="ib", check="network.ib", metric="bw_gbps", min=Decimal(300))
    no_state = "\n".join(ln for ln in sysfs.splitlines() if not ln.startswith("mlx5_4/ports/1/state:")) + "\n"
    _, vs = judge(crit, raw(ib_probe(no_state, {"mlx5_0": runs[0]})))
    assert ("error", "port_state_missing") in statuses(vs)
    cut = runs[0][: runs[0].rindex("-----") - 60]
    metrics, vs = judge(crit, raw(ib_probe(sysfs, {"mlx5_0": cut})))
    assert "cut off" in metrics["bw_errors"]["mlx5_0"] and ("error", "tool_failed") in statuses(vs)
    json.dumps(metrics)


def test_handed_over_ibstat_stopped_by_ibpanic_is_an_error():
    text = realdata("ibstat_a100_azure_ibpanic_exit255_gpud.txt").read_text()
    crit = Criterion(id="ib", check="network.ib", expect={"rate_gbps": 200, "devices": 8})
    metrics, vs = judge(crit, raw(text, rc=255))
    assert metrics["present"] == [f"mlx5_{i}" for i in range(8)] and metrics["port_rate_gbps"] == 200
    errors = [v for v in vs if v.status == Status.ERROR]
    assert [(v.reason, v.details["device"]) for v in errors] == [("listing_incomplete", "mlx5_8")]
    assert not any(v.reason == "port_down" for v in vs)


def test_handed_over_skypilot_perftest_run_is_judged():
    text = realdata("ib_send_bw_report_gbits_ndr_skypilot_worker_prefix_nebius.txt").read_text()
    crit = Criterion(id="ib", check="network.ib", metric="bw_gbps", min=Decimal(350))
    metrics, vs = judge(crit, raw(text))
    assert metrics["bw"] == {"mlx5_0": 361.67} and statuses(vs) == [("pass", "within_bounds")]


def test_nvml_mismatch_is_a_driver_failure():
    _, vs = judge(INV, raw("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.86\n", rc=18))
    assert statuses(vs) == [("fail", "gpu_driver_failed")]
