"""Detection drill: timing logic with a scripted node, then the real testbed health check."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from acceptance.drill import (
    DrillError,
    MarkerFault,
    NodeState,
    XidFault,
    judge_drill,
    parse_sinfo_state,
    run_drill,
    xid_line,
)
from acceptance.results import Status
from slakit.cli import main
from tests.slurm._contract import CONTRACT

T0 = datetime(2027, 1, 10, 12, 0, tzinfo=timezone.utc)



class FakeCluster:
    """A node whose state follows a script of (seconds after start, state, reason)."""

    def __init__(self, script, resumable=True):
        self.t = 0.0
        self.script = script
        self.resumed_at = None
        self.resumable = resumable

    def clock(self):
        return T0 + timedelta(seconds=self.t)

    def sleep(self, s):
        self.t += s

    def read(self, node):
        state = ("idle", "none")
        for at, st, reason in self.script:
            if self.t >= at:
                state = (st, reason)
        if self.resumed_at is not None and self.t >= self.resumed_at + 1:
            state = ("idle", "none")
        return NodeState(*state)

    def resume(self, node):
        self.resumed_at = self.t


def test_parse_sinfo_state_keeps_reason_with_spaces_and_pipes():
    st = parse_sinfo_state("gpu-02|drained|healthcheck: fault marker | x\n")
    assert st == NodeState("drained", "healthcheck: fault marker | x")
    assert st.out_of_service and not st.in_service
    assert NodeState("idle*", "none").in_service is False
    assert NodeState("mixed+drain", "x").out_of_service
    assert parse_sinfo_state("") is None


def test_drill_measures_detection_and_return(tmp_path):
    fake = FakeCluster([(0.0, "idle", "none"), (7.0, "drained", "hc"), (15.0, "idle", "none")])
    marker = tmp_path / "fault" / "n1"
    seen = {}

    class Spy(MarkerFault):
        def clear(self):
            seen["present_at_clear"] = self.path.exists()
            super().clear()

    res = run_drill("n1", Spy(marker), read_state=fake.read, resume=fake.resume, clock=fake.clock,
                    sleep=fake.sleep, poll_s=1.0)
    assert res.detection_s == 7.0
    assert res.return_s == 8.0
    assert seen["present_at_clear"] and not marker.exists()
    verdicts = judge_drill(res, timedelta(minutes=2))
    assert [(v.criterion, v.status, v.reason) for v in verdicts] == [
        ("health.detection", Status.PASS, "within_target"),
        ("health.return_to_service", Status.PASS, "returned"),
    ]


def test_late_detection_fails_and_exact_target_passes():
    fake = FakeCluster([(120.0, "down*", "Not responding")])
    res = run_drill("n1", XidFault("n1", kmsg=Path(os.devnull)), read_state=fake.read, resume=fake.resume,
                    clock=fake.clock, sleep=fake.sleep, poll_s=5.0, return_timeout=timedelta(seconds=20))
    assert res.detection_s == 120.0
    assert judge_drill(res, timedelta(minutes=2))[0].status is Status.PASS
    late = judge_drill(res, timedelta(seconds=119))
    assert (late[0].status, late[0].reason) == (Status.FAIL, "detection_too_slow")
    # an Xid is not cleared by removing anything: without --resume-after the node stays out
    assert (late[1].status, late[1].reason) == (Status.WARN, "not_returned")


def test_never_detected_is_a_failure_and_the_fault_is_cleared(tmp_path):
    fake = FakeCluster([])
    marker = tmp_path / "m"
    res = run_drill("n1", MarkerFault(marker), read_state=fake.read, resume=fake.resume, clock=fake.clock,
                    sleep=fake.sleep, poll_s=10.0, detect_timeout=timedelta(minutes=3))
    assert res.detected is None and not marker.exists()
    (v,) = judge_drill(res, timedelta(minutes=2))
    assert (v.status, v.reason) == (Status.FAIL, "not_detected")


def test_resume_after_brings_a_drained_node_back():
    fake = FakeCluster([(3.0, "drained", "xid")])
    res = run_drill("n1", XidFault("n1", kmsg=Path(os.devnull)), read_state=fake.read, resume=fake.resume,
                    clock=fake.clock, sleep=fake.sleep, poll_s=1.0, resume_after=timedelta(seconds=5))
    assert res.resumed is not None and res.returned is not None
    assert judge_drill(res, None)[0].reason == "no_detection_target"
    assert judge_drill(res, None)[1].reason == "returned_by_drill"


def test_node_already_out_of_service_is_refused(tmp_path):
    fake = FakeCluster([(0.0, "drained", "repair")])
    with pytest.raises(DrillError) as err:
        run_drill("n1", MarkerFault(tmp_path / "m"), read_state=fake.read, resume=fake.resume,
                  clock=fake.clock, sleep=fake.sleep)
    assert err.value.code == "node_not_in_service" and not (tmp_path / "m").exists()


def test_xid_line_looks_like_the_kernel_driver():
    line = xid_line("gpu-07", 79)
    assert line.startswith("NVRM: Xid (PCI:") and ": 79," in line and "node=gpu-07," in line
    assert "node=gpu-07, cluster=tb1," in xid_line("gpu-07", 79, "tb1")


def test_xid_fault_needs_the_confirmation_flag():
    res = CliRunner().invoke(main, ["accept", "drill", "--node", "gpu-01", "--fault", "xid"])
    assert res.exit_code == 2 and "--i-understand-this-drains-the-node" in res.output


# --- the real testbed --------------------------------------------------------------------

def _bound(cluster) -> float:
    interval = cluster.health_interval_s or 5.0
    return interval + 2 * 0.5 + 5.0     # one health-check period, two polls, scheduler slack


def _state(node: str) -> str:
    return subprocess.run(["sinfo", "-N", "-h", "-n", node, "-o", "%T"], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.slurm
def test_marker_drill_on_the_testbed_detects_within_the_health_check_interval(slurm_cluster):
    slurm_cluster.marker("gpu-02")  # skips on clusters without the testbed's health check
    res = CliRunner().invoke(main, ["accept", "drill", "--node", "gpu-02", "--max", "2m", "--poll", "0.5",
                                    "--detect-timeout", "60s", "--return-timeout", "60s", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["format"] == "slakit-drill/1"
    result = doc["result"]
    assert 0 < result["detection_s"] <= _bound(slurm_cluster)
    assert result["detected_reason"].startswith("healthcheck: fault marker")
    assert result["return_to_service_s"] is not None and result["return_to_service_s"] <= 2 * _bound(slurm_cluster)
    assert [v["reason"] for v in doc["verdicts"]] == ["within_target", "returned"]
    assert not slurm_cluster.marker("gpu-02").exists()
    assert _state("gpu-02") == "idle"


@pytest.mark.slurm
def test_drill_judges_against_the_contract_detection_target(slurm_cluster, tmp_path):
    slurm_cluster.marker("gpu-04")
    # support.detection of 1 s is below one health-check period: the drill must fail
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT.replace("DETECTION", "1s"))
    res = CliRunner().invoke(main, ["accept", "drill", "--node", "gpu-04", str(contract),
                                    "--poll", "0.5",
                                    "--detect-timeout", "60s", "--return-timeout", "60s", "--format", "json"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.output)
    assert doc["verdicts"][0]["reason"] == "detection_too_slow" and doc["target_s"] == 1.0
    assert _state("gpu-04") == "idle"


@pytest.mark.slurm
def test_xid_drill_drains_until_resumed(slurm_cluster):
    if not os.access("/dev/kmsg", os.W_OK):
        pytest.skip("/dev/kmsg is not writable here")
    slurm_cluster.marker("gpu-03")
    res = CliRunner().invoke(main, ["accept", "drill", "--node", "gpu-03", "--fault", "xid",
                                    "--i-understand-this-drains-the-node", "--resume-after", "1s",
                                    "--poll", "0.5", "--max", "2m", "--detect-timeout", "60s",
                                    "--return-timeout", "60s", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["result"]["detected_reason"].startswith("healthcheck-xid")
    assert 0 < doc["result"]["detection_s"] <= _bound(slurm_cluster)
    assert doc["result"]["resumed_by_drill"] is not None
    assert _state("gpu-03") == "idle"


@pytest.mark.slurm
def test_drill_on_an_unknown_node_is_refused(slurm_cluster, tmp_path):
    marker = tmp_path / "fault-{node}"
    res = CliRunner().invoke(main, ["accept", "drill", "--node", "gpu-99", "--marker", str(marker),
                                    "--format", "json"])
    assert res.exit_code == 1
    got = json.loads(res.stdout)             # the drill could not run: a problems document, no verdict
    assert (got["format"], got["ok"]) == ("slakit-problems/1", False)
    assert [(p["code"], p["path"]) for p in got["problems"]] == [("node_unknown", "--node")]
    assert not (tmp_path / "fault-gpu-99").exists()


@pytest.mark.slurm
def test_marker_drill_through_srun_on_the_node(slurm_cluster):
    slurm_cluster.marker("gpu-01")
    res = CliRunner().invoke(main, ["accept", "drill", "--node", "gpu-01", "--via", "srun", "--max", "2m",
                                    "--poll", "0.5", "--detect-timeout", "60s", "--return-timeout", "60s",
                                    "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    states = [t["state"] for t in doc["result"]["timeline"]]
    # the holder job keeps running on the drained node: out of service shows as `draining`
    # (the poll may first see the node `mixed` while the holder starts, before the health check)
    assert next(s for s in states if s not in ("idle", "mixed", "allocated")) == "draining"
    assert 0 < doc["result"]["detection_s"] <= _bound(slurm_cluster)
    assert doc["result"]["returned"] is not None
    assert not slurm_cluster.marker("gpu-01").exists()
    jobs = subprocess.run(["squeue", "-h", "-n", "slakit-drill-holder", "-t", "PENDING,RUNNING"],
                          capture_output=True, text=True).stdout
    assert jobs.strip() == ""              # the holder job was cancelled
