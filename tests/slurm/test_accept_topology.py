"""`slakit accept run --executor slurm` against a contract whose topology differs from Slurm's
node list, with one node drained: the node list is a finding, the drained node is an error
for that node only, and the verdicts roll up per node, per rack and overall."""

from __future__ import annotations

import json
import os
import subprocess
import time
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner

from acceptance.evidence import verify
from slakit.cli import main
from tests.contracts import small_contract
from tests.slurm.conftest import wait_usable

pytestmark = pytest.mark.slurm

# Racks r1 = gpu-[01-02] and r2 = gpu-[03-05]; the testbed has no gpu-05.
CONTRACT = small_contract("topo-test", {"r1": "gpu-[01-02]", "r2": "gpu-[03-05]"}, """\
acceptance:
  criteria:
    - id: sw
      check: software.versions
      expect: {kernel: ">=3"}
    - id: fs
      check: storage.fio
      params: {path: /tmp, rw: write, bs: 1M, size: 4M, numjobs: 1, ioengine: psync, iodepth: 1}
      metric: write_gbps
      min: 0.0001
""")

DRAINED = "gpu-03"


def _scontrol(*args: str) -> None:
    subprocess.run(["scontrol", "update", *args], check=True, env=dict(os.environ), capture_output=True)



def test_node_list_finding_drained_node_and_per_rack_rollup(slurm_cluster, tmp_path):
    others = [n for n in slurm_cluster.nodes if n != DRAINED]
    wait_usable(others, limit_s=20.0)
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    out = tmp_path / "bundle"
    _scontrol(f"nodename={DRAINED}", "state=drain", "reason=acceptance topology test")
    try:
        t0 = time.monotonic()
        r = CliRunner().invoke(main, ["accept", "run", str(contract), "--executor", "slurm", "--out", str(out),
                                      "--no-progress", "--format", "json"])
        took = time.monotonic() - t0
    finally:
        _scontrol(f"nodename={DRAINED}", "state=resume")
        wait_usable([DRAINED], limit_s=20.0)      # right after resume Slurm lists it idle* until it has pinged it
    assert r.exit_code == 1, r.output          # a finding and an unreachable node fail the run
    assert took < 30
    doc = json.loads(r.stdout)
    assert doc["run"]["nodes"] == ["gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-05"]

    # The scheduler's node list against the topology: gpu-05 is missing, nothing extra.
    node_list = doc["criteria"][0]
    assert node_list["id"] == "topology.node-list" and node_list["status"] == "fail"
    assert [(v["node"], v["status"], v["reason"]) for v in node_list["verdicts"]] == [
        ("gpu-05", "fail", "node_missing_in_scheduler")]
    assert doc["counts"]["fail"] >= 1 and doc["status"] == "fail"          # a fail decides over errors
    assert doc["decision"]["result"] == "rejected" and not doc["scope"]["partial"]

    # The drained node (and the unknown one) are errors for that node; the run went on.
    for cid in ("sw", "fs"):
        crit = next(c for c in doc["criteria"] if c["id"] == cid)
        by_node = {v["node"]: (v["status"], v["reason"]) for v in crit["verdicts"]}
        assert by_node[DRAINED] == ("error", "node_unavailable")
        assert by_node["gpu-05"] == ("error", "node_unavailable")
        for n in others:
            assert by_node[n][0] == "pass", (cid, n, by_node[n])

    # Per node, per rack, overall.
    agg = doc["aggregate"]
    nodes = {n["node"]: n for n in agg["nodes"]}
    assert {n: e["status"] for n, e in nodes.items()} == {
        "gpu-01": "pass", "gpu-02": "pass", "gpu-03": "error", "gpu-04": "pass", "gpu-05": "fail"}
    assert nodes["gpu-03"]["criteria"] == {"sw": "error", "fs": "error"}
    assert nodes["gpu-05"]["criteria"] == {"topology.node-list": "fail", "sw": "error", "fs": "error"}
    assert nodes["gpu-05"]["counts"] == {"error": 2, "fail": 1, "warn": 0, "skip": 0, "pass": 0, "not_run": 0,
                                         "waived": 0}
    assert [(r["rack"], r["status"], r["nodes"]) for r in agg["racks"]] == [("r1", "pass", 2), ("r2", "fail", 3)]
    r2 = agg["racks"][1]
    assert r2["node_counts"] == {"error": 1, "fail": 1, "warn": 0, "skip": 0, "pass": 1, "not_run": 0, "waived": 0}
    assert agg["overall"]["status"] == "fail" and agg["overall"]["nodes"] == 5
    assert agg["overall"]["node_counts"]["pass"] == 3 and agg["overall"]["node_counts"]["error"] == 1

    # The same in the bundle: raw sinfo output, results.json, JUnit; it verifies and re-judges alike.
    assert (out / "raw" / "topology.node-list" / "_cluster.json").is_file()
    assert json.loads((out / "results.json").read_text())["aggregate"] == agg
    junit = ET.fromstring((out / "junit.xml").read_bytes())
    suite = junit.find("testsuite[@name='topology.node-list']")
    assert suite is not None and suite.get("failures") == "1"
    assert verify(out).ok
    ev = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(out), "--format", "json"])
    assert ev.exit_code == 1, ev.output
    again = json.loads(ev.stdout)
    assert again["criteria"][0] == node_list
    assert again["aggregate"] == agg
