"""`slakit accept burn-in`: segment planning and judging, then a 60 s CPU burn-in across the
4 testbed nodes and an interrupted burn-in that resumes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from acceptance.burnin import Plan, aggregate, done_s, judge, new_state
from acceptance.evidence import verify
from acceptance.results import Status
from slakit.cli import main
from tests.slurm._contract import CONTRACT

REPO = Path(__file__).resolve().parents[2]
NODES = ("n1", "n2")


def seg(index, length, n1, n2):
    return {"index": index, "duration_s": length, "started": "", "finished": "", "nodes": {"n1": n1, "n2": n2}}


def ok(samples=3, xid=0, throttle=0.0, temp=50.0):
    return {"metrics": {"stress": "gpu", "samples": samples, "elapsed_s": 30.0, "xid_events": xid,
                        "throttle_pct": throttle, "max_temp_c": temp, "errors": []}, "rc": 0}


def test_segments_cover_the_duration_exactly():
    assert Plan(60, 15, 5, "cpu", NODES).segments() == [15, 15, 15, 15]
    assert Plan(50, 15, 5, "cpu", NODES).segments() == [15, 15, 15, 5]
    assert Plan(10, 15, 5, "cpu", NODES).segments() == [10]


def test_aggregate_sums_xids_and_weights_throttling_by_samples():
    segs = [seg(0, 30, ok(samples=3, xid=1, throttle=0.0, temp=70), ok()),
            seg(1, 30, ok(samples=1, xid=0, throttle=100.0, temp=82), ok())]
    m, problems = aggregate(segs, "n1")
    assert problems == []
    assert (m["samples"], m["xid_events"], m["throttle_pct"], m["max_temp_c"]) == (4, 1, 25.0, 82.0)


def test_judge_fails_xid_and_throttle_and_errors_missing_answers():
    state = new_state(Plan(60, 30, 10, "gpu", NODES))
    state["segments"] = [seg(0, 30, ok(samples=3, xid=1), ok(samples=3, throttle=50.0)),
                         seg(1, 30, ok(samples=3), {"error": "no_answer", "message": "srun: error"})]
    verdicts = judge(state, {"max_xid_events": 0, "max_throttle_pct": 10.0})
    by = {(v.node, v.reason): v.status for v in verdicts}
    assert by[("n1", "above_max")] is Status.FAIL          # one Xid against zero allowed
    assert by[("n2", "above_max")] is Status.FAIL          # 25 % throttled against 10 %
    assert by[("n2", "node_error")] is Status.ERROR
    assert not any(v.reason == "incomplete" for v in verdicts)


def test_unfinished_burn_in_is_incomplete():
    state = new_state(Plan(60, 30, 10, "cpu", NODES))
    state["segments"] = [seg(0, 30, ok(), ok())]
    assert done_s(state) == 30
    (inc,) = [v for v in judge(state, {"max_xid_events": 0}) if v.reason == "incomplete"]
    assert inc.status is Status.ERROR and inc.details == {"remaining_s": 30.0}


def _contract(tmp_path: Path, duration: str) -> Path:
    c = tmp_path / "contract.yaml"
    c.write_text(CONTRACT.replace("DETECTION", "2m") + f"acceptance:\n  burn_in: {{duration: {duration}}}\n")
    return c


@pytest.mark.slurm
@pytest.mark.slow
def test_cpu_burn_in_for_60_s_on_all_four_nodes(slurm_cluster, tmp_path):
    out = tmp_path / "evidence"
    res = CliRunner().invoke(main, ["accept", "burn-in", str(_contract(tmp_path, "60s")), "--stress", "cpu",
                                    "--segment", "20s", "--interval", "5s", "-o", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    assert doc["format"] == "slakit-burn-in/1" and doc["done_s"] == 60.0 and doc["status"] == "pass"
    assert json.loads((out / "burn-in" / "results.json").read_text()) == doc
    per_node = {v["node"] for v in doc["verdicts"] if v["status"] == "pass"}
    assert per_node == set(slurm_cluster.nodes)
    state = json.loads((out / "burn-in" / "state.json").read_text())
    assert [s["duration_s"] for s in state["segments"]] == [20.0, 20.0, 20.0]
    for s in state["segments"]:
        for node in slurm_cluster.nodes:
            assert s["nodes"][node]["metrics"]["samples"] >= 3
            assert (out / "burn-in" / f"seg-{s['index']:03d}" / f"{node}.json").exists()
    assert verify(out).ok


@pytest.mark.slurm
@pytest.mark.slow
def test_interrupted_burn_in_resumes_the_remaining_time(slurm_cluster, tmp_path):
    contract = _contract(tmp_path, "10s")
    out = tmp_path / "ev"
    argv = [sys.executable, "-m", "slakit", "accept", "burn-in", str(contract), "--stress", "cpu",
            "--segment", "5s", "--interval", "1s", "-o", str(out)]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state_file = out / "burn-in" / "state.json"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if state_file.exists() and json.loads(state_file.read_text())["segments"]:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("first segment never finished")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert len(json.loads(state_file.read_text())["segments"]) == 1
    again = CliRunner().invoke(main, ["accept", "burn-in", str(contract), "--stress", "cpu", "--segment", "5s",
                                      "--interval", "1s", "-o", str(out)])
    assert again.exit_code == 2 and "--resume" in again.output
    resumed = CliRunner().invoke(main, ["accept", "burn-in", str(contract), "--stress", "cpu", "--segment", "5s",
                                        "--interval", "1s", "-o", str(out), "--resume", "--format", "json"])
    assert resumed.exit_code == 0, resumed.output
    state = json.loads(state_file.read_text())
    assert [s["index"] for s in state["segments"]] == [0, 1]
    assert json.loads(resumed.output[resumed.output.index("{"):])["done_s"] == 10.0
