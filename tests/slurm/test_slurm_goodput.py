"""Slurm accounting on the real 4-node testbed: node events from `sacctmgr show event` match
what `slakit watch` sees, and a job killed by a node failure (slurmd stopped, node set down)
shows as NODE_FAIL in sacct and its lost GPU-hours go to the node's incident.

The testbed has no GPUs (no gres): runs count the contract's 8 GPUs per node they hold
(whole-node mapping, see docs/goodput.md)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from calculators.watch import WatchState, poll_slurm, step
from slakit.cli import main
from tests.contracts import small_contract
from tests.slurm.conftest import wait_usable

pytestmark = pytest.mark.slurm
CONTRACT = small_contract("goodput-slurm", {"r1": "gpu-[01-02]", "r2": "gpu-[03-04]"})


def sh(*argv: str, check: bool = True) -> str:
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


@pytest.fixture
def accounting(slurm_cluster):
    if shutil.which("sacctmgr") is None or subprocess.run(["sacctmgr", "-n", "show", "cluster"], capture_output=True,
                                                          timeout=30).returncode != 0:
        pytest.skip("the cluster in SLURM_CONF has no accounting (slurmdbd); start it with scripts/slurm-testbed")
    return slurm_cluster


def _wait(pred, limit_s: float, what: str):
    deadline = time.monotonic() + limit_s
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {limit_s:.0f} s waiting for {what}")
        time.sleep(0.3)


def _job_state(job: str) -> str:
    out = sh("sacct", "-X", "-n", "-P", "-j", job, "--format=State").split()
    return out[0] if out else ""


def _now_slurm() -> str:
    return datetime.now().strftime("%Y-%m-%dT%H:%M:%S")


def test_events_match_the_watcher(accounting, tmp_path):
    since = datetime.now(timezone.utc).replace(microsecond=0)
    time.sleep(1.0)                 # events of earlier tests end before `since`
    state = WatchState({}, None)
    seen = []

    def poll():
        nonlocal state
        state, changed = step(state, poll_slurm(), datetime.now(timezone.utc))
        seen.extend(changed)

    poll()
    for node, reason in (("gpu-02", "goodput test: ECC errors"), ("gpu-04", "goodput test: fan")):
        sh("scontrol", "update", f"nodename={node}", "state=drain", f"reason={reason}")
        for _ in range(6):
            poll()
            time.sleep(0.5)
        sh("scontrol", "update", f"nodename={node}", "state=resume")
        for _ in range(4):
            poll()
            time.sleep(0.5)
    wait_usable(accounting.nodes)
    watched = {i.id: i for i in seen if i.end is not None and i.start >= since}
    assert len(watched) == 2, seen
    out = tmp_path / "events.csv"
    r = CliRunner().invoke(main, ["import", "slurm-events", "--live", "--since", since.astimezone().strftime(
        "%Y-%m-%dT%H:%M:%S"), "-o", str(out)])
    assert r.exit_code == 0, r.output
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(out.read_text())) if row["start"] >= since.strftime(
        "%Y-%m-%dT%H:%M:%SZ")}
    assert set(rows) == set(watched)          # same ids: same node and start second
    for iid, inc in watched.items():
        row = rows[iid]
        assert row["cause"] == inc.cause and row["target"] == inc.node
        end = datetime.fromisoformat(row["end"].replace("Z", "+00:00"))
        # Slurm records the resume itself; the watcher sees it at its next poll (0.5 s apart)
        assert 0 <= (inc.end - end).total_seconds() <= 5, (row, inc)


def test_node_failure_costs_the_incident_its_jobs_work(accounting, tmp_path):
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    since = _now_slurm()
    time.sleep(1.0)
    sub = ["sbatch", "--parsable", "-o", "/dev/null"]
    victim = sh(*sub, "-N2", "-w", "gpu-[01-02]", "--no-requeue", "-J", "gp-victim", "--wrap", "sleep 300").strip()
    done = sh(*sub, "-N1", "-w", "gpu-03", "-J", "gp-short", "--wrap", "sleep 1").strip()
    other = sh(*sub, "-N1", "-w", "gpu-04", "-J", "gp-other", "--wrap", "sleep 300").strip()
    _wait(lambda: _job_state(victim) == "RUNNING" and _job_state(other) == "RUNNING", 60, "the jobs to run")
    time.sleep(4)
    state_dir = accounting.state_dir
    pid_file = state_dir / "slurmd-gpu-02.pid" if state_dir else None
    if pid_file and pid_file.exists():
        subprocess.run(["kill", pid_file.read_text().strip()], check=False)       # the node loses its daemon
    sh("scontrol", "update", "nodename=gpu-02", "state=down", "reason=goodput test: gpu-02 lost power")
    _wait(lambda: _job_state(victim) == "NODE_FAIL", 60, "sacct to show NODE_FAIL")
    _wait(lambda: _job_state(done) == "COMPLETED", 60, "the short job to complete")
    sh("scancel", other)
    _wait(lambda: _job_state(other).startswith("CANCELLED"), 60, "the cancelled job")
    time.sleep(2)
    if pid_file:
        sh("slurmd", "-N", "gpu-02", "-f", accounting.conf)
    sh("scontrol", "update", "nodename=gpu-02", "state=resume", check=False)
    wait_usable(accounting.nodes, 60)

    events = tmp_path / "events.csv"
    r = CliRunner().invoke(main, ["import", "slurm-events", "--live", "--since", since, "-o", str(events)])
    assert r.exit_code == 0, r.output
    incs = [row for row in csv.DictReader(io.StringIO(events.read_text()))
            if row["target"] == "gpu-02" and row["cause"] == "goodput test: gpu-02 lost power"]
    assert len(incs) == 1 and incs[0]["end"], incs
    sacct = tmp_path / "sacct.txt"
    sacct.write_text(sh("sacct", "-a", "-X", "-D", "-P", f"--starttime={since}",
                        "--format=JobID,State,ExitCode,NodeList,NNodes,AllocTRES,Start,End,Elapsed,Reason,Comment"))
    rec = {line.split("|")[0]: line.split("|") for line in sacct.read_text().splitlines()[1:]}
    assert rec[victim][1] == "NODE_FAIL" and rec[done][1] == "COMPLETED"
    month = datetime.now(timezone.utc).strftime("%Y-%m")
    r = CliRunner().invoke(main, ["goodput", str(contract), "--sacct", str(sacct), "--incidents", str(events),
                                  "--month", month, "--include-jobs", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    jobs = {j["job_id"]: j for j in doc["infrastructure_jobs"]}
    assert set(jobs) == {victim}                      # the cancelled job is the customer's doing
    j = jobs[victim]
    start = datetime.strptime(rec[victim][6], "%Y-%m-%dT%H:%M:%S").astimezone()
    end = datetime.strptime(rec[victim][7], "%Y-%m-%dT%H:%M:%S").astimezone()
    lost = 16 * (end - start).total_seconds() / 3600              # 2 nodes x 8 GPUs, from its start
    assert j["incidents"] == [incs[0]["id"]] and j["gpus"] == 16 and j["state"] == "NODE_FAIL"
    assert j["lost_gpu_hours"] == f"{lost:.2f}"
    cost = next(c for c in doc["incidents"] if c["id"] == incs[0]["id"])
    assert cost["jobs"] == 1 and cost["lost_gpu_hours"] == f"{lost:.2f}"
    assert doc["periods"][0]["jobs"]["ended_by_infrastructure"] >= 1
    # without --include-jobs the output names no job
    r = CliRunner().invoke(main, ["goodput", str(contract), "--sacct", str(sacct), "--incidents", str(events),
                                  "--month", month, "--format", "json"])
    assert "infrastructure_jobs" not in json.loads(r.output) and f'"{victim}"' not in r.output
    # live: sacct and the node events read now give the same attribution
    r = CliRunner().invoke(main, ["goodput", str(contract), "--live", "--month", month, "--include-jobs",
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    live = {j["job_id"]: j for j in json.loads(r.output)["infrastructure_jobs"]}
    assert live[victim]["incidents"] == [incs[0]["id"]] and live[victim]["lost_gpu_hours"] == f"{lost:.2f}"
