"""Names of the acceptance checks a contract may reference, with their metrics.

The contract schema knows the catalogue so that a typo in `check:` is caught when the
contract is validated, long before handover day. The acceptance package implements each.
"""

from __future__ import annotations

# check name -> (area, metrics it can judge with min/max/warn_below, description)
KNOWN_CHECKS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "gpu.inventory": ("gpu", ("gpu_count",), "GPU count, model, driver, ECC, row remaps, persistence"),
    "gpu.gemm": ("gpu", ("tflops_bf16", "tflops_fp8", "tflops_fp16", "straggler_pct"),
                 "matmul throughput per GPU and stragglers"),
    "gpu.dcgm": ("gpu", ("failed_tests",), "DCGM diagnostics per test"),
    "gpu.xid": ("gpu", ("xid_events",), "Xid events in the kernel log"),
    "gpu.burn": ("gpu", ("xid_events", "throttle_pct", "max_temp_c"), "stress with sampling"),
    "network.nccl": ("network", ("busbw_gbps", "algbw_gbps"), "NCCL collective bus bandwidth at a fixed size"),
    "network.ib": ("network", ("bw_gbps", "port_rate_gbps", "symbol_errors"), "InfiniBand port bandwidth and state"),
    "network.iperf3": ("network", ("throughput_gbps", "retransmits"), "Ethernet throughput"),
    "storage.fio": ("storage", ("read_gbps", "write_gbps", "read_iops", "write_iops",
                                "read_p99_ms", "write_p99_ms"), "file system throughput, IOPS and latency"),
    "storage.s3": ("storage", ("put_gbps", "get_gbps", "put_mbps", "get_mbps", "list_s"),
                   "object storage throughput and integrity"),
    "software.versions": ("software", (), "driver/CUDA/NCCL/kernel/OS versions and services"),
    "health.detection": ("software", ("detection_s",), "time for health checks to drain a faulty node"),
    "security.versions": ("security", ("vulnerable_components",), "installed versions vs minimum secure versions"),
    "security.access": ("security", ("unexpected_keys",), "SSH, keys, permissions and listening sockets"),
    "security.isolation": ("security", (), "IOMMU, device permissions, BMC reachability, kubelet"),
    "custom.command": ("custom", (), "a test program named by its argv (providers' burn tools)"),
}

# check name -> metric -> the unit its thresholds are in, as the schedule states them (the
# acceptance checks report measurements in the same units: tests/schema/test_metric_units.py)
METRIC_UNITS: dict[str, dict[str, str]] = {
    "gpu.inventory": {"gpu_count": "GPUs"},
    "gpu.gemm": {"tflops_bf16": "TFLOPS", "tflops_fp8": "TFLOPS", "tflops_fp16": "TFLOPS", "straggler_pct": "%"},
    "gpu.xid": {"xid_events": "events"},
    "gpu.burn": {"xid_events": "events", "throttle_pct": "%", "max_temp_c": "C"},
    "network.nccl": {"busbw_gbps": "GB/s", "algbw_gbps": "GB/s"},
    "network.ib": {"bw_gbps": "Gb/s", "port_rate_gbps": "Gb/s", "symbol_errors": "errors"},
    "network.iperf3": {"throughput_gbps": "Gb/s", "retransmits": "retransmits"},
    "storage.fio": {"read_gbps": "GB/s", "write_gbps": "GB/s", "read_iops": "IOPS", "write_iops": "IOPS",
                    "read_p99_ms": "ms", "write_p99_ms": "ms"},
    "storage.s3": {"put_gbps": "GB/s", "get_gbps": "GB/s", "put_mbps": "MB/s", "get_mbps": "MB/s", "list_s": "s"},
    "health.detection": {"detection_s": "s"},
}

AREAS = ("gpu", "network", "storage", "software", "security")
