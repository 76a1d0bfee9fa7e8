"""`slakit parse TOOL FILE`: JSON is the stable interface; unparseable input exits 1 naming the file."""

from __future__ import annotations

import json

from click.testing import CliRunner

from slakit.cli import main
from tests.parsers.conftest import FIXTURES, REALDATA, read_realdata


def _run(*args: str):
    return CliRunner().invoke(main, ["parse", *args])


def test_json_output_nccl():
    read_realdata("nccl_all_reduce_perf_a100_1node_gcm_fixture.txt")
    res = _run("nccl-tests", str(REALDATA / "nccl_all_reduce_perf_a100_1node_gcm_fixture.txt"), "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["collective"] == "all_reduce_perf" and doc["ranks"] == 8 and doc["nodes"] == 1
    assert doc["rows"][-1]["size_bytes"] == 1073741824 and doc["rows"][-1]["busbw_gbps"] == 231.72
    assert doc["rows"][-1]["wrong"] == 0 and doc["avg_busbw_gbps"] == 210.99


def test_json_output_fio_fixture_and_table():
    path = str(FIXTURES / "fio" / "fio_seqwrite_1M_numjobs2_json.txt")
    doc = json.loads(_run("fio", path, "--format", "json").output)
    assert doc["write_bw_bytes"] == 883967877 and len(doc["jobs"]) == 2 and doc["jobs"][0]["bs"] == "1M"
    res = _run("fio", path)
    assert res.exit_code == 0 and "write_bw_bytes" in res.output and "seqwrite" in res.output


def test_all_samples():
    read_realdata("ib_write_bw_samples.txt")
    res = _run("ib_write_bw", str(REALDATA / "ib_write_bw_samples.txt"), "--all", "--format", "json")
    doc = json.loads(res.output)
    assert (doc["format"], doc["tool"]) == ("slakit-parse/1", "ib_write_bw")
    assert [d["test"] for d in doc["records"]] == ["RDMA_Write BW Test", "RDMA_Read BW Test", "Send BW Test", None]


def test_unparseable_exits_1_with_code_and_file(tmp_path):
    bad = tmp_path / "dmesg.txt"
    bad.write_text("nothing to see here\n")
    res = _run("dcgmi", str(bad), "--format", "json")
    assert res.exit_code == 1
    doc = json.loads(res.output)
    assert doc["problems"][0]["code"] == "unparseable_output"
    assert doc["problems"][0]["file"] == str(bad)
    res = _run("nvidia-smi", str(bad))
    assert res.exit_code == 1 and "[unparseable_output]" in res.output and str(bad) in res.output


def test_missing_file_and_unknown_tool(tmp_path):
    res = _run("fio", str(tmp_path / "absent.json"), "--format", "json")
    assert res.exit_code == 1 and json.loads(res.output)["problems"][0]["code"] == "file_unreadable"
    assert _run("lspci", str(tmp_path)).exit_code == 2


def test_xid_json_from_stdin():
    log = "[ 12.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
    res = CliRunner().invoke(main, ["parse", "xid", "-", "--format", "json"], input=log)
    doc = json.loads(res.output)
    assert doc["events"][0]["xid"] == 79 and doc["events"][0]["action"] == "reboot" and doc["worst_action"] == "reboot"
