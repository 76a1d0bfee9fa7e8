"""Fleet outliers: robust z-score flags on synthetic fleets, on real per-GPU figures, and in
the run document of an evaluated bundle."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from acceptance.outliers import OutlierRule, better_high, fleet_outlier_verdicts, robust_outliers
from tests.acceptance.conftest import contract_with, realdata

RULE = OutlierRule()


def test_slow_node_above_the_floor_is_flagged_with_figures():
    rng = random.Random(7)
    values = {f"n{i:02d}": 880 + rng.uniform(-6, 6) for i in range(72)}
    values["n33"] = 705.0
    (o,) = robust_outliers(values, RULE, higher_better=True)
    assert o.key == "n33" and o.value == 705.0
    assert 875 < o.median < 885 and o.z > 3.5 and o.deviation_pct > 19


def test_only_the_bad_side_is_flagged():
    values = {f"n{i}": 100.0 + i * 0.1 for i in range(20)}
    values["fast"] = 150.0
    assert robust_outliers(values, RULE, higher_better=True) == []
    assert [o.key for o in robust_outliers(values, RULE, higher_better=False)] == ["fast"]


def test_small_deviation_is_not_flagged_even_with_a_high_z():
    # A very tight fleet: 2 % slower is many MADs away but under the 5 % floor.
    values = {f"n{i}": 1000.0 + (i % 3) * 0.01 for i in range(30)}
    values["n-slow"] = 980.0
    assert robust_outliers(values, RULE, higher_better=True) == []
    assert [o.key for o in robust_outliers(values, OutlierRule(min_deviation_pct=1.0), True)] == ["n-slow"]


def test_mad_zero_falls_back_to_mean_absolute_deviation_and_equal_values_flag_nothing():
    values = {f"n{i}": 400.0 for i in range(10)}
    assert robust_outliers(values, RULE, True) == []
    values["n-bad"] = 300.0
    assert [o.key for o in robust_outliers(values, RULE, True)] == ["n-bad"]


def test_too_few_nodes_flag_nothing():
    assert robust_outliers({"a": 100.0, "b": 100.0, "c": 10.0, "d": 100.0}, RULE, True) == []


@pytest.mark.parametrize("name, want", [
    ("busbw_gbps", True), ("tflops_bf16", True), ("read_iops", True), ("read_p99_ms", False),
    ("max_temp_c", False), ("straggler_pct", False), ("xid_events", None), ("failed_tests", None),
    ("clocks_sm_mhz", None),
])
def test_direction_of_metrics(name, want):
    assert better_high(name) is want


def test_real_healthy_h100_node_has_no_gpu_outliers_and_a_hot_gpu_is_flagged():
    """Per-GPU figures of a real 8x H100 node (nvidia-smi table): nothing stands out; the same
    node with one GPU 25 C hotter than its peers is flagged on that GPU."""
    from acceptance.parsers.nvidia_smi import parse_nvidia_smi

    rec = parse_nvidia_smi(realdata("nvidia_smi_default_table_8xH100_nccl-tests-issue264.txt").read_text()).to_json()
    gpus = [{"index": g["index"], "temperature_c": g["temperature_c"], "power_draw_w": g["power_draw_w"]}
            for g in rec["gpus"]]
    assert len(gpus) == 8
    assert fleet_outlier_verdicts("inv", {"h1": {"gpus": gpus}, "h2": {"gpus": gpus}}, RULE) == []
    hot = [dict(g) for g in gpus]
    hot[5]["temperature_c"] = 60.0
    (v,) = fleet_outlier_verdicts("inv", {"h1": {"gpus": gpus}, "h2": {"gpus": hot}}, RULE)
    assert v.node == "h2" and v.reason == "fleet_outlier" and v.status == "warn"
    assert v.details["gpu"] == "gpu5" and v.details["metric"] == "temperature_c"


def test_disabled_rule_flags_nothing():
    values = {f"n{i}": {"busbw_gbps": 800.0 + i % 2} for i in range(10)}
    values["n-bad"] = {"busbw_gbps": 500.0}
    assert fleet_outlier_verdicts("c", values, OutlierRule(enabled=False), judged="busbw_gbps") == []
    assert len(fleet_outlier_verdicts("c", values, RULE, judged="busbw_gbps")) == 1


def _gemm(tflops):
    return json.dumps({"bench": "slakit-gemm/1", "dtype": "bf16", "size": 8192,
                       "gpus": [{"index": i, "tflops": t} for i, t in enumerate(tflops)]})


def test_evaluated_bundle_shows_outlier_warnings_in_json_and_junit(tmp_path):
    """A provider's bundle of 8 nodes, all above the 1800 TFLOPS floor; one node's GPU 2 is
    slow: the criterion warns with fleet_outlier on that node, the rest pass."""
    contract = contract_with(tmp_path, """
        - id: gemm-bf16
          check: gpu.gemm
          metric: tflops_bf16
          min: 1800
    """)
    raw = tmp_path / "bundle" / "raw" / "gemm-bf16"
    raw.mkdir(parents=True)
    rng = random.Random(3)
    for n in range(1, 9):
        vals = [round(2300 + rng.uniform(-10, 10), 1) for _ in range(4)]
        if n == 5:
            vals[2] = 1900.0
        (raw / f"r01-n{n:02d}.txt").write_text(_gemm(vals), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "slakit", "accept", "evaluate", str(contract),
                           str(tmp_path / "bundle"), "--only", "gemm-bf16", "--nodes", "r01-n[01-08]", "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    gemm = next(c for c in doc["criteria"] if c["id"] == "gemm-bf16")
    flags = [v for v in gemm["verdicts"] if v["reason"] == "fleet_outlier"]
    assert {v["node"] for v in flags} == {"r01-n05"}
    assert all(v["status"] == "warn" for v in flags)
    # The node figure (slowest GPU), the intra-node straggler share and the GPU itself.
    assert {v["details"]["metric"] for v in flags} == {"tflops_bf16", "straggler_pct", "tflops"}
    assert {v["details"]["gpu"] for v in flags if v["details"]["metric"] == "tflops"} == {"gpu2"}
    assert gemm["status"] == "warn"
    junit = subprocess.run([sys.executable, "-m", "slakit", "accept", "evaluate", str(contract),
                            str(tmp_path / "bundle"), "--only", "gemm-bf16", "--nodes", "r01-n[01-08]", "--format", "junit"],
                           capture_output=True, text=True, timeout=120).stdout
    assert "fleet_outlier" in junit and "r01-n05" in junit


def test_contract_settings_are_validated(tmp_path):
    contract = contract_with(tmp_path, """
        - id: gemm-bf16
          check: gpu.gemm
          metric: tflops_bf16
          min: 1800
    """)
    text = contract.read_text().replace("  criteria:\n", "  outliers: {robust_z: -1, min_nodes: 2}\n  criteria:\n", 1)
    contract.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "slakit", "validate", str(contract), "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "acceptance.outliers.robust_z" in proc.stdout and "acceptance.outliers.min_nodes" in proc.stdout
