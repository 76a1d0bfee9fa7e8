"""`slakit parse FILE` detects the tool; check names work as tool names; empty lists show empty."""

from __future__ import annotations

import json

from click.testing import CliRunner

from slakit.cli import main
from tests.parsers.conftest import REALDATA, read_realdata


def _run(*args: str):
    return CliRunner().invoke(main, ["parse", *args])


def test_file_alone_detects_the_tool_and_says_which():
    read_realdata("dcgmi_diag_r2_text_dcgm4.4.2_1gpu_pass_dcgm-issue124.txt")
    path = str(REALDATA / "dcgmi_diag_r2_text_dcgm4.4.2_1gpu_pass_dcgm-issue124.txt")
    res = _run(path, "--format", "json")
    assert res.exit_code == 0
    assert "detected tool: dcgmi (check gpu.dcgm)" in res.stderr
    doc = json.loads(res.stdout)
    assert doc["tool"] == "dcgmi" and doc["tests"][0]["gpu_results"][0]["gpu_ids"] == [0]
    explicit = _run("dcgmi", path, "--format", "json")
    assert json.loads(explicit.output) == doc and "detected" not in explicit.output


def test_check_names_are_tool_names():
    read_realdata("ib_send_bw_report_gbits_ndr_skypilot_worker_prefix_nebius.txt")
    path = str(REALDATA / "ib_send_bw_report_gbits_ndr_skypilot_worker_prefix_nebius.txt")
    doc = json.loads(_run("network.ib", path, "--format", "json").output)
    assert doc["tool"] == "ib_write_bw" and doc["bw_avg_gbps"] == 361.67 and doc["source"]["label"] == "worker1"
    kmd = str(REALDATA / "nvidia_smi_table_KMD_UMD_header_drv610_2gpu_club3090_report.txt")
    assert json.loads(_run("gpu.inventory", kmd, "--format", "json").output)["driver_version"] == "610.43.02"
    res = _run("gpu.nothing", kmd)
    assert res.exit_code == 2 and "gpu.dcgm" in res.output


def test_unknown_content_without_tool_is_a_clear_error(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("just some notes\n")
    res = _run(str(f), "--format", "json")
    assert res.exit_code == 1 and json.loads(res.stdout)["problems"][0]["code"] == "tool_not_detected"


def test_table_shows_empty_lists_empty_and_status_lines(tmp_path):
    read_realdata("nvidia_smi_table_drv470_P100_infoROM_corrupt_validator_log_nvidia-docs.txt")
    path = str(REALDATA / "nvidia_smi_table_drv470_P100_infoROM_corrupt_validator_log_nvidia-docs.txt")
    res = CliRunner().invoke(main, ["parse", "nvidia-smi", path], terminal_width=200)
    assert res.exit_code == 0
    rows = {ln.split("│")[1].strip(): ln.split("│")[2].strip() for ln in res.output.splitlines()
            if ln.count("│") >= 3 and ln.split("│")[1].strip()}
    assert rows["mig_devices"] == "" and rows["errors"] == "" and rows["samples"] == ""
    assert rows["warnings"].startswith("[inforom_corrupted] WARNING: infoROM is corrupted")
    assert rows["source"] == "-"
