"""`slakit accept run --executor slurm`: the acceptance runner across the real Slurm testbed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from acceptance.evidence import verify
from slakit.cli import main
from slaschema.hostlist import compress
from tests.acceptance.conftest import contract_with

pytestmark = pytest.mark.slurm

CRITERIA = """
- id: sw
  check: software.versions
  expect: {kernel: ">=3", slurm: ">=20"}
- id: fs
  check: storage.fio
  params: {path: /tmp, rw: write, bs: 1M, size: 8M, numjobs: 1, ioengine: psync, iodepth: 1}
  metric: write_gbps
  min: 0.0001
- id: inv
  check: gpu.inventory
  expect: {gpus_per_node: 4}
"""


def test_accept_run_through_srun_writes_per_node_evidence(slurm_cluster, tmp_path):
    contract = contract_with(tmp_path, CRITERIA)
    out = tmp_path / "bundle"
    r = CliRunner().invoke(main, ["accept", "run", str(contract), "--executor", "slurm", "--nodes",
                                  compress(slurm_cluster.nodes), "--out", str(out), "--no-progress",
                                  "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    assert doc["run"]["executor"] == "slurm"
    by_id = {c["id"]: c for c in doc["criteria"]}
    for cid in ("sw", "fs", "inv"):
        nodes = {v["node"] for v in by_id[cid]["verdicts"]}
        assert nodes == set(slurm_cluster.nodes)                  # one answer per node, also for drained ones
        for v in by_id[cid]["verdicts"]:
            # A node another test drained is an error, never a silent pass.
            assert (v["status"], v["reason"]) in {("pass", "as_expected"), ("pass", "within_bounds"),
                                                  ("skip", "no_gpu"), ("error", "node_unavailable")}
        assert any(v["status"] in ("pass", "skip") for v in by_id[cid]["verdicts"])
        for node in slurm_cluster.nodes:
            assert (out / "raw" / cid / f"{node}.json").is_file()
    assert verify(out).ok
