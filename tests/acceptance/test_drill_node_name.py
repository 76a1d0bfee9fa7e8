"""accept drill drains and resumes exactly one node: a --node that is no single Slurm node
name (empty, a hostlist, spaces, a slash) is a usage error before sinfo, the fault or
scontrol run, and the node's state is read from its own sinfo line, never another node's."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from acceptance import drill
from acceptance.drill import NodeState, parse_sinfo_state
from slakit.cli import main


@pytest.mark.parametrize("node", ["", "gpu-[01-04]", "gpu-01,gpu-02", "gpu 01", "../gpu-01", "-gpu"])
def test_a_node_that_is_no_single_name_is_refused_before_anything_runs(monkeypatch, tmp_path, node):
    ran = []
    monkeypatch.setattr(drill.subprocess, "run", lambda *a, **k: ran.append(a) or pytest.fail("ran"))
    marker = tmp_path / "fault-{node}"
    r = CliRunner().invoke(main, ["accept", "drill", "--node", node, "--marker", str(marker), "--max", "1m"])
    assert r.exit_code == 2, r.output
    assert "Invalid value for --node" in r.output and "[node_name_invalid]" in r.output, r.output
    assert ran == [] and list(tmp_path.iterdir()) == []


def test_sinfo_lines_of_other_nodes_are_not_taken_for_the_node():
    text = "gpu-01|drained|admin: bad DIMM\ngpu-02|idle|none\n"
    assert parse_sinfo_state(text, "gpu-02") == NodeState("idle", "none")
    assert parse_sinfo_state(text, "gpu-01") == NodeState("drained", "admin: bad DIMM")
    assert parse_sinfo_state(text, "gpu-03") is None
    assert parse_sinfo_state("gpu-010|idle|none\n", "gpu-01") is None


def test_read_node_state_matches_its_node(monkeypatch):
    import subprocess

    def fake(argv, **kw):
        return subprocess.CompletedProcess(argv, 0, stdout="gpu-1|drained|held by admin\ngpu-10|idle|none\n",
                                           stderr="")

    monkeypatch.setattr(drill.subprocess, "run", fake)
    assert drill.read_node_state("gpu-10") == NodeState("idle", "none")
    assert drill.read_node_state("gpu-2") is None
